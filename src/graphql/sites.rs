//! Tracked sites.

use async_graphql::{Context, ID, InputObject, Object, Result};

use super::{
    context::ContextExt,
    types::{Site, SuccessPayload, parse_id},
};
use crate::{
    auth::Role,
    service::{
        access,
        sites::{self, NewSite, SiteChanges},
    },
};

#[derive(InputObject)]
pub struct SiteInput {
    /// A host (`example.com`) or URL; stored as its host.
    pub domain: String,
    /// Defaults to the domain.
    pub name: Option<String>,
    /// Defaults to the caller's primary org.
    pub org_id: Option<ID>,
}

#[derive(InputObject, Default)]
pub struct SiteUpdateInput {
    pub name: Option<String>,
    pub domain: Option<String>,
    /// `cookie` or `cookieless`.
    pub tracking_mode: Option<String>,
    /// Empty string clears it.
    pub first_party_domain: Option<String>,
    pub hot_threshold: Option<i32>,
    pub high_value_patterns: Option<Vec<String>>,
}

#[derive(Default)]
pub struct SiteQuery;

#[Object]
impl SiteQuery {
    /// Every site the caller can access, oldest first.
    async fn sites(&self, ctx: &Context<'_>) -> Result<Vec<Site>> {
        let sites = access::sites(&ctx.app().db, ctx.viewer()?).await?;
        Ok(sites.into_iter().map(Site).collect())
    }

    async fn site(&self, ctx: &Context<'_>, id: i64) -> Result<Site> {
        Ok(Site(access::site(&ctx.app().db, ctx.viewer()?, id, Role::Viewer).await?.0))
    }
}

#[derive(Default)]
pub struct SiteMutation;

#[Object]
impl SiteMutation {
    /// Admins only; fails with SITE_LIMIT_REACHED past MAX_SITES_PER_ACCOUNT.
    async fn create_site(&self, ctx: &Context<'_>, input: SiteInput) -> Result<Site> {
        let app = ctx.app();
        let org_id = input.org_id.as_ref().map(|id| parse_id(id, "organization")).transpose()?;
        let new = NewSite { org_id, domain: input.domain, name: input.name };
        Ok(Site(sites::create(&app.db, ctx.viewer()?, app.config.max_sites_per_account, new).await?))
    }

    /// Changes only the fields given. Admins only.
    async fn update_site(&self, ctx: &Context<'_>, id: i64, input: SiteUpdateInput) -> Result<Site> {
        let changes = SiteChanges {
            name: input.name,
            domain: input.domain,
            tracking_mode: input.tracking_mode,
            first_party_domain: input.first_party_domain,
            hot_threshold: input.hot_threshold,
            high_value_patterns: input.high_value_patterns,
        };
        let site = sites::update(&ctx.app().db, ctx.viewer()?, id, changes).await?;
        ctx.app().sites.evict(id);
        Ok(Site(site))
    }

    /// Deletes the site with all its data. Admins only.
    async fn delete_site(&self, ctx: &Context<'_>, id: i64) -> Result<SuccessPayload> {
        sites::delete(&ctx.app().db, ctx.viewer()?, id).await?;
        ctx.app().sites.evict(id);
        ctx.app().links.evict(None, id);
        Ok(SuccessPayload { success: true })
    }
}
