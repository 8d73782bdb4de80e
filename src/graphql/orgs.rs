//! Orgs and their API keys.

use async_graphql::{Context, ID, Object, Result};

use super::{
    context::ContextExt,
    types::{ApiKey, CreatedApiKey, Org, parse_id},
};
use crate::service::{access, api_keys, orgs};

#[derive(Default)]
pub struct OrgQuery;

#[Object]
impl OrgQuery {
    /// The orgs the caller belongs to, oldest membership first.
    async fn orgs(&self, ctx: &Context<'_>) -> Result<Vec<Org>> {
        let found = access::orgs(&ctx.app().db, ctx.viewer()?).await?;
        Ok(found.into_iter().map(|(org, role)| Org { org, role }).collect())
    }

    async fn org(&self, ctx: &Context<'_>, id: ID) -> Result<Org> {
        let org_id = parse_id(&id, "organization")?;
        let (org, role) = access::find_org(&ctx.app().db, ctx.viewer()?, org_id, crate::auth::Role::Viewer).await?;
        Ok(Org { org, role })
    }

    /// The org's API keys, revoked ones included. Admins only.
    async fn api_keys(&self, ctx: &Context<'_>, org_id: ID) -> Result<Vec<ApiKey>> {
        let org_id = parse_id(&org_id, "organization")?;
        let keys = api_keys::list(&ctx.app().db, ctx.viewer()?, org_id).await?;
        Ok(keys.into_iter().map(ApiKey).collect())
    }
}

#[derive(Default)]
pub struct OrgMutation;

#[Object]
impl OrgMutation {
    /// Creates an API key for server-to-server calls (`Authorization: Bearer <key>`).
    /// Admins only. The key is returned once and stored only as a hash.
    async fn create_api_key(&self, ctx: &Context<'_>, org_id: Option<ID>, name: String) -> Result<CreatedApiKey> {
        let db = &ctx.app().db;
        let viewer = ctx.viewer()?;
        let org_id = match org_id {
            Some(id) => parse_id(&id, "organization")?,
            None => orgs::primary(db, ctx.signed_in_user()?.user_id).await?.1.id,
        };
        let (key, record) = api_keys::create(db, viewer, org_id, &name).await?;
        Ok(CreatedApiKey { key, api_key: ApiKey(record) })
    }

    /// Revokes a key at once. Admins only.
    async fn revoke_api_key(&self, ctx: &Context<'_>, id: ID) -> Result<ApiKey> {
        let key_id = parse_id(&id, "API key")?;
        Ok(ApiKey(api_keys::revoke(&ctx.app().db, ctx.viewer()?, key_id).await?))
    }
}
