//! One export end to end: check the target, build and sign the payload,
//! deliver it (unless it is a dry run) and log the attempt.

use sea_orm::ConnectionTrait;
use serde_json::{Map, Value};

use super::{Attempt, ExportRequest};
use crate::{
    auth::Viewer,
    error::AppResult,
    service::delivery::Delivery,
    time::now_ms,
    webhook::{WebhookType, delivery, guard, payload, signing},
};

pub struct ExportCommand {
    pub site_id: i64,
    pub tracker_vid: String,
    pub webhook_url: String,
    pub kind: WebhookType,
    pub include_journey: bool,
    pub include_events: bool,
    /// Build and sign, but do not send.
    pub dry_run: bool,
}

pub struct Exported {
    pub tracker_vid: String,
    /// The exact body sent, or that would be sent.
    pub payload: Value,
    /// The exact headers sent, or that would be sent.
    pub headers: Map<String, Value>,
    /// None for a dry run.
    pub delivered_at: Option<i64>,
}

/// A refused target is INVALID_WEBHOOK_URL; a failed delivery DELIVERY_FAILED.
pub async fn export(
    db: &impl ConnectionTrait,
    sending: &Delivery,
    viewer: &Viewer,
    command: ExportCommand,
) -> AppResult<Exported> {
    let kind = command.kind;
    let url = guard::check_url(&command.webhook_url, kind, sending.allow_any_webhook_target)?;
    let now = now_ms();
    let request = ExportRequest {
        site_id: command.site_id,
        tracker_vid: command.tracker_vid,
        include_journey: command.include_journey,
        include_events: command.include_events,
        base_url: sending.base_url.clone(),
        now,
    };
    let prepared = super::prepare(db, viewer, request).await?;
    let payload = payload::build(kind, &prepared.export);
    let body = payload.to_string();
    let signed = signing::headers(&prepared.org.signing_secret, &body, now)?;
    let mut headers: Map<String, Value> = signed.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    headers.insert("content-type".to_owned(), Value::String("application/json".to_owned()));
    let tracker_vid = prepared.export.visitor.tracker_vid.clone();
    if command.dry_run {
        return Ok(Exported { tracker_vid, payload, headers, delivered_at: None });
    }

    // A target refused when its name resolved is logged too, then answered 400.
    let (outcome, refusal) = match delivery::send(&sending.webhooks, &url, kind, &signed, body).await {
        Ok(outcome) => (outcome, None),
        Err(refusal) => {
            let outcome = delivery::Outcome {
                status: None,
                success: false,
                error: Some(refusal.message.clone()),
                duration_ms: 0,
                retry_after_ms: None,
            };
            (outcome, Some(refusal))
        }
    };
    let message_id = headers.get("webhook-id").and_then(Value::as_str).unwrap_or_default();
    let attempt = Attempt {
        org_id: prepared.org.id,
        site_id: command.site_id,
        user_id: viewer.user_id(),
        tracker_vid: &tracker_vid,
        webhook_type: kind.as_str(),
        message_id,
        target_host: url.host_str().unwrap_or_default(),
        outcome: &outcome,
        at: now,
        alert: None,
    };
    super::record(db, attempt).await?;
    if let Some(refusal) = refusal {
        return Err(refusal);
    }
    if !outcome.success {
        return Err((&outcome).into());
    }
    Ok(Exported { tracker_vid, payload, headers, delivered_at: Some(now_ms()) })
}
