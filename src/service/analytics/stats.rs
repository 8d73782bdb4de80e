//! Overview statistics over a rolling window of human traffic. A visitor
//! counts when last seen inside the window and a session when it ended inside
//! it (so the visitor list and the stats agree); pageviews and events are the
//! exact events inside it, read from hourly rollups plus the raw events of the
//! window's first, partial hour.

use std::collections::HashMap;

use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, FromQueryResult, QueryFilter, QuerySelect, Select,
    sea_query::Expr,
};

use entity::{event, page_hour, site};

use super::{TimeRange, snapshot, sum_of, window};
use crate::{
    auth::{Role, Viewer},
    error::AppResult,
    service::access,
};

/// Rows in `top_pages` and `countries`.
pub const TOP_ROWS: usize = 10;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overview {
    pub unique_visitors: i64,
    pub sessions: i64,
    pub pageviews: i64,
    pub total_events: i64,
    pub identified_visitors: i64,
    pub hot_leads: i64,
}

/// What a window holds.
pub struct Window {
    pub overview: Overview,
    /// Mean length in seconds of the window's sessions, rounded.
    pub avg_duration: i64,
    /// Visitors per country (their latest known one; unknown is `None`).
    pub countries: Vec<(Option<String>, i64)>,
    pub top_pages: Vec<(String, i64)>,
}

pub struct Stats {
    pub window: Window,
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

#[derive(FromQueryResult)]
struct PageRow {
    page: String,
    pageviews: i64,
    events: i64,
}

pub async fn summarize(
    db: &impl ConnectionTrait,
    site: &site::Model,
    start: Option<i64>,
    now: i64,
) -> AppResult<Window> {
    let mut overview = Overview::default();
    let span = window::Window::new(start);
    let mut countries: HashMap<Option<String>, i64> = HashMap::new();
    for row in window::visitors(db, site.id, false, span, window::Buckets::One).await? {
        overview.unique_visitors += row.visitors;
        overview.identified_visitors += row.identified;
        *countries.entry(row.country).or_default() += row.visitors;
    }
    overview.hot_leads = window::hot_leads(db, site, false, start, now).await?;
    let mut countries: Vec<(Option<String>, i64)> = countries.into_iter().filter(|(_, n)| *n > 0).collect();
    sort_countries(&mut countries);

    let (mut seconds, mut session_count) = (0, 0);
    for row in window::sessions(db, site.id, span, window::Buckets::One).await? {
        session_count += row.sessions;
        seconds += row.seconds;
    }
    overview.sessions = session_count;
    let avg_duration = if session_count == 0 { 0 } else { (seconds as f64 / session_count as f64).round() as i64 };

    let pages = pages_in_window(db, site.id, start).await?;
    let mut top_pages: Vec<(String, i64)> = Vec::new();
    for (page, (pageviews, events)) in pages {
        overview.pageviews += pageviews;
        overview.total_events += events;
        if pageviews > 0 {
            top_pages.push((page, pageviews));
        }
    }
    top_pages.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top_pages.truncate(TOP_ROWS);
    Ok(Window { overview, avg_duration, countries, top_pages })
}

/// Most visitors first; known countries before unknown, then by name; the top rows.
pub(super) fn sort_countries(countries: &mut Vec<(Option<String>, i64)>) {
    countries.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.is_none().cmp(&b.0.is_none())).then_with(|| a.0.cmp(&b.0)));
    countries.truncate(TOP_ROWS);
}

/// Human pageviews and events per page from `start` on: whole hours from the
/// rollups, the partial first hour from the events themselves.
async fn pages_in_window(
    db: &impl ConnectionTrait,
    site_id: i64,
    start: Option<i64>,
) -> AppResult<HashMap<String, (i64, i64)>> {
    let first_whole_hour = window::Window::new(start).first_whole_hour;
    let mut rollups = page_hour::Entity::find().filter(page_hour::Column::SiteId.eq(site_id));
    if let Some(hour) = first_whole_hour {
        rollups = rollups.filter(page_hour::Column::Hour.gte(hour));
    }
    let mut rows: Vec<PageRow> = rollups
        .select_only()
        .column(page_hour::Column::Page)
        .column_as(sum_of(Expr::col(page_hour::Column::Pageviews)), "pageviews")
        .column_as(sum_of(Expr::col(page_hour::Column::Events)), "events")
        .group_by(page_hour::Column::Page)
        .into_model()
        .all(db)
        .await?;
    if let (Some(start), Some(hour)) = (start, first_whole_hour) {
        let pageview = Expr::cust("CASE WHEN events.event_type = 'pageview' THEN 1 ELSE 0 END");
        rows.extend(
            window_events(site_id, Some(start))
                .filter(event::Column::Timestamp.lt(hour))
                .select_only()
                .column(event::Column::Page)
                .column_as(sum_of(pageview), "pageviews")
                .column_as(Expr::cust("COUNT(*)"), "events")
                .group_by(event::Column::Page)
                .into_model::<PageRow>()
                .all(db)
                .await?,
        );
    }
    let mut pages: HashMap<String, (i64, i64)> = HashMap::new();
    for row in rows {
        let entry = pages.entry(row.page).or_default();
        entry.0 += row.pageviews;
        entry.1 += row.events;
    }
    Ok(pages)
}

pub async fn stats(
    db: &DatabaseConnection,
    viewer: &Viewer,
    site_id: i64,
    range: TimeRange,
    now: i64,
) -> AppResult<Stats> {
    let view = snapshot(db).await?;
    let (site, _) = access::site(&view, viewer, site_id, Role::Viewer).await?;
    let window = summarize(&view, &site, range.start(now), now).await?;
    view.commit().await?;
    Ok(Stats { window, range })
}
