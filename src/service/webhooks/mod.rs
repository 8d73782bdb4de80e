//! Webhook exports: the use case end to end (`export`), and its data side:
//! the visitor to send, the org's signing secret, and the delivery log.

mod export;

pub use export::{ExportCommand, Exported, export};

use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};

use entity::{event, org, tracked_session, visitor, webhook_delivery};

use super::{access, orgs, scoring};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    webhook::{delivery::Outcome, payload::Export},
};

/// Events a payload's `recent_events` lists.
pub const RECENT_EVENTS: u64 = 20;
/// Deliveries the log lists at most.
pub const MAX_LOG_ROWS: u64 = 500;

pub struct ExportRequest {
    pub site_id: i64,
    pub tracker_vid: String,
    pub include_journey: bool,
    pub include_events: bool,
    pub base_url: String,
    pub now: i64,
}

/// What a delivery needs: the payload's data and the org that signs it.
pub struct Prepared {
    pub export: Export,
    pub org: org::Model,
}

/// Members and up may export visitors of their sites.
pub async fn prepare(db: &impl ConnectionTrait, viewer: &Viewer, request: ExportRequest) -> AppResult<Prepared> {
    let (site, _) = access::site(db, viewer, request.site_id, Role::Member).await?;
    let visitor = visitor::Entity::find()
        .filter(visitor::Column::SiteId.eq(site.id))
        .filter(visitor::Column::TrackerVid.eq(request.tracker_vid.as_str()))
        .one(db)
        .await?
        .ok_or_else(|| AppError::not_found("visitor"))?;
    prepare_visitor(db, site.org_id, visitor, &request).await
}

/// The payload's data for a visitor already found in one of the org's sites.
/// Alerts call it at send time, so a payload shows the visitor as it is then.
pub(crate) async fn prepare_visitor(
    db: &impl ConnectionTrait,
    org_id: i64,
    visitor: visitor::Model,
    request: &ExportRequest,
) -> AppResult<Prepared> {
    let journey = if request.include_journey {
        Some(
            tracked_session::Entity::find()
                .filter(tracked_session::Column::VisitorId.eq(visitor.id))
                .order_by_asc(tracked_session::Column::StartedAt)
                .order_by_asc(tracked_session::Column::Id)
                .all(db)
                .await?,
        )
    } else {
        None
    };
    let recent_events = if request.include_events {
        Some(
            event::Entity::find()
                .filter(event::Column::VisitorId.eq(visitor.id))
                .order_by_desc(event::Column::Timestamp)
                .order_by_desc(event::Column::Id)
                .limit(RECENT_EVENTS)
                .all(db)
                .await?,
        )
    } else {
        None
    };
    let org = org::Entity::find_by_id(org_id).one(db).await?.ok_or_else(|| AppError::not_found("site"))?;
    let score = scoring::total(visitor.score, visitor.last_seen, request.now);
    Ok(Prepared {
        export: Export {
            visitor,
            score,
            journey,
            recent_events,
            base_url: request.base_url.clone(),
            exported_at: request.now,
            conversion: None,
        },
        org,
    })
}

pub struct Attempt<'a> {
    pub org_id: i64,
    pub site_id: i64,
    pub user_id: Option<i64>,
    pub tracker_vid: &'a str,
    pub webhook_type: &'a str,
    pub message_id: &'a str,
    pub target_host: &'a str,
    pub outcome: &'a Outcome,
    pub at: i64,
    /// For an alert's attempt: the delivery, its destination and trigger, the
    /// attempt's number and when the next one is due.
    pub alert: Option<AlertAttempt<'a>>,
}

pub struct AlertAttempt<'a> {
    pub delivery_id: Option<i64>,
    pub destination_id: i64,
    pub trigger: &'a str,
    pub number: i32,
    pub next_attempt_at: Option<i64>,
}

/// Logs one attempt, whatever its outcome.
pub async fn record(db: &impl ConnectionTrait, attempt: Attempt<'_>) -> AppResult<webhook_delivery::Model> {
    Ok(webhook_delivery::ActiveModel {
        org_id: Set(attempt.org_id),
        site_id: Set(attempt.site_id),
        user_id: Set(attempt.user_id),
        tracker_vid: Set(attempt.tracker_vid.to_owned()),
        webhook_type: Set(attempt.webhook_type.to_owned()),
        message_id: Set(attempt.message_id.to_owned()),
        target_host: Set(attempt.target_host.to_owned()),
        status_code: Set(attempt.outcome.status.map(i32::from)),
        success: Set(attempt.outcome.success),
        duration_ms: Set(attempt.outcome.duration_ms),
        error: Set(attempt.outcome.error.clone()),
        created_at: Set(attempt.at),
        alert_delivery_id: Set(attempt.alert.as_ref().and_then(|alert| alert.delivery_id)),
        destination_id: Set(attempt.alert.as_ref().map(|alert| alert.destination_id)),
        trigger: Set(attempt.alert.as_ref().map(|alert| alert.trigger.to_owned())),
        attempt: Set(attempt.alert.as_ref().map_or(1, |alert| alert.number)),
        next_attempt_at: Set(attempt.alert.as_ref().and_then(|alert| alert.next_attempt_at)),
        ..Default::default()
    }
    .insert(db)
    .await?)
}

/// The org a request names, or the viewer's first one.
async fn org_of(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    org_id: Option<i64>,
    needed: Role,
) -> AppResult<org::Model> {
    let org_id = match (org_id, viewer) {
        (Some(id), _) => id,
        (None, Viewer::ApiKey { org_id, .. }) => *org_id,
        (None, Viewer::User { user_id, .. }) => orgs::primary(db, *user_id).await?.1.id,
    };
    Ok(access::find_org(db, viewer, org_id, needed).await?.0)
}

/// The org's latest deliveries, newest first. Members and up.
pub async fn deliveries(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    org_id: Option<i64>,
    limit: u64,
) -> AppResult<Vec<webhook_delivery::Model>> {
    let org = org_of(db, viewer, org_id, Role::Member).await?;
    Ok(webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::OrgId.eq(org.id))
        .order_by_desc(webhook_delivery::Column::CreatedAt)
        .order_by_desc(webhook_delivery::Column::Id)
        .limit(limit.min(MAX_LOG_ROWS))
        .all(db)
        .await?)
}

/// The org's signing secret. Admins only.
pub async fn signing_secret(db: &impl ConnectionTrait, viewer: &Viewer, org_id: Option<i64>) -> AppResult<String> {
    Ok(org_of(db, viewer, org_id, Role::Admin).await?.signing_secret)
}

/// Replaces the org's signing secret and returns the new one. Admins only.
pub async fn rotate_secret(db: &impl ConnectionTrait, viewer: &Viewer, org_id: Option<i64>) -> AppResult<String> {
    let org = org_of(db, viewer, org_id, Role::Admin).await?;
    let secret = orgs::new_signing_secret();
    let mut active: org::ActiveModel = org.into();
    active.signing_secret = Set(secret.clone());
    active.update(db).await?;
    Ok(secret)
}
