//! The scored visitor list.

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, Order, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};

use entity::visitor;

use super::{ScoredVisitor, TimeRange, score_sql};
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
pub async fn list(db: &impl ConnectionTrait, viewer: &Viewer, query: ListQuery, now: i64) -> AppResult<VisitorPage> {
    let (site, _) = access::site(db, viewer, query.site_id, Role::Viewer).await?;
    let mut scope = visitor::Entity::find()
        .filter(visitor::Column::SiteId.eq(site.id))
        .filter(visitor::Column::IsBot.eq(query.bots));
    if let Some(start) = query.range.start(now) {
        scope = scope.filter(visitor::Column::LastSeen.gte(start));
    }
    let total = scope.clone().count(db).await?;
    // Rank on the covering index first, then read only the rows shown.
    let ranked: Vec<i64> = scope
        .select_only()
        .column(visitor::Column::Id)
        .order_by(score_sql("visitors", now), Order::Desc)
        .order_by_desc(visitor::Column::LastSeen)
        .order_by_desc(visitor::Column::Id)
        .limit(query.limit)
        .offset(query.offset)
        .into_tuple()
        .all(db)
        .await?;
    let mut rows: HashMap<i64, visitor::Model> = visitor::Entity::find()
        .filter(visitor::Column::Id.is_in(ranked.iter().copied()))
        .all(db)
        .await?
        .into_iter()
        .map(|v| (v.id, v))
        .collect();
    let found: Vec<visitor::Model> = ranked.iter().filter_map(|id| rows.remove(id)).collect();
    Ok(VisitorPage {
        visitors: found.into_iter().map(|v| ScoredVisitor::new(v, site.hot_threshold, now)).collect(),
        total,
    })
}
