//! What a field costs in the complexity limit: a list counts its rows, so a
//! query's cost grows with the rows it can return, not with the number of
//! fields it names. Bounded lists count their bound; unbounded per-visitor and
//! per-session lists count a typical size, which keeps one profile cheap and
//! makes a list of 500 visitors with their sessions and events too expensive.

use crate::service::analytics::{profile, visitors};

/// Sessions counted for one visitor's `sessions`.
pub const SESSIONS_PER_VISITOR: usize = 20;
/// Events counted for one session's `events` or `timeline`.
pub const EVENTS_PER_SESSION: usize = 50;
/// Identities and link clicks counted for one visitor.
pub const IDENTITIES_PER_VISITOR: usize = 10;
pub const CLICKS_PER_VISITOR: usize = 20;
/// Days counted for one visitor's `dailyActivity`.
pub const DAYS_PER_VISITOR: usize = 60;

pub const RECENT_EVENTS: usize = profile::RECENT_EVENTS as usize;
pub const FORM_EVENTS: usize = profile::FORM_EVENTS as usize;
pub const TOP_PAGES: usize = profile::TOP_PAGES as usize;

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
    fn pages_count_their_rows_within_the_limits() {
        for (first, rows) in [(None, 50), (Some(1), 1), (Some(500), 500), (Some(10_000), 500), (Some(-5), 1)] {
            assert_eq!(visitor_page(first), rows, "{first:?}");
        }
        for (first, rows) in [(0, 1), (50, 50), (100_000, 500)] {
            assert_eq!(log_page(first), rows, "{first}");
        }
    }
}
