//! The alert worker: every instance runs one. It claims due deliveries from
//! the outbox, builds each payload at send time with the same builders,
//! signing and SSRF guard as `POST /api/webhook`, sends it, logs the attempt
//! and schedules the next one (design §15).

use std::time::{Duration, Instant};

use prometheus_client::metrics::{counter::Counter, family::Family, gauge::Gauge};
use rand::Rng;
use sea_orm::{DatabaseConnection, EntityTrait};

use entity::{alert_delivery, alert_destination, visitor};

use super::{
    email,
    outbox::{self, DELIVERED, FAILED, PENDING, Settled},
};
use crate::{
    error::{AppError, AppResult},
    service::{
        conversions,
        delivery::Delivery,
        webhooks::{self, AlertAttempt, Attempt, ExportRequest},
    },
    webhook::{
        WebhookType,
        delivery::{self, Outcome},
        guard, payload,
        retry::{self, Class, Next},
        signing,
    },
};

/// Deliveries one worker claims at a time, and sends at once.
const CLAIM_LIMIT: u64 = 16;
/// How often the worker looks for due deliveries when nothing wakes it.
const POLL: Duration = Duration::from_millis(500);

/// Deliveries by outcome, and the wait of the oldest due one.
#[derive(Clone, Default)]
pub struct AlertMetrics {
    pub deliveries: Family<OutcomeLabels, Counter>,
    pub oldest_due_seconds: Gauge,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
pub struct OutcomeLabels {
    /// delivered, retrying or failed.
    pub outcome: &'static str,
}

/// Runs the worker until the process ends. A delivery in flight when it ends
/// is claimed again once its lease lapses: delivery is at least once.
pub fn spawn(db: DatabaseConnection, sending: Delivery, metrics: AlertMetrics) {
    tokio::spawn(async move {
        loop {
            let claimed = match run_due(&db, &sending, &metrics).await {
                Ok(claimed) => claimed,
                Err(err) => {
                    tracing::warn!(error = %err.message, "the alert worker could not read the outbox");
                    0
                }
            };
            if claimed < CLAIM_LIMIT as usize {
                tokio::select! {
                    () = sending.alerts_due.woken() => {}
                    () = tokio::time::sleep(POLL) => {}
                }
            }
        }
    });
}

/// One round: claims what is due and attempts each. Answers how many it claimed.
pub async fn run_due(db: &DatabaseConnection, sending: &Delivery, metrics: &AlertMetrics) -> AppResult<usize> {
    let oldest = outbox::oldest_due(db, sending.clock.now()).await?;
    metrics.oldest_due_seconds.set(oldest.map_or(0, |due| (sending.clock.now() - due).max(0) / 1000));
    // Taken before the claim, so the time the claim itself takes counts
    // against the lease too.
    let claimed_at = Instant::now();
    let now = sending.clock.now();
    let claimed = outbox::claim(db, now, now + lease_ms(sending), CLAIM_LIMIT).await?;
    let count = claimed.len();
    let attempts = claimed
        .into_iter()
        .map(|delivery| async move { attempt_within_lease(db, sending, metrics, &delivery, claimed_at).await });
    futures_util::future::join_all(attempts).await;
    Ok(count)
}

/// Long enough for the slowest attempt to finish and be recorded.
pub(super) fn lease_ms(sending: &Delivery) -> i64 {
    i64::try_from(sending.webhook_timeout.as_millis()).unwrap_or(i64::MAX / 4) * 2 + 30_000
}

/// Room left in the lease after an attempt is cut short, to reschedule it.
const LEASE_MARGIN: Duration = Duration::from_secs(10);

/// `attempt`, cut short before the claim made at `claimed_at` lapses, so no
/// other worker sends the delivery while this one still may. An attempt that
/// fails on our side (the database, a timeout) is rescheduled like a failed
/// send, so it neither waits for its lease nor retries forever. Counts the
/// outcome in the deliveries metric, whichever way the attempt was started.
pub(super) async fn attempt_within_lease(
    db: &DatabaseConnection,
    sending: &Delivery,
    metrics: &AlertMetrics,
    claimed: &alert_delivery::Model,
    claimed_at: Instant,
) {
    let outcome = attempt_or_reschedule(db, sending, claimed, claimed_at).await;
    metrics.deliveries.get_or_create(&OutcomeLabels { outcome }).inc();
}

/// The attempt, or its rescheduling when it fails on our side; answers the
/// outcome's metric label.
async fn attempt_or_reschedule(
    db: &DatabaseConnection,
    sending: &Delivery,
    claimed: &alert_delivery::Model,
    claimed_at: Instant,
) -> &'static str {
    let lease = Duration::from_millis(u64::try_from(lease_ms(sending)).unwrap_or(u64::MAX));
    let deadline = claimed_at + lease.saturating_sub(LEASE_MARGIN);
    let err = match tokio::time::timeout_at(deadline.into(), attempt(db, sending, claimed)).await {
        Ok(Ok(label)) => return label,
        Ok(Err(err)) => err,
        Err(_) => AppError::internal("the attempt ran out of time"),
    };
    tracing::warn!(error = %err.message, delivery = claimed.id, "an alert attempt failed on our side");
    let now = sending.clock.now();
    let jitter: f64 = rand::rng().random();
    let (status, next_attempt_at, label) = match retry::next(claimed.attempts, Class::Failed, None, jitter, now) {
        Next::RetryAt(at) => (PENDING, Some(at), "retrying"),
        Next::Delivered | Next::GiveUp => (FAILED, None, "failed"),
    };
    let settled = Settled { status, next_attempt_at, status_code: None, error: Some(&err.message), delivered_at: None };
    if let Err(settle_err) = outbox::settle(db, claimed, settled).await {
        tracing::warn!(error = %settle_err, delivery = claimed.id, "an alert attempt could not be rescheduled");
    }
    label
}

/// The `webhook-id` of every attempt of a delivery: the delivery's own id, so
/// a receiver can deduplicate retries and match them to the delivery log.
pub fn webhook_id(delivery: &alert_delivery::Model) -> String {
    delivery.id.to_string()
}

/// Sends one claimed delivery, logs the attempt and settles the delivery.
/// Answers the outcome's metric label.
async fn attempt(
    db: &DatabaseConnection,
    sending: &Delivery,
    claimed: &alert_delivery::Model,
) -> AppResult<&'static str> {
    let destination = alert_destination::Entity::find_by_id(claimed.destination_id)
        .one(db)
        .await?
        .ok_or_else(|| AppError::not_found("destination"))?;
    let now = sending.clock.now();
    let (outcome, class) = if destination.webhook_type == email::EMAIL_TYPE {
        let visitor = visitor::Entity::find_by_id(claimed.visitor_id)
            .one(db)
            .await?
            .ok_or_else(|| AppError::not_found("visitor"))?;
        let conversion = conversions::note(db, claimed.conversion_id).await?;
        let (outcome, permanent) =
            email::send(db, sending, &destination, &visitor, &claimed.trigger, conversion.as_ref()).await?;
        let class = match (outcome.success, permanent) {
            (true, _) => Class::Delivered,
            (false, true) => Class::Refused,
            (false, false) => Class::Failed,
        };
        (outcome, class)
    } else {
        match send(db, sending, claimed, &destination, now).await? {
            Ok(outcome) => {
                let class = retry::classify(outcome.success, outcome.status);
                (outcome, class)
            }
            Err(refusal) => (refused(refusal), Class::Refused),
        }
    };
    let jitter: f64 = rand::rng().random();
    let next = retry::next(claimed.attempts, class, outcome.retry_after_ms, jitter, now);
    let (status, next_attempt_at, label) = match next {
        Next::Delivered => (DELIVERED, None, "delivered"),
        Next::RetryAt(at) => (PENDING, Some(at), "retrying"),
        Next::GiveUp => (FAILED, None, "failed"),
    };
    let log = Attempt {
        org_id: claimed.org_id,
        site_id: claimed.site_id,
        user_id: None,
        tracker_vid: &claimed.tracker_vid,
        webhook_type: &destination.webhook_type,
        message_id: &webhook_id(claimed),
        target_host: &target_host(&destination.url),
        outcome: &outcome,
        at: now,
        alert: Some(AlertAttempt {
            delivery_id: Some(claimed.id),
            destination_id: destination.id,
            trigger: &claimed.trigger,
            number: claimed.attempts,
            next_attempt_at,
        }),
    };
    webhooks::record(db, log).await?;
    let settled = Settled {
        status,
        next_attempt_at,
        status_code: outcome.status.map(i32::from),
        error: outcome.error.as_deref(),
        delivered_at: outcome.success.then_some(now),
    };
    if !outbox::settle(db, claimed, settled).await? {
        tracing::warn!(delivery = claimed.id, "an alert attempt outlived its claim; another worker took it over");
    }
    if class == Class::Delivered {
        outbox::destination_succeeded(db, destination.id).await?;
    } else {
        let reason = format!(
            "turned off after 24 hours of failed deliveries; the last: {}",
            outcome.error.as_deref().unwrap_or("unknown error")
        );
        if outbox::destination_failed(db, destination.id, now, &reason).await? {
            tracing::warn!(
                destination = destination.id,
                "an alert destination was turned off after 24 hours of failures"
            );
        }
    }
    Ok(label)
}

/// The host a webhook goes to; for an email destination, the domains of its addresses.
pub(super) fn target_host(url: &str) -> String {
    if let Some(list) = url.strip_prefix("mailto:") {
        return list
            .split(',')
            .filter_map(|address| address.rsplit_once('@').map(|(_, domain)| domain))
            .collect::<Vec<_>>()
            .join(",");
    }
    url::Url::parse(url).ok().and_then(|url| url.host_str().map(str::to_owned)).unwrap_or_default()
}

/// Builds the payload as the visitor is now, signs it with the delivery's
/// own id, and sends it. Answers the guard's refusal of the target apart,
/// because the same target will be refused again.
async fn send(
    db: &DatabaseConnection,
    sending: &Delivery,
    claimed: &alert_delivery::Model,
    destination: &alert_destination::Model,
    now: i64,
) -> AppResult<Result<Outcome, AppError>> {
    let kind = WebhookType::parse(Some(&destination.webhook_type))?;
    let url = match guard::check_url(&destination.url, kind, sending.allow_any_webhook_target) {
        Ok(url) => url,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let visitor =
        visitor::Entity::find_by_id(claimed.visitor_id).one(db).await?.ok_or_else(|| AppError::not_found("visitor"))?;
    let request = ExportRequest {
        site_id: claimed.site_id,
        tracker_vid: visitor.tracker_vid.clone(),
        include_journey: destination.include_journey,
        include_events: destination.include_events,
        base_url: sending.base_url.clone(),
        now,
    };
    let mut prepared = webhooks::prepare_visitor(db, claimed.org_id, visitor, &request).await?;
    prepared.export.conversion = conversions::note(db, claimed.conversion_id).await?;
    let body = payload::build(kind, &prepared.export).to_string();
    let headers = signing::headers_for(&prepared.org.signing_secret, webhook_id(claimed), &body, now)?;
    Ok(delivery::send(&sending.webhooks, &url, kind, &headers, body).await)
}

/// A target the SSRF guard refused, as an attempt's outcome.
pub(super) fn refused(refusal: AppError) -> Outcome {
    Outcome { status: None, success: false, error: Some(refusal.message), duration_ms: 0, retry_after_ms: None }
}
