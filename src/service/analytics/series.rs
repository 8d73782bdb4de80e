//! A window of human traffic for the web app's overview, in one pass per
//! table: visitors per bucket and country, sessions per bucket and channel,
//! pageviews per bucket and page. The counting rules are those of `stats`: a
//! visitor counts where it was last seen, a session where it ended, and
//! pageviews come from the hourly rollups plus the raw events of the window's
//! first, partial hour. So the totals equal `stats` for the same window, and
//! the buckets add up to them.

use std::collections::HashMap;

use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, FromQueryResult, QueryFilter, QuerySelect,
    sea_query::Expr,
};

use entity::{event, page_hour};

use super::{TimeRange, snapshot, stats, sum_of, window};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    service::access,
    time::{DAY_MS, HOUR_MS},
};

/// Rows in `countries`, `pages` and `sources`.
pub const TOP_ROWS: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Bucket {
    /// The bucket's UTC start; the first bucket only counts from the window's start.
    pub start: i64,
    pub pageviews: i64,
    pub visitors: i64,
    pub sessions: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    pub visitors: i64,
    pub sessions: i64,
    pub pageviews: i64,
    pub identified: i64,
    pub hot: i64,
}

pub struct Traffic {
    pub range: TimeRange,
    pub bucket_ms: i64,
    /// Oldest first, every bucket present (empty ones are zero).
    pub buckets: Vec<Bucket>,
    pub totals: Totals,
    /// Visitors per country, most first; unknown is `None`.
    pub countries: Vec<(Option<String>, i64)>,
    /// Pageviews per page, most first.
    pub pages: Vec<(String, i64)>,
    /// Sessions per channel, most first.
    pub sources: Vec<(String, i64)>,
}

/// Hours for a day, six hours for a week, days for a month: about thirty
/// points whatever the window. Buckets are UTC-aligned, so days are UTC days.
pub fn bucket_ms(range: TimeRange) -> AppResult<i64> {
    match range {
        TimeRange::Hours24 => Ok(HOUR_MS),
        TimeRange::Days7 => Ok(6 * HOUR_MS),
        TimeRange::Days30 => Ok(DAY_MS),
        TimeRange::All => Err(AppError::validation("timeRange", "must be 24h, 7d or 30d")),
    }
}

/// The starts of the buckets covering `[start, now]`, oldest first.
pub fn bucket_starts(start: i64, now: i64, bucket_ms: i64) -> Vec<i64> {
    let first = start.div_euclid(bucket_ms) * bucket_ms;
    let last = now.div_euclid(bucket_ms) * bucket_ms;
    (0..).map(|i| first + i * bucket_ms).take_while(|&bucket| bucket <= last).collect()
}

#[derive(FromQueryResult)]
struct PageRow {
    bucket: i64,
    page: String,
    pageviews: i64,
}

/// Most first, then by key, at most `TOP_ROWS`.
fn top<K: Ord + Clone + std::hash::Hash>(counts: HashMap<K, i64>) -> Vec<(K, i64)> {
    let mut rows: Vec<(K, i64)> = counts.into_iter().filter(|(_, count)| *count > 0).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    rows.truncate(TOP_ROWS);
    rows
}

pub async fn traffic(
    db: &DatabaseConnection,
    viewer: &Viewer,
    site_id: i64,
    range: TimeRange,
    now: i64,
) -> AppResult<Traffic> {
    let view = snapshot(db).await?;
    let traffic = traffic_in(&view, viewer, site_id, range, now).await?;
    view.commit().await?;
    Ok(traffic)
}

async fn traffic_in(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    range: TimeRange,
    now: i64,
) -> AppResult<Traffic> {
    let size = bucket_ms(range)?;
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    let start = range.start(now).unwrap_or(now);
    let starts = bucket_starts(start, now, size);
    let mut buckets: HashMap<i64, Bucket> =
        starts.iter().map(|&bucket| (bucket, Bucket { start: bucket, ..Bucket::default() })).collect();
    let mut totals = Totals::default();

    let span = window::Window::new(Some(start));
    let mut countries: HashMap<Option<String>, i64> = HashMap::new();
    for row in window::visitors(db, site.id, false, span, window::Buckets::Of(size)).await? {
        buckets.entry(row.bucket).or_insert_with(|| Bucket { start: row.bucket, ..Bucket::default() }).visitors +=
            row.visitors;
        totals.visitors += row.visitors;
        totals.identified += row.identified;
        *countries.entry(row.country).or_default() += row.visitors;
    }
    totals.hot = window::hot_leads(db, &site, false, Some(start), now).await?;

    let mut sources: HashMap<String, i64> = HashMap::new();
    for row in window::sessions(db, site.id, span, window::Buckets::Of(size)).await? {
        buckets.entry(row.bucket).or_insert_with(|| Bucket { start: row.bucket, ..Bucket::default() }).sessions +=
            row.sessions;
        totals.sessions += row.sessions;
        *sources.entry(row.channel).or_default() += row.sessions;
    }

    // Pageviews: whole hours from the rollups, the partial first hour from the events.
    let first_whole_hour = span.first_whole_hour.unwrap_or(start);
    let mut rows: Vec<PageRow> = page_hour::Entity::find()
        .filter(page_hour::Column::SiteId.eq(site.id))
        .filter(page_hour::Column::Hour.gte(first_whole_hour))
        .select_only()
        .column_as(window::Buckets::Of(size).sql("page_hours.hour"), "bucket")
        .column(page_hour::Column::Page)
        .column_as(sum_of(Expr::col(page_hour::Column::Pageviews)), "pageviews")
        .group_by(window::Buckets::Of(size).sql("page_hours.hour"))
        .group_by(page_hour::Column::Page)
        .into_model()
        .all(db)
        .await?;
    if start < first_whole_hour {
        // The partial hour lies inside the first bucket (buckets are whole hours).
        let first = starts.first().copied().unwrap_or(start);
        rows.extend(
            stats::window_events(site.id, Some(start))
                .filter(event::Column::Timestamp.lt(first_whole_hour))
                .filter(event::Column::EventType.eq("pageview"))
                .select_only()
                .column_as(Expr::val(first), "bucket")
                .column(event::Column::Page)
                .column_as(Expr::cust("COUNT(*)"), "pageviews")
                .group_by(event::Column::Page)
                .into_model::<PageRow>()
                .all(db)
                .await?,
        );
    }
    let mut pages: HashMap<String, i64> = HashMap::new();
    for row in rows {
        buckets.entry(row.bucket).or_insert_with(|| Bucket { start: row.bucket, ..Bucket::default() }).pageviews +=
            row.pageviews;
        totals.pageviews += row.pageviews;
        *pages.entry(row.page).or_default() += row.pageviews;
    }

    let mut buckets: Vec<Bucket> = buckets.into_values().collect();
    buckets.sort_by_key(|bucket| bucket.start);
    let mut countries: Vec<(Option<String>, i64)> = countries.into_iter().filter(|(_, n)| *n > 0).collect();
    stats::sort_countries(&mut countries);
    Ok(Traffic { range, bucket_ms: size, buckets, totals, countries, pages: top(pages), sources: top(sources) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_the_window_from_its_first_partial_bucket_to_now() {
        let cases = [
            // (start, now, size, expected starts)
            (0, 0, HOUR_MS, vec![0]),
            (30 * 60_000, 3 * HOUR_MS + 1, HOUR_MS, vec![0, HOUR_MS, 2 * HOUR_MS, 3 * HOUR_MS]),
            (HOUR_MS, 2 * HOUR_MS - 1, HOUR_MS, vec![HOUR_MS]),
            (DAY_MS + 5, 3 * DAY_MS, DAY_MS, vec![DAY_MS, 2 * DAY_MS, 3 * DAY_MS]),
        ];
        for (start, now, size, expected) in cases {
            assert_eq!(bucket_starts(start, now, size), expected, "start {start}, now {now}, size {size}");
        }
    }

    #[test]
    fn a_window_has_about_thirty_buckets() {
        let now = 1_795_000_000_000 + 1234;
        for (range, expected) in [(TimeRange::Hours24, 25), (TimeRange::Days7, 29), (TimeRange::Days30, 31)] {
            let size = bucket_ms(range).unwrap_or(HOUR_MS);
            let count = bucket_starts(range.start(now).unwrap_or(now), now, size).len();
            assert_eq!(count, expected, "{range:?}");
        }
        assert!(bucket_ms(TimeRange::All).is_err());
    }
}
