//! Explore from the writer's per-value rollups (design §17): for a range
//! that runs past every stored event and starts on an hour, with no filter
//! and at most one dimension the rollups keep, the figures are read from
//! hours and from one row per visitor and value, not from the range's
//! visits or events.
//!
//! - Visitors: the visitors whose latest human event with the value is in
//!   an hour of the range (`visitor_values`, counted by that hour in
//!   `value_visitor_hours`). Nothing lies after the range, so such an event
//!   is in it, and a visitor with one has that row.
//! - Visits, bounces, pageviews, events, seconds: the visits begun in the
//!   range's hours (`value_hours`), which lie wholly in it, plus those an
//!   earlier start cuts (begun at most `SESSION_MAX_MS` before it), counted
//!   from their events in the range as the visit statement does. Event
//!   dimensions count events by their own hour (`page_hours` for pages).
//!
//! The rollups sum what the rows held before any retention purge, so a range
//! starting before the site's latest purge cutoff is read from the rows.

use std::collections::HashMap;

use sea_orm::ConnectionTrait;

use super::{
    counts::{Counts, Groups, Key},
    query::{Condition, Dimension, EventProperty, Filter, Metric, Operator, VisitProperty, VisitorProperty},
    range::Span,
    rolled_rows::{self, Rolled},
    sql::{self, Context, Source, Sql},
    statements::{Ask, Scope},
};
use crate::{
    error::AppResult,
    service::{
        analytics::score_sql_text,
        goals::{Goal, Target},
        scoring::RECENCY_MAX,
        tracking::{sessionize::SESSION_MAX_MS, value_rollups::RolledDimension},
    },
    time::HOUR_MS,
};

/// The rolled dimension a query's dimension reads, if the rollups keep it.
fn rolled(dimension: &Dimension) -> Option<RolledDimension> {
    use RolledDimension as R;
    use VisitProperty as V;
    Some(match dimension {
        Dimension::Visit(property) => match property {
            V::Source => R::Source,
            V::Referrer => R::Referrer,
            V::Channel => R::Channel,
            V::UtmSource => R::UtmSource,
            V::UtmMedium => R::UtmMedium,
            V::UtmCampaign => R::UtmCampaign,
            V::UtmContent => R::UtmContent,
            V::UtmTerm => R::UtmTerm,
            V::Device => R::Device,
            V::Browser => R::Browser,
            V::Os => R::Os,
            V::Country | V::CountryName => R::Country,
            V::Region | V::RegionName => R::Region,
            V::City | V::CityName => R::City,
            V::EntryPage => R::EntryPage,
            V::ExitPage => R::ExitPage,
            V::Link => return None,
        },
        Dimension::Visitor(VisitorProperty::Status) => R::Status,
        Dimension::Visitor(VisitorProperty::Account) => R::Account,
        Dimension::Event(EventProperty::Page) => R::Page,
        Dimension::Event(EventProperty::Name) => R::Name,
        _ => return None,
    })
}

/// The custom event name a filter condition keeps, if it keeps exactly the
/// custom events of one name: `event:name` as the rows read it on the name
/// column, or `event:goal` naming one goal that is a custom event without a
/// property. `pageview` and the blank name are left to the rows (the name
/// rows count pageviews under `pageview`).
fn custom_event_name(condition: &Condition, goals: &[Goal]) -> Option<String> {
    let name = match &condition.dimension {
        Dimension::Event(EventProperty::Name) => sql::custom_event_name(condition)?,
        Dimension::Event(EventProperty::Goal) if condition.operator == Operator::Is => {
            let mut kept = goals.iter().filter(|goal| condition.keeps(&goal.name));
            match (kept.next(), kept.next()) {
                (Some(Goal { target: Target::Event { name, prop: None }, .. }), None) => name.clone(),
                _ => return None,
            }
        }
        _ => return None,
    };
    (!name.is_empty() && name != "pageview").then_some(name)
}

/// The rolled rows that answer the query's shape, if any do: no time, at
/// most one dimension the rollups keep, no filter or one that keeps one
/// custom event name (then the whole site or a `NAME_BY` dimension), and
/// metrics the rows hold (visitors only where visitor rows are kept; visit
/// figures only for the whole site and visit dimensions).
pub(super) fn plan(ask: Ask<'_>, goals: &[Goal]) -> Option<Rolled> {
    let name = match ask.filters {
        [] => None,
        [Filter::Condition(condition)] => Some(custom_event_name(condition, goals)?),
        _ => return None,
    };
    let unfiltered = match ask.dimensions {
        [] => RolledDimension::Total,
        [one] => rolled(one)?,
        _ => return None,
    };
    let dimension = match (&name, unfiltered) {
        (None, dimension) => dimension,
        (Some(_), RolledDimension::Total) => RolledDimension::Name,
        (Some(_), visit) => visit.name_by()?,
    };
    let fits = |metric: &Metric| match metric {
        Metric::Pageviews | Metric::Events => true,
        // A rate's base is the query without its goal, read apart.
        Metric::Visitors | Metric::ConversionRate if name.is_some() => true,
        Metric::Visitors | Metric::Percentage => name.is_none() && dimension.has_visitor_rows(),
        Metric::Visits | Metric::ViewsPerVisit | Metric::BounceRate | Metric::VisitDuration => !dimension.is_event(),
        Metric::IdentifiedVisitors | Metric::HotLeads => dimension == RolledDimension::Total,
        _ => false,
    };
    ask.metrics.iter().all(fits).then_some(Rolled { dimension, name })
}

/// Whether the rollups hold the span exactly: it starts on an hour, at or
/// after the latest purge cutoff, and no stored event lies at or after its end.
pub(super) async fn holds(db: &impl ConnectionTrait, scope: &Scope<'_>, span: Span) -> AppResult<bool> {
    Ok(starts_held(scope, span) && nothing_from(db, scope.site_id, span.to).await?)
}

/// Whether the hourly rollups hold the span from its start: it starts on an
/// hour, at or after the site's latest purge cutoff.
pub(super) fn starts_held(scope: &Scope<'_>, span: Span) -> bool {
    span.from.rem_euclid(HOUR_MS) == 0 && scope.purged_before.is_none_or(|cutoff| span.from >= cutoff)
}

/// Whether no stored event of the site lies at or after `to`: its latest,
/// one step down the `(site_id, timestamp)` index. (An `EXISTS` of a later
/// event read the same index, but PostgreSQL's generic plan for it scanned
/// the site's events: 90 ms at 1M.)
pub(super) async fn nothing_from(db: &impl ConnectionTrait, site_id: i64, to: i64) -> AppResult<bool> {
    let mut sql = Sql::new(db.get_database_backend());
    sql.push("SELECT MAX(timestamp) AS latest FROM events WHERE site_id = ").bind(site_id);
    let latest = match db.query_one_raw(sql.statement()).await? {
        Some(row) => row.try_get::<Option<i64>>("", "latest")?,
        None => None,
    };
    Ok(latest.is_none_or(|latest| latest < to))
}

/// The groups of one span from the rollups, or `None` when they do not hold
/// it (the caller reads the rows).
pub(super) async fn groups(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    ask: Ask<'_>,
    rolled: &Rolled,
    span: Span,
) -> AppResult<Option<Groups>> {
    if !holds(db, scope, span).await? {
        return Ok(None);
    }
    let dimension = rolled.dimension;
    let mut counts: HashMap<String, Counts> = HashMap::new();
    if ask.metrics.iter().any(|metric| metric.counts_visitors()) {
        rolled_rows::visitors(db, scope.site_id, rolled, span, &mut counts).await?;
    }
    rolled_rows::hours(db, scope.site_id, rolled, span, &mut counts).await?;
    if !dimension.is_event() {
        cut_visits(db, scope, ask.dimensions.first(), span, &mut counts).await?;
    }
    if ask.metrics.iter().any(|metric| matches!(metric, Metric::IdentifiedVisitors | Metric::HotLeads)) {
        known_and_hot(db, scope, span, counts.entry(String::new()).or_default()).await?;
    }
    let session_metric = ask.metrics.iter().any(|metric| metric.is_session_metric());
    let mut groups = Groups::new();
    for (value, mut group) in counts {
        if !session_metric {
            group.bounces = 0;
            group.seconds = 0;
        }
        // As the rows' statements: a group with nothing in it is no group
        // (a value whose visits were all erased keeps its zeroed hours).
        if group == Counts::default() {
            continue;
        }
        let key =
            if ask.dimensions.is_empty() { Vec::new() } else { vec![Key::Text(Some(value).filter(|v| !v.is_empty()))] };
        groups.insert(key, group);
    }
    Ok(Some(groups))
}

/// The range's identified visitors and hot leads (the explorer's tiles):
/// those seen since its start (the visitors' index) with an active hour in
/// it. A hot lead's stored score is at most the recency points below the
/// threshold, so only known people and such scores are looked up.
pub(super) async fn known_and_hot(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    span: Span,
    whole: &mut Counts,
) -> AppResult<()> {
    let score = score_sql_text("v", scope.now);
    let threshold = scope.hot_threshold;
    let mut sql = Sql::new(db.get_database_backend());
    sql.push(&format!(
        "SELECT COUNT(CASE WHEN v.status = 'identified' THEN 1 END) AS identified, \
         COUNT(CASE WHEN {score} >= {threshold} THEN 1 END) AS hot \
         FROM visitors v WHERE v.site_id = "
    ))
    .bind(scope.site_id)
    .push(" AND v.is_bot IN (")
    .bind(false)
    .push(", ")
    .bind(true)
    .push(") AND v.last_seen >= ")
    .bind(span.from)
    .push(&format!(" AND (v.status = 'identified' OR v.score >= {})", threshold.saturating_sub(RECENCY_MAX)))
    .push(" AND EXISTS (SELECT 1 FROM visitor_active_hours a WHERE a.visitor_id = v.id AND a.hour >= ")
    .bind(span.from)
    .push(" AND a.hour < ")
    .bind(span.to)
    .push(")");
    if let Some(row) = db.query_one_raw(sql.statement()).await? {
        whole.identified = row.try_get("", "identified")?;
        whole.hot = row.try_get("", "hot")?;
    }
    Ok(())
}

/// The visits begun before the span that reach into it: their events in
/// the span, as the visit statement counts a visit an edge cuts. The cut
/// visits are found first, on the start index that carries their end, and
/// their events then read by visit: in one join PostgreSQL expected
/// thousands of cut visits where there were six and hashed every event of
/// the span (120 to 236 ms at 1M events).
async fn cut_visits(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    dimension: Option<&Dimension>,
    span: Span,
    counts: &mut HashMap<String, Counts>,
) -> AppResult<()> {
    let backend = db.get_database_backend();
    let mut sql = Sql::new(backend);
    sql.push("SELECT id FROM tracked_sessions WHERE site_id = ")
        .bind(scope.site_id)
        .push(" AND started_at >= ")
        .bind(span.from.saturating_sub(SESSION_MAX_MS))
        .push(" AND started_at < ")
        .bind(span.from)
        .push(" AND ended_at >= ")
        .bind(span.from);
    let mut cut = Vec::new();
    for row in db.query_all_raw(sql.statement()).await? {
        cut.push(row.try_get::<i64>("", "id")?);
    }
    if cut.is_empty() {
        return Ok(());
    }
    let context =
        Context { backend, site_id: scope.site_id, span, domain: scope.domain, buckets: None, goals: scope.goals };
    let mut sql = Sql::new(backend);
    // The value as the rows' statements read it (one per visit, so its
    // least); the whole site has one.
    sql.push("SELECT COALESCE(MIN(");
    match dimension {
        Some(dimension) => sql::expression(&mut sql, &context, Source::Events, dimension),
        None => {
            sql.push("''");
        }
    }
    sql.push(
        "), '') AS value, MIN(s.event_count) AS s_events, MIN(s.duration_seconds) AS s_seconds, \
         COUNT(*) AS n_events, SUM(CASE WHEN e.event_type = 'pageview' THEN 1 ELSE 0 END) AS n_pageviews \
         FROM tracked_sessions s JOIN events e ON e.session_id = s.id",
    );
    if dimension.is_some_and(|dimension| matches!(dimension, Dimension::Visitor(_))) {
        sql.push(" JOIN visitors v ON v.id = s.visitor_id");
    }
    // `+s.site_id`: read as a condition, not an index to scan (SQLite
    // otherwise walks the site's every visit: 330 ms at 1M events).
    sql.push(" WHERE e.session_id IN ")
        .in_ids(cut)
        .push(" AND +s.site_id = ")
        .bind(scope.site_id)
        .push(" AND e.is_bot = ")
        .bind(false)
        .push(" AND e.timestamp >= ")
        .bind(span.from)
        .push(" AND e.timestamp < ")
        .bind(span.to)
        .push(" GROUP BY s.id");
    for row in db.query_all_raw(sql.statement()).await? {
        let value: String = row.try_get("", "value")?;
        let group = counts.entry(value).or_default();
        group.visits += 1;
        group.bounces += i64::from(row.try_get::<i32>("", "s_events")? <= 1);
        group.seconds += row.try_get::<i64>("", "s_seconds")?;
        group.events += row.try_get::<i64>("", "n_events")?;
        group.pageviews += row.try_get::<i64>("", "n_pageviews")?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "rollups_tests.rs"]
mod tests;
