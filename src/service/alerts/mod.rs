//! Alerts (design §15): a site's saved destinations that fire on their own,
//! managed by the org's admins. The outbox and its worker deliver them.

pub mod due;
pub mod email;
pub mod outbox;
pub mod trigger;
pub mod worker;

use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect,
};

use entity::{alert_delivery, alert_destination, site, visitor, webhook_delivery};

use super::{
    access,
    alerts::trigger::AlertTrigger,
    delivery::Delivery,
    parent_lock,
    webhooks::{self, AlertAttempt, Attempt, ExportRequest},
};
use crate::{
    auth::{Role, Viewer},
    cluster::{Changed, Cluster},
    error::{AppError, AppResult, ErrorCode},
    webhook::{WebhookType, delivery, guard, payload, signing},
};

/// Destinations per site at most.
pub const MAX_DESTINATIONS: u64 = 25;
pub const MAX_NAME_CHARS: usize = 100;
/// Deliveries a destination lists at most.
pub const MAX_DELIVERIES: u64 = 200;

pub struct DestinationInput {
    pub name: String,
    pub url: String,
    pub webhook_type: String,
    pub trigger: AlertTrigger,
    pub include_journey: bool,
    pub include_events: bool,
    pub enabled: bool,
}

/// A checked input: the name trimmed, the type known (one of the webhook
/// types, or `email`), the target allowed. Answers the name, the type and
/// the URL as stored.
fn checked(input: &DestinationInput, sending: &Delivery) -> AppResult<(String, String, String)> {
    let name = input.name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(AppError::validation("name", format!("must be 1 to {MAX_NAME_CHARS} characters")));
    }
    if input.webhook_type.trim() == email::EMAIL_TYPE {
        let url = email::checked_url(&input.url, sending)?;
        return Ok((name.to_owned(), email::EMAIL_TYPE.to_owned(), url));
    }
    // The rules are `POST /api/webhook`'s; the messages name this input's fields.
    let kind = WebhookType::parse(Some(&input.webhook_type)).map_err(|err| {
        if sending.mailer.is_some() {
            AppError::validation("webhookType", "must be custom, crm_one, crm_two, chat_one, chat_two or email")
        } else {
            err
        }
    })?;
    let url = guard::check_url(&input.url, kind, sending.allow_any_webhook_target)
        .map_err(|err| err.renamed("url".to_owned()))?;
    Ok((name.to_owned(), kind.as_str().to_owned(), url.to_string()))
}

/// The site's destinations, oldest first. Admins only.
pub async fn list(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
) -> AppResult<Vec<alert_destination::Model>> {
    let (site, _) = access::site(db, viewer, site_id, Role::Admin).await?;
    Ok(alert_destination::Entity::find()
        .filter(alert_destination::Column::SiteId.eq(site.id))
        .order_by_asc(alert_destination::Column::Id)
        .all(db)
        .await?)
}

/// A destination of a site the viewer administers; another org's is not found.
pub async fn find(db: &impl ConnectionTrait, viewer: &Viewer, id: i64) -> AppResult<alert_destination::Model> {
    let destination =
        alert_destination::Entity::find_by_id(id).one(db).await?.ok_or_else(|| AppError::not_found("destination"))?;
    match access::site(db, viewer, destination.site_id, Role::Admin).await {
        Err(err) if err.code == ErrorCode::NotFound => Err(AppError::not_found("destination")),
        other => other.map(|_| destination),
    }
}

/// Every instance's writer hears of it (`Changed::Alerts`): it may have
/// believed the site had nothing an account could fire.
pub async fn create(
    db: &DatabaseConnection,
    cluster: &Cluster,
    sending: &Delivery,
    viewer: &Viewer,
    site_id: i64,
    input: DestinationInput,
) -> AppResult<alert_destination::Model> {
    let (site, _) = access::site(db, viewer, site_id, Role::Admin).await?;
    let (name, kind, url) = checked(&input, sending)?;
    let txn = parent_lock::begin::<site::Entity>(db, site.id).await?;
    let count =
        alert_destination::Entity::find().filter(alert_destination::Column::SiteId.eq(site.id)).count(&txn).await?;
    if count >= MAX_DESTINATIONS {
        return Err(AppError::validation("siteId", format!("a site has at most {MAX_DESTINATIONS} destinations")));
    }
    let now = sending.clock.now();
    let created = alert_destination::ActiveModel {
        org_id: Set(site.org_id),
        site_id: Set(site.id),
        name: Set(name),
        url: Set(url),
        webhook_type: Set(kind),
        trigger: Set(input.trigger.as_str().to_owned()),
        include_journey: Set(input.include_journey),
        include_events: Set(input.include_events),
        enabled: Set(input.enabled),
        disabled_reason: Set(None),
        failing_since: Set(None),
        last_failed_at: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    txn.commit().await?;
    cluster.changed(Changed::Alerts { site_id: created.site_id }).await;
    Ok(created)
}

/// Replaces every field. Saving a destination the service turned off turns
/// it back on: the admin has seen the reason. Every instance's writer hears
/// of it, as after `create`.
pub async fn update(
    db: &impl ConnectionTrait,
    cluster: &Cluster,
    sending: &Delivery,
    viewer: &Viewer,
    id: i64,
    input: DestinationInput,
) -> AppResult<alert_destination::Model> {
    let destination = find(db, viewer, id).await?;
    let (name, kind, url) = checked(&input, sending)?;
    // A new target, or a destination the service turned off, starts a fresh
    // run; renaming a failing one does not postpone its turning off.
    let fresh_run = url != destination.url || destination.disabled_reason.is_some();
    let mut active: alert_destination::ActiveModel = destination.into();
    active.name = Set(name);
    active.url = Set(url);
    active.webhook_type = Set(kind);
    active.trigger = Set(input.trigger.as_str().to_owned());
    active.include_journey = Set(input.include_journey);
    active.include_events = Set(input.include_events);
    active.enabled = Set(input.enabled);
    active.disabled_reason = Set(None);
    if fresh_run {
        active.failing_since = Set(None);
        active.last_failed_at = Set(None);
    }
    active.updated_at = Set(sending.clock.now());
    let updated = active.update(db).await.map_err(|err| match err {
        // Deleted between the read and the write.
        sea_orm::DbErr::RecordNotUpdated => AppError::not_found("destination"),
        other => other.into(),
    })?;
    cluster.changed(Changed::Alerts { site_id: updated.site_id }).await;
    Ok(updated)
}

/// Deletes the destination with its deliveries; the log keeps its attempts.
pub async fn delete(db: &impl ConnectionTrait, viewer: &Viewer, id: i64) -> AppResult<()> {
    let destination = find(db, viewer, id).await?;
    alert_destination::Entity::delete_by_id(destination.id).exec(db).await?;
    Ok(())
}

/// The destination's latest deliveries, newest first.
pub async fn deliveries(
    db: &impl ConnectionTrait,
    destination_id: i64,
    limit: u64,
) -> AppResult<Vec<alert_delivery::Model>> {
    Ok(alert_delivery::Entity::find()
        .filter(alert_delivery::Column::DestinationId.eq(destination_id))
        .order_by_desc(alert_delivery::Column::Id)
        .limit(limit.min(MAX_DELIVERIES))
        .all(db)
        .await?)
}

/// A delivery's attempts as the log has them, first to last.
pub async fn attempts(db: &impl ConnectionTrait, delivery_id: i64) -> AppResult<Vec<webhook_delivery::Model>> {
    Ok(webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::AlertDeliveryId.eq(delivery_id))
        .order_by_asc(webhook_delivery::Column::Id)
        .all(db)
        .await?)
}

/// Sends a failed delivery again now and answers it as it stands after the
/// attempt. Admins of its site only.
pub async fn retry(
    db: &DatabaseConnection,
    sending: &Delivery,
    metrics: &worker::AlertMetrics,
    viewer: &Viewer,
    delivery_id: i64,
) -> AppResult<alert_delivery::Model> {
    let delivery = alert_delivery::Entity::find_by_id(delivery_id)
        .one(db)
        .await?
        .ok_or_else(|| AppError::not_found("delivery"))?;
    find(db, viewer, delivery.destination_id).await.map_err(|err| match err.code {
        ErrorCode::NotFound => AppError::not_found("delivery"),
        _ => err,
    })?;
    if delivery.status != outbox::FAILED {
        return Err(AppError::validation(
            "id",
            format!("only a failed delivery can be retried; this one is {}", delivery.status),
        ));
    }
    let claimed_at = std::time::Instant::now();
    let now = sending.clock.now();
    let claimed = outbox::claim_failed(db, delivery.id, now + worker::lease_ms(sending))
        .await?
        .ok_or_else(|| AppError::new(ErrorCode::Conflict, "the delivery is being retried already"))?;
    // The outcome, whatever it was, is in the delivery answered below.
    worker::attempt_within_lease(db, sending, metrics, &claimed, claimed_at).await;
    alert_delivery::Entity::find_by_id(delivery_id).one(db).await?.ok_or_else(|| AppError::not_found("delivery"))
}

/// The visitor a test sends: made up, and named so nobody takes it for a lead.
fn sample_visitor(site_id: i64, now: i64) -> visitor::Model {
    visitor::Model {
        status: "identified".to_owned(),
        identified_user_id: Some("test@example.com".to_owned()),
        email: Some("test@example.com".to_owned()),
        total_sessions: 1,
        total_pageviews: 3,
        total_events: 4,
        total_time_seconds: 120,
        high_value_views: 1,
        form_submits: 1,
        device_type: Some("desktop".to_owned()),
        ..crate::service::tracking::sessionize::new_visitor(site_id, "leadtrail-test-visitor", now)
    }
}

/// Sends a sample now, signed like a real alert, logs it, and answers the
/// logged attempt. A refused target is INVALID_WEBHOOK_URL.
pub async fn test(
    db: &impl ConnectionTrait,
    sending: &Delivery,
    viewer: &Viewer,
    id: i64,
) -> AppResult<webhook_delivery::Model> {
    let destination = find(db, viewer, id).await?;
    let now = sending.clock.now();
    let mut sample = sample_visitor(destination.site_id, now);
    sample.score = crate::service::scoring::stored_points(&sample);
    if destination.webhook_type == email::EMAIL_TYPE {
        return test_email(db, sending, viewer, &destination, &sample, now).await;
    }
    let kind = WebhookType::parse(Some(&destination.webhook_type))?;
    let url = guard::check_url(&destination.url, kind, sending.allow_any_webhook_target)?;
    let request = ExportRequest {
        site_id: destination.site_id,
        tracker_vid: sample.tracker_vid.clone(),
        include_journey: false,
        include_events: false,
        base_url: sending.base_url.clone(),
        now,
    };
    let prepared = webhooks::prepare_visitor(db, destination.org_id, sample, &request).await?;
    let body = payload::build(kind, &prepared.export).to_string();
    let message_id = signing::message_id();
    let headers = signing::headers_for(&prepared.org.signing_secret, message_id.clone(), &body, now)?;
    let (outcome, refusal) = match delivery::send(&sending.webhooks, &url, kind, &headers, body).await {
        Ok(outcome) => (outcome, None),
        Err(refusal) => (worker::refused(refusal.clone()), Some(refusal)),
    };
    let logged = log_test(db, viewer, &destination, &request.tracker_vid, &message_id, &outcome, now).await?;
    // Refused at send time (the name now resolves to a private address): the
    // attempt is logged, and the answer is the refusal, as `POST /api/webhook` gives.
    match refusal {
        Some(refusal) => Err(refusal),
        None => Ok(logged),
    }
}

/// `test` for an email destination: the sample goes to its addresses now,
/// and the attempt is logged; a refusal by the SMTP server is 502.
async fn test_email(
    db: &impl ConnectionTrait,
    sending: &Delivery,
    viewer: &Viewer,
    destination: &alert_destination::Model,
    sample: &visitor::Model,
    now: i64,
) -> AppResult<webhook_delivery::Model> {
    let (outcome, _) = email::send(db, sending, destination, sample, "test", None).await?;
    let logged = log_test(db, viewer, destination, &sample.tracker_vid, &signing::message_id(), &outcome, now).await?;
    match outcome.error {
        Some(error) if !outcome.success => Err(AppError::new(ErrorCode::DeliveryFailed, error)),
        _ => Ok(logged),
    }
}

/// Logs a test send as the first attempt of no delivery, with the viewer who asked.
async fn log_test(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    destination: &alert_destination::Model,
    tracker_vid: &str,
    message_id: &str,
    outcome: &crate::webhook::delivery::Outcome,
    now: i64,
) -> AppResult<webhook_delivery::Model> {
    let log = Attempt {
        org_id: destination.org_id,
        site_id: destination.site_id,
        user_id: viewer.user_id(),
        tracker_vid,
        webhook_type: &destination.webhook_type,
        message_id,
        target_host: &worker::target_host(&destination.url),
        outcome,
        at: now,
        alert: Some(AlertAttempt {
            delivery_id: None,
            destination_id: destination.id,
            trigger: "test",
            number: 1,
            next_attempt_at: None,
        }),
    };
    webhooks::record(db, log).await
}
