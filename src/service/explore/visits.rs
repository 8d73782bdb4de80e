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

use std::{
    collections::HashMap,
    sync::{Mutex, PoisonError},
};

use sea_orm::{ConnectionTrait, DbBackend, DbErr};

use super::{
    range::Span,
    sql::{Context, Sql},
};
use crate::service::tracking::sessionize::SESSION_MAX_MS;

/// How many rows of the table a stretch may hold per visit it is read for
/// and still be read in order: SQLite reads a row in table order several
/// times faster than through the start index, which looks each one up
/// (220k visits of one site at 1M events: 24 ms in order, 128 ms looked up).
const STRETCH_ROWS_PER_VISIT: i64 = 4;

/// The ids of the visits that may reach into a span (those begun in the
/// window the start index bounds), when, on SQLite, reading the table from
/// the first to the last of them in order costs less than looking each one
/// up: ids grow as visits are written, so a site's recent visits lie
/// together unless other sites' interleave. The rows read are still
/// checked against every condition; the stretch only says where to look.
#[derive(Debug, Clone, Copy)]
pub struct Stretch {
    first: i64,
    last: i64,
}

/// The stretches taken on one snapshot, by site and span. The queries of
/// one explorer page (or the periods of one query) read one snapshot, so a
/// span's stretch is the same for each of them; taking it is a pass over
/// the start index (about 18 ms at 1M events, 130 at 10M), and a filtered
/// page asked for the range's five times and the earlier period's twice.
#[derive(Default)]
pub struct Stretches(Mutex<HashMap<(i64, i64, i64), Option<Stretch>>>);

impl Stretches {
    fn get(&self, key: (i64, i64, i64)) -> Option<Option<Stretch>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).get(&key).copied()
    }

    fn keep(&self, key: (i64, i64, i64), stretch: Option<Stretch>) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(key, stretch);
    }
}

/// The stretch of the table to read for `span`'s visits, if reading it in
/// order is cheaper (SQLite only; PostgreSQL plans its own scans); taken
/// once per snapshot and span (`taken` holds the snapshot's).
pub async fn stretch(
    db: &impl ConnectionTrait,
    taken: &Stretches,
    site_id: i64,
    span: Span,
) -> Result<Option<Stretch>, DbErr> {
    if db.get_database_backend() != DbBackend::Sqlite {
        return Ok(None);
    }
    let key = (site_id, span.from, span.to);
    if let Some(stretch) = taken.get(key) {
        return Ok(stretch);
    }
    let stretch = bounds(db, site_id, span).await?;
    taken.keep(key, stretch);
    Ok(stretch)
}

/// One pass over the start index for the stretch of `span`'s visits.
async fn bounds(db: &impl ConnectionTrait, site_id: i64, span: Span) -> Result<Option<Stretch>, DbErr> {
    let mut sql = Sql::new(DbBackend::Sqlite);
    sql.push("SELECT MIN(s.id) AS first, MAX(s.id) AS last, COUNT(*) AS visits FROM tracked_sessions s WHERE ");
    started(&mut sql, "s", site_id, span.from.saturating_sub(SESSION_MAX_MS), span.to);
    let Some(row) = db.query_one_raw(sql.statement()).await? else { return Ok(None) };
    let visits: i64 = row.try_get("", "visits")?;
    let (first, last): (Option<i64>, Option<i64>) = (row.try_get("", "first")?, row.try_get("", "last")?);
    Ok(match (first, last) {
        (Some(first), Some(last)) if last - first < visits.saturating_mul(STRETCH_ROWS_PER_VISIT) => {
            Some(Stretch { first, last })
        }
        // No visit at all: an empty stretch reads nothing.
        (None, None) => Some(Stretch { first: 0, last: -1 }),
        _ => None,
    })
}

/// The events' index by visit, named where a visit-first join must use it:
/// the site's time index also holds each event's visit, and SQLite would
/// search it by site and time once per visit because it covers the join.
pub const EVENTS_BY_VISIT: &str = "idx_events_session_id_timestamp";

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
/// bucket), the events and pageviews they have in it (`y`); with a
/// `stretch`, read in table order (`condition` bounds them).
pub fn from(sql: &mut Sql, context: &Context<'_>, span: Span, time: bool, stretch: Option<Stretch>) {
    sql.push(" FROM tracked_sessions s");
    if stretch.is_some() {
        // The table in id order between the stretch's ends (`condition`), not the start index.
        sql.push(" NOT INDEXED");
    }
    sql.push(" LEFT JOIN (SELECT e.session_id AS sid");
    if time {
        sql.push(&format!(", {} AS t", bucket_of(context, "e.timestamp")));
    }
    sql.push(
        ", COUNT(*) AS n_events, SUM(CASE WHEN e.event_type = 'pageview' THEN 1 ELSE 0 END) AS n_pageviews \
         FROM tracked_sessions c",
    );
    // With time, every visit of the window is looked at: in table order
    // too (a CROSS JOIN, or SQLite drives the join from the events).
    let ordered = stretch.filter(|_| time);
    match ordered {
        Some(_) => sql.push(&format!(
            " NOT INDEXED CROSS JOIN events e INDEXED BY {EVENTS_BY_VISIT} ON e.session_id = c.id WHERE "
        )),
        None => sql.push(" JOIN events e ON e.session_id = c.id WHERE "),
    };
    if time {
        // Any visit may cross a bucket's edge.
        if let Some(Stretch { first, last }) = ordered {
            sql.push("c.id >= ").bind(first).push(" AND c.id <= ").bind(last).push(" AND ");
        }
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

/// Writes that visit `s` lies in the stretch and begun in the window of
/// `span` (what the stretch was taken over).
pub fn within(sql: &mut Sql, stretch: Stretch, site_id: i64, span: Span) {
    sql.push("s.id >= ").bind(stretch.first).push(" AND s.id <= ").bind(stretch.last).push(" AND ");
    started(sql, "s", site_id, span.from.saturating_sub(SESSION_MAX_MS), span.to);
}

/// Writes ` WHERE` the visit reaches into the span with events in it (in
/// `y`, or inside the span with any kept on its row).
pub fn condition(sql: &mut Sql, context: &Context<'_>, span: Span, time: bool, stretch: Option<Stretch>) {
    sql.push(" WHERE ");
    if let Some(Stretch { first, last }) = stretch {
        sql.push("s.id >= ").bind(first).push(" AND s.id <= ").bind(last).push(" AND ");
    }
    reaching(sql, "s", context.site_id, span);
    sql.push(" AND (y.sid IS NOT NULL OR (");
    inside(sql, context, "s", span, time);
    sql.push(" AND s.human_event_count > 0))");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stretch_is_kept_for_its_own_site_and_span_only() {
        let taken = Stretches::default();
        let first = Some(Stretch { first: 10, last: 20 });
        taken.keep((1, 100, 200), first);
        taken.keep((1, 100, 300), None);
        // (key, what is kept for it: None when nothing was taken)
        let table = [
            ((1, 100, 200), Some(first)),
            ((1, 100, 300), Some(None)),
            ((2, 100, 200), None),
            ((1, 99, 200), None),
            ((1, 100, 201), None),
        ];
        for (key, kept) in table {
            let found = taken.get(key);
            assert_eq!(
                found.map(|s| s.map(|s| (s.first, s.last))),
                kept.map(|s| s.map(|s| (s.first, s.last))),
                "{key:?}"
            );
        }
    }
}
