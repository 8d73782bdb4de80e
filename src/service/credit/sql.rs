//! The attribution report's one statement. The database gathers the range's
//! outcomes (each visitor's first identification, server-side conversions
//! tied to a visitor, events carrying revenue), joins each to its visitor's
//! human visits that began no later than it, numbers them by start, keeps
//! those the model credits, splits the money (`model.rs` says how) and counts
//! alike credits together. Only the tallies, a few per group, come back: at
//! 10M events the range has 130k leads with 220k visits between them, which
//! read as rows took seconds.

use sea_orm::{DbBackend, Statement};

use super::model::Model;
use crate::service::{
    explore::{range::Span, sql::Sql},
    visit_groups::VisitGroup as By,
};

/// The grouping's column of a visit, as `grp` (text) and `link` (a link id).
fn group_columns(by: By) -> &'static str {
    match by {
        By::Channel => "s.channel AS grp, CAST(NULL AS BIGINT) AS link",
        By::Source => "s.source AS grp, CAST(NULL AS BIGINT) AS link",
        By::Campaign => "s.utm_campaign AS grp, CAST(NULL AS BIGINT) AS link",
        By::Link => "CAST(NULL AS TEXT) AS grp, s.link_id AS link",
    }
}

/// Which numbered visits (`place` of `touches`) the model credits, how many
/// parts each outcome is split into (0: no visit, the outcome whole), and
/// each part's minor units.
fn credited(model: Model) -> (&'static str, &'static str, &'static str) {
    let whole = "CAST(CASE WHEN touches = 0 THEN 0 ELSE 1 END AS BIGINT)";
    match model {
        Model::FirstTouch => ("place = 1", whole, "minor"),
        Model::LastTouch => ("(place = touches OR touches = 0)", whole, "minor"),
        Model::Linear => (
            "1 = 1",
            "touches",
            "CASE WHEN touches = 0 THEN minor \
             ELSE minor / touches + CASE WHEN place <= minor % touches THEN 1 ELSE 0 END END",
        ),
    }
}

/// Rows: `lead` (1 or 0), `currency`, `grp`, `link`, `parts`, `credits`,
/// `minor`; the tallies of `model::Tally`.
pub fn tallies(backend: DbBackend, site_id: i64, span: Span, model: Model, by: By) -> Statement {
    let (chosen, parts, part) = credited(model);
    let mut sql = Sql::new(backend);
    let site = |sql: &mut Sql, from: &str| {
        sql.push(from).push(" WHERE site_id = ").bind(site_id);
    };
    // Both ends of the range on `column` (an aggregate for the leads).
    let in_span = |sql: &mut Sql, column: &str| {
        sql.push(&format!(" {column} >= ")).bind(span.from).push(&format!(" AND {column} < ")).bind(span.to);
    };
    sql.push(
        "WITH outcomes (visitor, happened, lead, minor, currency) AS (\
         SELECT visitor_id, MIN(identified_at), CAST(1 AS BIGINT), CAST(0 AS BIGINT), CAST('' AS TEXT)",
    );
    site(&mut sql, " FROM identities");
    sql.push(" GROUP BY visitor_id HAVING");
    in_span(&mut sql, "MIN(identified_at)");
    sql.push(" UNION ALL SELECT visitor_id, occurred_at, CAST(0 AS BIGINT), amount_minor, currency");
    site(&mut sql, " FROM conversions");
    sql.push(" AND visitor_id IS NOT NULL AND");
    in_span(&mut sql, "occurred_at");
    sql.push(" UNION ALL SELECT visitor_id, timestamp, CAST(0 AS BIGINT), revenue_minor, revenue_currency");
    site(&mut sql, " FROM events");
    sql.push(" AND is_bot = ").bind(false).push(" AND revenue_minor IS NOT NULL AND revenue_currency IS NOT NULL AND");
    in_span(&mut sql, "timestamp");
    sql.push(
        "), numbered AS (SELECT ROW_NUMBER() OVER () AS outcome, visitor, happened, lead, minor, currency \
         FROM outcomes), touched AS (SELECT o.lead, o.minor, o.currency, ",
    )
    .push(group_columns(by))
    .push(
        ", ROW_NUMBER() OVER (PARTITION BY o.outcome ORDER BY s.started_at, s.id) AS place, \
         COUNT(s.id) OVER (PARTITION BY o.outcome) AS touches \
         FROM numbered o LEFT JOIN tracked_sessions s \
         ON s.visitor_id = o.visitor AND s.started_at <= o.happened AND s.is_bot = ",
    )
    .bind(false)
    .push(") SELECT lead, currency, grp, link, parts, COUNT(*) AS credits, CAST(SUM(part) AS BIGINT) AS minor FROM (")
    .push("SELECT lead, currency, grp, link, ")
    .push(parts)
    .push(" AS parts, ")
    .push(part)
    .push(" AS part FROM touched WHERE ")
    .push(chosen)
    .push(") credited GROUP BY lead, currency, grp, link, parts");
    sql.statement()
}
