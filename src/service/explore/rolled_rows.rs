//! The rolled rows' reads (design §17): a rolled dimension's visitors and
//! visit figures in a span, by value. A span's whole UTC days come from the
//! daily rows (`value_days`, `value_visitor_days`), the hours at its edges
//! from the hourly ones, so a dimension with many values costs its days,
//! not its hours: 161 accounts over 30 days sum 4.8k daily rows where their
//! hours were 92k. Pages' events are read alike from `page_days` and
//! `page_hours`.

use std::collections::HashMap;

use sea_orm::{ConnectionTrait, DbBackend, Statement};

use super::{counts::Counts, range::Span, sql::Sql};
use crate::{
    error::AppResult,
    service::tracking::value_rollups::{RolledDimension, name_by_prefix},
    time::DAY_MS,
};

/// What the rollups read for a query: one dimension's rows, all of them
/// or, for one custom event's conversions, those of its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rolled {
    pub dimension: RolledDimension,
    /// The custom event name the query's one filter keeps: `Name`'s row of
    /// it, or a `NAME_BY` dimension's rows of it.
    pub name: Option<String>,
}

/// A span's hours split for the day rows: its whole UTC days `[first, last)`,
/// if any, and the hour ranges before and after them (all of it without a
/// whole day). Both are half-open and together cover the span once.
pub(super) fn day_split(from: i64, to: i64) -> DaySplit {
    let first = from + (DAY_MS - from.rem_euclid(DAY_MS)) % DAY_MS;
    let last = to - to.rem_euclid(DAY_MS);
    if first >= last {
        return DaySplit { days: None, edges: vec![(from, to)] };
    }
    let edges = [(from, first), (last, to)].into_iter().filter(|(start, end)| start < end).collect();
    DaySplit { days: Some((first, last)), edges }
}

/// Half-open `[from, to)` in epoch milliseconds.
type Millis = (i64, i64);

/// A span as `day_split` cuts it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct DaySplit {
    /// Its whole UTC days.
    pub days: Option<Millis>,
    /// The hours before and after them.
    pub edges: Vec<Millis>,
}

/// ` WHERE` the site's rows (of `rolled`, when given) whose `column` (an
/// hour or a day) lies in one of `ranges`, grouped by their value (the first
/// column).
fn in_ranges(sql: &mut Sql, site_id: i64, rolled: Option<&Rolled>, column: &str, ranges: &[Millis]) {
    sql.push(" WHERE site_id = ").bind(site_id);
    if let Some(rolled) = rolled {
        sql.push(" AND dimension = ").bind(rolled.dimension.code());
        match (&rolled.name, rolled.dimension) {
            (None, _) => {}
            (Some(name), RolledDimension::Name) => {
                sql.push(" AND value = ").bind(name.clone());
            }
            (Some(name), _) => {
                // Characters on both databases, as the prefix's length counts them.
                let prefix = name_by_prefix(name);
                sql.push(&format!(" AND SUBSTR(value, 1, {}) = ", prefix.chars().count())).bind(prefix);
            }
        }
    }
    sql.push(" AND (");
    for (index, (from, to)) in ranges.iter().enumerate() {
        if index > 0 {
            sql.push(" OR ");
        }
        sql.push(&format!("({column} >= ")).bind(*from).push(&format!(" AND {column} < ")).bind(*to).push(")");
    }
    sql.push(") GROUP BY 1");
}

/// The statements over a rolled dimension's hourly table and its daily one
/// (`select` names the table) that together read `span`: the whole days
/// from the daily rows, the hours at its edges from the hourly ones.
fn hours_and_days(
    backend: DbBackend,
    site_id: i64,
    rolled: Option<&Rolled>,
    span: Span,
    select: impl Fn(&str) -> String,
    tables: (&str, &str),
) -> Vec<Statement> {
    let DaySplit { days, edges } = day_split(span.from, span.to);
    let mut statements = Vec::new();
    if !edges.is_empty() {
        let mut sql = Sql::new(backend);
        sql.push(&select(tables.0));
        in_ranges(&mut sql, site_id, rolled, "hour", &edges);
        statements.push(sql.statement());
    }
    if let Some(days) = days {
        let mut sql = Sql::new(backend);
        sql.push(&select(tables.1));
        in_ranges(&mut sql, site_id, rolled, "day", &[days]);
        statements.push(sql.statement());
    }
    statements
}

/// A stored value as its group shows it: a name's pair without the name.
pub(super) fn shown(rolled: &Rolled, value: String) -> String {
    match &rolled.name {
        Some(name) if rolled.dimension != RolledDimension::Name => {
            value.strip_prefix(&name_by_prefix(name)).map(str::to_owned).unwrap_or(value)
        }
        _ => value,
    }
}

pub(super) async fn visitors(
    db: &impl ConnectionTrait,
    site_id: i64,
    rolled: &Rolled,
    span: Span,
    counts: &mut HashMap<String, Counts>,
) -> AppResult<()> {
    let select =
        |table: &str| format!("SELECT value, CAST(COALESCE(SUM(visitors), 0) AS BIGINT) AS visitors FROM {table}");
    let tables = ("value_visitor_hours", "value_visitor_days");
    for statement in hours_and_days(db.get_database_backend(), site_id, Some(rolled), span, select, tables) {
        for row in db.query_all_raw(statement).await? {
            let value = shown(rolled, row.try_get("", "value")?);
            counts.entry(value).or_default().visitors += row.try_get::<i64>("", "visitors")?;
        }
    }
    Ok(())
}

/// The rows of `dimension` in the span's hours, by value: its visits begun
/// in them (visits, bounces, pageviews, events, seconds), or pages' events.
pub(super) async fn hours(
    db: &impl ConnectionTrait,
    site_id: i64,
    rolled: &Rolled,
    span: Span,
    counts: &mut HashMap<String, Counts>,
) -> AppResult<()> {
    let dimension = rolled.dimension;
    let sum = |column: &str| format!("CAST(COALESCE(SUM({column}), 0) AS BIGINT) AS {column}");
    let backend = db.get_database_backend();
    let statements = if dimension == RolledDimension::Page {
        let select =
            |table: &str| format!("SELECT page AS value, {}, {} FROM {table}", sum("pageviews"), sum("events"));
        hours_and_days(backend, site_id, None, span, select, ("page_hours", "page_days"))
    } else {
        let columns = ["visits", "bounces", "pageviews", "events", "seconds"].map(sum).join(", ");
        let select = |table: &str| format!("SELECT value, {columns} FROM {table}");
        hours_and_days(backend, site_id, Some(rolled), span, select, ("value_hours", "value_days"))
    };
    for statement in statements {
        for row in db.query_all_raw(statement).await? {
            let value = shown(rolled, row.try_get("", "value")?);
            let group = counts.entry(value).or_default();
            group.pageviews += row.try_get::<i64>("", "pageviews")?;
            group.events += row.try_get::<i64>("", "events")?;
            if dimension != RolledDimension::Page {
                group.visits += row.try_get::<i64>("", "visits")?;
                group.bounces += row.try_get::<i64>("", "bounces")?;
                group.seconds += row.try_get::<i64>("", "seconds")?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{DaySplit, day_split};

    const H: i64 = 3_600_000;
    const D: i64 = 24 * H;

    #[test]
    fn a_span_splits_into_whole_utc_days_and_the_hours_at_its_edges() {
        type Case = (&'static str, (i64, i64), Option<(i64, i64)>, Vec<(i64, i64)>);
        let cases: Vec<Case> = vec![
            ("whole days", (10 * D, 40 * D), Some((10 * D, 40 * D)), vec![]),
            (
                "hours on both sides",
                (10 * D - 5 * H, 40 * D + 3 * H),
                Some((10 * D, 40 * D)),
                vec![(10 * D - 5 * H, 10 * D), (40 * D, 40 * D + 3 * H)],
            ),
            (
                "a start on a day, an end inside one",
                (10 * D, 12 * D + H),
                Some((10 * D, 12 * D)),
                vec![(12 * D, 12 * D + H)],
            ),
            ("less than a day", (10 * D + H, 10 * D + 5 * H), None, vec![(10 * D + H, 10 * D + 5 * H)]),
            ("a day's width across midnight", (10 * D + H, 11 * D + H), None, vec![(10 * D + H, 11 * D + H)]),
            ("exactly one day", (10 * D, 11 * D), Some((10 * D, 11 * D)), vec![]),
            ("New York's day (UTC-5)", (10 * D + 5 * H, 11 * D + 5 * H), None, vec![(10 * D + 5 * H, 11 * D + 5 * H)]),
            (
                "New York's month",
                (10 * D + 5 * H, 40 * D + 4 * H),
                Some((11 * D, 40 * D)),
                vec![(10 * D + 5 * H, 11 * D), (40 * D, 40 * D + 4 * H)],
            ),
        ];
        for (name, (from, to), days, edges) in cases {
            assert_eq!(day_split(from, to), DaySplit { days, edges }, "{name}");
        }
    }
}
