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
        walk: false,
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
    if hot_only {
        return Ok(u64::try_from(window::hot_leads(db, site, bots, start, now).await?).unwrap_or(0));
    }
    total_by_country_and_status(db, site.id, bots, start, None, None).await
}

/// How many of the site's humans (or bots) seen since `start` are in
/// `country` and of `status` (`identified` or `anonymous`), each when
/// given: the hourly visitor rollups keep both, so this reads the range's
/// hours, not its visitors.
pub(super) async fn total_by_country_and_status(
    db: &impl ConnectionTrait,
    site_id: i64,
    bots: bool,
    start: Option<i64>,
    country: Option<&str>,
    status: Option<&str>,
) -> AppResult<u64> {
    let rows = window::visitors(db, site_id, bots, window::Window::new(start), window::Buckets::One).await?;
    let (visitors, identified) = rows
        .iter()
        .filter(|row| country.is_none_or(|code| row.country.as_deref() == Some(code)))
        .fold((0, 0), |(visitors, identified), row| (visitors + row.visitors, identified + row.identified));
    Ok(of_status(visitors, identified, status))
}

/// How many of the site's humans (or bots) seen since `start` have the
/// last touch `touch` and are of `status`, from the last-touch rollups.
pub(super) async fn total_by_touch_and_status(
    db: &impl ConnectionTrait,
    site_id: i64,
    bots: bool,
    start: Option<i64>,
    touch: window::Touch<'_>,
    status: Option<&str>,
) -> AppResult<u64> {
    let (visitors, identified) = window::touched_visitors(db, site_id, bots, window::Window::new(start), touch).await?;
    Ok(of_status(visitors, identified, status))
}

/// Of `visitors`, `identified` of them, those of `status` (all when `None`).
fn of_status(visitors: i64, identified: i64, status: Option<&str>) -> u64 {
    let count = match status {
        None => visitors,
        Some("identified") => identified,
        Some("anonymous") => visitors - identified,
        Some(_) => 0,
    };
    u64::try_from(count).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_picks_its_part_of_the_visitors() {
        let table = [(None, 24), (Some("identified"), 11), (Some("anonymous"), 13), (Some("hot"), 0)];
        for (status, expected) in table {
            assert_eq!(of_status(24, 11, status), expected, "{status:?}");
        }
        assert_eq!(of_status(0, 0, Some("anonymous")), 0);
    }
}
