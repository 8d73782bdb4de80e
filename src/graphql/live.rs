//! Subscriptions, served over `/graphql/ws`.

use async_graphql::{Context, Object, Subscription};
use futures_util::{Stream, StreamExt};
use tokio_stream::wrappers::BroadcastStream;

use super::{context::ContextExt, types::Timestamp};
use crate::{
    auth::Role,
    error::AppResult,
    service::{access, tracking::Activity},
    time,
};

#[derive(Default)]
pub struct LiveSubscription;

#[Subscription]
impl LiveSubscription {
    /// Every visitor event stored for the site, as it is stored.
    async fn live_visitors(
        &self,
        ctx: &Context<'_>,
        site_id: i64,
    ) -> Result<impl Stream<Item = LiveActivity>, crate::error::AppError> {
        let app = ctx.app();
        access::site(&app.db, ctx.viewer()?, site_id, Role::Viewer).await?;
        let updates = BroadcastStream::new(app.live.subscribe());
        // A subscriber that falls behind skips what it missed rather than ending.
        Ok(updates.filter_map(move |update| async move {
            update.ok().filter(|activity| activity.site_id == site_id).map(LiveActivity)
        }))
    }
}

/// One stored visitor event, pushed by the `liveVisitors` subscription.
pub struct LiveActivity(pub Activity);

#[Object]
impl LiveActivity {
    async fn site_id(&self) -> i64 {
        self.0.site_id
    }
    async fn tracker_vid(&self) -> &str {
        &self.0.tracker_vid
    }
    async fn identified_user_id(&self) -> Option<&str> {
        self.0.identified_user_id.as_deref()
    }
    /// `pageview` or `custom_event`.
    #[graphql(name = "type")]
    async fn event_type(&self) -> &str {
        self.0.event_type
    }
    async fn page(&self) -> &str {
        &self.0.page
    }
    async fn timestamp(&self) -> Timestamp {
        Timestamp(self.0.timestamp)
    }
    /// The visitor as this event left them: score, totals, profile.
    async fn visitor(&self, ctx: &async_graphql::Context<'_>) -> AppResult<super::visitor::Visitor> {
        use super::context::ContextExt;
        let app = ctx.app();
        let scored = crate::service::analytics::scored_visitor(
            &app.db,
            ctx.viewer()?,
            self.0.site_id,
            &self.0.tracker_vid,
            time::now_ms(),
        )
        .await?;
        Ok(super::visitor::Visitor::new(scored))
    }
}
