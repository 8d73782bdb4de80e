//! A window of human traffic for the web app's overview, in one pass per
//! table: visitors per bucket and country, sessions per bucket and channel,
//! pageviews per bucket and page. The counting rules are those of `stats`: a
//! visitor counts where it was last seen, a session where it ended, and
//! pageviews come from the hourly rollups plus the raw events of the window's
//! first, partial hour. So the totals equal `stats` for the same window, and
//! the buckets add up to them.

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, FromQueryResult, QueryFilter, QuerySelect, sea_query::Expr};

use entity::{event, page_hour, tracked_session, visitor};

use super::{TimeRange, score_sql_text, stats, sum_of};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    service::{access, scoring},
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
struct VisitorRow {
    bucket: i64,
    country: Option<String>,
    visitors: i64,
    identified: i64,
    hot: i64,
}

#[derive(FromQueryResult)]
struct SessionRow {
    bucket: i64,
    channel: String,
    sessions: i64,
}

#[derive(FromQueryResult)]
struct PageRow {
    bucket: i64,
    page: String,
    pageviews: i64,
}

fn bucket_of(column: &str, bucket_ms: i64) -> Expr {
    // Integer division truncates toward zero in both backends; timestamps are positive.
    Expr::cust(format!("({column} / {bucket_ms}) * {bucket_ms}"))
}

/// Most first, then by key, at most `TOP_ROWS`.
fn top<K: Ord + Clone + std::hash::Hash>(counts: HashMap<K, i64>) -> Vec<(K, i64)> {
    let mut rows: Vec<(K, i64)> = counts.into_iter().filter(|(_, count)| *count > 0).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    rows.truncate(TOP_ROWS);
    rows
}

pub async fn traffic(
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

    // Visitors, on the covering index. The stored score is checked first, so
    // the full score (with recency) is computed only for possible hot leads.
    let identified = Expr::cust("CASE WHEN visitors.status = 'identified' THEN 1 ELSE 0 END");
    let hot = Expr::cust(format!(
        "CASE WHEN visitors.score >= {floor} AND {score} >= {threshold} THEN 1 ELSE 0 END",
        floor = site.hot_threshold - scoring::RECENCY_MAX,
        score = score_sql_text("visitors", now),
        threshold = site.hot_threshold,
    ));
    let rows: Vec<VisitorRow> = visitor::Entity::find()
        .filter(visitor::Column::SiteId.eq(site.id))
        .filter(visitor::Column::IsBot.eq(false))
        .filter(visitor::Column::LastSeen.gte(start))
        .select_only()
        .column_as(bucket_of("visitors.last_seen", size), "bucket")
        .column(visitor::Column::Country)
        .column_as(visitor::Column::Id.count(), "visitors")
        .column_as(sum_of(identified), "identified")
        .column_as(sum_of(hot), "hot")
        .group_by(bucket_of("visitors.last_seen", size))
        .group_by(visitor::Column::Country)
        .into_model()
        .all(db)
        .await?;
    let mut countries: HashMap<Option<String>, i64> = HashMap::new();
    for row in rows {
        buckets.entry(row.bucket).or_insert_with(|| Bucket { start: row.bucket, ..Bucket::default() }).visitors +=
            row.visitors;
        totals.visitors += row.visitors;
        totals.identified += row.identified;
        totals.hot += row.hot;
        *countries.entry(row.country).or_default() += row.visitors;
    }

    // Sessions, on the window index that carries the channel.
    let rows: Vec<SessionRow> = tracked_session::Entity::find()
        .filter(tracked_session::Column::SiteId.eq(site.id))
        .filter(tracked_session::Column::IsBot.eq(false))
        .filter(tracked_session::Column::EndedAt.gte(start))
        .select_only()
        .column_as(bucket_of("tracked_sessions.ended_at", size), "bucket")
        .column(tracked_session::Column::Channel)
        .column_as(tracked_session::Column::Id.count(), "sessions")
        .group_by(bucket_of("tracked_sessions.ended_at", size))
        .group_by(tracked_session::Column::Channel)
        .into_model()
        .all(db)
        .await?;
    let mut sources: HashMap<String, i64> = HashMap::new();
    for row in rows {
        buckets.entry(row.bucket).or_insert_with(|| Bucket { start: row.bucket, ..Bucket::default() }).sessions +=
            row.sessions;
        totals.sessions += row.sessions;
        *sources.entry(row.channel).or_default() += row.sessions;
    }

    // Pageviews: whole hours from the rollups, the partial first hour from the events.
    let first_whole_hour = start.div_euclid(HOUR_MS) * HOUR_MS + if start % HOUR_MS == 0 { 0 } else { HOUR_MS };
    let mut rows: Vec<PageRow> = page_hour::Entity::find()
        .filter(page_hour::Column::SiteId.eq(site.id))
        .filter(page_hour::Column::Hour.gte(first_whole_hour))
        .select_only()
        .column_as(bucket_of("page_hours.hour", size), "bucket")
        .column(page_hour::Column::Page)
        .column_as(sum_of(Expr::col(page_hour::Column::Pageviews)), "pageviews")
        .group_by(bucket_of("page_hours.hour", size))
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
                .column_as(event::Column::Id.count(), "pageviews")
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
    // Known countries before unknown, as `stats` orders them.
    let mut countries: Vec<(Option<String>, i64)> = countries.into_iter().filter(|(_, n)| *n > 0).collect();
    countries.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.is_none().cmp(&b.0.is_none())).then_with(|| a.0.cmp(&b.0)));
    countries.truncate(TOP_ROWS);
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
