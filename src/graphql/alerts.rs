//! Alerts (design §15): a site's destinations, their deliveries, a test send
//! and a manual retry. Admins only; the service checks.

use super::people::{self, PersonView};
use async_graphql::{Context, Enum, ID, InputObject, Object};

use entity::{alert_delivery, alert_destination};

use super::{
    context::ContextExt,
    cost,
    types::{Timestamp, parse_id},
    webhooks::WebhookDelivery,
};
use crate::{
    error::AppResult,
    service::alerts::{self, trigger},
};

/// What fires a destination, once per visitor.
#[derive(Enum, Clone, Copy, PartialEq, Eq)]
pub enum AlertTrigger {
    /// The visitor's score reached the site's hot threshold.
    BecameHot,
    /// The visitor was identified.
    Identified,
    /// The visitor submitted a form (a `form_submit` event).
    FormSubmitted,
    /// The visitor's account's score reached the site's hot threshold:
    /// once per account, with the visitor whose visit did it.
    AccountBecameHot,
    /// A conversion was recorded for the visitor (`recordConversion`, or a
    /// waiting one tied when identify named its person): once per conversion.
    Converted,
}

impl From<AlertTrigger> for trigger::AlertTrigger {
    fn from(trigger: AlertTrigger) -> Self {
        match trigger {
            AlertTrigger::BecameHot => trigger::AlertTrigger::BecameHot,
            AlertTrigger::Identified => trigger::AlertTrigger::Identified,
            AlertTrigger::FormSubmitted => trigger::AlertTrigger::FormSubmitted,
            AlertTrigger::AccountBecameHot => trigger::AlertTrigger::AccountBecameHot,
            AlertTrigger::Converted => trigger::AlertTrigger::Converted,
        }
    }
}

impl From<trigger::AlertTrigger> for AlertTrigger {
    fn from(trigger: trigger::AlertTrigger) -> Self {
        match trigger {
            trigger::AlertTrigger::BecameHot => AlertTrigger::BecameHot,
            trigger::AlertTrigger::Identified => AlertTrigger::Identified,
            trigger::AlertTrigger::FormSubmitted => AlertTrigger::FormSubmitted,
            trigger::AlertTrigger::AccountBecameHot => AlertTrigger::AccountBecameHot,
            trigger::AlertTrigger::Converted => AlertTrigger::Converted,
        }
    }
}

fn trigger_of(stored: &str) -> AlertTrigger {
    trigger::AlertTrigger::parse(stored).map_or(AlertTrigger::BecameHot, AlertTrigger::from)
}

#[derive(InputObject)]
pub struct DestinationInput {
    pub name: String,
    /// Checked like `POST /api/webhook`'s `webhook_url`.
    pub url: String,
    /// `custom`, `crm_one`, `crm_two`, `chat_one` or `chat_two`.
    #[graphql(default_with = "String::from(\"custom\")")]
    pub webhook_type: String,
    pub trigger: AlertTrigger,
    #[graphql(default = true)]
    pub include_journey: bool,
    #[graphql(default = true)]
    pub include_events: bool,
    #[graphql(default = true)]
    pub enabled: bool,
}

impl From<DestinationInput> for alerts::DestinationInput {
    fn from(input: DestinationInput) -> Self {
        alerts::DestinationInput {
            name: input.name,
            url: input.url,
            webhook_type: input.webhook_type,
            trigger: input.trigger.into(),
            include_journey: input.include_journey,
            include_events: input.include_events,
            enabled: input.enabled,
        }
    }
}

pub struct Destination(alert_destination::Model);

#[Object]
impl Destination {
    async fn id(&self) -> ID {
        ID(self.0.id.to_string())
    }
    async fn site_id(&self) -> i64 {
        self.0.site_id
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn url(&self) -> &str {
        &self.0.url
    }
    async fn webhook_type(&self) -> &str {
        &self.0.webhook_type
    }
    async fn trigger(&self) -> AlertTrigger {
        trigger_of(&self.0.trigger)
    }
    async fn include_journey(&self) -> bool {
        self.0.include_journey
    }
    async fn include_events(&self) -> bool {
        self.0.include_events
    }
    /// The admin's switch.
    async fn enabled(&self) -> bool {
        self.0.enabled
    }
    /// Why the service turned the destination off (24 hours of failed
    /// deliveries); null while it is live. Saving the destination clears it.
    async fn disabled_reason(&self) -> Option<&str> {
        self.0.disabled_reason.as_deref()
    }
    /// Since when every attempt has failed; null after a success.
    async fn failing_since(&self) -> Option<Timestamp> {
        self.0.failing_since.map(Timestamp)
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.created_at)
    }
    async fn updated_at(&self) -> Timestamp {
        Timestamp(self.0.updated_at)
    }
    /// The latest deliveries, newest first.
    #[graphql(complexity = "cost::log_page(first) * child_complexity")]
    async fn deliveries(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 20)] first: u64,
    ) -> AppResult<Vec<AlertDelivery>> {
        let found = alerts::deliveries(&*ctx.db().await?, self.0.id, first).await?;
        Ok(found.into_iter().map(AlertDelivery).collect())
    }
}

#[derive(Enum, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Waiting for its first attempt or a retry.
    Pending,
    Delivered,
    /// Given up: refused by the receiver, or every retry failed. `retryDelivery` sends it again.
    Failed,
}

pub struct AlertDelivery(alert_delivery::Model);

#[Object]
impl AlertDelivery {
    async fn id(&self) -> ID {
        ID(self.0.id.to_string())
    }
    async fn destination_id(&self) -> ID {
        ID(self.0.destination_id.to_string())
    }
    async fn trigger(&self) -> AlertTrigger {
        trigger_of(&self.0.trigger)
    }
    async fn tracker_vid(&self) -> &str {
        &self.0.tracker_vid
    }
    /// Who this is, by the display rule (name, email, user id, short id), with their company.
    async fn person(&self, ctx: &Context<'_>) -> AppResult<PersonView> {
        people::on_site(ctx, self.0.site_id, &self.0.tracker_vid).await
    }
    /// The `webhook-id` of every attempt: the delivery's `id`.
    async fn message_id(&self) -> String {
        alerts::worker::webhook_id(&self.0)
    }
    async fn status(&self) -> DeliveryStatus {
        match self.0.status.as_str() {
            alerts::outbox::DELIVERED => DeliveryStatus::Delivered,
            alerts::outbox::FAILED => DeliveryStatus::Failed,
            _ => DeliveryStatus::Pending,
        }
    }
    /// Attempts made so far.
    async fn attempts(&self) -> i32 {
        self.0.attempts
    }
    /// When the next attempt is due; null once delivered or given up.
    async fn next_attempt_at(&self) -> Option<Timestamp> {
        self.0.next_attempt_at.filter(|_| self.0.status == alerts::outbox::PENDING).map(Timestamp)
    }
    async fn last_status_code(&self) -> Option<i32> {
        self.0.last_status_code
    }
    async fn last_error(&self) -> Option<&str> {
        self.0.last_error.as_deref()
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.created_at)
    }
    async fn delivered_at(&self) -> Option<Timestamp> {
        self.0.delivered_at.map(Timestamp)
    }
    /// Every attempt as the delivery log has it, first to last.
    #[graphql(complexity = "cost::log_page(7) * child_complexity")]
    async fn log(&self, ctx: &Context<'_>) -> AppResult<Vec<WebhookDelivery>> {
        let found = alerts::attempts(&*ctx.db().await?, self.0.id).await?;
        Ok(found.into_iter().map(WebhookDelivery::from).collect())
    }
}

#[derive(Default)]
pub struct AlertQuery;

#[Object]
impl AlertQuery {
    /// The site's alert destinations, oldest first. Admins only.
    async fn destinations(&self, ctx: &Context<'_>, site_id: i64) -> AppResult<Vec<Destination>> {
        destinations(ctx, site_id).await
    }
}

#[derive(Default)]
pub struct AlertMutation;

#[Object]
impl AlertMutation {
    async fn create_destination(
        &self,
        ctx: &Context<'_>,
        site_id: i64,
        input: DestinationInput,
    ) -> AppResult<Destination> {
        let app = ctx.app();
        Ok(Destination(
            alerts::create(&*ctx.db().await?, &app.cluster, &app.delivery, ctx.viewer()?, site_id, input.into())
                .await?,
        ))
    }

    /// Replaces every field; clears a `disabledReason`.
    async fn update_destination(&self, ctx: &Context<'_>, id: ID, input: DestinationInput) -> AppResult<Destination> {
        let app = ctx.app();
        let id = parse_id(&id, "destination")?;
        Ok(Destination(
            alerts::update(&*ctx.db().await?, &app.cluster, &app.delivery, ctx.viewer()?, id, input.into()).await?,
        ))
    }

    /// Deletes the destination and all its deliveries; the delivery log keeps their attempts.
    async fn delete_destination(&self, ctx: &Context<'_>, id: ID) -> AppResult<bool> {
        alerts::delete(&*ctx.db().await?, ctx.viewer()?, parse_id(&id, "destination")?).await?;
        Ok(true)
    }

    /// Sends a sample alert now and answers the attempt as logged.
    async fn test_destination(&self, ctx: &Context<'_>, id: ID) -> AppResult<WebhookDelivery> {
        let app = ctx.app();
        let id = parse_id(&id, "destination")?;
        Ok(WebhookDelivery::from(alerts::test(&*ctx.db().await?, &app.delivery, ctx.viewer()?, id).await?))
    }

    /// Sends a failed delivery again now, with its `webhook-id`, and answers it.
    async fn retry_delivery(&self, ctx: &Context<'_>, id: ID) -> AppResult<AlertDelivery> {
        let app = ctx.app();
        let id = parse_id(&id, "delivery")?;
        Ok(AlertDelivery(
            alerts::retry(&*ctx.db().await?, &app.delivery, &app.metrics.alerts, ctx.viewer()?, id).await?,
        ))
    }
}

// The reads above as functions, which `workspace` also calls with its site
// or org filled in.

pub(crate) async fn destinations(ctx: &Context<'_>, site_id: i64) -> AppResult<Vec<Destination>> {
    let found = alerts::list(&*ctx.db().await?, ctx.viewer()?, site_id).await?;
    Ok(found.into_iter().map(Destination).collect())
}
