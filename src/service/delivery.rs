//! What delivering a webhook or an alert needs besides the database: the
//! guarded client, the payloads' `{base_url}`, the target rules, and the
//! alert schedule's clock, and the mailer. The services that send (`webhooks`, `alerts`)
//! take this handle and nothing wider.

use std::{sync::Arc, time::Duration};

use tokio::sync::Notify;

use crate::{email::Mailer, service::alerts::due::AlertsDue, time::Clock, webhook::WebhookClient};

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
    /// SMTP_URL and EMAIL_FROM; none when email is not set up.
    pub mailer: Option<Mailer>,
    /// SMTP_TIMEOUT_SECS.
    pub(crate) smtp_timeout: Duration,
    /// Wakes this instance's email worker.
    pub email_due: Arc<Notify>,
}
