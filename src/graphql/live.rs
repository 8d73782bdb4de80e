//! Subscriptions, served over `/graphql/ws`.

use async_graphql::{Context, Result, Subscription};
use futures_util::{Stream, StreamExt};
use tokio_stream::wrappers::BroadcastStream;

use super::{context::ContextExt, types::LiveActivity};
use crate::{auth::Role, service::access};

#[derive(Default)]
pub struct LiveSubscription;

#[Subscription]
impl LiveSubscription {
    /// Every visitor event stored for the site, as it is stored.
    async fn live_visitors(&self, ctx: &Context<'_>, site_id: i64) -> Result<impl Stream<Item = LiveActivity>> {
        let app = ctx.app();
        access::site(&app.db, ctx.viewer()?, site_id, Role::Viewer).await?;
        let updates = BroadcastStream::new(app.live.subscribe());
        // A subscriber that falls behind skips what it missed rather than ending.
        Ok(updates.filter_map(move |update| async move {
            update.ok().filter(|activity| activity.site_id == site_id).map(LiveActivity)
        }))
    }
}
