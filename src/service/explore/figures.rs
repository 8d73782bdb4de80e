//! Reads the counts behind a query's metrics, one group per combination of
//! dimension values: the events statement (visitors, visits, pageviews,
//! events, bounces, durations, identified and hot visitors) and the clicks
//! statement, merged by group.

use sea_orm::ConnectionTrait;

use super::{
    active_hours, click_days,
    query::{Condition, Dimension, Filter, Metric},
    range::{Buckets, Span},
    revenue::{self, Currency, Revenue},
    rollups,
    sql::{self, Context, Resolved, Source, Sql},
    statements::{
        events_from, flat_statement, group_by_positions, joins_visits, nested_statement, push_where, visit_statement,
    },
    visit_copy::{Flagged, SiteKey},
    visits,
};

pub use super::{
    counts::{Counts, Groups, Key},
    statements::{Ask, Scope},
};
use crate::{
    error::AppResult,
    service::{analytics::score_sql_text, goals::Target},
};

fn key_of(row: &sea_orm::QueryResult, at: usize, dimension: &Dimension) -> AppResult<Key> {
    let column = format!("d{at}");
    Ok(if dimension.is_time() {
        Key::Bucket(row.try_get::<i64>("", &column)?)
    } else {
        Key::Text(row.try_get::<Option<String>>("", &column)?)
    })
}

/// The events statement, in the shape the query allows: per visit first for
/// whole-visit queries or `visit_duration`, else one pass per group.
async fn event_groups(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    buckets: Option<&Buckets>,
    resolved: &Resolved,
) -> AppResult<Groups> {
    let Ask { dimensions, metrics, .. } = ask;
    let backend = db.get_database_backend();
    let context = Context { backend, site_id: scope.site_id, span, domain: scope.domain, buckets, goals: scope.goals };
    let visit_metric = metrics.iter().any(|metric| metric.is_session_metric());
    // Whole visits are read from the visits, not their events; revenue is
    // kept on the events only.
    let visit_level = ask.is_visit_level();
    let whole_visits = visit_level && !revenue::asked(metrics);
    let stretch = if whole_visits || joins_visits(ask.dimensions, ask.filters, metrics) {
        visits::stretch(db, &scope.taken.stretches, scope.site_id, span).await?
    } else {
        None
    };
    let sql = if whole_visits {
        visit_statement(scope, ask, span, &context, (resolved, stretch))
    } else if metrics.contains(&Metric::VisitDuration) {
        nested_statement(scope, ask, span, &context, (resolved, stretch))
    } else {
        flat_statement(scope, ask, span, &context, (resolved, stretch))
    };
    let mut groups = Groups::new();
    for row in db.query_all_raw(sql.statement()).await? {
        let key = dimensions
            .iter()
            .enumerate()
            .map(|(at, dimension)| key_of(&row, at, dimension))
            .collect::<AppResult<Vec<_>>>()?;
        let optional = |column: &str, wanted: bool| -> AppResult<i64> {
            Ok(if wanted { row.try_get::<i64>("", column)? } else { 0 })
        };
        let counts = Counts {
            visitors: row.try_get("", "visitors")?,
            visits: row.try_get("", "visits")?,
            pageviews: row.try_get("", "pageviews")?,
            events: row.try_get("", "events")?,
            bounces: optional("bounces", visit_metric)?,
            seconds: optional("seconds", visit_metric)?,
            identified: optional("identified", metrics.contains(&Metric::IdentifiedVisitors))?,
            hot: optional("hot", metrics.contains(&Metric::HotLeads))?,
            clicks: 0,
            base_visitors: 0,
            revenue: if revenue::asked(metrics) {
                Revenue {
                    minor: row.try_get("", "revenue")?,
                    events: row.try_get("", "revenue_events")?,
                    currency: Currency::of(row.try_get("", "currency_low")?, row.try_get("", "currency_high")?),
                }
            } else {
                Revenue::default()
            },
        };
        // With no dimensions the statement answers one row even when empty.
        if !dimensions.is_empty() || counts != Counts::default() {
            groups.insert(key, counts);
        }
    }
    Ok(groups)
}

async fn click_groups(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    buckets: Option<&Buckets>,
    resolved: &Resolved,
) -> AppResult<Groups> {
    let Ask { dimensions, filters, .. } = ask;
    let backend = db.get_database_backend();
    let context = Context { backend, site_id: scope.site_id, span, domain: scope.domain, buckets, goals: scope.goals };
    let mut sql = Sql::new(backend);
    sql.push("SELECT ");
    for (at, dimension) in dimensions.iter().enumerate() {
        sql::expression(&mut sql, &context, Source::Clicks, dimension);
        sql.push(&format!(" AS d{at}, "));
    }
    sql.push("COUNT(*) AS clicks FROM link_clicks c");
    push_where(&mut sql, "c", scope.site_id, "c.created_at", span);
    sql::filters(&mut sql, &context, Source::Clicks, filters, &mut resolved.iter());
    group_by_positions(&mut sql, dimensions.len());
    let mut groups = Groups::new();
    for row in db.query_all_raw(sql.statement()).await? {
        let key = dimensions
            .iter()
            .enumerate()
            .map(|(at, dimension)| key_of(&row, at, dimension))
            .collect::<AppResult<Vec<_>>>()?;
        let clicks: i64 = row.try_get("", "clicks")?;
        if clicks > 0 {
            groups.insert(key, Counts { clicks, ..Counts::default() });
        }
    }
    Ok(groups)
}

/// The stored values each condition decided in Rust keeps, in
/// `Filter::conditions` order, from the distinct values the span holds.
pub(super) async fn resolve_patterns(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    source: Source,
    filters: &[Filter],
    spans: &[Span],
) -> AppResult<Resolved> {
    let mut conditions: Vec<&Condition> = Vec::new();
    filters.iter().for_each(|filter| {
        filter.conditions(&mut |condition| {
            if condition.decided_in_rust() {
                conditions.push(condition)
            }
        })
    });
    let backend = db.get_database_backend();
    let mut resolved = Vec::with_capacity(conditions.len());
    for condition in conditions {
        let dimension = std::slice::from_ref(&condition.dimension);
        let mut values: Vec<String> = Vec::new();
        for span in spans {
            let context = Context {
                backend,
                site_id: scope.site_id,
                span: *span,
                domain: scope.domain,
                buckets: None,
                goals: scope.goals,
            };
            let mut sql = Sql::new(backend);
            sql.push("SELECT DISTINCT COALESCE(");
            sql::expression(&mut sql, &context, source, &condition.dimension);
            sql.push(", '') AS value");
            match source {
                Source::Events => events_from(&mut sql, dimension, &[], &[]),
                Source::Clicks => {
                    sql.push(" FROM link_clicks c");
                }
            }
            let (table, time) = if source == Source::Events { ("e", "e.timestamp") } else { ("c", "c.created_at") };
            push_where(&mut sql, table, scope.site_id, time, *span);
            for row in db.query_all_raw(sql.statement()).await? {
                let value: String = row.try_get("", "value")?;
                if condition.keeps(&sql::shown(&condition.dimension, Some(&value))) {
                    values.push(value);
                }
            }
        }
        values.sort();
        values.dedup();
        resolved.push(values);
    }
    Ok(resolved)
}

/// The groups of a whole-visit query the visit copy answers (`visit_copy`):
/// stored visit dimensions and filters, time, and every metric but revenue
/// (kept on the events); identified and hot visitors are looked up
/// (`visit_copy::Flagged`).
async fn copied_groups(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    buckets: Option<&Buckets>,
) -> AppResult<Option<Groups>> {
    if revenue::asked(ask.metrics) {
        return Ok(None);
    }
    let site = SiteKey { id: scope.site_id, created_at: scope.created_at };
    let flagged =
        ask.metrics.iter().any(|metric| matches!(metric, Metric::IdentifiedVisitors | Metric::HotLeads)).then(|| {
            Flagged { site_id: scope.site_id, threshold: scope.hot_threshold, score: score_sql_text("v", scope.now) }
        });
    let reading = &scope.taken.visits;
    Ok(reading.groups(db, site, (span, buckets), (ask.dimensions, ask.filters), scope.now, flagged.as_ref()).await?)
}

/// The groups of a query by or filtered on an event's page or name the
/// event copy answers (`visit_copy`): as the flat events statement counts
/// them, for the metrics that count events, pageviews, visits and visitors.
async fn copied_event_groups(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    buckets: Option<&Buckets>,
) -> AppResult<Option<Groups>> {
    if ask.is_visit_level() {
        return Ok(None);
    }
    let site = SiteKey { id: scope.site_id, created_at: scope.created_at };
    let reading = &scope.taken.visits;
    let asked = (ask.dimensions, ask.filters, ask.metrics);
    Ok(reading.event_groups(db, site, (span, buckets), asked, (scope.goals, scope.now)).await?)
}

/// Each of the site's goals' counts under `ask`'s filters, in their order,
/// as `groups` counts `ask` with that goal's condition added, from one
/// walk of the event copy; `None` when the copy does not answer. Only
/// where `groups` would read the copy for each goal: under filters, or
/// for a page goal (one custom event's goal alone is rolled up).
pub async fn goal_groups(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
) -> AppResult<Option<Vec<Counts>>> {
    let page_goal = scope.goals.iter().any(|goal| matches!(goal.target, Target::Page(_)));
    if !ask.dimensions.is_empty() || (ask.filters.is_empty() && !page_goal) {
        return Ok(None);
    }
    let site = SiteKey { id: scope.site_id, created_at: scope.created_at };
    let reading = &scope.taken.visits;
    Ok(reading.goal_groups(db, site, (span, ask.filters, ask.metrics), (scope.goals, scope.now)).await?)
}

/// The groups of one span: events and clicks as the metrics need them.
pub async fn groups(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    buckets: Option<&Buckets>,
) -> AppResult<Groups> {
    let Ask { filters, metrics, .. } = ask;
    let mut all = Groups::new();
    // The identified and hot among a range's visitors are counted over the
    // visit copy where it answers: the rollups read them from the visitors'
    // rows (at 1M events 27 ms for 30 days, and 21 for the empty month
    // before it), the copy looks them up among the visits it keeps.
    let flags = metrics.iter().any(|metric| matches!(metric, Metric::IdentifiedVisitors | Metric::HotLeads));
    if flags && let Some(groups) = copied_groups(db, scope, ask, span, buckets).await? {
        return Ok(groups);
    }
    let rolled = rollups::plan(ask, scope.goals).filter(|_| buckets.is_none());
    if let Some(rolled) = &rolled
        && let Some(groups) = rollups::groups(db, scope, ask, rolled, span).await?
    {
        return Ok(groups);
    }
    if active_hours::plan(ask)
        && let Some(groups) = active_hours::groups(db, scope, ask, span, buckets).await?
    {
        return Ok(groups);
    }
    if metrics.iter().any(|metric| *metric != Metric::Clicks) {
        let copied = match copied_groups(db, scope, ask, span, buckets).await? {
            Some(groups) => Some(groups),
            None => copied_event_groups(db, scope, ask, span, buckets).await?,
        };
        all = match copied {
            Some(groups) => groups,
            None => {
                let resolved = resolve_patterns(db, scope, Source::Events, filters, &[span]).await?;
                event_groups(db, scope, ask, span, buckets, &resolved).await?
            }
        };
    }
    if metrics.contains(&Metric::Clicks) {
        for (key, counts) in clicks(db, scope, ask, span, buckets).await? {
            all.entry(key).or_default().clicks = counts.clicks;
        }
    }
    Ok(all)
}

/// The clicks of one span: its whole days from the daily rollup where it
/// counts them (`click_days`), the rest from the clicks.
async fn clicks(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    buckets: Option<&Buckets>,
) -> AppResult<Groups> {
    let resolved = resolve_patterns(db, scope, Source::Clicks, ask.filters, &[span]).await?;
    let Some((days, edges)) = click_days::plan(scope, ask, span, buckets) else {
        return click_groups(db, scope, ask, span, buckets, &resolved).await;
    };
    let mut all = click_days::groups(db, scope.site_id, ask.dimensions, days).await?;
    for (from, to) in edges {
        for (key, counts) in click_groups(db, scope, ask, Span { from, to, ..span }, None, &resolved).await? {
            all.entry(key).or_default().clicks += counts.clicks;
        }
    }
    Ok(all)
}

/// The site's oldest stored event, where `all` begins.
pub async fn first_event(db: &impl ConnectionTrait, site_id: i64) -> AppResult<Option<i64>> {
    let mut sql = Sql::new(db.get_database_backend());
    sql.push("SELECT MIN(timestamp) AS first FROM events WHERE site_id = ").bind(site_id);
    let row = db.query_one_raw(sql.statement()).await?;
    Ok(match row {
        Some(row) => row.try_get::<Option<i64>>("", "first")?,
        None => None,
    })
}
