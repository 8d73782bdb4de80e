//! Tracked sessions and their events.

use super::people::{self, PersonView};
use crate::error::AppResult;
use std::sync::Arc;

use async_graphql::{Context, ID, Json, Object, SimpleObject};
use serde_json::Value;
use tokio::sync::OnceCell;

use entity::{event, tracked_session};

use super::{
    cost,
    loaders::{self, EventsOfSession},
    types::Timestamp,
};
use crate::service::analytics::session::gaps_seconds;

/// A stored event. Pings are not stored as events.
pub struct TrackedEvent(pub event::Model);

fn props(raw: &str) -> Json<Value> {
    Json(serde_json::from_str(raw).unwrap_or_else(|_| Value::Object(Default::default())))
}

#[Object]
impl TrackedEvent {
    async fn session_id(&self) -> ID {
        ID(self.0.session_id.to_string())
    }
    /// `pageview` or `custom_event`.
    #[graphql(name = "type")]
    async fn event_type(&self) -> &str {
        &self.0.event_type
    }
    /// Empty for pageviews.
    async fn event_name(&self) -> &str {
        &self.0.event_name
    }
    async fn page(&self) -> &str {
        &self.0.page
    }
    async fn page_title(&self) -> Option<&str> {
        self.0.page_title.as_deref()
    }
    async fn referrer(&self) -> Option<&str> {
        self.0.referrer.as_deref()
    }
    async fn props(&self) -> Json<Value> {
        props(&self.0.props)
    }
    async fn timestamp(&self) -> Timestamp {
        Timestamp(self.0.timestamp)
    }
}

/// An event in a session's timeline.
#[derive(SimpleObject)]
pub struct TimelineEntry {
    #[graphql(name = "type")]
    pub event_type: String,
    pub event_name: String,
    pub page: String,
    pub page_title: Option<String>,
    pub timestamp: Timestamp,
    /// Whole seconds since the previous entry; 0 for the first.
    pub time_on_previous_page: i64,
    pub props: Json<Value>,
}

pub struct TrackedSession {
    pub model: tracked_session::Model,
    /// The visitor's identity at the time of the request.
    pub identified_user_id: Option<String>,
    /// Loaded once for `events`, `pages` and `timeline`; a parent listing many
    /// sessions fills it for all of them with one query.
    events: OnceCell<Arc<Vec<event::Model>>>,
}

impl TrackedSession {
    pub fn new(model: tracked_session::Model, identified_user_id: Option<String>) -> Self {
        TrackedSession { model, identified_user_id, events: OnceCell::new() }
    }

    pub fn with_events(mut self, events: Arc<Vec<event::Model>>) -> Self {
        self.events = OnceCell::new_with(Some(events));
        self
    }

    async fn stored_events(&self, ctx: &Context<'_>) -> AppResult<Arc<Vec<event::Model>>> {
        let events = self.events.get_or_try_init(|| loaders::load(ctx, EventsOfSession(self.model.id))).await?;
        Ok(events.clone())
    }
}

/// Whether a selection asks for a session's events in any form.
pub fn wants_events(ctx: &Context<'_>) -> bool {
    let fields = ctx.look_ahead();
    ["events", "pages", "timeline"].into_iter().any(|name| fields.field(name).exists())
}

#[Object]
impl TrackedSession {
    async fn session_id(&self) -> ID {
        ID(self.model.id.to_string())
    }
    async fn tracker_vid(&self) -> &str {
        &self.model.tracker_vid
    }
    /// Who this is, by the display rule (name, email, user id, short id), with their company.
    async fn person(&self, ctx: &Context<'_>) -> AppResult<PersonView> {
        people::on_site(ctx, self.model.site_id, &self.model.tracker_vid).await
    }
    async fn identified_user_id(&self) -> Option<&str> {
        self.identified_user_id.as_deref()
    }
    async fn started_at(&self) -> Timestamp {
        Timestamp(self.model.started_at)
    }
    async fn ended_at(&self) -> Timestamp {
        Timestamp(self.model.ended_at)
    }
    async fn duration_seconds(&self) -> i64 {
        self.model.duration_seconds
    }
    async fn pageview_count(&self) -> i32 {
        self.model.pageview_count
    }
    async fn event_count(&self) -> i32 {
        self.model.event_count
    }
    async fn entry_page(&self) -> Option<&str> {
        self.model.entry_page.as_deref()
    }
    async fn exit_page(&self) -> Option<&str> {
        self.model.exit_page.as_deref()
    }
    /// The external referrer that started the session.
    async fn referrer(&self) -> Option<&str> {
        self.model.referrer.as_deref()
    }
    async fn channel(&self) -> &str {
        &self.model.channel
    }
    async fn utm_source(&self) -> Option<&str> {
        self.model.utm_source.as_deref()
    }
    async fn utm_medium(&self) -> Option<&str> {
        self.model.utm_medium.as_deref()
    }
    async fn utm_campaign(&self) -> Option<&str> {
        self.model.utm_campaign.as_deref()
    }
    async fn utm_content(&self) -> Option<&str> {
        self.model.utm_content.as_deref()
    }
    async fn utm_term(&self) -> Option<&str> {
        self.model.utm_term.as_deref()
    }
    async fn country(&self) -> Option<&str> {
        self.model.country.as_deref()
    }
    async fn city(&self) -> Option<&str> {
        self.model.city.as_deref()
    }
    async fn region(&self) -> Option<&str> {
        self.model.region.as_deref()
    }
    async fn device_type(&self) -> Option<&str> {
        self.model.device_type.as_deref()
    }
    async fn browser(&self) -> Option<&str> {
        self.model.browser.as_deref()
    }
    async fn os(&self) -> Option<&str> {
        self.model.os.as_deref()
    }
    /// The session's events in the order they happened.
    #[graphql(complexity = "cost::EVENTS_PER_SESSION * child_complexity")]
    async fn events(&self, ctx: &Context<'_>) -> AppResult<Vec<TrackedEvent>> {
        Ok(self.stored_events(ctx).await?.iter().cloned().map(TrackedEvent).collect())
    }
    /// The paths of the pages viewed, in order, repeats included.
    #[graphql(complexity = "cost::EVENTS_PER_SESSION * child_complexity")]
    async fn pages(&self, ctx: &Context<'_>) -> AppResult<Vec<String>> {
        let events = self.stored_events(ctx).await?;
        Ok(events.iter().filter(|e| e.event_type == "pageview").map(|e| e.page.clone()).collect())
    }
    /// The events in order, with the time spent before each.
    #[graphql(complexity = "cost::EVENTS_PER_SESSION * child_complexity")]
    async fn timeline(&self, ctx: &Context<'_>) -> AppResult<Vec<TimelineEntry>> {
        let events = self.stored_events(ctx).await?;
        Ok(events
            .iter()
            .zip(gaps_seconds(&events))
            .map(|(e, gap)| TimelineEntry {
                event_type: e.event_type.clone(),
                event_name: e.event_name.clone(),
                page: e.page.clone(),
                page_title: e.page_title.clone(),
                timestamp: Timestamp(e.timestamp),
                time_on_previous_page: gap,
                props: props(&e.props),
            })
            .collect())
    }
}
