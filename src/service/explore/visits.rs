//! The range's visits, read from their rows (design §17). A visit that lies
//! inside the span (and, for a time dimension, inside one bucket) counts the
//! events and pageviews its row keeps (`human_event_count`,
//! `human_pageview_count`, kept by the writer, recounted by retention); only
//! the few an edge cuts are counted from their events. A whole-visit read so
//! follows the visits of the span, not the several times more events.
//!
//! Visits span less than `SESSION_MAX_MS` (the writer's rule), so a visit
//! that reaches into the span began at most that long before it, and one
//! cut by the span's end began at most that long before the end: the start
//! index bounds every read.
//!
//! The statement reads `tracked_sessions s LEFT JOIN (edge counts) y`; the
//! expressions below name a visit's visitor, events, pageviews and bucket.

use super::{
    range::Span,
    sql::{Context, Sql},
};
use crate::service::tracking::sessionize::SESSION_MAX_MS;

/// A visit's visitor.
pub const VISITOR: &str = "s.visitor_id";
/// A visit's events in the span (not marked as bot traffic).
pub const EVENTS: &str = "COALESCE(y.n_events, s.human_event_count)";
/// A visit's pageviews in the span (not marked as bot traffic).
pub const PAGEVIEWS: &str = "COALESCE(y.n_pageviews, s.human_pageview_count)";

/// The bucket number of an instant column; one bucket when there are none.
fn bucket_of(context: &Context<'_>, column: &str) -> String {
    match context.buckets {
        Some(buckets) => buckets.sql(column),
        None => "CAST(0 AS BIGINT)".to_owned(),
    }
}

/// A visit's time bucket (with `time`, one row per bucket it has events in).
pub fn bucket(context: &Context<'_>) -> String {
    format!("COALESCE(y.t, {})", bucket_of(context, "s.started_at"))
}

/// Writes a start range of `alias` on the site's start index.
fn started(sql: &mut Sql, alias: &str, site_id: i64, from: i64, to: i64) {
    sql.push(&format!("({alias}.site_id = "))
        .bind(site_id)
        .push(&format!(" AND {alias}.started_at >= "))
        .bind(from)
        .push(&format!(" AND {alias}.started_at < "))
        .bind(to)
        .push(")");
}

/// Writes whether a visit may reach into `span`: begun before it ends, at
/// most a visit's longest span before it begins, and ended after it begins.
fn reaching(sql: &mut Sql, alias: &str, site_id: i64, span: Span) {
    started(sql, alias, site_id, span.from.saturating_sub(SESSION_MAX_MS), span.to);
    sql.push(&format!(" AND {alias}.ended_at >= ")).bind(span.from);
}

/// Writes whether a visit lies wholly inside `span` and, with `time`, inside
/// one bucket: then all its events are in that bucket of the span.
fn inside(sql: &mut Sql, context: &Context<'_>, alias: &str, span: Span, time: bool) {
    sql.push(&format!("({alias}.started_at >= "))
        .bind(span.from)
        .push(&format!(" AND {alias}.ended_at < "))
        .bind(span.to);
    if time && context.buckets.is_some() {
        let first = bucket_of(context, &format!("{alias}.started_at"));
        let last = bucket_of(context, &format!("{alias}.ended_at"));
        sql.push(&format!(" AND {first} = {last}"));
    }
    sql.push(")");
}

/// Writes ` FROM` the visits with, for those not inside the span (or a
/// bucket), the events and pageviews they have in it (`y`).
pub fn from(sql: &mut Sql, context: &Context<'_>, span: Span, time: bool) {
    sql.push(" FROM tracked_sessions s LEFT JOIN (SELECT e.session_id AS sid");
    if time {
        sql.push(&format!(", {} AS t", bucket_of(context, "e.timestamp")));
    }
    sql.push(
        ", COUNT(*) AS n_events, SUM(CASE WHEN e.event_type = 'pageview' THEN 1 ELSE 0 END) AS n_pageviews \
         FROM tracked_sessions c JOIN events e ON e.session_id = c.id WHERE ",
    );
    if time {
        // Any visit may cross a bucket's edge.
        reaching(sql, "c", context.site_id, span);
    } else {
        // Only visits begun before the span or ending after it are cut: those
        // begun in the day before its start or the day before its end.
        sql.push("(");
        started(sql, "c", context.site_id, span.from.saturating_sub(SESSION_MAX_MS), span.from);
        sql.push(" OR ");
        started(sql, "c", context.site_id, span.to.saturating_sub(SESSION_MAX_MS), span.to);
        sql.push(") AND c.ended_at >= ").bind(span.from);
    }
    sql.push(" AND NOT ");
    inside(sql, context, "c", span, time);
    sql.push(" AND e.is_bot = ").bind(false).push(" AND e.timestamp >= ").bind(span.from);
    sql.push(" AND e.timestamp < ").bind(span.to);
    sql.push(if time { " GROUP BY 1, 2) y" } else { " GROUP BY 1) y" });
    sql.push(" ON y.sid = s.id");
}

/// Writes ` WHERE` the visit reaches into the span with events in it (in
/// `y`, or inside the span with any kept on its row).
pub fn condition(sql: &mut Sql, context: &Context<'_>, span: Span, time: bool) {
    sql.push(" WHERE ");
    reaching(sql, "s", context.site_id, span);
    sql.push(" AND (y.sid IS NOT NULL OR (");
    inside(sql, context, "s", span, time);
    sql.push(" AND s.human_event_count > 0))");
}
