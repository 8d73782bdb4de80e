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
    time::{DaySplit, Millis, day_split},
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
