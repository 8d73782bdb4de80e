//! The writer's way to wake the alert worker: a batch that queued
//! deliveries rings, so the first attempt does not wait for the next poll.
//! A module of its own, so the writer needs nothing else of the alerts.

use std::sync::Arc;

use tokio::sync::Notify;

#[derive(Clone, Default)]
pub struct AlertsDue(Arc<Notify>);

impl AlertsDue {
    pub fn wake(&self) {
        self.0.notify_one();
    }

    /// Waits until rung (a ring while nobody waited is kept).
    pub async fn woken(&self) {
        self.0.notified().await;
    }
}
