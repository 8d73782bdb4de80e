//! Visitor analytics queries: the scored list, profiles, the live stream,
//! overview statistics and session timelines.

use crate::error::AppResult;
use async_graphql::{Context, ID, Object, SimpleObject};

use super::{
    context::ContextExt,
    cost,
    people::{self, PersonView},
    session::TrackedSession,
    sites::Site,
    types::{Timestamp, parse_id},
    visitor::{PageViews, Visitor, page_views},
    visitor_list::{self, VisitorConnection},
};
use crate::{
    service::analytics::{
        self, TimeRange, live, series, session as sessions,
        stats::{self, Overview},
    },
    service::workspace,
    time::now_ms,
};

#[derive(SimpleObject)]
pub struct CountryVisitors {
    /// Null when unknown.
    pub country: Option<String>,
    pub visitors: i64,
}

fn country_visitors(rows: Vec<(Option<String>, i64)>) -> Vec<CountryVisitors> {
    rows.into_iter().map(|(country, visitors)| CountryVisitors { country, visitors }).collect()
}

#[derive(SimpleObject)]
pub struct StatsOverview {
    pub unique_visitors: i64,
    pub sessions: i64,
    pub pageviews: i64,
    pub total_events: i64,
    pub identified_visitors: i64,
    /// Visitors in the window whose score reaches the site's hot threshold.
    pub hot_leads: i64,
}

impl From<Overview> for StatsOverview {
    fn from(o: Overview) -> Self {
        StatsOverview {
            unique_visitors: o.unique_visitors,
            sessions: o.sessions,
            pageviews: o.pageviews,
            total_events: o.total_events,
            identified_visitors: o.identified_visitors,
            hot_leads: o.hot_leads,
        }
    }
}

#[derive(SimpleObject)]
pub struct Stats {
    pub overview: StatsOverview,
    pub top_pages: Vec<PageViews>,
    pub countries: Vec<CountryVisitors>,
    /// The window asked for.
    pub time_range: String,
}

/// A visitor active in the last 24 hours, with their latest session.
pub struct LiveVisitor(live::LiveVisitor);

#[Object]
impl LiveVisitor {
    async fn tracker_vid(&self) -> &str {
        &self.0.visitor.visitor.tracker_vid
    }
    /// Who this is, by the display rule (name, email, user id, short id), with their company.
    async fn person(&self, ctx: &Context<'_>) -> AppResult<PersonView> {
        let visitor = &self.0.visitor.visitor;
        people::on_site(ctx, visitor.site_id, &visitor.tracker_vid).await
    }
    async fn identified_user_id(&self) -> Option<&str> {
        self.0.visitor.visitor.identified_user_id.as_deref()
    }
    async fn country(&self) -> Option<&str> {
        self.0.visitor.visitor.country.as_deref()
    }
    async fn city(&self) -> Option<&str> {
        self.0.visitor.visitor.city.as_deref()
    }
    async fn region(&self) -> Option<&str> {
        self.0.visitor.visitor.region.as_deref()
    }
    /// The page they are on: the latest page of their latest session.
    async fn page(&self) -> Option<&str> {
        self.0.session.as_ref().and_then(|s| s.exit_page.as_deref())
    }
    /// Pages viewed in the latest session.
    async fn pages_viewed(&self) -> i32 {
        self.0.session.as_ref().map_or(0, |s| s.pageview_count)
    }
    /// Length of the latest session.
    async fn duration_seconds(&self) -> i64 {
        self.0.session.as_ref().map_or(0, |s| s.duration_seconds)
    }
    async fn lat(&self) -> Option<f64> {
        self.0.visitor.visitor.lat
    }
    async fn lon(&self) -> Option<f64> {
        self.0.visitor.visitor.lon
    }
    async fn device_type(&self) -> Option<&str> {
        self.0.visitor.visitor.device_type.as_deref()
    }
    async fn browser(&self) -> Option<&str> {
        self.0.visitor.visitor.browser.as_deref()
    }
    /// The latest session's external referrer.
    async fn referrer(&self) -> Option<&str> {
        self.0.session.as_ref().and_then(|s| s.referrer.as_deref())
    }
    async fn last_seen(&self) -> Timestamp {
        Timestamp(self.0.visitor.visitor.last_seen)
    }
    /// All-time sessions.
    async fn session_count(&self) -> i32 {
        self.0.visitor.visitor.total_sessions
    }
    async fn score(&self) -> i32 {
        self.0.visitor.score
    }
    async fn hot(&self) -> bool {
        self.0.visitor.hot
    }
    /// Tracking-link clicks tied to the visitor.
    async fn clicks(&self) -> i32 {
        self.0.visitor.visitor.clicks
    }
}

/// A stored event in the live stream.
pub struct LiveEvent(live::LiveActivity);

#[Object]
impl LiveEvent {
    async fn tracker_vid(&self) -> &str {
        &self.0.tracker_vid
    }
    /// Who this is, by the display rule (name, email, user id, short id), with their company.
    async fn person(&self, ctx: &Context<'_>) -> AppResult<PersonView> {
        people::on_site(ctx, self.0.event.site_id, &self.0.tracker_vid).await
    }
    async fn identified_user_id(&self) -> Option<&str> {
        self.0.identified_user_id.as_deref()
    }
    #[graphql(name = "type")]
    async fn event_type(&self) -> &str {
        &self.0.event.event_type
    }
    async fn event_name(&self) -> &str {
        &self.0.event.event_name
    }
    async fn page(&self) -> &str {
        &self.0.event.page
    }
    async fn timestamp(&self) -> Timestamp {
        Timestamp(self.0.event.timestamp)
    }
}

#[derive(SimpleObject)]
pub struct LiveStats {
    pub unique_visitors: i64,
    pub sessions: i64,
    pub pageviews: i64,
    /// Mean length in whole seconds of the sessions active in the window.
    pub avg_duration: i64,
}

#[derive(SimpleObject)]
pub struct LiveStream {
    /// Visitors seen in the last 24 hours, most recent first (at most 100).
    pub visitors: Vec<LiveVisitor>,
    /// The latest events, newest first (at most 50).
    pub activity: Vec<LiveEvent>,
    pub stats: LiveStats,
    pub countries: Vec<CountryVisitors>,
    pub pages: Vec<PageViews>,
    /// When this snapshot was made.
    pub timestamp: Timestamp,
}

/// Human traffic in one bucket of a window (see `trafficSeries`).
#[derive(SimpleObject)]
pub struct TrafficBucket {
    /// The bucket's UTC start; the first bucket counts only from the window's start.
    pub start: Timestamp,
    pub pageviews: i64,
    /// Visitors last seen in the bucket.
    pub visitors: i64,
    /// Sessions that ended in the bucket.
    pub sessions: i64,
}

/// A window of human traffic for the overview: its totals equal `stats` for
/// the same window, and its buckets add up to them.
#[derive(SimpleObject)]
pub struct Traffic {
    pub time_range: String,
    /// Length of a bucket: an hour for 24h, six hours for 7d, a UTC day for 30d.
    pub bucket_seconds: i64,
    /// Oldest first; empty buckets are listed with zeros.
    pub buckets: Vec<TrafficBucket>,
    pub unique_visitors: i64,
    pub sessions: i64,
    pub pageviews: i64,
    pub identified_visitors: i64,
    pub hot_leads: i64,
    /// At most 10, most viewed first.
    pub top_pages: Vec<PageViews>,
    /// At most 10, most visitors first.
    pub countries: Vec<CountryVisitors>,
    /// Sessions per channel, at most 10, most first.
    pub sources: Vec<ChannelSessions>,
}

#[derive(SimpleObject)]
pub struct ChannelSessions {
    pub channel: String,
    pub sessions: i64,
}

#[derive(Default)]
pub struct AnalyticsQuery;

#[Object]
impl AnalyticsQuery {
    /// Scored visitors seen in the window, highest score first, then most
    /// recently seen. `first` defaults to 50 and is capped at 500.
    #[graphql(complexity = "cost::ranked_window(time_range.as_deref()) + cost::visitor_page(first) * child_complexity")]
    // One argument per GraphQL argument: the schema's shape, not a Rust choice.
    #[allow(clippy::too_many_arguments)]
    async fn visitors(
        &self,
        ctx: &Context<'_>,
        site_id: i64,
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
    ) -> AppResult<VisitorConnection> {
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
        let args = visitor_list::ListArgs { site_id, time_range, filter, first, after, hot, desk };
        visitor_list::site_visitors(ctx, args).await
    }

    /// One visitor's full profile, by `tracker_vid`.
    async fn visitor(&self, ctx: &Context<'_>, site_id: i64, id: ID) -> AppResult<Visitor> {
        visitor(ctx, site_id, id).await
    }

    /// Overview of human traffic in a rolling window: `24h`, `7d` (default) or `30d`.
    #[graphql(complexity = "cost::window(time_range.as_deref()) + child_complexity")]
    async fn stats(&self, ctx: &Context<'_>, site_id: i64, time_range: Option<String>) -> AppResult<Stats> {
        let range = TimeRange::parse(time_range.as_deref(), false)?;
        let found = stats::stats(&*ctx.db().await?, ctx.viewer()?, site_id, range, now_ms()).await?;
        Ok(Stats {
            overview: found.window.overview.into(),
            top_pages: page_views(found.window.top_pages),
            countries: country_visitors(found.window.countries),
            time_range: found.range.as_str().to_owned(),
        })
    }

    /// Who is on the site in the last 24 hours, and what they did.
    #[graphql(complexity = "cost::window(Some(\"24h\")) + child_complexity")]
    async fn live_stream(&self, ctx: &Context<'_>, site_id: i64) -> AppResult<LiveStream> {
        live_stream(ctx, site_id).await
    }

    /// Human traffic over a rolling window (`24h`, `7d` default, or `30d`):
    /// the `stats` figures plus about thirty UTC-aligned buckets and the
    /// sessions per channel, in one pass per table. A visitor counts where it
    /// was last seen and a session where it ended.
    #[graphql(complexity = "cost::window(time_range.as_deref()) + child_complexity")]
    async fn traffic(&self, ctx: &Context<'_>, site_id: i64, time_range: Option<String>) -> AppResult<Traffic> {
        traffic(ctx, site_id, time_range).await
    }

    /// The site a visitor link without a site means: among the sites the
    /// caller can read, the one where this visitor was seen last.
    async fn visitor_site(&self, ctx: &Context<'_>, tracker_vid: String) -> AppResult<Site> {
        Ok(Site(workspace::site_of_visitor(&*ctx.db().await?, ctx.viewer()?, &tracker_vid).await?))
    }

    /// One tracked visit with its timeline (`session` is the sign-in session).
    async fn tracked_session(&self, ctx: &Context<'_>, site_id: i64, id: ID) -> AppResult<TrackedSession> {
        tracked_session(ctx, site_id, id).await
    }
}

// The reads above as functions, which `workspace` also calls with its site
// or org filled in.

pub(crate) async fn visitor(ctx: &Context<'_>, site_id: i64, id: ID) -> AppResult<Visitor> {
    Ok(Visitor::new(analytics::scored_visitor(&*ctx.db().await?, ctx.viewer()?, site_id, &id, now_ms()).await?))
}

pub(crate) async fn live_stream(ctx: &Context<'_>, site_id: i64) -> AppResult<LiveStream> {
    let found = live::stream(&*ctx.db().await?, ctx.viewer()?, site_id, now_ms()).await?;
    Ok(LiveStream {
        visitors: found.visitors.into_iter().map(LiveVisitor).collect(),
        activity: found.activity.into_iter().map(LiveEvent).collect(),
        stats: LiveStats {
            unique_visitors: found.stats.unique_visitors,
            sessions: found.stats.sessions,
            pageviews: found.stats.pageviews,
            avg_duration: found.stats.avg_duration,
        },
        countries: country_visitors(found.countries),
        pages: page_views(found.pages),
        timestamp: Timestamp(found.generated_at),
    })
}

pub(crate) async fn traffic(ctx: &Context<'_>, site_id: i64, time_range: Option<String>) -> AppResult<Traffic> {
    let range = TimeRange::parse(time_range.as_deref(), false)?;
    let found = series::traffic(&*ctx.db().await?, ctx.viewer()?, site_id, range, now_ms()).await?;
    Ok(Traffic {
        time_range: found.range.as_str().to_owned(),
        bucket_seconds: found.bucket_ms / 1000,
        buckets: found
            .buckets
            .into_iter()
            .map(|b| TrafficBucket {
                start: Timestamp(b.start),
                pageviews: b.pageviews,
                visitors: b.visitors,
                sessions: b.sessions,
            })
            .collect(),
        unique_visitors: found.totals.visitors,
        sessions: found.totals.sessions,
        pageviews: found.totals.pageviews,
        identified_visitors: found.totals.identified,
        hot_leads: found.totals.hot,
        top_pages: page_views(found.pages),
        countries: country_visitors(found.countries),
        sources: found.sources.into_iter().map(|(channel, sessions)| ChannelSessions { channel, sessions }).collect(),
    })
}

pub(crate) async fn tracked_session(ctx: &Context<'_>, site_id: i64, id: ID) -> AppResult<TrackedSession> {
    let session_id = parse_id(&id, "session")?;
    let (model, visitor) = sessions::find_with_visitor(&*ctx.db().await?, ctx.viewer()?, site_id, session_id).await?;
    Ok(TrackedSession::new(model, visitor.identified_user_id))
}
