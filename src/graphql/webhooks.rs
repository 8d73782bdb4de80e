//! Webhook exports: send (or preview) a visitor's profile, read the delivery
//! log, and read or rotate the org's signing secret.

use super::people::{self, PersonView};
use crate::error::AppResult;
use async_graphql::{Context, ID, InputObject, Json, Object, SimpleObject};
use serde_json::Value;

use entity::webhook_delivery;

use super::{
    context::ContextExt,
    cost,
    types::{Timestamp, parse_id},
};
use crate::{
    service::webhooks::{self, ExportCommand},
    webhook::{WebhookType, payload},
};

#[derive(InputObject)]
pub struct SendWebhookInput {
    pub tracker_vid: String,
    pub webhook_url: String,
    /// `custom` (default), `crm_one`, `crm_two`, `chat_one` or `chat_two`.
    pub webhook_type: Option<String>,
    /// Include the sessions; default true.
    pub include_journey: Option<bool>,
    /// Include the latest events; default true.
    pub include_events: Option<bool>,
    /// Defaults to DEFAULT_SITE_ID (4).
    pub site_id: Option<i64>,
    /// Build and sign the request but do not send it.
    pub dry_run: Option<bool>,
}

#[derive(SimpleObject)]
pub struct WebhookResult {
    pub success: bool,
    pub tracker_vid: String,
    pub webhook_type: String,
    /// When it was delivered; null for a dry run.
    pub delivered_at: Option<Timestamp>,
    pub dry_run: bool,
    /// The exact body sent (or that would be sent).
    pub payload: Json<Value>,
    /// The exact headers sent (or that would be sent).
    pub headers: Json<Value>,
}

#[derive(SimpleObject)]
pub struct WebhookInfo {
    pub supported_types: Vec<String>,
    /// A reference POST /api/webhook body.
    pub example_payload: Json<Value>,
}

pub struct WebhookDelivery(webhook_delivery::Model);

impl From<webhook_delivery::Model> for WebhookDelivery {
    fn from(model: webhook_delivery::Model) -> Self {
        WebhookDelivery(model)
    }
}

#[Object]
impl WebhookDelivery {
    async fn id(&self) -> ID {
        ID(self.0.id.to_string())
    }
    async fn site_id(&self) -> i64 {
        self.0.site_id
    }
    async fn tracker_vid(&self) -> &str {
        &self.0.tracker_vid
    }
    /// Who this is, by the display rule (name, email, user id, short id), with their company.
    async fn person(&self, ctx: &Context<'_>) -> AppResult<PersonView> {
        people::on_site(ctx, self.0.site_id, &self.0.tracker_vid).await
    }
    async fn webhook_type(&self) -> &str {
        &self.0.webhook_type
    }
    /// The `webhook-id` header sent.
    async fn message_id(&self) -> &str {
        &self.0.message_id
    }
    async fn target_host(&self) -> &str {
        &self.0.target_host
    }
    /// The target's HTTP status; null when it never answered.
    async fn status_code(&self) -> Option<i32> {
        self.0.status_code
    }
    async fn success(&self) -> bool {
        self.0.success
    }
    async fn duration_ms(&self) -> i64 {
        self.0.duration_ms
    }
    async fn error(&self) -> Option<&str> {
        self.0.error.as_deref()
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.created_at)
    }
    /// The alert delivery this attempt belongs to; null for `sendWebhook`,
    /// `POST /api/webhook` and `testDestination`.
    async fn alert_delivery_id(&self) -> Option<ID> {
        self.0.alert_delivery_id.map(|id| ID(id.to_string()))
    }
    /// The alert destination; null for `sendWebhook` and `POST /api/webhook`.
    async fn destination_id(&self) -> Option<ID> {
        self.0.destination_id.map(|id| ID(id.to_string()))
    }
    /// What fired the alert (`became_hot`, `identified`, `form_submitted`,
    /// or `test`); null for `sendWebhook` and `POST /api/webhook`.
    async fn trigger(&self) -> Option<&str> {
        self.0.trigger.as_deref()
    }
    /// The attempt's number, 1 for the first.
    async fn attempt(&self) -> i32 {
        self.0.attempt
    }
    /// When the alert is tried again; null when this attempt settled it.
    async fn next_attempt_at(&self) -> Option<Timestamp> {
        self.0.next_attempt_at.map(Timestamp)
    }
}

fn org_id(id: Option<ID>) -> AppResult<Option<i64>> {
    id.map(|id| parse_id(&id, "organization")).transpose()
}

#[derive(Default)]
pub struct WebhookQuery;

#[Object]
impl WebhookQuery {
    /// The payload types, and an example request.
    async fn webhook_info(&self, ctx: &Context<'_>) -> AppResult<WebhookInfo> {
        ctx.viewer()?;
        Ok(WebhookInfo {
            supported_types: WebhookType::ALL.iter().map(|kind| kind.as_str().to_owned()).collect(),
            example_payload: Json(payload::example_request(ctx.app().config.default_site_id)),
        })
    }

    /// The org's latest delivery attempts, newest first. Members and up.
    #[graphql(complexity = "cost::log_page(first) * child_complexity")]
    async fn webhook_deliveries(
        &self,
        ctx: &Context<'_>,
        org_id: Option<ID>,
        #[graphql(default = 50)] first: u64,
    ) -> AppResult<Vec<WebhookDelivery>> {
        webhook_deliveries(ctx, org_id, first).await
    }

    /// The Standard Webhooks secret that signs the org's deliveries. Admins only.
    async fn webhook_signing_secret(&self, ctx: &Context<'_>, org_id: Option<ID>) -> AppResult<String> {
        webhook_signing_secret(ctx, org_id).await
    }
}

#[derive(Default)]
pub struct WebhookMutation;

#[Object]
impl WebhookMutation {
    /// Pushes one visitor's profile to a target, signed, and logs the attempt.
    /// A refused target is INVALID_WEBHOOK_URL; a failed one DELIVERY_FAILED.
    async fn send_webhook(&self, ctx: &Context<'_>, input: SendWebhookInput) -> AppResult<WebhookResult> {
        let app = ctx.app();
        let kind = WebhookType::parse(input.webhook_type.as_deref())?;
        let dry_run = input.dry_run.unwrap_or(false);
        let command = ExportCommand {
            site_id: input.site_id.unwrap_or(app.config.default_site_id),
            tracker_vid: input.tracker_vid,
            webhook_url: input.webhook_url,
            kind,
            include_journey: input.include_journey.unwrap_or(true),
            include_events: input.include_events.unwrap_or(true),
            dry_run,
        };
        let exported = webhooks::export(&*ctx.db().await?, &app.delivery, ctx.viewer()?, command).await?;
        Ok(WebhookResult {
            success: true,
            tracker_vid: exported.tracker_vid,
            webhook_type: kind.as_str().to_owned(),
            delivered_at: exported.delivered_at.map(Timestamp),
            dry_run,
            payload: Json(exported.payload),
            headers: Json(Value::Object(exported.headers)),
        })
    }

    /// Replaces the org's signing secret and returns the new one. Admins only.
    async fn rotate_webhook_secret(&self, ctx: &Context<'_>, org_id: Option<ID>) -> AppResult<String> {
        Ok(webhooks::rotate_secret(&*ctx.db().await?, ctx.viewer()?, self::org_id(org_id)?).await?)
    }
}

// The reads above as functions, which `workspace` also calls with its site
// or org filled in.

pub(crate) async fn webhook_deliveries(
    ctx: &Context<'_>,
    org_id: Option<ID>,
    first: u64,
) -> AppResult<Vec<WebhookDelivery>> {
    let found = webhooks::deliveries(&*ctx.db().await?, ctx.viewer()?, self::org_id(org_id)?, first).await?;
    Ok(found.into_iter().map(WebhookDelivery).collect())
}

pub(crate) async fn webhook_signing_secret(ctx: &Context<'_>, org_id: Option<ID>) -> AppResult<String> {
    webhooks::signing_secret(&*ctx.db().await?, ctx.viewer()?, self::org_id(org_id)?).await
}
