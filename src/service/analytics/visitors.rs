//! The scored visitor list.

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter};

use entity::{site, visitor};

use super::{ScoredVisitor, TimeRange, ranking, snapshot, window};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    service::access,
};

pub const DEFAULT_LIMIT: u64 = 50;
pub const MAX_LIMIT: u64 = 500;

pub struct ListQuery {
    pub site_id: i64,
    pub range: TimeRange,
    /// Bot traffic instead of standard visitors.
    pub bots: bool,
    pub limit: u64,
    pub offset: u64,
}

pub struct VisitorPage {
    pub visitors: Vec<ScoredVisitor>,
    /// Every matching visitor, not only this page.
    pub total: u64,
}

/// A requested page size: at least 1, and anything above the cap is the cap.
pub fn clamp_limit(requested: Option<i64>) -> AppResult<u64> {
    match requested {
        None => Ok(DEFAULT_LIMIT),
        Some(n) if n < 1 => Err(AppError::validation("limit", "must be at least 1")),
        Some(n) => Ok((n as u64).min(MAX_LIMIT)),
    }
}

/// Visitors seen inside the window, highest score first, then the most
/// recently seen.
pub async fn list(db: &DatabaseConnection, viewer: &Viewer, query: ListQuery, now: i64) -> AppResult<VisitorPage> {
    list_filtered(db, viewer, query, false, now).await
}

/// `list`, with `hot_only` keeping the visitors whose score (recency
/// included) reaches the site's hot threshold.
pub async fn list_filtered(
    db: &DatabaseConnection,
    viewer: &Viewer,
    query: ListQuery,
    hot_only: bool,
    now: i64,
) -> AppResult<VisitorPage> {
    let view = snapshot(db).await?;
    let page = list_in(&view, viewer, query, hot_only, now).await?;
    view.commit().await?;
    Ok(page)
}

/// The visitors of `ids` (a page's), in that order.
pub(super) async fn in_order(db: &impl ConnectionTrait, ids: &[i64]) -> AppResult<Vec<visitor::Model>> {
    let mut rows: HashMap<i64, visitor::Model> = visitor::Entity::find()
        .filter(visitor::Column::Id.is_in(ids.iter().copied()))
        .all(db)
        .await?
        .into_iter()
        .map(|v| (v.id, v))
        .collect();
    Ok(ids.iter().filter_map(|id| rows.remove(id)).collect())
}

async fn list_in(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    query: ListQuery,
    hot_only: bool,
    now: i64,
) -> AppResult<VisitorPage> {
    let (site, _) = access::site(db, viewer, query.site_id, Role::Viewer).await?;
    let start = query.range.start(now);
    let total = unfiltered_total(db, &site, query.bots, start, hot_only, now).await?;
    let scope = ranking::Scope {
        site_id: site.id,
        is_bot: query.bots,
        start,
        min_score: hot_only.then_some(site.hot_threshold),
        narrowed: None,
        few: false,
    };
    let ranked = ranking::page(db, &scope, query.offset, query.limit, now).await?;
    let found = in_order(db, &ranked).await?;
    Ok(VisitorPage {
        visitors: found.into_iter().map(|v| ScoredVisitor::new(v, site.hot_threshold, now)).collect(),
        total,
    })
}

/// How many of the site's humans (or bots) were seen since `start`, or only
/// the hot ones, from the rollups the writer keeps rather than by counting
/// visitors.
pub(super) async fn unfiltered_total(
    db: &impl ConnectionTrait,
    site: &site::Model,
    bots: bool,
    start: Option<i64>,
    hot_only: bool,
    now: i64,
) -> AppResult<u64> {
    let total = if hot_only {
        window::hot_leads(db, site, bots, start, now).await?
    } else {
        let span = window::Window::new(start);
        window::visitors(db, site.id, bots, span, window::Buckets::One).await?.iter().map(|row| row.visitors).sum()
    };
    Ok(u64::try_from(total).unwrap_or(0))
}
