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
use crate::{
    service::{explore::sql::Sql, visit_groups::VisitGroup as By},
    time::{DAY_MS, Millis},
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

/// Rows: `model` (its code), `day` (the UTC day of the outcome), `lead` (1
/// or 0), `currency`, `grp`, `link`, `parts`, `credits`, `minor`; the
/// tallies of `model::Tally` under each of `models`, of the outcomes in any
/// of `ranges` (the outcomes are joined to their visits once, whatever the
/// number of models). With `only_link` (and `by` link), only that link's
/// credits, from the outcomes of the visitors it brought: no one else's can
/// credit it.
pub fn tallies(
    backend: DbBackend,
    site_id: i64,
    ranges: &[Millis],
    models: &[Model],
    by: By,
    only_link: Option<i64>,
) -> Statement {
    let mut sql = Sql::new(backend);
    let site = |sql: &mut Sql, from: &str| {
        sql.push(from).push(" WHERE site_id = ").bind(site_id);
        if let Some(link) = only_link {
            sql.push(" AND visitor_id IN (SELECT visitor_id FROM tracked_sessions WHERE link_id = ")
                .bind(link)
                .push(")");
        }
    };
    // `column` (an aggregate for the leads) in one of the ranges.
    let in_span = |sql: &mut Sql, column: &str| {
        sql.push(" (");
        for (at, (from, to)) in ranges.iter().enumerate() {
            if at > 0 {
                sql.push(" OR ");
            }
            sql.push(&format!("({column} >= ")).bind(*from).push(&format!(" AND {column} < ")).bind(*to).push(")");
        }
        if ranges.is_empty() {
            sql.push("1 = 0");
        }
        sql.push(")");
    };
    // A lead is a visitor's first identification: those in the ranges
    // whose identification no earlier one of theirs precedes (looked up in
    // the visitor's identities), grouped for ties. Grouping every identity
    // of the site by visitor took PostgreSQL 5.7 of 20 ms at 1M events for
    // the two open days, this 2.4.
    sql.push(
        "WITH outcomes (visitor, happened, lead, minor, currency) AS (\
         SELECT visitor_id, MIN(identified_at), CAST(1 AS BIGINT), CAST(0 AS BIGINT), CAST('' AS TEXT)",
    );
    site(&mut sql, " FROM identities i");
    sql.push(" AND");
    in_span(&mut sql, "identified_at");
    sql.push(
        " AND identified_at = (SELECT MIN(earlier.identified_at) FROM identities earlier \
         WHERE earlier.site_id = i.site_id AND earlier.visitor_id = i.visitor_id) GROUP BY visitor_id",
    );
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
         FROM outcomes), touched AS (SELECT ",
    )
    .push(&format!("o.happened - o.happened % {DAY_MS} AS day, "))
    .push("o.lead, o.minor, o.currency, ")
    .push(group_columns(by))
    .push(
        ", ROW_NUMBER() OVER (PARTITION BY o.outcome ORDER BY s.started_at, s.id) AS place, \
         COUNT(s.id) OVER (PARTITION BY o.outcome) AS touches \
         FROM numbered o LEFT JOIN tracked_sessions s \
         ON s.visitor_id = o.visitor AND s.started_at <= o.happened AND s.is_bot = ",
    )
    .bind(false)
    .push(
        ") SELECT model, day, lead, currency, grp, link, parts, COUNT(*) AS credits, \
         CAST(SUM(part) AS BIGINT) AS minor FROM (",
    );
    for (at, model) in models.iter().enumerate() {
        let (chosen, parts, part) = credited(*model);
        if at > 0 {
            sql.push(" UNION ALL ");
        }
        sql.push(&format!(
            "SELECT CAST({} AS BIGINT) AS model, day, lead, currency, grp, link, {parts} AS parts, {part} AS part \
             FROM touched WHERE {chosen}",
            model.code()
        ));
        if let Some(link) = only_link {
            sql.push(" AND link = ").bind(link);
        }
    }
    sql.push(") credited GROUP BY model, day, lead, currency, grp, link, parts");
    sql.statement()
}
