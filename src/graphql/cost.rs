//! What a field costs in the complexity limit: a list counts its rows, so a
//! query's cost grows with the rows it can return, not with the number of
//! fields it names. Bounded lists count their bound; unbounded per-visitor and
//! per-session lists count a typical size, which keeps one profile cheap and
//! makes a list of 500 visitors with their sessions and events too expensive.
//!
//! A field that reads a window of a site's data (`stats`, `traffic`,
//! `liveStream`, link analytics) also costs its window: `DAY` points for
//! each day it covers, whatever it returns. So a thousand aliases of a
//! 30-day `stats`, each answering one number, cost what they read, and one
//! operation holds at most eight 30-day reads. The scored visitor list reads
//! an index in rank order, so its window counts at most `RANKED_DAYS`.

use crate::service::{
    analytics::{TimeRange, profile, visitors},
    link_stats,
};

/// What reading one day of one site's data costs.
pub const DAY: usize = 100;
/// Days an open window (`all`) is charged as: it reads every day there is,
/// and the cost has to be known before it runs. Half a year: one such read
/// fits an operation, two do not.
pub const ALL_DAYS: usize = 180;
/// The most days the scored visitor list is charged for.
pub const RANKED_DAYS: usize = 30;

fn days(time_range: Option<&str>) -> usize {
    match TimeRange::parse(time_range, true) {
        Ok(TimeRange::Hours24) | Err(_) => 1,
        Ok(TimeRange::Days7) => 7,
        Ok(TimeRange::Days30) => 30,
        Ok(TimeRange::All) => ALL_DAYS,
    }
}

/// A window of the `24h` / `7d` / `30d` / `all` kind. A value the resolver
/// will refuse costs one day; it never runs.
pub fn window(time_range: Option<&str>) -> usize {
    days(time_range) * DAY
}

/// An Explore query: the days its `date_range` covers, twice with a
/// comparison; an open or unreadable range, and any longer read, counts
/// `ALL_DAYS`, so one such query fits an operation.
pub fn explore(date_range: &serde_json::Value, include: Option<&serde_json::Value>) -> usize {
    use crate::service::explore::query::{self, DateRange};
    let body = serde_json::json!({ "metrics": ["visitors"], "date_range": date_range });
    let days = match query::parse(&body).map(|parsed| parsed.date_range) {
        Ok(DateRange::Day | DateRange::Hours24) => 1,
        Ok(DateRange::Days(days)) => days as usize,
        Ok(DateRange::Months(months)) => months as usize * 31,
        Ok(DateRange::Month) => 31,
        Ok(DateRange::Year) => 366,
        Ok(DateRange::Dates(from, to)) => usize::try_from((to - from).num_days() + 1).unwrap_or(ALL_DAYS),
        Ok(DateRange::Instants(from, to)) => usize::try_from((to - from).num_days() + 1).unwrap_or(ALL_DAYS),
        Ok(DateRange::All) | Err(_) => ALL_DAYS,
    };
    let compared = include.and_then(|include| include.get("comparisons")).is_some_and(|mode| !mode.is_null());
    (days * if compared { 2 } else { 1 }).clamp(1, ALL_DAYS) * DAY
}

/// The scored visitor list's window.
pub fn ranked_window(time_range: Option<&str>) -> usize {
    days(time_range).min(RANKED_DAYS) * DAY
}

/// A link-analytics window (`7d`, `30d`, `90d`, `all`).
pub fn link_window(range: Option<&str>) -> usize {
    let days = match link_stats::Range::parse(range) {
        Ok(link_stats::Range::Days(days)) => usize::try_from(days).unwrap_or(ALL_DAYS),
        Ok(link_stats::Range::All) => ALL_DAYS,
        Err(_) => 1,
    };
    days * DAY
}

/// Sessions counted for one visitor's `sessions`.
pub const SESSIONS_PER_VISITOR: usize = 20;
/// Events counted for one session's `events` or `timeline`.
pub const EVENTS_PER_SESSION: usize = 50;
/// Identities and link clicks counted for one visitor.
pub const IDENTITIES_PER_VISITOR: usize = 10;
pub const CLICKS_PER_VISITOR: usize = 20;
/// Links counted for one site's `links`, which has no paging: nested
/// per-link reads (`analytics`) cost as if a site had this many.
pub const LINKS_PER_SITE: usize = 100;
/// Days counted for one visitor's `dailyActivity`.
pub const DAYS_PER_VISITOR: usize = 60;

pub const RECENT_EVENTS: usize = profile::RECENT_EVENTS as usize;
pub const FORM_EVENTS: usize = profile::FORM_EVENTS as usize;
pub const TOP_PAGES: usize = profile::TOP_PAGES as usize;

/// A CSV export of the visitor list reads every matching row: it costs an
/// open window of the scored list and a page of rows per day it covers.
pub fn export(time_range: Option<&str>) -> usize {
    ranked_window(time_range) + days(time_range).min(RANKED_DAYS) * DAY * 4
}

/// Rows a page of the visitor list can hold.
pub fn visitor_page(first: Option<i64>) -> usize {
    let rows = first.map_or(visitors::DEFAULT_LIMIT, |n| u64::try_from(n).unwrap_or(1).clamp(1, visitors::MAX_LIMIT));
    usize::try_from(rows).unwrap_or(1)
}

/// Rows a page of the delivery log can hold.
pub fn log_page(first: u64) -> usize {
    usize::try_from(first.min(crate::service::webhooks::MAX_LOG_ROWS)).unwrap_or(1).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cost_their_days() {
        for (range, cost, ranked) in [
            (None, 7 * DAY, 7 * DAY),
            (Some("24h"), DAY, DAY),
            (Some("30d"), 30 * DAY, 30 * DAY),
            (Some("all"), 180 * DAY, 30 * DAY),
            (Some("nonsense"), DAY, DAY),
        ] {
            assert_eq!((window(range), ranked_window(range)), (cost, ranked), "{range:?}");
        }
        for (range, cost) in [(None, 7 * DAY), (Some("90d"), 90 * DAY), (Some("all"), 180 * DAY), (Some("x"), DAY)] {
            assert_eq!(link_window(range), cost, "{range:?}");
        }
        // Eight 30-day reads fit one operation, nine do not; one open window fits.
        assert!(8 * window(Some("30d")) <= crate::graphql::MAX_COMPLEXITY);
        assert!(9 * window(Some("30d")) > crate::graphql::MAX_COMPLEXITY);
        assert!(window(Some("all")) < crate::graphql::MAX_COMPLEXITY);
    }

    #[test]
    fn pages_count_their_rows_within_the_limits() {
        for (first, rows) in [(None, 50), (Some(1), 1), (Some(500), 500), (Some(10_000), 500), (Some(-5), 1)] {
            assert_eq!(visitor_page(first), rows, "{first:?}");
        }
        for (first, rows) in [(0, 1), (50, 50), (100_000, 500)] {
            assert_eq!(log_page(first), rows, "{first}");
        }
    }
}
