//! Link analytics as GraphQL returns it.

use async_graphql::{ComplexObject, Context, ID, Object, SimpleObject};

use entity::link_click;

use super::{
    people::{self, PersonView},
    types::Timestamp,
};
use crate::{error::AppResult, service::link_stats};

pub struct LinkClick(pub link_click::Model);

#[Object]
impl LinkClick {
    async fn id(&self) -> ID {
        ID(self.0.id.to_string())
    }
    /// The same id as a number, as the visitor profile's REST shape gives it.
    async fn numeric_id(&self) -> i64 {
        self.0.id
    }
    /// The visitor the click was tied to by the tracker; empty until then.
    async fn tracker_vid(&self) -> &str {
        self.0.tracker_vid.as_deref().unwrap_or_default()
    }
    /// Who clicked, by the display rule; null until the tracker tied the click to a visitor.
    async fn person(&self, ctx: &Context<'_>) -> AppResult<Option<PersonView>> {
        match self.0.tracker_vid.as_deref().filter(|vid| !vid.is_empty()) {
            Some(vid) => Ok(Some(people::on_site(ctx, self.0.site_id, vid).await?)),
            None => Ok(None),
        }
    }
    async fn slug(&self) -> &str {
        &self.0.slug
    }
    async fn campaign(&self) -> &str {
        &self.0.campaign
    }
    async fn source(&self) -> &str {
        &self.0.source
    }
    async fn medium(&self) -> &str {
        &self.0.medium
    }
    async fn destination_url(&self) -> &str {
        &self.0.destination_url
    }
    async fn country(&self) -> Option<&str> {
        self.0.country.as_deref()
    }
    async fn city(&self) -> Option<&str> {
        self.0.city.as_deref()
    }
    async fn region(&self) -> Option<&str> {
        self.0.region.as_deref()
    }
    async fn lat(&self) -> Option<f64> {
        self.0.lat
    }
    async fn lon(&self) -> Option<f64> {
        self.0.lon
    }
    async fn device_type(&self) -> Option<&str> {
        self.0.device_type.as_deref()
    }
    async fn browser(&self) -> Option<&str> {
        self.0.browser.as_deref()
    }
    async fn referrer(&self) -> Option<&str> {
        self.0.referrer.as_deref()
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.created_at)
    }
}

#[derive(SimpleObject)]
pub struct CountryClicks {
    pub country: Option<String>,
    pub clicks: i64,
}

#[derive(SimpleObject)]
pub struct CityClicks {
    pub city: Option<String>,
    pub country: Option<String>,
    pub clicks: i64,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
}

#[derive(SimpleObject)]
pub struct CampaignClicks {
    pub campaign: String,
    pub clicks: i64,
}

#[derive(SimpleObject)]
pub struct SourceClicks {
    pub source: String,
    pub clicks: i64,
}

#[derive(SimpleObject)]
pub struct DayClicks {
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    pub clicks: i64,
}

#[derive(SimpleObject)]
#[graphql(complex)]
pub struct LinkAnalytics {
    /// The most recent human clicks, newest first (at most 1000).
    #[graphql(skip)]
    pub clicks: Vec<LinkClick>,
    pub by_country: Vec<CountryClicks>,
    pub by_city: Vec<CityClicks>,
    pub by_campaign: Vec<CampaignClicks>,
    pub by_source: Vec<SourceClicks>,
    pub by_day: Vec<DayClicks>,
    /// Human clicks matching the range and filters.
    pub total: i64,
}

#[ComplexObject]
impl LinkAnalytics {
    /// The most recent human clicks, newest first: `first` of them (1000,
    /// the most kept, when omitted). A page that shows a few asks for a
    /// few, so only those are resolved to people.
    async fn clicks(&self, first: Option<i64>) -> &[LinkClick] {
        let shown = first.map_or(self.clicks.len(), |n| usize::try_from(n.max(0)).unwrap_or(0));
        &self.clicks[..shown.min(self.clicks.len())]
    }
}

impl From<link_stats::LinkAnalytics> for LinkAnalytics {
    fn from(found: link_stats::LinkAnalytics) -> Self {
        LinkAnalytics {
            clicks: found.clicks.into_iter().map(LinkClick).collect(),
            by_country: found
                .by_country
                .into_iter()
                .map(|(country, clicks)| CountryClicks { country, clicks })
                .collect(),
            by_city: found
                .by_city
                .into_iter()
                .map(|c| CityClicks { city: c.city, country: c.country, clicks: c.clicks, lat: c.lat, lon: c.lon })
                .collect(),
            by_campaign: found
                .by_campaign
                .into_iter()
                .map(|(campaign, clicks)| CampaignClicks { campaign, clicks })
                .collect(),
            by_source: found.by_source.into_iter().map(|(source, clicks)| SourceClicks { source, clicks }).collect(),
            by_day: found.by_day.into_iter().map(|(date, clicks)| DayClicks { date, clicks }).collect(),
            total: found.total,
        }
    }
}
