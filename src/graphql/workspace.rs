//! What one web page is about, in one run: the page names its site, visitor
//! or link; `workspace` answers with the site, its org and the viewer's role
//! there, and the page's reads hang under it, scoped to that site or org.
//! Each read is the Query field of the same name with the site or org
//! filled in, so it answers exactly what that field answers and costs what
//! it costs.

use std::future::Future;

use async_graphql::{Context, ID, Object};
use tokio::sync::OnceCell;

use entity::{org, site};

use super::{
    accounts::{self, Account, AccountConnection, AccountFilter},
    alerts::{self, Destination},
    analytics::{self, LiveStream, Traffic},
    context::ContextExt,
    cost,
    credit::{self, AttributionReport},
    email::EmailMessage,
    explore::{self, Explorer, ExplorerInput},
    funnels::{self, Funnel, FunnelReport, FunnelReportInput},
    goals::{self, Goal},
    invitations::{self, Invitation},
    links::{self, LinkList},
    orgs::{self, ApiKey, Member, Org},
    saved_views::{self, SavedView},
    session::TrackedSession,
    sites::Site,
    visitor::Visitor,
    visitor_list::{self, VisitorConnection},
    webhooks::{self, WebhookDelivery},
};
use crate::{auth::Role, error::AppResult, service::workspace};

#[derive(Default)]
pub struct WorkspaceQuery;

#[Object]
impl WorkspaceQuery {
    /// The site a web page shows and the org it acts in. `siteId` when given
    /// (NOT_FOUND unless the viewer can read it), else the readable site that
    /// saw `trackerVid` last, else the site of `linkId`, else the viewer's
    /// current site. `site` is null when the viewer has no site yet; `org`
    /// is then the viewer's primary org.
    async fn workspace(
        &self,
        ctx: &Context<'_>,
        site_id: Option<i64>,
        tracker_vid: Option<String>,
        link_id: Option<ID>,
    ) -> AppResult<Workspace> {
        let link = link_id.map(|id| crate::service::links::parse_public_id(&id)).transpose()?;
        let choice = workspace::Choice { site: site_id, visitor: tracker_vid.as_deref(), link };
        let site = workspace::resolve_site(&*ctx.db().await?, ctx.viewer()?, choice).await?;
        Ok(Workspace { site, org: OnceCell::new() })
    }
}

pub struct Workspace {
    site: Option<site::Model>,
    /// Looked up once, by the first field that needs it: pages that show
    /// no role-dependent action never ask.
    org: OnceCell<Option<(org::Model, Role)>>,
}

impl Workspace {
    fn site_id(&self) -> Option<i64> {
        self.site.as_ref().map(|site| site.id)
    }

    async fn org(&self, ctx: &Context<'_>) -> AppResult<Option<&(org::Model, Role)>> {
        let found = self
            .org
            .get_or_try_init(|| async { workspace::org_of(&*ctx.db().await?, ctx.viewer()?, self.site.as_ref()).await })
            .await?;
        Ok(found.as_ref())
    }

    async fn org_id(&self, ctx: &Context<'_>) -> AppResult<Option<ID>> {
        self.org_id_for(ctx, Role::Viewer).await
    }

    /// The org's id when the viewer's role there is at least `role`.
    async fn org_id_for(&self, ctx: &Context<'_>, role: Role) -> AppResult<Option<ID>> {
        let org = self.org(ctx).await?;
        Ok(org.filter(|(_, held)| *held >= role).map(|(org, _)| ID(org.id.to_string())))
    }
}

/// Runs `read` when there is a scope to run it in; null otherwise.
async fn scoped<S, T, F>(scope: Option<S>, read: impl FnOnce(S) -> F) -> AppResult<Option<T>>
where
    F: Future<Output = AppResult<T>>,
{
    match scope {
        Some(scope) => read(scope).await.map(Some),
        None => Ok(None),
    }
}

#[Object]
impl Workspace {
    async fn site(&self) -> Option<Site> {
        self.site.clone().map(Site)
    }

    /// The site's org (else the viewer's primary org), with the viewer's role.
    #[graphql(name = "org")]
    async fn org_field(&self, ctx: &Context<'_>) -> AppResult<Option<Org>> {
        Ok(self.org(ctx).await?.cloned().map(|(org, role)| Org { org, role }))
    }

    /// `explorer` for this site.
    #[graphql(
        complexity = "input.as_ref().map_or(cost::explore(&serde_json::json!(\"30d\"), None), ExplorerInput::cost) + child_complexity"
    )]
    async fn explorer(&self, ctx: &Context<'_>, input: Option<ExplorerInput>) -> AppResult<Option<Explorer>> {
        scoped(self.site_id(), |site| explore::explorer(ctx, site, input.unwrap_or_default())).await
    }

    /// `traffic` for this site.
    #[graphql(complexity = "cost::window(time_range.as_deref()) + child_complexity")]
    async fn traffic(&self, ctx: &Context<'_>, time_range: Option<String>) -> AppResult<Option<Traffic>> {
        scoped(self.site_id(), |site| analytics::traffic(ctx, site, time_range)).await
    }

    /// `visitors` for this site.
    #[graphql(complexity = "cost::ranked_window(time_range.as_deref()) + cost::visitor_page(first) * child_complexity")]
    // One argument per GraphQL argument: the schema's shape, not a Rust choice.
    #[allow(clippy::too_many_arguments)]
    async fn visitors(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "`24h`, `7d` (default), `30d` or `all`")] time_range: Option<String>,
        #[graphql(desc = "`bot` lists bot traffic instead of standard visitors")] filter: Option<String>,
        first: Option<i64>,
        after: Option<String>,
        #[graphql(desc = "Only visitors whose score reaches the site's hot threshold")] hot: Option<bool>,
        #[graphql(desc = "Part of a name, email, company, user id or visitor id, any case")] search: Option<String>,
        #[graphql(desc = "`score` (default), `last_seen`, `pageviews`, `time` or `sessions`")] sort: Option<String>,
        #[graphql(desc = "`desc` (default) or `asc`")] order: Option<String>,
        #[graphql(desc = "1-based page of `first` rows; takes the place of `after`")] page: Option<i64>,
        #[graphql(desc = "`identified` or `anonymous`")] status: Option<String>,
        #[graphql(desc = "An ISO 3166 two-letter country code")] country: Option<String>,
        #[graphql(desc = "Only visitors whose score reaches this (0 to 100)")] min_score: Option<i64>,
        #[graphql(desc = "Only visitors who submitted a form")] form: Option<bool>,
        #[graphql(desc = "The channel of the latest visit (last touch), as `lastChannel` shows it")] channel: Option<
            String,
        >,
        #[graphql(desc = "The campaign (`utm_campaign`) of the latest visit, exactly")] campaign: Option<String>,
        #[graphql(desc = "The slug of a tracking link the visitor clicked")] link: Option<String>,
        #[graphql(desc = "The key of the visitor's account, as `account { key }` shows it (`acme.com`)")]
        account: Option<String>,
        #[graphql(desc = "A page viewed in the range: a path where `*` stands for any characters")] visited: Option<
            String,
        >,
    ) -> AppResult<Option<VisitorConnection>> {
        let desk = visitor_list::DeskArgs {
            search,
            sort,
            order,
            page,
            status,
            country,
            channel,
            campaign,
            link,
            account,
            visited,
            min_score,
            form,
        };
        scoped(self.site_id(), |site_id| {
            visitor_list::site_visitors(
                ctx,
                visitor_list::ListArgs { site_id, time_range, filter, first, after, hot, desk },
            )
        })
        .await
    }

    /// `accounts` for this site.
    #[graphql(complexity = "cost::window(range.as_deref()) + cost::visitor_page(first) * child_complexity")]
    async fn accounts(
        &self,
        ctx: &Context<'_>,
        range: Option<String>,
        filter: Option<AccountFilter>,
        sort: Option<String>,
        first: Option<i64>,
        page: Option<i64>,
    ) -> AppResult<Option<AccountConnection>> {
        let args = accounts::ListArgs { range, filter: filter.unwrap_or_default(), sort, first, after: None, page };
        scoped(self.site_id(), |site_id| accounts::site_accounts(ctx, site_id, args)).await
    }

    /// `account` for this site.
    async fn account(&self, ctx: &Context<'_>, key: String) -> AppResult<Option<Account>> {
        scoped(self.site_id(), |site_id| async move { accounts::site_account(ctx, site_id, &key).await }).await
    }

    /// `visitor` for this site.
    async fn visitor(&self, ctx: &Context<'_>, id: ID) -> AppResult<Option<Visitor>> {
        scoped(self.site_id(), |site| analytics::visitor(ctx, site, id)).await
    }

    /// `liveStream` for this site.
    #[graphql(complexity = "cost::window(Some(\"24h\")) + child_complexity")]
    async fn live_stream(&self, ctx: &Context<'_>) -> AppResult<Option<LiveStream>> {
        scoped(self.site_id(), |site| analytics::live_stream(ctx, site)).await
    }

    /// `trackedSession` for this site.
    async fn tracked_session(&self, ctx: &Context<'_>, id: ID) -> AppResult<Option<TrackedSession>> {
        scoped(self.site_id(), |site| analytics::tracked_session(ctx, site, id)).await
    }

    /// `links` for this site.
    #[graphql(complexity = "cost::LINKS_PER_SITE * child_complexity")]
    async fn links(&self, ctx: &Context<'_>) -> AppResult<Option<LinkList>> {
        scoped(self.site_id(), |site| links::site_links(ctx, Some(site))).await
    }

    /// `savedViews` for this site.
    async fn saved_views(&self, ctx: &Context<'_>) -> AppResult<Option<Vec<SavedView>>> {
        scoped(self.site_id(), |site| saved_views::saved_views(ctx, site)).await
    }

    /// `attributionReport` for this site, over a named range (`7d`, `30d`, `all`...).
    #[graphql(
        complexity = "cost::explore(&serde_json::Value::from(range.as_deref().unwrap_or(\"30d\")), None) + child_complexity"
    )]
    async fn attribution_report(
        &self,
        ctx: &Context<'_>,
        model: Option<String>,
        by: Option<String>,
        range: Option<String>,
    ) -> AppResult<Option<AttributionReport>> {
        let date_range = range.map(serde_json::Value::from);
        scoped(self.site_id(), |site| credit::attribution_report(ctx, site, model, by, date_range)).await
    }

    /// `funnels` of this site.
    async fn funnels(&self, ctx: &Context<'_>) -> AppResult<Option<Vec<Funnel>>> {
        scoped(self.site_id(), |site| funnels::site_funnels(ctx, site)).await
    }

    /// `funnelReport` for this site (a saved funnel of it, or its goals).
    #[graphql(complexity = "input.cost() + child_complexity")]
    async fn funnel_report(&self, ctx: &Context<'_>, input: FunnelReportInput) -> AppResult<Option<FunnelReport>> {
        scoped(self.site_id(), |site| funnels::report_for(ctx, site, input)).await
    }

    /// `goals` of this site.
    async fn goals(&self, ctx: &Context<'_>) -> AppResult<Option<Vec<Goal>>> {
        scoped(self.site_id(), |site| goals::goals(ctx, site)).await
    }

    /// `destinations` for this site; null unless the viewer is an admin of its org.
    async fn destinations(&self, ctx: &Context<'_>) -> AppResult<Option<Vec<Destination>>> {
        let admin = self.org_id_for(ctx, Role::Admin).await?.is_some();
        let site = self.site_id().filter(|_| admin);
        scoped(site, |site| alerts::destinations(ctx, site)).await
    }

    /// `members` of the org.
    async fn members(&self, ctx: &Context<'_>) -> AppResult<Option<Vec<Member>>> {
        scoped(self.org_id(ctx).await?, |org| orgs::org_members(ctx, org)).await
    }

    /// `apiKeys` of the org; null unless the viewer is an admin there.
    async fn api_keys(&self, ctx: &Context<'_>) -> AppResult<Option<Vec<ApiKey>>> {
        scoped(self.org_id_for(ctx, Role::Admin).await?, |org| orgs::org_api_keys(ctx, org)).await
    }

    /// `invitations` of the org; null unless the viewer is an admin there.
    async fn invitations(&self, ctx: &Context<'_>) -> AppResult<Option<Vec<Invitation>>> {
        scoped(self.org_id_for(ctx, Role::Admin).await?, |org| invitations::org_invitations(ctx, org)).await
    }

    /// `emailLog` of the org; null unless the viewer is an admin there.
    async fn email_log(&self, ctx: &Context<'_>) -> AppResult<Option<Vec<EmailMessage>>> {
        scoped(self.org_id_for(ctx, Role::Admin).await?, |org| super::email::org_email_log(ctx, org)).await
    }

    /// `webhookSigningSecret` of the org; null unless the viewer is an admin there.
    async fn webhook_signing_secret(&self, ctx: &Context<'_>) -> AppResult<Option<String>> {
        scoped(self.org_id_for(ctx, Role::Admin).await?, |org| webhooks::webhook_signing_secret(ctx, Some(org))).await
    }

    /// `webhookDeliveries` of the org; null unless the viewer is a member there.
    #[graphql(complexity = "cost::log_page(first) * child_complexity")]
    async fn webhook_deliveries(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 50)] first: u64,
    ) -> AppResult<Option<Vec<WebhookDelivery>>> {
        scoped(self.org_id_for(ctx, Role::Member).await?, |org| webhooks::webhook_deliveries(ctx, Some(org), first))
            .await
    }
}
