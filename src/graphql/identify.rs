//! Identification of visitors.

use crate::error::AppResult;
use async_graphql::{Context, InputObject, Json, Object, SimpleObject};

use super::{context::ContextExt, types::Timestamp};
use crate::service::identify::{self, IdentifyInput};
use entity::identity;

#[derive(InputObject)]
pub struct IdentifyVisitorInput {
    /// Defaults to DEFAULT_SITE_ID (4).
    pub site_id: Option<i64>,
    pub tracker_vid: String,
    /// Required unless `email` is given.
    pub user_id: Option<String>,
    /// Required unless `userId` is given.
    pub email: Option<String>,
    pub name: Option<String>,
    pub company: Option<String>,
    pub phone: Option<String>,
    /// A JSON object of free-form traits.
    pub traits: Option<Json<serde_json::Value>>,
    /// Label of the identification event; defaults to `api`.
    pub source: Option<String>,
    pub source_detail: Option<String>,
}

#[derive(SimpleObject)]
pub struct IdentifyResult {
    pub success: bool,
    pub tracker_vid: String,
    /// The email if given, else the user id.
    pub identified_as: String,
    pub message: String,
}

pub struct Identity(pub identity::Model);

#[Object]
impl Identity {
    async fn user_id(&self) -> Option<&str> {
        self.0.user_id.as_deref()
    }
    async fn email(&self) -> Option<&str> {
        self.0.email.as_deref()
    }
    async fn name(&self) -> Option<&str> {
        self.0.name.as_deref()
    }
    async fn company(&self) -> Option<&str> {
        self.0.company.as_deref()
    }
    async fn phone(&self) -> Option<&str> {
        self.0.phone.as_deref()
    }
    async fn traits(&self) -> Json<serde_json::Value> {
        Json(serde_json::from_str(&self.0.traits).unwrap_or_else(|_| serde_json::json!({})))
    }
    async fn source(&self) -> &str {
        &self.0.source
    }
    async fn source_detail(&self) -> Option<&str> {
        self.0.source_detail.as_deref()
    }
    async fn identified_at(&self) -> Timestamp {
        Timestamp(self.0.identified_at)
    }
}

#[derive(SimpleObject)]
pub struct IdentityLookup {
    pub tracker_vid: String,
    pub identified: bool,
    /// The latest identity, or null.
    pub identity: Option<Identity>,
}

#[derive(Default)]
pub struct IdentifyQuery;

#[Object]
impl IdentifyQuery {
    /// Whether a visitor is identified, and as whom.
    async fn identity(
        &self,
        ctx: &Context<'_>,
        site_id: Option<i64>,
        tracker_vid: String,
    ) -> AppResult<IdentityLookup> {
        let app = ctx.app();
        let site_id = site_id.unwrap_or(app.config.default_site_id);
        let found = identify::latest(&*ctx.db().await?, ctx.viewer()?, site_id, &tracker_vid).await?;
        Ok(IdentityLookup { tracker_vid, identified: found.is_some(), identity: found.map(Identity) })
    }
}

#[derive(Default)]
pub struct IdentifyMutation;

#[Object]
impl IdentifyMutation {
    /// Links a visitor to a known person. Every call is kept as history; the
    /// visitor is created when it has not been seen yet. Members and API keys.
    async fn identify(&self, ctx: &Context<'_>, input: IdentifyVisitorInput) -> AppResult<IdentifyResult> {
        let app = ctx.app();
        let input = IdentifyInput {
            site_id: input.site_id.unwrap_or(app.config.default_site_id),
            tracker_vid: input.tracker_vid,
            user_id: input.user_id,
            email: input.email,
            name: input.name,
            company: input.company,
            phone: input.phone,
            traits: input.traits.map(|json| json.0),
            source: input.source,
            source_detail: input.source_detail,
        };
        let command = identify::identify(&*ctx.db().await?, &app.writer, ctx.viewer()?, input).await?;
        let identified_as = command.email.clone().or_else(|| command.user_id.clone()).unwrap_or_default();
        let tracker_vid = command.tracker_vid;
        Ok(IdentifyResult {
            success: true,
            tracker_vid,
            message: format!("Visitor identified as {identified_as}"),
            identified_as,
        })
    }
}
