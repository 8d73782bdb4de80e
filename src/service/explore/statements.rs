//! The three shapes of the events statement (`figures::event_groups`
//! picks one): over the range's visits for whole-visit queries, per visit
//! and group for `visit_duration`, one pass per group for the rest; and what
//! every statement over the events starts from (the scope, the window, the
//! joins).

use super::{
    query::{Dimension, Filter, Metric},
    range::Span,
    revenue,
    sql::{self, Context, Resolved, Source, Sql},
    taken::Taken,
    visits,
};
use entity::site;

use crate::service::{analytics::score_sql_text, goals::Goal};

/// What a visit's events add up to, after its `session_id AS sid` (and
/// any grouping column): its visitor, its events and its pageviews.
pub const VISIT_EVENT_COUNTS: &str = ", MIN(e.visitor_id) AS vid, COUNT(*) AS n_events, \
     SUM(CASE WHEN e.event_type = 'pageview' THEN 1 ELSE 0 END) AS n_pageviews";

/// ` GROUP BY 1, 2, ...` over the first `columns` columns; nothing for none.
pub fn group_by_positions(sql: &mut Sql, columns: usize) {
    if columns > 0 {
        let grouping: Vec<String> = (1..=columns).map(|at| at.to_string()).collect();
        sql.push(&format!(" GROUP BY {}", grouping.join(", ")));
    }
}

/// What the statements need beyond the query.
pub struct Scope<'a> {
    pub site_id: i64,
    pub domain: &'a str,
    pub hot_threshold: i32,
    pub now: i64,
    pub goals: &'a [Goal],
    /// The site's latest retention cutoff (`rollups` reads no range before it).
    pub purged_before: Option<i64>,
    pub created_at: i64,
    /// What this snapshot has already taken.
    pub taken: &'a Taken,
}

impl<'a> Scope<'a> {
    /// A site's scope for a query answered at `now`, with its goals, on a
    /// snapshot whose takings `taken` keeps.
    pub fn of(site: &'a site::Model, now: i64, goals: &'a [Goal], taken: &'a Taken) -> Self {
        Scope {
            site_id: site.id,
            domain: &site.domain,
            hot_threshold: site.hot_threshold,
            now,
            goals,
            purged_before: site.purged_before,
            created_at: site.created_at,
            taken,
        }
    }
}

/// What is counted: per group of `dimensions`, the rows `filters` keep, for `metrics`.
#[derive(Clone, Copy)]
pub struct Ask<'a> {
    pub dimensions: &'a [Dimension],
    pub filters: &'a [Filter],
    pub metrics: &'a [Metric],
}

impl Ask<'_> {
    /// Whether the query reads whole visits: no event dimension, no event
    /// or behaviour filter.
    pub fn is_visit_level(&self) -> bool {
        self.dimensions.iter().all(|dimension| !dimension.is_event()) && self.filters.iter().all(Filter::is_visit_level)
    }
}

pub fn push_where(sql: &mut Sql, table: &str, site_id: i64, time: &str, span: Span) {
    sql.push(&format!(" WHERE {table}.site_id = "))
        .bind(site_id)
        .push(&format!(" AND {table}.is_bot = "))
        .bind(false)
        .push(&format!(" AND {time} >= "))
        .bind(span.from)
        .push(&format!(" AND {time} < "))
        .bind(span.to);
}

/// Whether the events statement joins each event's visit (`s`).
pub fn joins_visits(dimensions: &[Dimension], filters: &[Filter], metrics: &[Metric]) -> bool {
    metrics.iter().any(|metric| metric.is_session_metric()) || sql::needs_join(dimensions, filters, false)
}

pub fn events_from(sql: &mut Sql, dimensions: &[Dimension], filters: &[Filter], metrics: &[Metric]) {
    sql.push(" FROM events e");
    if joins_visits(dimensions, filters, metrics) {
        sql.push(" JOIN tracked_sessions s ON s.id = e.session_id");
    }
    visitors_joined(sql, dimensions, filters, metrics);
}

/// ` FROM` the events with their visits and visitors as the query needs and
/// ` WHERE` the site's human events in the span, as `events_from` and
/// `push_where` write them; but with a `stretch` (SQLite) and the visits
/// joined anyway, the visits are read first, in table order, and each
/// one's events through the visit index: looking the visit of each of a
/// month's events up took 1.6 s at 1M events, this 0.2 s (`visits.rs`
/// says why every event of the span has its visit in the stretch).
pub fn events_in_span(
    sql: &mut Sql,
    site_id: i64,
    span: Span,
    (dimensions, filters, metrics): (&[Dimension], &[Filter], &[Metric]),
    stretch: Option<visits::Stretch>,
) {
    match stretch.filter(|_| joins_visits(dimensions, filters, metrics)) {
        Some(stretch) => {
            // SQLite keeps the left table of a CROSS JOIN outermost.
            sql.push(&format!(
                " FROM tracked_sessions s NOT INDEXED CROSS JOIN events e INDEXED BY {} ON e.session_id = s.id",
                visits::EVENTS_BY_VISIT
            ));
            visitors_joined(sql, dimensions, filters, metrics);
            push_where(sql, "e", site_id, "e.timestamp", span);
            sql.push(" AND ");
            visits::within(sql, stretch, site_id, span);
        }
        None => {
            events_from(sql, dimensions, filters, metrics);
            push_where(sql, "e", site_id, "e.timestamp", span);
        }
    }
}

fn visitors_joined(sql: &mut Sql, dimensions: &[Dimension], filters: &[Filter], metrics: &[Metric]) {
    let visitor_metric = metrics.iter().any(|metric| matches!(metric, Metric::IdentifiedVisitors | Metric::HotLeads));
    if visitor_metric || sql::needs_join(dimensions, filters, true) {
        sql.push(" JOIN visitors v ON v.id = e.visitor_id");
    }
}

/// A query about whole visits (visit and visitor dimensions and filters,
/// time): each visit of the range is read once (`visits`), then grouped by
/// its dimensions.
pub(super) fn visit_statement(
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    context: &Context<'_>,
    (resolved, stretch): (&Resolved, Option<visits::Stretch>),
) -> Sql {
    let Ask { dimensions, filters, metrics } = ask;
    let mut sql = Sql::new(context.backend);
    let time = dimensions.iter().any(Dimension::is_time);
    sql.push("SELECT ");
    for (at, dimension) in dimensions.iter().enumerate() {
        if dimension.is_time() {
            sql.push(&visits::bucket(context));
        } else {
            sql::expression(&mut sql, context, Source::Events, dimension);
        }
        sql.push(&format!(" AS d{at}, "));
    }
    let sum = |column: &str| format!("CAST(COALESCE(SUM({column}), 0) AS BIGINT)");
    let visitor = visits::VISITOR;
    sql.push(&format!(
        "COUNT(DISTINCT {visitor}) AS visitors, COUNT(*) AS visits, {} AS pageviews, {} AS events, {} AS bounces, {} AS seconds",
        sum(visits::PAGEVIEWS),
        sum(visits::EVENTS),
        sum("CASE WHEN s.event_count <= 1 THEN 1 ELSE 0 END"),
        sum("s.duration_seconds"),
    ));
    if metrics.contains(&Metric::IdentifiedVisitors) {
        sql.push(&format!(", COUNT(DISTINCT CASE WHEN v.status = 'identified' THEN {visitor} END) AS identified"));
    }
    if metrics.contains(&Metric::HotLeads) {
        let score = score_sql_text("v", scope.now);
        sql.push(&format!(", COUNT(DISTINCT CASE WHEN {score} >= {} THEN {visitor} END) AS hot", scope.hot_threshold));
    }
    visits::from(&mut sql, context, span, time, stretch);
    let visitor_metric = metrics.iter().any(|metric| matches!(metric, Metric::IdentifiedVisitors | Metric::HotLeads));
    if visitor_metric || sql::needs_join(dimensions, filters, true) {
        sql.push(&format!(" JOIN visitors v ON v.id = {visitor}"));
    }
    visits::condition(&mut sql, context, span, time, stretch);
    sql::filters(&mut sql, context, Source::Events, filters, &mut resolved.iter());
    group_by_positions(&mut sql, dimensions.len());
    sql
}

/// Per visit and group first, then per group: each visit's seconds count
/// once however many of its events the group holds (`visit_duration`).
pub(super) fn nested_statement(
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    context: &Context<'_>,
    (resolved, stretch): (&Resolved, Option<visits::Stretch>),
) -> Sql {
    let Ask { dimensions, filters, metrics } = ask;
    let visit_metric = metrics.iter().any(|metric| metric.is_session_metric());
    let mut sql = Sql::new(context.backend);
    // The visit and the dimensions come first: the grouping names them by position.
    sql.push("SELECT e.session_id AS sid");
    for (at, dimension) in dimensions.iter().enumerate() {
        sql.push(", ");
        sql::expression(&mut sql, context, Source::Events, dimension);
        sql.push(&format!(" AS d{at}"));
    }
    sql.push(VISIT_EVENT_COUNTS);
    if visit_metric {
        sql.push(", MIN(s.event_count) AS s_events, MIN(s.duration_seconds) AS s_seconds");
    }
    if metrics.contains(&Metric::IdentifiedVisitors) {
        sql.push(", MIN(CASE WHEN v.status = 'identified' THEN 1 ELSE 0 END) AS identified");
    }
    if metrics.contains(&Metric::HotLeads) {
        let score = score_sql_text("v", scope.now);
        sql.push(&format!(", MIN(CASE WHEN {score} >= {} THEN 1 ELSE 0 END) AS hot", scope.hot_threshold));
    }
    if revenue::asked(metrics) {
        sql.push(&revenue::sums(true, "e.revenue_"));
    }
    events_in_span(&mut sql, scope.site_id, span, (dimensions, filters, metrics), stretch);
    sql::filters(&mut sql, context, Source::Events, filters, &mut resolved.iter());
    group_by_positions(&mut sql, dimensions.len() + 1);

    let mut outer = String::from("SELECT ");
    for at in 0..dimensions.len() {
        outer.push_str(&format!("d{at}, "));
    }
    let sum = |column: &str| format!("CAST(COALESCE(SUM({column}), 0) AS BIGINT)");
    outer.push_str(&format!(
        "COUNT(DISTINCT vid) AS visitors, COUNT(*) AS visits, {} AS pageviews, {} AS events",
        sum("n_pageviews"),
        sum("n_events")
    ));
    if visit_metric {
        outer.push_str(&format!(
            ", {} AS bounces, {} AS seconds",
            sum("CASE WHEN s_events <= 1 THEN 1 ELSE 0 END"),
            sum("s_seconds")
        ));
    }
    if metrics.contains(&Metric::IdentifiedVisitors) {
        outer.push_str(", COUNT(DISTINCT CASE WHEN identified = 1 THEN vid END) AS identified");
    }
    if metrics.contains(&Metric::HotLeads) {
        outer.push_str(", COUNT(DISTINCT CASE WHEN hot = 1 THEN vid END) AS hot");
    }
    if revenue::asked(metrics) {
        outer.push_str(&revenue::sums(false, ""));
    }
    outer.push_str(" FROM (");
    sql.text = format!("{outer}{}) x", sql.text);
    group_by_positions(&mut sql, dimensions.len());
    sql
}

/// One pass per group: every metric but `visit_duration` is a count or a
/// distinct count over the events (a bounce is a visit with one event, so
/// bounces are the distinct such visits).
pub(super) fn flat_statement(
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    context: &Context<'_>,
    (resolved, stretch): (&Resolved, Option<visits::Stretch>),
) -> Sql {
    let Ask { dimensions, filters, metrics } = ask;
    let mut sql = Sql::new(context.backend);
    sql.push("SELECT ");
    for (at, dimension) in dimensions.iter().enumerate() {
        sql::expression(&mut sql, context, Source::Events, dimension);
        sql.push(&format!(" AS d{at}, "));
    }
    // A distinct count sorts every event of the window: only the ones a
    // metric reads are taken (an events panel needs neither).
    let distinct = |wanted: bool, column: &str| {
        if wanted { format!("COUNT(DISTINCT {column})") } else { "CAST(0 AS BIGINT)".to_owned() }
    };
    sql.push(&format!(
        "{} AS visitors, {} AS visits, \
         CAST(COALESCE(SUM(CASE WHEN e.event_type = 'pageview' THEN 1 ELSE 0 END), 0) AS BIGINT) AS pageviews, \
         COUNT(*) AS events",
        distinct(metrics.iter().any(|metric| metric.counts_visitors()), "e.visitor_id"),
        distinct(metrics.iter().any(|metric| metric.counts_visits()), "e.session_id"),
    ));
    if metrics.iter().any(|metric| metric.is_session_metric()) {
        sql.push(", COUNT(DISTINCT CASE WHEN s.event_count <= 1 THEN e.session_id END) AS bounces, CAST(0 AS BIGINT) AS seconds");
    }
    if metrics.contains(&Metric::IdentifiedVisitors) {
        sql.push(", COUNT(DISTINCT CASE WHEN v.status = 'identified' THEN e.visitor_id END) AS identified");
    }
    if metrics.contains(&Metric::HotLeads) {
        let score = score_sql_text("v", scope.now);
        sql.push(&format!(
            ", COUNT(DISTINCT CASE WHEN {score} >= {} THEN e.visitor_id END) AS hot",
            scope.hot_threshold
        ));
    }
    if revenue::asked(metrics) {
        sql.push(&revenue::sums(true, "e.revenue_"));
    }
    events_in_span(&mut sql, scope.site_id, span, (dimensions, filters, metrics), stretch);
    sql::filters(&mut sql, context, Source::Events, filters, &mut resolved.iter());
    group_by_positions(&mut sql, dimensions.len());
    sql
}
