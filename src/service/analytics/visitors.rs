//! The scored visitor list.

use std::collections::HashMap;

use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, Order, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::Expr,
};

use entity::visitor;

use super::{ScoredVisitor, TimeRange, score_sql, score_sql_text};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    service::{access, scoring},
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
    list_filtered(db, viewer, query, false, now).await
}

/// `list`, with `hot_only` keeping the visitors whose score (recency
/// included) reaches the site's hot threshold.
pub async fn list_filtered(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    query: ListQuery,
    hot_only: bool,
    now: i64,
) -> AppResult<VisitorPage> {
    let (site, _) = access::site(db, viewer, query.site_id, Role::Viewer).await?;
    let mut scope = visitor::Entity::find()
        .filter(visitor::Column::SiteId.eq(site.id))
        .filter(visitor::Column::IsBot.eq(query.bots));
    if let Some(start) = query.range.start(now) {
        scope = scope.filter(visitor::Column::LastSeen.gte(start));
    }
    if hot_only {
        // The stored score is checked first (it is on the covering index), so
        // the full score is computed only for visitors who can reach the threshold.
        scope = scope.filter(Expr::cust(format!(
            "visitors.score >= {} AND {} >= {}",
            site.hot_threshold - scoring::RECENCY_MAX,
            score_sql_text("visitors", now),
            site.hot_threshold
        )));
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
