//! The visitor type: list row and full profile in one. Nested lists go
//! through the request's loaders; profile-only parts query on demand.

use super::people::PersonView;
use crate::error::AppResult;
use crate::service::people;
use std::{collections::HashMap, sync::Arc};

use async_graphql::{Context, Json, Object, SimpleObject};
use entity::{identity, tracked_session};
use serde_json::Value;
use tokio::sync::OnceCell;

use super::{
    conversions::{Conversion, MoneyTotal},
    cost,
    identify::Identity,
    link_analytics::LinkClick,
    loaders::{
        self, ClicksOfVisitor, ConversionsOfVisitor, EventsOfSession, IdentitiesOfVisitor, RevenueEventsOfVisitor,
        SessionsOfVisitor,
    },
    session::{self, TrackedEvent, TrackedSession},
    types::Timestamp,
};
use crate::{
    graphql::context::ContextExt,
    service::{
        analytics::{ScoredVisitor, attribution, profile},
        conversions, scoring,
    },
    time::now_ms,
};

pub struct Visitor {
    scored: ScoredVisitor,
    /// Shared by `sessions` and `attribution`, so each is read once.
    sessions: OnceCell<Arc<Vec<tracked_session::Model>>>,
    identities: OnceCell<Arc<Vec<identity::Model>>>,
}

/// The company a visitor belongs to (design §18).
#[derive(SimpleObject)]
pub struct VisitorAccount {
    /// A web domain (`acme.com`), `name:<company>` when only a name is
    /// known, or `asn:<number>` for a network; the leads list filters by it.
    pub key: String,
    pub name: String,
    /// What it was found from: `email`, `company` or `network`.
    pub source: String,
}

/// The network (autonomous system) of a visitor's latest visit, from the
/// ASN database (`ASN_DB_PATH`); the address itself is not kept.
#[derive(SimpleObject)]
pub struct VisitorNetwork {
    pub asn: i64,
    /// The organisation that holds it.
    pub organisation: String,
}

/// One factor of the score.
#[derive(SimpleObject)]
pub struct ScoreFactor {
    pub name: String,
    pub points: i32,
    pub reason: String,
}

#[derive(SimpleObject)]
pub struct PageViews {
    pub page: String,
    pub views: i64,
}

#[derive(SimpleObject)]
pub struct DayActivity {
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    pub events: i64,
}

/// Where a visit came from.
#[derive(SimpleObject)]
pub struct Touch {
    pub referrer: Option<String>,
    pub channel: String,
    pub utm_source: Option<String>,
    pub utm_medium: Option<String>,
    pub utm_campaign: Option<String>,
    pub utm_content: Option<String>,
    pub utm_term: Option<String>,
}

/// The sessions that came from one source.
#[derive(SimpleObject)]
pub struct Touchpoint {
    pub referrer: Option<String>,
    pub channel: String,
    pub utm_source: Option<String>,
    pub utm_medium: Option<String>,
    pub utm_campaign: Option<String>,
    pub first_seen: Timestamp,
    pub last_seen: Timestamp,
    /// Sessions from this source.
    pub touchpoints: i64,
}

#[derive(SimpleObject)]
pub struct Attribution {
    /// The first session's source; null before any session.
    pub first_touch: Option<Touch>,
    /// The latest session's source.
    pub last_touch: Option<Touch>,
    /// Every source, in the order first seen.
    pub touchpoints: Vec<Touchpoint>,
}

impl From<attribution::Touch> for Touch {
    fn from(t: attribution::Touch) -> Self {
        Touch {
            referrer: t.referrer,
            channel: t.channel,
            utm_source: t.utm_source,
            utm_medium: t.utm_medium,
            utm_campaign: t.utm_campaign,
            utm_content: t.utm_content,
            utm_term: t.utm_term,
        }
    }
}

impl From<attribution::Attribution> for Attribution {
    fn from(found: attribution::Attribution) -> Self {
        Attribution {
            first_touch: found.first_touch.map(Touch::from),
            last_touch: found.last_touch.map(Touch::from),
            touchpoints: found
                .touchpoints
                .into_iter()
                .map(|t| Touchpoint {
                    referrer: t.referrer,
                    channel: t.channel,
                    utm_source: t.utm_source,
                    utm_medium: t.utm_medium,
                    utm_campaign: t.utm_campaign,
                    first_seen: Timestamp(t.first_seen),
                    last_seen: Timestamp(t.last_seen),
                    touchpoints: t.touches,
                })
                .collect(),
        }
    }
}

pub fn page_views(rows: Vec<(String, i64)>) -> Vec<PageViews> {
    rows.into_iter().map(|(page, views)| PageViews { page, views }).collect()
}

impl Visitor {
    pub fn new(scored: ScoredVisitor) -> Self {
        Visitor { scored, sessions: OnceCell::new(), identities: OnceCell::new() }
    }

    fn id(&self) -> i64 {
        self.scored.visitor.id
    }

    async fn stored_sessions(&self, ctx: &Context<'_>) -> AppResult<Arc<Vec<tracked_session::Model>>> {
        let found = self.sessions.get_or_try_init(|| loaders::load(ctx, SessionsOfVisitor(self.id()))).await?;
        Ok(found.clone())
    }

    async fn stored_identities(&self, ctx: &Context<'_>) -> AppResult<Arc<Vec<identity::Model>>> {
        let found = self.identities.get_or_try_init(|| loaders::load(ctx, IdentitiesOfVisitor(self.id()))).await?;
        Ok(found.clone())
    }
}

#[Object]
impl Visitor {
    async fn tracker_vid(&self) -> &str {
        &self.scored.visitor.tracker_vid
    }
    /// Who this is, by the display rule (name, email, user id, short id), with their company.
    async fn person(&self, ctx: &Context<'_>) -> AppResult<PersonView> {
        let identities = self.stored_identities(ctx).await?;
        Ok(people::of_visitor(&self.scored.visitor, &identities).into())
    }
    /// `anonymous` or `identified`.
    async fn status(&self) -> &str {
        &self.scored.visitor.status
    }
    /// 0 to 100; see `scoreBreakdown`.
    async fn score(&self) -> i32 {
        self.scored.score
    }
    /// Whether the score reaches the site's hot threshold.
    async fn hot(&self) -> bool {
        self.scored.hot
    }
    /// The identity's user id, or its email when it has none.
    async fn identified_user_id(&self) -> Option<&str> {
        self.scored.visitor.identified_user_id.as_deref()
    }
    async fn email(&self) -> Option<&str> {
        self.scored.visitor.email.as_deref()
    }
    async fn country(&self) -> Option<&str> {
        self.scored.visitor.country.as_deref()
    }
    async fn city(&self) -> Option<&str> {
        self.scored.visitor.city.as_deref()
    }
    async fn region(&self) -> Option<&str> {
        self.scored.visitor.region.as_deref()
    }
    async fn lat(&self) -> Option<f64> {
        self.scored.visitor.lat
    }
    async fn lon(&self) -> Option<f64> {
        self.scored.visitor.lon
    }
    async fn device_type(&self) -> Option<&str> {
        self.scored.visitor.device_type.as_deref()
    }
    async fn browser(&self) -> Option<&str> {
        self.scored.visitor.browser.as_deref()
    }
    async fn os(&self) -> Option<&str> {
        self.scored.visitor.os.as_deref()
    }
    async fn first_seen(&self) -> Timestamp {
        Timestamp(self.scored.visitor.first_seen)
    }
    async fn last_seen(&self) -> Timestamp {
        Timestamp(self.scored.visitor.last_seen)
    }
    async fn total_sessions(&self) -> i32 {
        self.scored.visitor.total_sessions
    }
    async fn total_pageviews(&self) -> i32 {
        self.scored.visitor.total_pageviews
    }
    async fn total_events(&self) -> i32 {
        self.scored.visitor.total_events
    }
    async fn total_time_seconds(&self) -> i64 {
        self.scored.visitor.total_time_seconds
    }
    /// Tracking-link clicks tied to this visitor.
    async fn clicks(&self) -> i32 {
        self.scored.visitor.clicks
    }
    async fn high_value_views(&self) -> i32 {
        self.scored.visitor.high_value_views
    }
    async fn form_submits(&self) -> i32 {
        self.scored.visitor.form_submits
    }
    /// 1 for bot traffic, else 0 (the REST list's numeric flag).
    async fn is_bot(&self) -> i32 {
        i32::from(self.scored.visitor.is_bot)
    }
    /// The channel of the latest visit (last touch).
    async fn last_channel(&self) -> Option<&str> {
        self.scored.visitor.last_channel.as_deref()
    }
    /// The campaign (`utm_campaign`) of the latest visit.
    async fn last_campaign(&self) -> Option<&str> {
        self.scored.visitor.last_campaign.as_deref()
    }
    /// The path of the latest page view.
    async fn last_page(&self) -> Option<&str> {
        self.scored.visitor.last_page.as_deref()
    }
    /// The network of the latest visit, when an ASN database knows it.
    async fn network(&self) -> Option<VisitorNetwork> {
        let visitor = &self.scored.visitor;
        Some(VisitorNetwork { asn: visitor.asn?, organisation: visitor.network.clone().unwrap_or_default() })
    }
    /// The company this visitor belongs to, when one is known.
    async fn account(&self) -> Option<VisitorAccount> {
        let visitor = &self.scored.visitor;
        Some(VisitorAccount {
            key: visitor.account_key.clone()?,
            name: visitor.account_name.clone().or_else(|| visitor.account_key.clone())?,
            source: visitor.account_source.clone().unwrap_or_default(),
        })
    }
    async fn first_referrer(&self) -> Option<&str> {
        self.scored.visitor.first_referrer.as_deref()
    }
    async fn last_referrer(&self) -> Option<&str> {
        self.scored.visitor.last_referrer.as_deref()
    }
    /// Gravatar for the visitor's email; null when no email is known.
    async fn gravatar_url(&self) -> Option<String> {
        self.scored.visitor.email.as_deref().map(crate::service::analytics::profile::gravatar_url)
    }
    /// How the score is made, recency included.
    async fn score_breakdown(&self) -> Vec<ScoreFactor> {
        scoring::breakdown(&self.scored.visitor, now_ms())
            .into_iter()
            .map(|f| ScoreFactor { name: f.name.to_owned(), points: f.points, reason: f.reason })
            .collect()
    }
    /// Every session, newest first.
    #[graphql(complexity = "cost::SESSIONS_PER_VISITOR * child_complexity")]
    async fn sessions(&self, ctx: &Context<'_>) -> AppResult<Vec<TrackedSession>> {
        let sessions = self.stored_sessions(ctx).await?;
        let owner = &self.scored.visitor.identified_user_id;
        let wants_events = session::wants_events(ctx);
        let mut events = if wants_events {
            loaders::load_many(ctx, sessions.iter().map(|s| EventsOfSession(s.id))).await?
        } else {
            HashMap::new()
        };
        Ok(sessions
            .iter()
            .map(|s| {
                let tracked = TrackedSession::new(s.clone(), owner.clone());
                match events.remove(&EventsOfSession(s.id)) {
                    Some(found) => tracked.with_events(found),
                    None if wants_events => tracked.with_events(Arc::default()),
                    None => tracked,
                }
            })
            .collect())
    }
    /// Every identify call, newest first.
    #[graphql(complexity = "cost::IDENTITIES_PER_VISITOR * child_complexity")]
    async fn identities(&self, ctx: &Context<'_>) -> AppResult<Vec<Identity>> {
        Ok(self.stored_identities(ctx).await?.iter().cloned().map(Identity).collect())
    }
    /// The traits of the latest identity; `{}` before any.
    async fn user_traits(&self, ctx: &Context<'_>) -> AppResult<Json<Value>> {
        let identities = self.stored_identities(ctx).await?;
        let traits = identities.first().and_then(|latest| serde_json::from_str(&latest.traits).ok());
        Ok(Json(traits.unwrap_or_else(|| Value::Object(Default::default()))))
    }
    /// Tracking-link clicks tied to this visitor, newest first.
    #[graphql(complexity = "cost::CLICKS_PER_VISITOR * child_complexity")]
    async fn link_clicks(&self, ctx: &Context<'_>) -> AppResult<Vec<LinkClick>> {
        let clicks = loaders::load(ctx, ClicksOfVisitor(self.id())).await?;
        Ok(clicks.iter().cloned().map(LinkClick).collect())
    }
    /// Server-side conversions tied to this visitor, newest first.
    async fn conversions(&self, ctx: &Context<'_>) -> AppResult<Vec<Conversion>> {
        let found = loaders::load(ctx, ConversionsOfVisitor(self.id())).await?;
        let vid = &self.scored.visitor.tracker_vid;
        Ok(found.iter().cloned().map(|model| Conversion::of(model, Some(vid.clone()))).collect())
    }
    /// The revenue of this visitor's conversions and revenue events, per currency.
    async fn revenue(&self, ctx: &Context<'_>) -> AppResult<Vec<MoneyTotal>> {
        let found = loaders::load(ctx, ConversionsOfVisitor(self.id())).await?;
        let events = loaders::load(ctx, RevenueEventsOfVisitor(self.id())).await?;
        let amounts = found
            .iter()
            .map(|c| (c.amount_minor, c.currency.as_str()))
            .chain(events.iter().map(|(minor, currency)| (*minor, currency.as_str())));
        Ok(conversions::totals(amounts).into_iter().map(MoneyTotal).collect())
    }
    async fn attribution(&self, ctx: &Context<'_>) -> AppResult<Attribution> {
        Ok(attribution::attribute(&self.stored_sessions(ctx).await?).into())
    }
    /// The latest events, newest first.
    #[graphql(complexity = "cost::RECENT_EVENTS * child_complexity")]
    async fn recent_events(&self, ctx: &Context<'_>) -> AppResult<Vec<TrackedEvent>> {
        Ok(profile::recent_events(&*ctx.db().await?, self.id()).await?.into_iter().map(TrackedEvent).collect())
    }
    /// Form submissions, newest first.
    #[graphql(complexity = "cost::FORM_EVENTS * child_complexity")]
    async fn form_events(&self, ctx: &Context<'_>) -> AppResult<Vec<TrackedEvent>> {
        Ok(profile::form_events(&*ctx.db().await?, self.id()).await?.into_iter().map(TrackedEvent).collect())
    }
    #[graphql(complexity = "cost::TOP_PAGES * child_complexity")]
    async fn top_pages(&self, ctx: &Context<'_>) -> AppResult<Vec<PageViews>> {
        Ok(page_views(profile::top_pages(&*ctx.db().await?, self.id()).await?))
    }
    /// Events per UTC day, for the days with activity.
    #[graphql(complexity = "cost::DAYS_PER_VISITOR * child_complexity")]
    async fn daily_activity(&self, ctx: &Context<'_>) -> AppResult<Vec<DayActivity>> {
        let days = profile::daily_activity(&*ctx.db().await?, self.id()).await?;
        Ok(days.into_iter().map(|(date, events)| DayActivity { date, events }).collect())
    }
}
