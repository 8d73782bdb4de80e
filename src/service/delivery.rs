//! What delivering a webhook or an alert needs besides the database: the
//! guarded client, the payloads' `{base_url}`, the target rules, and the
//! alert schedule's clock. The services that send (`webhooks`, `alerts`)
//! take this handle and nothing wider.

use std::time::Duration;

use crate::{service::alerts::due::AlertsDue, time::Clock, webhook::WebhookClient};

#[derive(Clone)]
pub struct Delivery {
    pub(crate) webhooks: WebhookClient,
    /// `{base_url}` of the spec's payload links.
    pub(crate) base_url: String,
    /// WEBHOOK_UNSAFE_ALLOW_ANY_TARGET.
    pub(crate) allow_any_webhook_target: bool,
    /// WEBHOOK_TIMEOUT_SECS.
    pub(crate) webhook_timeout: Duration,
    /// The alert schedule's clock; tests move it.
    pub clock: Clock,
    /// Wakes this instance's alert worker.
    pub(crate) alerts_due: AlertsDue,
}
