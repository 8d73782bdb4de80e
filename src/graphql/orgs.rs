//! Orgs and their API keys.

use crate::error::AppResult;
use async_graphql::{Context, ID, Object, SimpleObject};

use entity::{api_key, member, org, user};

use super::{
    context::ContextExt,
    types::{Timestamp, parse_id},
};
use crate::service::{access, api_keys, members, orgs};

/// A person in an org, with their role there.
#[derive(SimpleObject)]
pub struct Member {
    pub user_id: ID,
    pub name: String,
    pub email: String,
    /// `owner`, `admin`, `member` or `viewer`.
    pub role: String,
    pub member_since: super::types::Timestamp,
}

impl Member {
    pub fn new(member: member::Model, user: &user::Model) -> Self {
        Member {
            user_id: ID(user.id.to_string()),
            name: user.name.clone(),
            email: user.email.clone(),
            role: member.role,
            member_since: super::types::Timestamp(member.created_at),
        }
    }
}

#[derive(Default)]
pub struct OrgQuery;

#[Object]
impl OrgQuery {
    /// The orgs the caller belongs to, oldest membership first.
    async fn orgs(&self, ctx: &Context<'_>) -> AppResult<Vec<Org>> {
        let found = access::orgs(&*ctx.db().await?, ctx.viewer()?).await?;
        Ok(found.into_iter().map(|(org, role)| Org { org, role }).collect())
    }

    async fn org(&self, ctx: &Context<'_>, id: ID) -> AppResult<Org> {
        let org_id = parse_id(&id, "organization")?;
        let (org, role) = access::find_org(&*ctx.db().await?, ctx.viewer()?, org_id, crate::auth::Role::Viewer).await?;
        Ok(Org { org, role })
    }

    /// The org's members, oldest first.
    async fn members(&self, ctx: &Context<'_>, org_id: ID) -> AppResult<Vec<Member>> {
        org_members(ctx, org_id).await
    }

    /// The org's API keys, revoked ones included. Admins only.
    async fn api_keys(&self, ctx: &Context<'_>, org_id: ID) -> AppResult<Vec<ApiKey>> {
        org_api_keys(ctx, org_id).await
    }
}

#[derive(Default)]
pub struct OrgMutation;

#[Object]
impl OrgMutation {
    /// Creates an API key for server-to-server calls (`Authorization: Bearer <key>`).
    /// Admins only. The key is returned once and stored only as a hash.
    async fn create_api_key(&self, ctx: &Context<'_>, org_id: Option<ID>, name: String) -> AppResult<CreatedApiKey> {
        let lease = ctx.db().await?;
        let db = &*lease;
        let viewer = ctx.viewer()?;
        let org_id = match org_id {
            Some(id) => parse_id(&id, "organization")?,
            None => orgs::primary(db, ctx.signed_in_user()?.user_id).await?.1.id,
        };
        let (key, record) = api_keys::create(db, viewer, org_id, &name).await?;
        Ok(CreatedApiKey { key, api_key: ApiKey(record) })
    }

    /// Changes a member's role. Admins only; owners when the owner role is involved.
    /// The last owner cannot be demoted.
    async fn change_member_role(&self, ctx: &Context<'_>, org_id: ID, user_id: ID, role: String) -> AppResult<Member> {
        let lease = ctx.db().await?;
        let db = &*lease;
        let org_id = parse_id(&org_id, "organization")?;
        let user_id = parse_id(&user_id, "member")?;
        let (member, user) =
            members::change_role(db, &ctx.app().cluster, ctx.viewer()?, org_id, user_id, members::parse_role(&role)?)
                .await?;
        Ok(Member::new(member, &user))
    }

    /// Removes a member; anyone may remove themselves. The last owner cannot leave.
    async fn remove_member(&self, ctx: &Context<'_>, org_id: ID, user_id: ID) -> AppResult<bool> {
        let org_id = parse_id(&org_id, "organization")?;
        let user_id = parse_id(&user_id, "member")?;
        members::remove(&*ctx.db().await?, &ctx.app().cluster, ctx.viewer()?, org_id, user_id).await?;
        Ok(true)
    }

    /// Deletes the org with its sites, links, keys and all tracking data. Owners only.
    async fn delete_org(&self, ctx: &Context<'_>, org_id: ID) -> AppResult<bool> {
        let org_id = parse_id(&org_id, "organization")?;
        let app = ctx.app();
        orgs::delete(&*ctx.db().await?, &app.cluster, ctx.viewer()?, org_id).await?;
        Ok(true)
    }

    /// Revokes a key at once. Admins only.
    async fn revoke_api_key(&self, ctx: &Context<'_>, id: ID) -> AppResult<ApiKey> {
        let key_id = parse_id(&id, "API key")?;
        Ok(ApiKey(api_keys::revoke(&*ctx.db().await?, &ctx.app().cluster, ctx.viewer()?, key_id).await?))
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

// The reads above as functions, which `workspace` also calls with its site
// or org filled in.

pub(crate) async fn org_members(ctx: &Context<'_>, org_id: ID) -> AppResult<Vec<Member>> {
    let org_id = parse_id(&org_id, "organization")?;
    let found = members::list(&*ctx.db().await?, ctx.viewer()?, org_id).await?;
    Ok(found.into_iter().map(|(member, user)| Member::new(member, &user)).collect())
}

pub(crate) async fn org_api_keys(ctx: &Context<'_>, org_id: ID) -> AppResult<Vec<ApiKey>> {
    let org_id = parse_id(&org_id, "organization")?;
    let keys = api_keys::list(&*ctx.db().await?, ctx.viewer()?, org_id).await?;
    Ok(keys.into_iter().map(ApiKey).collect())
}
