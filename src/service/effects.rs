//! What a use case does besides its SQL: caches on every instance to tell
//! about a change, the batch writer that records visitor activity, the client
//! that delivers webhooks. Services that have such effects take this handle
//! and carry them out themselves, so no resolver or handler has to remember.

use std::{sync::Arc, time::Duration};

use crate::{
    cluster::Cluster, ingest::writer::Writer, service::alerts::worker::AlertsDue, time::Clock, webhook::WebhookClient,
};

#[derive(Clone)]
pub struct Effects {
    pub(crate) cluster: Arc<Cluster>,
    pub(crate) writer: Writer,
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
