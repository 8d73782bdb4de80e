//! GraphQL output types shared across capabilities.

use async_graphql::{ID, InputValueError, InputValueResult, Object, Scalar, ScalarType, SimpleObject, Value};

use entity::{api_key, auth_session, org, site, user};

use crate::{
    service::{profile, sites, tracking::Activity},
    time,
};

/// An instant, as an ISO 8601 UTC string with milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamp(pub i64);

#[Scalar(name = "Timestamp")]
impl ScalarType for Timestamp {
    fn parse(value: Value) -> InputValueResult<Self> {
        match &value {
            Value::String(text) => time::parse_iso(text)
                .map(Timestamp)
                .ok_or_else(|| InputValueError::custom("expected an ISO 8601 timestamp")),
            _ => Err(InputValueError::expected_type(value)),
        }
    }

    fn to_value(&self) -> Value {
        Value::String(time::iso(self.0))
    }
}

/// Parses an id argument; a malformed id is just an id that does not exist.
pub fn parse_id(id: &ID, what: &str) -> crate::error::AppResult<i64> {
    id.parse::<i64>().map_err(|_| crate::error::AppError::not_found(what))
}

pub struct User(pub user::Model);

#[Object]
impl User {
    async fn id(&self) -> ID {
        ID(self.0.id.to_string())
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn email(&self) -> &str {
        &self.0.email
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.created_at)
    }
}

pub struct AuthSession(pub auth_session::Model);

#[Object]
impl AuthSession {
    async fn id(&self) -> ID {
        ID(self.0.id.to_string())
    }
    async fn user_id(&self) -> ID {
        ID(self.0.user_id.to_string())
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.created_at)
    }
    async fn expires_at(&self) -> Timestamp {
        Timestamp(self.0.expires_at)
    }
    async fn ip_address(&self) -> Option<&str> {
        self.0.ip.as_deref()
    }
    async fn user_agent(&self) -> Option<&str> {
        self.0.user_agent.as_deref()
    }
}

/// The current session and its user (`get-session`).
#[derive(SimpleObject)]
pub struct SessionInfo {
    pub session: AuthSession,
    pub user: User,
}

#[derive(SimpleObject)]
pub struct AuthPayload {
    /// The session token; the same value is set as the `session` cookie.
    /// Null after a password change that kept the current session.
    pub token: Option<String>,
    pub user: User,
}

#[derive(SimpleObject)]
pub struct SuccessPayload {
    pub success: bool,
}

#[derive(SimpleObject)]
pub struct StatusPayload {
    pub status: bool,
}

#[derive(SimpleObject)]
pub struct DeleteUserPayload {
    pub success: bool,
    pub message: String,
}

pub struct Profile(pub profile::Profile);

#[Object]
impl Profile {
    async fn id(&self) -> ID {
        ID(self.0.user.id.to_string())
    }
    async fn name(&self) -> &str {
        &self.0.user.name
    }
    async fn email(&self) -> &str {
        &self.0.user.email
    }
    /// Always `free` in a self-hosted install.
    async fn tier(&self) -> &str {
        self.0.tier
    }
    async fn max_sites(&self) -> u32 {
        self.0.max_sites
    }
    /// Sites the user can access, in every org.
    async fn site_count(&self) -> u64 {
        self.0.site_count
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.user.created_at)
    }
    /// The user's primary org: the first they joined.
    async fn org(&self) -> ProfileOrg<'_> {
        ProfileOrg(&self.0)
    }
}

pub struct ProfileOrg<'a>(&'a profile::Profile);

#[Object]
impl ProfileOrg<'_> {
    async fn id(&self) -> ID {
        ID(self.0.org.id.to_string())
    }
    async fn name(&self) -> &str {
        &self.0.org.name
    }
    async fn slug(&self) -> &str {
        &self.0.org.slug
    }
    /// `owner`, `admin`, `member` or `viewer`.
    async fn role(&self) -> &str {
        self.0.role.as_str()
    }
    async fn member_since(&self) -> Timestamp {
        Timestamp(self.0.member_since)
    }
}

pub struct Site(pub site::Model);

#[Object]
impl Site {
    /// The numeric site id (`siteId` in REST).
    async fn id(&self) -> i64 {
        self.0.id
    }
    async fn org_id(&self) -> ID {
        ID(self.0.org_id.to_string())
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn domain(&self) -> &str {
        &self.0.domain
    }
    /// Unique across the service; the first path segment of short links.
    async fn slug(&self) -> &str {
        &self.0.slug
    }
    /// `cookie` or `cookieless`.
    async fn tracking_mode(&self) -> &str {
        &self.0.tracking_mode
    }
    /// The customer's own host serving the script and collect endpoint; empty when not set.
    async fn first_party_domain(&self) -> &str {
        self.0.first_party_domain.as_deref().unwrap_or_default()
    }
    /// Visitors with at least this score are hot.
    async fn hot_threshold(&self) -> i32 {
        self.0.hot_threshold
    }
    /// Path patterns whose views count as high-value.
    async fn high_value_patterns(&self) -> Vec<String> {
        sites::high_value_patterns(&self.0)
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.created_at)
    }
}

pub struct ApiKey(pub api_key::Model);

#[Object]
impl ApiKey {
    async fn id(&self) -> ID {
        ID(self.0.id.to_string())
    }
    async fn org_id(&self) -> ID {
        ID(self.0.org_id.to_string())
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    /// The first characters of the key, to tell keys apart.
    async fn prefix(&self) -> &str {
        &self.0.prefix
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.created_at)
    }
    async fn last_used_at(&self) -> Option<Timestamp> {
        self.0.last_used_at.map(Timestamp)
    }
    async fn revoked_at(&self) -> Option<Timestamp> {
        self.0.revoked_at.map(Timestamp)
    }
}

#[derive(SimpleObject)]
pub struct CreatedApiKey {
    /// The key itself. It is shown only here; store it now.
    pub key: String,
    pub api_key: ApiKey,
}

pub struct Org {
    pub org: org::Model,
    pub role: crate::auth::Role,
}

#[Object]
impl Org {
    async fn id(&self) -> ID {
        ID(self.org.id.to_string())
    }
    async fn name(&self) -> &str {
        &self.org.name
    }
    async fn slug(&self) -> &str {
        &self.org.slug
    }
    /// The viewer's role in this org.
    async fn role(&self) -> &str {
        self.role.as_str()
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.org.created_at)
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
    async fn visitor(&self, ctx: &async_graphql::Context<'_>) -> async_graphql::Result<super::visitor::Visitor> {
        use super::context::ContextExt;
        let app = ctx.app();
        let (site, visitor) =
            crate::service::analytics::find_visitor(&app.db, ctx.viewer()?, self.0.site_id, &self.0.tracker_vid)
                .await?;
        let scored = crate::service::analytics::ScoredVisitor::new(visitor, site.hot_threshold, time::now_ms());
        Ok(super::visitor::Visitor::new(scored))
    }
}
