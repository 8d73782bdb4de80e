//! Explore's clicks over a range's whole UTC days from `link_click_days`,
//! the human clicks per link, day, campaign, source and place that the
//! writer keeps in the same transaction as the clicks (design §16). A
//! 30-day range is a few hundred of its rows where the clicks are tens of
//! thousands; the hours at the range's edges are counted from the clicks.
//!
//! Clicks are never flagged as bots after they are stored, and erasure
//! keeps them as anonymous counts (design §14), so the days equal a recount
//! over the clicks, until a retention purge: a range starting before the
//! site's latest purge cutoff is read from the clicks.

use sea_orm::ConnectionTrait;

use super::{
    counts::{Counts, Groups, Key},
    query::{Dimension, VisitProperty},
    range::{Buckets, Span},
    sql::Sql,
    statements::{Ask, Scope, group_by_positions},
};
use crate::{
    error::AppResult,
    time::{DaySplit, Millis, day_split},
};

/// The rollup's column a click dimension reads, and whether the writer
/// keeps an absent value there as `''` (the clicks keep it as NULL).
fn column(dimension: &Dimension) -> Option<(&'static str, bool)> {
    use VisitProperty as V;
    match dimension {
        Dimension::Visit(V::Link) => Some(("slug", false)),
        Dimension::Visit(V::UtmCampaign) => Some(("campaign", false)),
        Dimension::Visit(V::UtmSource) => Some(("source", false)),
        Dimension::Visit(V::Country | V::CountryName) => Some(("country", true)),
        Dimension::Visit(V::City | V::CityName) => Some(("city", true)),
        _ => None,
    }
}

/// The span's whole days and its edges, when the days can be read from
/// the rollup: no filter, no time buckets, dimensions it keeps, and a span
/// that no retention purge has reached.
pub(super) fn plan(
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    buckets: Option<&Buckets>,
) -> Option<(Millis, Vec<Millis>)> {
    let kept = ask.filters.is_empty() && buckets.is_none() && ask.dimensions.iter().all(|d| column(d).is_some());
    if !kept || scope.purged_before.is_some_and(|cutoff| span.from < cutoff) {
        return None;
    }
    match day_split(span.from, span.to) {
        DaySplit { days: Some(days), edges } => Some((days, edges)),
        DaySplit { days: None, .. } => None,
    }
}

/// The human clicks of the site's whole days `[first, last)` by `dimensions`.
pub(super) async fn groups(
    db: &impl ConnectionTrait,
    site_id: i64,
    dimensions: &[Dimension],
    (first, last): Millis,
) -> AppResult<Groups> {
    let mut sql = Sql::new(db.get_database_backend());
    sql.push("SELECT ");
    for (at, dimension) in dimensions.iter().enumerate() {
        let Some((column, empty_is_absent)) = column(dimension) else { continue };
        if empty_is_absent {
            sql.push(&format!("NULLIF({column}, '') AS d{at}, "));
        } else {
            sql.push(&format!("{column} AS d{at}, "));
        }
    }
    sql.push("CAST(COALESCE(SUM(clicks), 0) AS BIGINT) AS clicks FROM link_click_days WHERE site_id = ")
        .bind(site_id)
        .push(" AND day >= ")
        .bind(first)
        .push(" AND day < ")
        .bind(last);
    group_by_positions(&mut sql, dimensions.len());
    let mut groups = Groups::new();
    for row in db.query_all_raw(sql.statement()).await? {
        let key = (0..dimensions.len())
            .map(|at| Ok(Key::Text(row.try_get::<Option<String>>("", &format!("d{at}"))?)))
            .collect::<AppResult<Vec<_>>>()?;
        let clicks: i64 = row.try_get("", "clicks")?;
        if clicks > 0 {
            groups.insert(key, Counts { clicks, ..Counts::default() });
        }
    }
    Ok(groups)
}
