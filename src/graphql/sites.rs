//! Tracked sites.

use crate::error::AppResult;
use async_graphql::{Context, ID, InputObject, MaybeUndefined, Object};

use entity::site;

use super::{
    context::ContextExt,
    types::{SuccessPayload, Timestamp, parse_id},
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
    /// Days visitor-level data is kept (at least 1); null keeps everything.
    pub retention_days: MaybeUndefined<i32>,
    /// When true, browsers sending `DNT: 1` or `Sec-GPC: 1` are not tracked.
    pub respect_do_not_track: Option<bool>,
    /// When true, pages show Gravatar images for people with an email.
    pub gravatar: Option<bool>,
    /// Network numbers (ASNs) whose traffic is bot traffic on this site,
    /// beside the shipped hosting list; replaces the site's list.
    pub hosting_asns: Option<Vec<i64>>,
    /// ASNs of ISPs and carriers, beside the shipped list: their visitors
    /// make no account; replaces the site's list.
    pub isp_asns: Option<Vec<i64>>,
    /// IANA time zone name (`Europe/Berlin`); Explore's days, weeks and
    /// months follow it.
    pub timezone: Option<String>,
}

#[derive(Default)]
pub struct SiteQuery;

#[Object]
impl SiteQuery {
    /// Every site the caller can access, oldest first.
    async fn sites(&self, ctx: &Context<'_>) -> AppResult<Vec<Site>> {
        let sites = access::sites(&*ctx.db().await?, ctx.viewer()?).await?;
        Ok(sites.into_iter().map(Site).collect())
    }

    async fn site(&self, ctx: &Context<'_>, id: i64) -> AppResult<Site> {
        Ok(Site(access::site(&*ctx.db().await?, ctx.viewer()?, id, Role::Viewer).await?.0))
    }

    /// The site the web app shows: the one last chosen with `selectSite`
    /// while it is still readable, else the first; null without any site.
    async fn current_site(&self, ctx: &Context<'_>) -> AppResult<Option<Site>> {
        Ok(crate::service::workspace::current_site(&*ctx.db().await?, ctx.viewer()?).await?.map(Site))
    }
}

#[derive(Default)]
pub struct SiteMutation;

#[Object]
impl SiteMutation {
    /// Admins only; fails with SITE_LIMIT_REACHED past MAX_SITES_PER_ACCOUNT.
    async fn create_site(&self, ctx: &Context<'_>, input: SiteInput) -> AppResult<Site> {
        let app = ctx.app();
        let org_id = input.org_id.as_ref().map(|id| parse_id(id, "organization")).transpose()?;
        let new = NewSite { org_id, domain: input.domain, name: input.name };
        Ok(Site(sites::create(&*ctx.db().await?, ctx.viewer()?, app.config.max_sites_per_account, new).await?))
    }

    /// Changes only the fields given. Admins only.
    async fn update_site(&self, ctx: &Context<'_>, id: i64, input: SiteUpdateInput) -> AppResult<Site> {
        let changes = SiteChanges {
            name: input.name,
            domain: input.domain,
            tracking_mode: input.tracking_mode,
            first_party_domain: input.first_party_domain,
            hot_threshold: input.hot_threshold,
            high_value_patterns: input.high_value_patterns,
            retention_days: match input.retention_days {
                MaybeUndefined::Undefined => None,
                MaybeUndefined::Null => Some(None),
                MaybeUndefined::Value(days) => Some(Some(days)),
            },
            respect_do_not_track: input.respect_do_not_track,
            gravatar: input.gravatar,
            hosting_asns: input.hosting_asns,
            isp_asns: input.isp_asns,
            timezone: input.timezone,
        };
        let app = ctx.app();
        Ok(Site(sites::update(&*ctx.db().await?, &app.cluster, ctx.viewer()?, id, changes).await?))
    }

    /// Deletes the site with all its data. Admins only.
    async fn delete_site(&self, ctx: &Context<'_>, id: i64) -> AppResult<SuccessPayload> {
        sites::delete(&*ctx.db().await?, &ctx.app().cluster, ctx.viewer()?, id).await?;
        Ok(SuccessPayload { success: true })
    }

    /// Remembers the site as the signed-in user's current one (`currentSite`).
    async fn select_site(&self, ctx: &Context<'_>, site_id: i64) -> AppResult<Site> {
        Ok(Site(crate::service::workspace::select_site(&*ctx.db().await?, ctx.viewer()?, site_id).await?))
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
    /// Days visitor-level data is kept; null keeps everything.
    async fn retention_days(&self) -> Option<i32> {
        self.0.retention_days
    }
    /// Whether browsers sending `DNT: 1` or `Sec-GPC: 1` are left untracked.
    async fn respect_do_not_track(&self) -> bool {
        self.0.respect_do_not_track
    }
    /// Whether pages show Gravatar images (off: initials, and nothing about
    /// a lead is sent to a third party).
    async fn gravatar(&self) -> bool {
        self.0.gravatar
    }
    /// The site's own hosting networks (ASNs), beside the shipped list.
    async fn hosting_asns(&self) -> Vec<i64> {
        sites::asn_list(&self.0.hosting_asns).into_iter().map(i64::from).collect()
    }
    /// The site's own ISP networks (ASNs), beside the shipped list.
    async fn isp_asns(&self) -> Vec<i64> {
        sites::asn_list(&self.0.isp_asns).into_iter().map(i64::from).collect()
    }
    /// IANA time zone name (default `UTC`): Explore's day, week and month
    /// boundaries follow it; `stats` keeps its rolling UTC windows.
    async fn timezone(&self) -> &str {
        &self.0.timezone
    }
}
