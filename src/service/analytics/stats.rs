//! Overview statistics over a window of human traffic, counted from stored
//! events: a visitor or session counts when it has an event in the window.

use std::collections::HashMap;

use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, FromQueryResult, JoinType, QueryFilter, QueryOrder, QuerySelect,
    RelationTrait, Select,
    sea_query::{Expr, Func},
};

use entity::{event, site, visitor};

use super::TimeRange;
use crate::{
    auth::{Role, Viewer},
    error::AppResult,
    service::{access, scoring},
};

/// Rows in `top_pages` and `countries`.
pub const TOP_ROWS: u64 = 10;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overview {
    pub unique_visitors: i64,
    pub sessions: i64,
    pub pageviews: i64,
    pub total_events: i64,
    pub identified_visitors: i64,
    pub hot_leads: i64,
}

pub struct Stats {
    pub overview: Overview,
    pub top_pages: Vec<(String, i64)>,
    /// Visitors per country (their latest known one; unknown is `None`).
    pub countries: Vec<(Option<String>, i64)>,
    pub range: TimeRange,
}

/// Human, stored events of the site from `start` on.
pub(super) fn window_events(site_id: i64, start: Option<i64>) -> Select<event::Entity> {
    let mut scope =
        event::Entity::find().filter(event::Column::SiteId.eq(site_id)).filter(event::Column::IsBot.eq(false));
    if let Some(start) = start {
        scope = scope.filter(event::Column::Timestamp.gte(start));
    }
    scope
}

/// One visitor's activity inside the window, with what scores them.
#[derive(FromQueryResult)]
struct VisitorActivity {
    country: Option<String>,
    status: String,
    score: i32,
    last_seen: i64,
    sessions: i64,
    pageviews: i64,
    events: i64,
}

/// What a window holds, per visitor and in total.
pub(super) struct Window {
    pub overview: Overview,
    pub countries: Vec<(Option<String>, i64)>,
}

pub(super) async fn summarize(
    db: &impl ConnectionTrait,
    site: &site::Model,
    start: Option<i64>,
    now: i64,
) -> AppResult<Window> {
    let pageview = Expr::cust("CASE WHEN events.event_type = 'pageview' THEN 1 ELSE 0 END");
    // Grouped by the visitor's primary key, so PostgreSQL accepts its other columns.
    let activity: Vec<VisitorActivity> = window_events(site.id, start)
        .join(JoinType::InnerJoin, event::Relation::Visitor.def())
        .select_only()
        .column(visitor::Column::Country)
        .column(visitor::Column::Status)
        .column(visitor::Column::Score)
        .column(visitor::Column::LastSeen)
        .column_as(Expr::from(Func::count_distinct(Expr::col((event::Entity, event::Column::SessionId)))), "sessions")
        .column_as(Expr::from(Func::cast_as(Func::sum(pageview), "BIGINT")), "pageviews")
        .column_as(Expr::from(Func::count(Expr::col((event::Entity, event::Column::Id)))), "events")
        .group_by(Expr::col((visitor::Entity, visitor::Column::Id)))
        .into_model()
        .all(db)
        .await?;
    let mut overview = Overview::default();
    let mut countries: HashMap<Option<String>, i64> = HashMap::new();
    for row in activity {
        overview.unique_visitors += 1;
        overview.sessions += row.sessions;
        overview.pageviews += row.pageviews;
        overview.total_events += row.events;
        overview.identified_visitors += i64::from(row.status == "identified");
        overview.hot_leads += i64::from(scoring::total(row.score, row.last_seen, now) >= site.hot_threshold);
        *countries.entry(row.country).or_default() += 1;
    }
    let mut countries: Vec<(Option<String>, i64)> = countries.into_iter().collect();
    // Most visitors first; known countries before unknown, then by name.
    countries.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.is_none().cmp(&b.0.is_none())).then_with(|| a.0.cmp(&b.0)));
    countries.truncate(TOP_ROWS as usize);
    Ok(Window { overview, countries })
}

/// The most viewed pages in the window.
pub(super) async fn top_pages(
    db: &impl ConnectionTrait,
    site_id: i64,
    start: Option<i64>,
) -> AppResult<Vec<(String, i64)>> {
    Ok(window_events(site_id, start)
        .filter(event::Column::EventType.eq("pageview"))
        .select_only()
        .column(event::Column::Page)
        .column_as(event::Column::Id.count(), "views")
        .group_by(event::Column::Page)
        .order_by_desc(Expr::col("views"))
        .order_by_asc(event::Column::Page)
        .limit(TOP_ROWS)
        .into_tuple()
        .all(db)
        .await?)
}

pub async fn stats(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    range: TimeRange,
    now: i64,
) -> AppResult<Stats> {
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    let start = range.start(now);
    let window = summarize(db, &site, start, now).await?;
    let top_pages = top_pages(db, site.id, start).await?;
    Ok(Stats { overview: window.overview, top_pages, countries: window.countries, range })
}
