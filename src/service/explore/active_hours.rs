//! Explore's visitors, visits and events per time bucket, and over a
//! range that ends in the past, from the writer's hourly rollups
//! (design §17): visitors from the active-hour counts
//! (`active_hour_visitors`: per hour, the visitors active in it by their
//! previous active hour), visits with their bounces and seconds from the
//! visits' hours (`value_hours`' `VisitHours` rows: per hour, the visits
//! with a human event in it by their previous such hour), pageviews and
//! events from the hourly event-name rows.
//!
//! A visitor is in a range `[from, to)` once, at their first active hour
//! in it: the one whose previous active hour lies before `from`. In a time
//! bucket likewise: their first active hour in the bucket follows one in an
//! earlier bucket (bucket numbers never decrease with time, DST included).
//! A visit likewise, at its first hour with a human event in the range or
//! bucket, with its whole visit's bounce and length as the rows count it.
//! For the whole range also the known and hot visitors among those with an
//! active hour in it.
//! Exact when every edge is an hour: the range starts on one (at or after
//! the latest purge cutoff), ends on one or after every stored event, and
//! the zone's offsets are whole hours that change on an hour.

use std::collections::BTreeMap;

use sea_orm::{ConnectionTrait, DbBackend};

use super::{
    counts::{Counts, Groups, Key},
    query::{Dimension, Metric},
    range::{Buckets, Span},
    rollups,
    sql::Sql,
    statements::{Ask, Scope},
};
use crate::{error::AppResult, service::tracking::value_rollups::RolledDimension, time::HOUR_MS};

/// Whether the query's shape is one these rollups answer: no filter; per
/// time bucket visitors, visit figures, pageviews and events; for the whole
/// range also the known and hot visitors (the explorer's tiles and their
/// previous period).
pub(super) fn plan(ask: Ask<'_>) -> bool {
    let whole_range = match ask.dimensions {
        [] => true,
        [one] if one.is_time() => false,
        _ => return false,
    };
    let counted = |metric: &Metric| match metric {
        Metric::Visitors
        | Metric::Pageviews
        | Metric::Events
        | Metric::Visits
        | Metric::BounceRate
        | Metric::VisitDuration
        | Metric::ViewsPerVisit => true,
        Metric::IdentifiedVisitors | Metric::HotLeads => whole_range,
        _ => false,
    };
    ask.filters.is_empty() && !ask.metrics.is_empty() && ask.metrics.iter().all(counted)
}

/// Whether the rollups hold the span (and its buckets) exactly.
async fn holds(db: &impl ConnectionTrait, scope: &Scope<'_>, span: Span, buckets: Option<&Buckets>) -> AppResult<bool> {
    if !rollups::starts_held(scope, span) || buckets.is_some_and(|buckets| !buckets.hour_aligned()) {
        return Ok(false);
    }
    Ok(span.to.rem_euclid(HOUR_MS) == 0 || rollups::nothing_from(db, scope.site_id, span.to).await?)
}

/// The bucket of an hour column as SQL; one bucket (0) without buckets.
fn bucket(buckets: Option<&Buckets>, column: &str) -> String {
    buckets.map_or_else(|| "CAST(0 AS BIGINT)".to_owned(), |buckets| buckets.sql(column))
}

/// The groups of one span (per bucket with `buckets`), or `None` when the
/// rollups do not hold it (the caller reads the rows).
pub(super) async fn groups(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    buckets: Option<&Buckets>,
) -> AppResult<Option<Groups>> {
    if !holds(db, scope, span, buckets).await? {
        return Ok(None);
    }
    let backend = db.get_database_backend();
    let mut counts: BTreeMap<i64, Counts> = BTreeMap::new();
    if ask.metrics.iter().any(|metric| metric.counts_visitors()) {
        let sql = visitors_statement(backend, scope.site_id, span, buckets);
        for row in db.query_all_raw(sql.statement()).await? {
            counts.entry(row.try_get("", "b")?).or_default().visitors += row.try_get::<i64>("", "visitors")?;
        }
    }
    if ask.metrics.iter().any(|metric| matches!(metric, Metric::Pageviews | Metric::Events | Metric::ViewsPerVisit)) {
        let mut sql = Sql::new(backend);
        sql.push(&format!(
            "SELECT {} AS b, CAST(COALESCE(SUM(pageviews), 0) AS BIGINT) AS pageviews, \
             CAST(COALESCE(SUM(events), 0) AS BIGINT) AS events FROM value_hours WHERE site_id = ",
            bucket(buckets, "hour")
        ))
        .bind(scope.site_id)
        .push(" AND dimension = ")
        .bind(RolledDimension::Name.code())
        .push(" AND hour >= ")
        .bind(span.from)
        .push(" AND hour < ")
        .bind(span.to)
        .push(" GROUP BY 1");
        for row in db.query_all_raw(sql.statement()).await? {
            let group = counts.entry(row.try_get("", "b")?).or_default();
            group.pageviews = row.try_get("", "pageviews")?;
            group.events = row.try_get("", "events")?;
        }
    }
    if ask.metrics.iter().any(|metric| metric.counts_visits() || metric.is_session_metric()) {
        visits(db, scope, span, buckets, &mut counts).await?;
    }
    let time = ask.dimensions.first().is_some_and(Dimension::is_time);
    if !time && ask.metrics.iter().any(|metric| matches!(metric, Metric::IdentifiedVisitors | Metric::HotLeads)) {
        rollups::known_and_hot(db, scope, span, counts.entry(0).or_default()).await?;
    }
    // As the rows' statements: a bucket with nothing in it is no group.
    let groups = counts
        .into_iter()
        .filter(|(_, group)| *group != Counts::default())
        .map(|(bucket, group)| (if time { vec![Key::Bucket(bucket)] } else { Vec::new() }, group))
        .collect();
    Ok(Some(groups))
}

/// The visitors of each bucket (of the span without buckets): the rows of
/// its hours whose previous active hour lies before the bucket's start,
/// each bucket summed on its own stretch of the hour index. (One statement
/// grouping every row of the span by its bucket sorted them first: at 1M
/// events, 30 days of days read 60k rows in 33 ms, bucket by bucket 12.)
fn visitors_statement(backend: DbBackend, site_id: i64, span: Span, buckets: Option<&Buckets>) -> Sql {
    if buckets.is_some_and(|buckets| buckets.count(span) > OWN_STRETCHES) {
        return grouped_visitors_statement(backend, site_id, span, buckets);
    }
    let spans = match buckets {
        Some(buckets) => buckets.hour_spans(span),
        None => vec![(0, span.from, span.to)],
    };
    let mut sql = Sql::new(backend);
    if spans.is_empty() {
        // As the statement below answers when no row counts.
        sql.push("SELECT CAST(0 AS BIGINT) AS b, CAST(0 AS BIGINT) AS visitors");
        return sql;
    }
    sql.push(
        "SELECT CAST(b.column1 AS BIGINT) AS b, CAST(COALESCE((SELECT SUM(a.visitors) FROM active_hour_visitors a \
         WHERE a.site_id = ",
    )
    .bind(site_id)
    .push(
        " AND a.hour >= b.column2 AND a.hour < b.column3 AND a.previous_hour < b.column2), 0) AS BIGINT) AS visitors \
         FROM (VALUES ",
    );
    // Numbers computed here, not input: written into the statement as they are.
    let rows: Vec<String> = spans.iter().map(|(bucket, from, to)| format!("({bucket}, {from}, {to})")).collect();
    sql.push(&rows.join(", ")).push(") AS b");
    sql
}

/// Buckets up to which each is summed on its own stretch; more (a
/// comparison's custom range of hours over years, where the range itself
/// is held to `MAX_BUCKETS`) are grouped in one statement.
const OWN_STRETCHES: i64 = 1_000;

/// The visitors of each bucket in one statement over every row of the
/// span: a row counts where its previous active hour lies in an earlier
/// bucket, or before the span.
fn grouped_visitors_statement(backend: DbBackend, site_id: i64, span: Span, buckets: Option<&Buckets>) -> Sql {
    let mut sql = Sql::new(backend);
    sql.push(&format!(
        "SELECT {} AS b, CAST(COALESCE(SUM(visitors), 0) AS BIGINT) AS visitors FROM active_hour_visitors \
         WHERE site_id = ",
        bucket(buckets, "hour")
    ))
    .bind(site_id)
    .push(" AND hour >= ")
    .bind(span.from)
    .push(" AND hour < ")
    .bind(span.to)
    .push(" AND (previous_hour < ")
    .bind(span.from);
    if buckets.is_some() {
        sql.push(&format!(" OR {} < {}", bucket(buckets, "previous_hour"), bucket(buckets, "hour")));
    }
    sql.push(") GROUP BY 1");
    sql
}

/// The visits, bounces and seconds of the span (per bucket with
/// `buckets`): each visit at its first hour with a human event in the span
/// or bucket, the one whose previous such hour lies before it (`0`, no
/// previous hour, lies before every span).
async fn visits(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    span: Span,
    buckets: Option<&Buckets>,
    counts: &mut BTreeMap<i64, Counts>,
) -> AppResult<()> {
    let previous = "CAST(value AS BIGINT)";
    let mut sql = Sql::new(db.get_database_backend());
    sql.push(&format!(
        "SELECT {} AS b, CAST(COALESCE(SUM(visits), 0) AS BIGINT) AS visits, \
         CAST(COALESCE(SUM(bounces), 0) AS BIGINT) AS bounces, CAST(COALESCE(SUM(seconds), 0) AS BIGINT) AS seconds \
         FROM value_hours WHERE site_id = ",
        bucket(buckets, "hour")
    ))
    .bind(scope.site_id)
    .push(" AND dimension = ")
    .bind(RolledDimension::VisitHours.code())
    .push(" AND hour >= ")
    .bind(span.from)
    .push(" AND hour < ")
    .bind(span.to)
    .push(&format!(" AND ({previous} < "))
    .bind(span.from);
    if buckets.is_some() {
        sql.push(&format!(" OR {} < {}", bucket(buckets, previous), bucket(buckets, "hour")));
    }
    sql.push(") GROUP BY 1");
    for row in db.query_all_raw(sql.statement()).await? {
        let group = counts.entry(row.try_get("", "b")?).or_default();
        group.visits = row.try_get("", "visits")?;
        group.bounces = row.try_get("", "bounces")?;
        group.seconds = row.try_get("", "seconds")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::explore::query;

    #[test]
    fn the_active_hours_answer_unfiltered_visitor_and_event_counts_by_time() {
        // (name, body, answered)
        let cases: Vec<(&str, serde_json::Value, bool)> = vec![
            ("aggregate", serde_json::json!({"metrics": ["visitors", "pageviews"]}), true),
            ("by day", serde_json::json!({"metrics": ["visitors", "events"], "dimensions": ["time:day"]}), true),
            ("by hour", serde_json::json!({"metrics": ["visitors"], "dimensions": ["time:hour"]}), true),
            ("by month", serde_json::json!({"metrics": ["pageviews"], "dimensions": ["time:month"]}), true),
            (
                "visits by day",
                serde_json::json!({"metrics": ["visitors", "visits", "bounce_rate"], "dimensions": ["time:day"]}),
                true,
            ),
            (
                "length and views by hour",
                serde_json::json!({"metrics": ["visit_duration", "views_per_visit"], "dimensions": ["time:hour"]}),
                true,
            ),
            ("bounce rate", serde_json::json!({"metrics": ["bounce_rate", "visit_duration", "visits"]}), true),
            ("tiles", serde_json::json!({"metrics": ["identified_visitors", "hot_leads", "views_per_visit"]}), true),
            ("revenue", serde_json::json!({"metrics": ["visitors", "total_revenue"]}), false),
            ("percentage", serde_json::json!({"metrics": ["percentage"]}), false),
            ("a source", serde_json::json!({"metrics": ["visitors"], "dimensions": ["visit:source"]}), false),
            (
                "time and source",
                serde_json::json!({"metrics": ["visitors"], "dimensions": ["time:day", "visit:source"]}),
                false,
            ),
            (
                "a filter",
                serde_json::json!({"metrics": ["visitors"], "dimensions": ["time:day"],
                                   "filters": [["is", "visit:device", ["Desktop"]]]}),
                false,
            ),
            (
                "identified by day",
                serde_json::json!({"metrics": ["identified_visitors"], "dimensions": ["time:day"]}),
                false,
            ),
        ];
        for (name, mut body, answered) in cases {
            body["site_id"] = serde_json::json!(1);
            body["date_range"] = serde_json::json!("30d");
            let query = query::parse(&body).expect("a valid query");
            let ask = Ask { dimensions: &query.dimensions, filters: &query.filters, metrics: &query.metrics };
            assert_eq!(plan(ask), answered, "{name}");
        }
    }
}
