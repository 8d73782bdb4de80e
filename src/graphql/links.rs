//! Tracking links and their analytics.

use crate::error::AppResult;
use async_graphql::{Context, ID, InputObject, MaybeUndefined, Object, SimpleObject};

use entity::{link, site};

use super::{
    context::ContextExt,
    cost,
    credit::LinkCredit,
    link_analytics::LinkAnalytics,
    types::{SuccessPayload, Timestamp},
};
use crate::{
    auth::Role,
    service::{
        access, credit,
        link_stats::{self, AnalyticsFilter, ClickCounts},
        links::{self, LinkChanges, NewLink},
    },
    time::now_ms,
};

pub struct Link {
    pub link: link::Model,
    pub site: site::Model,
    /// Lists fill it for all their links in one query; a single link counts
    /// its own clicks once, however many count fields are asked for.
    counts: tokio::sync::OnceCell<ClickCounts>,
}

impl Link {
    pub fn new(link: link::Model, site: site::Model) -> Self {
        Self { link, site, counts: tokio::sync::OnceCell::new() }
    }

    fn with_counts(link: link::Model, site: site::Model, counts: ClickCounts) -> Self {
        Self { link, site, counts: tokio::sync::OnceCell::new_with(Some(counts)) }
    }

    async fn counts(&self, ctx: &Context<'_>) -> AppResult<ClickCounts> {
        let counts = self
            .counts
            .get_or_try_init(|| async {
                link_stats::of_link(&*ctx.db().await?, self.site.id, self.link.id, now_ms()).await
            })
            .await?;
        Ok(*counts)
    }
}

#[Object]
impl Link {
    /// `lnk_<id>`.
    async fn id(&self) -> ID {
        ID(links::public_id(self.link.id))
    }
    async fn site_id(&self) -> i64 {
        self.link.site_id
    }
    async fn slug(&self) -> &str {
        &self.link.slug
    }
    async fn destination_url(&self) -> &str {
        &self.link.destination_url
    }
    async fn campaign(&self) -> &str {
        &self.link.campaign
    }
    async fn source(&self) -> &str {
        &self.link.source
    }
    async fn medium(&self) -> &str {
        &self.link.medium
    }
    /// Empty when not given.
    async fn content(&self) -> &str {
        &self.link.content
    }
    /// Empty when not given.
    async fn notes(&self) -> &str {
        &self.link.notes
    }
    /// `content`, `ad` or `bio`.
    async fn link_type(&self) -> &str {
        &self.link.link_type
    }
    async fn is_active(&self) -> bool {
        self.link.is_active
    }
    async fn expires_at(&self) -> Option<Timestamp> {
        self.link.expires_at.map(Timestamp)
    }
    async fn max_clicks(&self) -> Option<i64> {
        self.link.max_clicks
    }
    async fn tags(&self) -> Vec<String> {
        links::tags(&self.link)
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.link.created_at)
    }
    /// Human clicks, all time.
    async fn total_clicks(&self, ctx: &Context<'_>) -> AppResult<i64> {
        Ok(self.counts(ctx).await?.total)
    }
    /// Human clicks since midnight UTC.
    async fn clicks_today(&self, ctx: &Context<'_>) -> AppResult<i64> {
        Ok(self.counts(ctx).await?.today)
    }
    async fn last_clicked_at(&self, ctx: &Context<'_>) -> AppResult<Option<Timestamp>> {
        Ok(self.counts(ctx).await?.last_clicked_at.map(Timestamp))
    }
    /// `{short_link_base}/l/<site_slug>/<link_slug>`.
    async fn full_url(&self, ctx: &Context<'_>) -> String {
        links::full_url(&ctx.app().config.short_link_base(), &self.site, &self.link)
    }
    /// The full URL as an SVG QR code.
    async fn qr_svg(&self, ctx: &Context<'_>) -> AppResult<String> {
        Ok(links::qr_svg(&links::full_url(&ctx.app().config.short_link_base(), &self.site, &self.link))?)
    }
    /// The leads, conversions and revenue this link brought over a named
    /// range (`7d`, `30d` (default), `90d`, `all`...), once per model
    /// (`first_touch`, `last_touch`, `linear`): its row of
    /// `attributionReport(by: "link")`.
    #[graphql(
        complexity = "cost::explore(&serde_json::Value::from(range.as_deref().unwrap_or(\"30d\")), None) + child_complexity"
    )]
    async fn brought(&self, ctx: &Context<'_>, range: Option<String>) -> AppResult<Vec<LinkCredit>> {
        let date_range = serde_json::Value::from(range.unwrap_or_else(|| "30d".to_owned()));
        let db = ctx.db().await?;
        let brought = credit::brought_by_link(
            &*db,
            &ctx.app().db,
            ctx.viewer()?,
            self.site.id,
            self.link.id,
            &date_range,
            now_ms(),
        )
        .await?;
        Ok(brought.into_iter().map(LinkCredit::from).collect())
    }
    /// This link's human clicks grouped for charts, as `linkAnalytics` with
    /// its slug. `range` is 7d (default), 30d, 90d or all.
    #[graphql(complexity = "cost::link_window(range.as_deref()) + child_complexity")]
    async fn analytics(&self, ctx: &Context<'_>, range: Option<String>) -> AppResult<LinkAnalytics> {
        let filter = AnalyticsFilter {
            site_id: Some(self.site.id),
            range,
            slug: Some(self.link.slug.clone()),
            campaign: None,
            source: None,
        };
        let found = link_stats::analytics(&*ctx.db().await?, ctx.viewer()?, filter, now_ms()).await?;
        Ok(found.into())
    }
}

#[derive(SimpleObject)]
pub struct LinkStats {
    pub total_links: i64,
    pub total_clicks: i64,
    pub clicks_today: i64,
    /// The source label with the most clicks; empty when there are none.
    pub top_source: String,
}

#[derive(SimpleObject)]
pub struct LinkList {
    pub links: Vec<Link>,
    pub site_slug: String,
    pub stats: LinkStats,
}

#[derive(SimpleObject)]
pub struct CreatedLink {
    pub link: Link,
    pub full_url: String,
}

#[derive(SimpleObject)]
pub struct SlugCheck {
    pub available: bool,
    pub slug: String,
}

#[derive(InputObject)]
pub struct LinkInput {
    pub site_id: i64,
    pub destination_url: String,
    /// Generated (7 characters) when omitted.
    pub slug: Option<String>,
    pub campaign: Option<String>,
    pub source: Option<String>,
    pub medium: Option<String>,
    pub content: Option<String>,
    pub notes: Option<String>,
    /// `content` (default), `ad` or `bio`.
    pub link_type: Option<String>,
    /// Default true.
    pub is_active: Option<bool>,
    pub expires_at: Option<Timestamp>,
    pub max_clicks: Option<i64>,
    pub tags: Option<Vec<String>>,
}

#[derive(InputObject, Default)]
pub struct LinkUpdateInput {
    pub destination_url: Option<String>,
    pub slug: Option<String>,
    pub campaign: Option<String>,
    pub source: Option<String>,
    pub medium: Option<String>,
    pub content: Option<String>,
    pub notes: Option<String>,
    pub link_type: Option<String>,
    pub is_active: Option<bool>,
    /// Null clears it.
    pub expires_at: MaybeUndefined<Timestamp>,
    /// Null clears it.
    pub max_clicks: MaybeUndefined<i64>,
    pub tags: Option<Vec<String>>,
}

fn changed<T, U>(value: MaybeUndefined<T>, map: impl Fn(T) -> U) -> Option<Option<U>> {
    match value {
        MaybeUndefined::Undefined => None,
        MaybeUndefined::Null => Some(None),
        MaybeUndefined::Value(value) => Some(Some(map(value))),
    }
}

#[derive(Default)]
pub struct LinkQuery;

#[Object]
impl LinkQuery {
    /// The site's links with click counts; the viewer's first site when none is named.
    #[graphql(complexity = "cost::LINKS_PER_SITE * child_complexity")]
    async fn links(&self, ctx: &Context<'_>, site_id: Option<i64>) -> AppResult<LinkList> {
        site_links(ctx, site_id).await
    }

    async fn link(&self, ctx: &Context<'_>, id: ID) -> AppResult<Link> {
        let id = links::parse_public_id(&id)?;
        let (link, site) = links::find(&*ctx.db().await?, ctx.viewer()?, id, Role::Viewer).await?;
        Ok(Link::new(link, site))
    }

    /// Whether a slug is free on the site (the viewer's first site when none is named).
    async fn check_slug(&self, ctx: &Context<'_>, slug: String, site_id: Option<i64>) -> AppResult<SlugCheck> {
        let available = links::slug_available(&*ctx.db().await?, ctx.viewer()?, site_id, &slug).await?;
        Ok(SlugCheck { available, slug })
    }

    /// Human clicks grouped for charts. `range` is 7d (default), 30d, 90d or all;
    /// days are UTC calendar days ending today.
    #[graphql(complexity = "cost::link_window(range.as_deref()) + child_complexity")]
    async fn link_analytics(
        &self,
        ctx: &Context<'_>,
        site_id: Option<i64>,
        range: Option<String>,
        slug: Option<String>,
        campaign: Option<String>,
        source: Option<String>,
    ) -> AppResult<LinkAnalytics> {
        let filter = AnalyticsFilter { site_id, range, slug, campaign, source };
        let found = link_stats::analytics(&*ctx.db().await?, ctx.viewer()?, filter, now_ms()).await?;
        Ok(found.into())
    }
}

#[derive(Default)]
pub struct LinkMutation;

#[Object]
impl LinkMutation {
    /// Members and up. Fails with SLUG_TAKEN or INVALID_URL.
    async fn create_link(&self, ctx: &Context<'_>, input: LinkInput) -> AppResult<CreatedLink> {
        let app = ctx.app();
        let new = NewLink {
            site_id: input.site_id,
            destination_url: input.destination_url,
            slug: input.slug,
            campaign: input.campaign,
            source: input.source,
            medium: input.medium,
            content: input.content,
            notes: input.notes,
            link_type: input.link_type,
            is_active: input.is_active,
            expires_at: input.expires_at.map(|at| at.0),
            max_clicks: input.max_clicks,
            tags: input.tags,
        };
        let (link, site) = links::create(&*ctx.db().await?, ctx.viewer()?, new).await?;
        let full_url = links::full_url(&app.config.short_link_base(), &site, &link);
        Ok(CreatedLink { link: Link::new(link, site), full_url })
    }

    /// Changes only the fields given. Members and up.
    async fn update_link(&self, ctx: &Context<'_>, id: ID, input: LinkUpdateInput) -> AppResult<Link> {
        let app = ctx.app();
        let changes = LinkChanges {
            destination_url: input.destination_url,
            slug: input.slug,
            campaign: input.campaign,
            source: input.source,
            medium: input.medium,
            content: input.content,
            notes: input.notes,
            link_type: input.link_type,
            is_active: input.is_active,
            expires_at: changed(input.expires_at, |at| at.0),
            max_clicks: changed(input.max_clicks, |max| max),
            tags: input.tags,
        };
        let (link, site) =
            links::update(&*ctx.db().await?, &app.cluster, ctx.viewer()?, links::parse_public_id(&id)?, changes)
                .await?;
        Ok(Link::new(link, site))
    }

    /// Deletes the link and its clicks. Members and up.
    async fn delete_link(&self, ctx: &Context<'_>, id: ID) -> AppResult<SuccessPayload> {
        let app = ctx.app();
        links::delete(&*ctx.db().await?, &app.cluster, ctx.viewer()?, links::parse_public_id(&id)?).await?;
        Ok(SuccessPayload { success: true })
    }
}

// The reads above as functions, which `workspace` also calls with its site
// or org filled in.

pub(crate) async fn site_links(ctx: &Context<'_>, site_id: Option<i64>) -> AppResult<LinkList> {
    let lease = ctx.db().await?;
    let db = &*lease;
    let site = access::site_or_first(db, ctx.viewer()?, site_id, Role::Viewer).await?;
    let now = now_ms();
    let counts = link_stats::per_link(db, site.id, now).await?;
    let found = links::list(db, site.id).await?;
    let stats = LinkStats {
        total_links: found.len() as i64,
        total_clicks: counts.values().map(|c| c.total).sum(),
        clicks_today: counts.values().map(|c| c.today).sum(),
        top_source: link_stats::top_source(db, site.id).await?,
    };
    let links = found
        .into_iter()
        .map(|link| {
            let counts = counts.get(&link.id).copied().unwrap_or_default();
            Link::with_counts(link, site.clone(), counts)
        })
        .collect();
    Ok(LinkList { links, site_slug: site.slug.clone(), stats })
}
