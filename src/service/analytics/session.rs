//! One tracked session and its timeline.

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use entity::{event, tracked_session, visitor};

use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    service::access,
};

/// A session of a site the viewer can read.
pub async fn find(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    session_id: i64,
) -> AppResult<tracked_session::Model> {
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    tracked_session::Entity::find_by_id(session_id)
        .filter(tracked_session::Column::SiteId.eq(site.id))
        .one(db)
        .await?
        .ok_or_else(|| AppError::not_found("session"))
}

/// A session of a site the viewer can read, with its visitor.
pub async fn find_with_visitor(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    session_id: i64,
) -> AppResult<(tracked_session::Model, visitor::Model)> {
    let session = find(db, viewer, site_id, session_id).await?;
    let visitor =
        visitor::Entity::find_by_id(session.visitor_id).one(db).await?.ok_or_else(|| AppError::not_found("session"))?;
    Ok((session, visitor))
}

/// Whole seconds between each event and the one before it; 0 for the first.
pub fn gaps_seconds(events: &[event::Model]) -> Vec<i64> {
    let mut previous = None;
    events
        .iter()
        .map(|event| {
            let gap = previous.map_or(0, |before| (event.timestamp - before) / 1000);
            previous = Some(event.timestamp);
            gap
        })
        .collect()
}
