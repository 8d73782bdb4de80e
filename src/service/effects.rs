//! What a use case does besides its SQL: caches on every instance to tell
//! about a change, the batch writer that records visitor activity, the client
//! that delivers webhooks. Services that have such effects take this handle
//! and carry them out themselves, so no resolver or handler has to remember.

use std::sync::Arc;

use crate::{cluster::Cluster, ingest::writer::Writer, webhook::WebhookClient};

#[derive(Clone)]
pub struct Effects {
    pub(crate) cluster: Arc<Cluster>,
    pub(crate) writer: Writer,
    pub(crate) webhooks: WebhookClient,
    /// `{base_url}` of the spec's payload links.
    pub(crate) base_url: String,
    /// WEBHOOK_UNSAFE_ALLOW_ANY_TARGET.
    pub(crate) allow_any_webhook_target: bool,
}
