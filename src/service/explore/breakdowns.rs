//! Many visit breakdowns from one pass (the explorer page, design §17).
//! Each panel of the page alone is a statement over the range's events
//! (`figures`); with a dozen panels and the whole that `percentage` divides
//! by, the page read the same events two dozen times. Here the range's
//! visits under the page's filters are gathered once, each with the events
//! the filters keep counted, then grouped by each panel's dimension and once
//! as a whole, in one statement: the same counts, read once.

use sea_orm::ConnectionTrait;

use super::{
    figures::{self, Counts, Groups, Key, Scope},
    query::{Dimension, Filter},
    range::Span,
    sql::{self, Context, Source, Sql},
    statements::{VISIT_EVENT_COUNTS, events_in_span},
    visit_copy::{Flagged, SiteKey},
    visits,
};
use crate::{
    error::{AppError, AppResult},
    service::analytics::score_sql_text,
};

/// Whether a breakdown by `dimension` groups whole visits, so the shared
/// pass can answer it: no event or time dimension.
pub fn shareable(dimension: &Dimension) -> bool {
    !dimension.is_event() && !dimension.is_time()
}

/// The counts of the pass: the whole filtered range (with its identified
/// and hot visitors), and one set of groups
/// per dimension asked, in order, keyed as `figures::groups` keys them.
pub struct Shared {
    pub whole: Counts,
    pub groups: Vec<Groups>,
}

/// The whole's identified and hot visitors (the explorer's tiles).
const COUNTS_OF_VISITORS: &str = "COUNT(DISTINCT identified_vid) AS identified, COUNT(DISTINCT hot_vid) AS hot";

/// What each group of the pass counts: per visit its visitor, its events
/// and pageviews in the range, whether it bounced and its length.
const COUNTS: &str = "COUNT(DISTINCT vid) AS visitors, COUNT(*) AS visits, \
     CAST(COALESCE(SUM(n_pageviews), 0) AS BIGINT) AS pageviews, \
     CAST(COALESCE(SUM(n_events), 0) AS BIGINT) AS events, \
     CAST(COALESCE(SUM(bounce), 0) AS BIGINT) AS bounces, \
     CAST(COALESCE(SUM(seconds), 0) AS BIGINT) AS seconds FROM x";

/// The statement: the visits once (materialised), then a branch per dimension.
fn statement(
    scope: &Scope<'_>,
    context: &Context<'_>,
    dimensions: &[Dimension],
    filters: &[Filter],
    (resolved, stretch): (&sql::Resolved, Option<visits::Stretch>),
) -> Sql {
    let mut sql = Sql::new(context.backend);
    let score = score_sql_text("v", scope.now);
    // Filters on visits keep or drop a whole visit, so they apply once per
    // visit over the range's visits; a filter on events keeps some of a
    // visit's events, so it applies before they are counted (as `figures`
    // counts the events it keeps).
    let per_event = !filters.iter().all(Filter::is_visit_level);
    let (visitor, events, pageviews) = if per_event {
        ("x0.vid", "x0.n_events", "x0.n_pageviews")
    } else {
        (visits::VISITOR, visits::EVENTS, visits::PAGEVIEWS)
    };
    sql.push(&format!(
        "WITH x AS MATERIALIZED (SELECT {visitor} AS vid, {events} AS n_events, {pageviews} AS n_pageviews, \
         CASE WHEN s.event_count <= 1 THEN 1 ELSE 0 END AS bounce, s.duration_seconds AS seconds, \
         CASE WHEN v.status = 'identified' THEN {visitor} END AS identified_vid, \
         CASE WHEN {score} >= {} THEN {visitor} END AS hot_vid",
        scope.hot_threshold
    ));
    for (at, dimension) in dimensions.iter().enumerate() {
        sql.push(", ");
        sql::expression(&mut sql, context, Source::Events, dimension);
        sql.push(&format!(" AS d{at}"));
    }
    if per_event {
        sql.push(" FROM (SELECT e.session_id AS sid").push(VISIT_EVENT_COUNTS);
        events_in_span(&mut sql, context.site_id, context.span, (&[], filters, &[]), stretch);
        sql::filters(&mut sql, context, Source::Events, filters, &mut resolved.iter());
        sql.push(" GROUP BY 1) x0 JOIN tracked_sessions s ON s.id = x0.sid JOIN visitors v ON v.id = x0.vid");
    } else {
        visits::from(&mut sql, context, context.span, false, stretch);
        sql.push(&format!(" JOIN visitors v ON v.id = {visitor}"));
        visits::condition(&mut sql, context, context.span, false, stretch);
        sql::filters(&mut sql, context, Source::Events, filters, &mut resolved.iter());
    }
    sql.push(&format!(
        ") SELECT CAST(-1 AS BIGINT) AS panel, CAST(NULL AS TEXT) AS value, {COUNTS_OF_VISITORS}, {COUNTS}"
    ));
    for at in 0..dimensions.len() {
        sql.push(&format!(
            " UNION ALL SELECT CAST({at} AS BIGINT), d{at}, CAST(0 AS BIGINT), CAST(0 AS BIGINT), {COUNTS} GROUP BY d{at}"
        ));
    }
    sql
}

/// The pass from the visit copy (`visit_copy`), when it holds every
/// dimension and filter: the whole and every breakdown one run over the
/// copied visits (`visit_copy::Panels`), the whole's identified and hot
/// visitors looked up (`visit_copy::Flagged`).
async fn copied(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    dimensions: &[Dimension],
    filters: &[Filter],
    span: Span,
) -> AppResult<Option<Shared>> {
    let site = SiteKey { id: scope.site_id, created_at: scope.created_at };
    let flagged =
        Flagged { site_id: scope.site_id, threshold: scope.hot_threshold, score: score_sql_text("v", scope.now) };
    let found = scope.taken.visits.panels(db, site, span, (dimensions, filters), scope.now, &flagged).await?;
    Ok(found.map(|panels| Shared { whole: panels.whole, groups: panels.groups }))
}

/// Counts the range's visits under `filters`, as a whole and grouped by
/// each of `dimensions` (each one `shareable`).
pub async fn visit_breakdowns(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    dimensions: &[Dimension],
    filters: &[Filter],
    span: Span,
) -> AppResult<Shared> {
    if let Some(unfit) = dimensions.iter().find(|dimension| !shareable(dimension)) {
        return Err(AppError::internal(format!("{} is not a visit breakdown", unfit.name())));
    }
    if let Some(shared) = copied(db, scope, dimensions, filters, span).await? {
        return Ok(shared);
    }
    let backend = db.get_database_backend();
    let resolved = figures::resolve_patterns(db, scope, Source::Events, filters, &[span]).await?;
    let context =
        Context { backend, site_id: scope.site_id, span, domain: scope.domain, buckets: None, goals: scope.goals };
    let stretch = visits::stretch(db, &scope.taken.stretches, scope.site_id, span).await?;
    let sql = statement(scope, &context, dimensions, filters, (&resolved, stretch));
    let mut shared = Shared { whole: Counts::default(), groups: vec![Groups::new(); dimensions.len()] };
    for row in db.query_all_raw(sql.statement()).await? {
        let counts = Counts {
            visitors: row.try_get("", "visitors")?,
            visits: row.try_get("", "visits")?,
            pageviews: row.try_get("", "pageviews")?,
            events: row.try_get("", "events")?,
            bounces: row.try_get("", "bounces")?,
            seconds: row.try_get("", "seconds")?,
            identified: row.try_get("", "identified")?,
            hot: row.try_get("", "hot")?,
            ..Counts::default()
        };
        let panel: i64 = row.try_get("", "panel")?;
        match usize::try_from(panel).ok().and_then(|at| shared.groups.get_mut(at)) {
            Some(groups) => {
                groups.insert(vec![Key::Text(row.try_get("", "value")?)], counts);
            }
            None => shared.whole = counts,
        }
    }
    Ok(shared)
}
