//! Subscriptions, served over `/graphql/ws`.

use async_graphql::{Context, Object, Subscription};
use futures_util::{Stream, StreamExt};
use tokio_stream::wrappers::BroadcastStream;

use std::{sync::Arc, time::Duration};

use tokio::{sync::Mutex, time::Instant};

use super::{context::ContextExt, gate::Gate, types::Timestamp};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    service::{access, tracking::Activity},
    time,
};

#[derive(Default)]
pub struct LiveSubscription;

#[Subscription]
impl LiveSubscription {
    /// Every visitor event stored for the site, as it is stored. The stream
    /// ends when the viewer can no longer read the site.
    async fn live_visitors(
        &self,
        ctx: &Context<'_>,
        site_id: i64,
    ) -> Result<impl Stream<Item = LiveActivity>, crate::error::AppError> {
        let app = ctx.app();
        let viewer = ctx.viewer()?.clone();
        access::site(&*ctx.db().await?, &viewer, site_id, Role::Viewer).await?;
        let gate =
            ctx.data_opt::<Gate>().cloned().ok_or_else(|| AppError::internal("operation has no database gate"))?;
        let access = Arc::new(SiteAccess { gate, viewer, site_id, checked: Mutex::new(Instant::now()) });
        let updates = BroadcastStream::new(app.live.subscribe());
        // A subscriber that falls behind skips what it missed rather than ending.
        Ok(updates
            .filter_map(move |update| async move { update.ok().filter(|activity| activity.site_id == site_id) })
            .then(move |activity| {
                let access = access.clone();
                async move { access.still_allowed().await.then_some(activity) }
            })
            .take_while(|allowed| std::future::ready(allowed.is_some()))
            .filter_map(|allowed| std::future::ready(allowed.map(LiveActivity))))
    }
}

/// Events are pushed only while the viewer can read the site: access is
/// checked again before an event when the last check is older than this.
const ACCESS_RECHECK: Duration = Duration::from_secs(2);

/// A subscription's viewer and site, and when access was last confirmed.
struct SiteAccess {
    gate: Gate,
    viewer: Viewer,
    site_id: i64,
    checked: Mutex<Instant>,
}

impl SiteAccess {
    async fn still_allowed(&self) -> bool {
        let mut checked = self.checked.lock().await;
        if checked.elapsed() < ACCESS_RECHECK {
            return true;
        }
        let allowed = match self.gate.lease().await {
            Ok(db) => access::site(&*db, &self.viewer, self.site_id, Role::Viewer).await.is_ok(),
            Err(_) => false,
        };
        if allowed {
            *checked = Instant::now();
        }
        allowed
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
    /// A custom event's name (`form_submit`); empty for a pageview.
    async fn event_name(&self) -> &str {
        &self.0.event_name
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
        let scored = crate::service::analytics::scored_visitor(
            &*ctx.db().await?,
            ctx.viewer()?,
            self.0.site_id,
            &self.0.tracker_vid,
            time::now_ms(),
        )
        .await?;
        Ok(super::visitor::Visitor::new(scored))
    }
}
