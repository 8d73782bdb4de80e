//! Click counts for the link list, and link analytics. Only human clicks
//! count; bot and HEAD hits are stored but left out.

use std::collections::HashMap;

use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, FromQueryResult, QueryFilter, QueryOrder, QuerySelect, Select,
    sea_query::Expr,
};

use entity::{link_click, link_click_day};

use super::{access, analytics::sum_of};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    time::{DAY_MS, start_of_day},
};

/// Most recent clicks listed by the analytics endpoint.
pub const MAX_LISTED_CLICKS: u64 = 1_000;

/// Human clicks of one link.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClickCounts {
    pub total: i64,
    pub today: i64,
    pub last_clicked_at: Option<i64>,
}

fn human_clicks(site_id: i64) -> Select<link_click::Entity> {
    link_click::Entity::find()
        .filter(link_click::Column::SiteId.eq(site_id))
        .filter(link_click::Column::IsBot.eq(false))
}

/// Human clicks per link (and the link's slug or label) from the daily
/// rollups, where the cost follows links and days, not clicks.
fn daily(site_id: i64) -> Select<link_click_day::Entity> {
    link_click_day::Entity::find().filter(link_click_day::Column::SiteId.eq(site_id))
}

/// The link's latest human click, read backwards along its
/// `(link_id, created_at)` index until the first human one.
async fn last_click(db: &impl ConnectionTrait, link_id: i64) -> AppResult<Option<i64>> {
    Ok(link_click::Entity::find()
        .filter(link_click::Column::LinkId.eq(link_id))
        .filter(link_click::Column::IsBot.eq(false))
        .select_only()
        .column(link_click::Column::CreatedAt)
        .order_by_desc(link_click::Column::CreatedAt)
        .limit(1)
        .into_tuple()
        .one(db)
        .await?)
}

/// Per link of the site: all-time clicks, clicks since midnight UTC, last click.
pub async fn per_link(db: &impl ConnectionTrait, site_id: i64, now: i64) -> AppResult<HashMap<i64, ClickCounts>> {
    let clicks = || sum_of(Expr::col(link_click_day::Column::Clicks));
    let all: Vec<(i64, i64)> = daily(site_id)
        .select_only()
        .column(link_click_day::Column::LinkId)
        .column_as(clicks(), "clicks")
        .group_by(link_click_day::Column::LinkId)
        .into_tuple()
        .all(db)
        .await?;
    let today: HashMap<i64, i64> = daily(site_id)
        .filter(link_click_day::Column::Day.eq(start_of_day(now)))
        .select_only()
        .column(link_click_day::Column::LinkId)
        .column_as(clicks(), "clicks")
        .group_by(link_click_day::Column::LinkId)
        .into_tuple::<(i64, i64)>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let mut counts = HashMap::with_capacity(all.len());
    for (link, total) in all {
        let today = today.get(&link).copied().unwrap_or(0);
        counts.insert(link, ClickCounts { total, today, last_clicked_at: last_click(db, link).await? });
    }
    Ok(counts)
}

/// One link's counts, as `per_link` gives them for every link of its site.
pub async fn of_link(db: &impl ConnectionTrait, site_id: i64, link_id: i64, now: i64) -> AppResult<ClickCounts> {
    let one = || daily(site_id).filter(link_click_day::Column::LinkId.eq(link_id));
    let sum = |select: Select<link_click_day::Entity>| {
        select.select_only().column_as(sum_of(Expr::col(link_click_day::Column::Clicks)), "clicks").into_tuple()
    };
    let total: Option<i64> = sum(one()).one(db).await?.flatten();
    let today: Option<i64> =
        sum(one().filter(link_click_day::Column::Day.eq(start_of_day(now)))).one(db).await?.flatten();
    Ok(ClickCounts {
        total: total.unwrap_or(0),
        today: today.unwrap_or(0),
        last_clicked_at: last_click(db, link_id).await?,
    })
}

/// The source label with the most human clicks on the site, or "".
pub async fn top_source(db: &impl ConnectionTrait, site_id: i64) -> AppResult<String> {
    let top: Option<(String, i64)> = daily(site_id)
        .filter(link_click_day::Column::Source.ne(""))
        .select_only()
        .column(link_click_day::Column::Source)
        .column_as(sum_of(Expr::col(link_click_day::Column::Clicks)), "clicks")
        .group_by(link_click_day::Column::Source)
        .order_by_desc(Expr::col("clicks"))
        .order_by_asc(link_click_day::Column::Source)
        .into_tuple()
        .one(db)
        .await?;
    Ok(top.map(|(source, _)| source).unwrap_or_default())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    Days(i64),
    All,
}

impl Range {
    pub fn parse(value: Option<&str>) -> AppResult<Range> {
        match value.map(str::trim).filter(|v| !v.is_empty()).unwrap_or("7d") {
            "7d" => Ok(Range::Days(7)),
            "30d" => Ok(Range::Days(30)),
            "90d" => Ok(Range::Days(90)),
            "all" => Ok(Range::All),
            _ => Err(AppError::validation("range", "must be 7d, 30d, 90d or all")),
        }
    }

    /// The first instant counted: midnight UTC, N-1 days before today.
    pub fn start(self, now: i64) -> Option<i64> {
        match self {
            Range::Days(days) => Some(start_of_day(now) - (days - 1) * DAY_MS),
            Range::All => None,
        }
    }
}

#[derive(Default)]
pub struct AnalyticsFilter {
    pub site_id: Option<i64>,
    pub range: Option<String>,
    pub slug: Option<String>,
    pub campaign: Option<String>,
    pub source: Option<String>,
}

#[derive(FromQueryResult)]
pub struct CityCount {
    pub city: Option<String>,
    pub country: Option<String>,
    pub clicks: i64,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
}

pub struct LinkAnalytics {
    /// The most recent clicks, newest first, at most MAX_LISTED_CLICKS.
    pub clicks: Vec<link_click::Model>,
    pub by_country: Vec<(Option<String>, i64)>,
    pub by_city: Vec<CityCount>,
    pub by_campaign: Vec<(String, i64)>,
    pub by_source: Vec<(String, i64)>,
    /// `YYYY-MM-DD` and clicks; every day of a bounded range, zeros included.
    pub by_day: Vec<(String, i64)>,
    pub total: i64,
}

pub async fn analytics(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    filter: AnalyticsFilter,
    now: i64,
) -> AppResult<LinkAnalytics> {
    let range = Range::parse(filter.range.as_deref())?;
    let site = access::site_or_first(db, viewer, filter.site_id, Role::Viewer).await?;
    let mut scope = human_clicks(site.id);
    if let Some(start) = range.start(now) {
        scope = scope.filter(link_click::Column::CreatedAt.gte(start));
    }
    for (column, value) in [
        (link_click::Column::Slug, &filter.slug),
        (link_click::Column::Campaign, &filter.campaign),
        (link_click::Column::Source, &filter.source),
    ] {
        if let Some(value) = value.as_deref().filter(|v| !v.is_empty()) {
            scope = scope.filter(column.eq(value));
        }
    }

    // Every figure but the latest clicks comes from the daily rollups. The
    // range starts at a UTC midnight, so a day is wholly in or out of it.
    let mut rollups = link_click_day::Entity::find().filter(link_click_day::Column::SiteId.eq(site.id));
    if let Some(start) = range.start(now) {
        rollups = rollups.filter(link_click_day::Column::Day.gte(start));
    }
    for (column, value) in [
        (link_click_day::Column::Slug, &filter.slug),
        (link_click_day::Column::Campaign, &filter.campaign),
        (link_click_day::Column::Source, &filter.source),
    ] {
        if let Some(value) = value.as_deref().filter(|v| !v.is_empty()) {
            rollups = rollups.filter(column.eq(value));
        }
    }
    let clicks_sum = || sum_of(Expr::col(link_click_day::Column::Clicks));
    let by_label = |column: link_click_day::Column| {
        rollups
            .clone()
            .select_only()
            .column(column)
            .column_as(clicks_sum(), "clicks")
            .group_by(column)
            .order_by_desc(Expr::col("clicks"))
            .order_by_asc(column)
            .into_tuple::<(String, i64)>()
    };
    let by_country: Vec<(Option<String>, i64)> = by_label(link_click_day::Column::Country)
        .all(db)
        .await?
        .into_iter()
        .map(|(country, clicks)| (Some(country).filter(|c| !c.is_empty()), clicks))
        .collect();
    let by_city: Vec<CityCount> = rollups
        .clone()
        .select_only()
        .column(link_click_day::Column::City)
        .column(link_click_day::Column::Country)
        .column_as(clicks_sum(), "clicks")
        .column_as(link_click_day::Column::Lat.max(), "lat")
        .column_as(link_click_day::Column::Lon.max(), "lon")
        .group_by(link_click_day::Column::City)
        .group_by(link_click_day::Column::Country)
        .order_by_desc(Expr::col("clicks"))
        .order_by_asc(link_click_day::Column::City)
        .into_tuple::<(String, String, i64, Option<f64>, Option<f64>)>()
        .all(db)
        .await?
        .into_iter()
        .map(|(city, country, clicks, lat, lon)| CityCount {
            city: Some(city).filter(|c| !c.is_empty()),
            country: Some(country).filter(|c| !c.is_empty()),
            clicks,
            lat,
            lon,
        })
        .collect();
    let by_campaign = by_label(link_click_day::Column::Campaign).all(db).await?;
    let by_source = by_label(link_click_day::Column::Source).all(db).await?;
    let days: Vec<(i64, i64)> = rollups
        .clone()
        .select_only()
        .column(link_click_day::Column::Day)
        .column_as(clicks_sum(), "clicks")
        .group_by(link_click_day::Column::Day)
        .order_by_asc(link_click_day::Column::Day)
        .into_tuple::<(i64, i64)>()
        .all(db)
        .await?
        .into_iter()
        .map(|(day, clicks)| (day.div_euclid(DAY_MS), clicks))
        .collect();
    let clicks = scope
        .clone()
        .order_by_desc(link_click::Column::CreatedAt)
        .order_by_desc(link_click::Column::Id)
        .limit(MAX_LISTED_CLICKS)
        .all(db)
        .await?;
    let total = by_country.iter().map(|(_, n)| n).sum();
    Ok(LinkAnalytics {
        clicks,
        by_country,
        by_city,
        by_campaign,
        by_source,
        by_day: fill_days(range, now, days),
        total,
    })
}

/// Every day of a bounded range with its count, zeros included; for `all`,
/// the days that had clicks.
fn fill_days(range: Range, now: i64, counted: Vec<(i64, i64)>) -> Vec<(String, i64)> {
    let counts: HashMap<i64, i64> = counted.iter().copied().collect();
    let days: Vec<i64> = match range.start(now) {
        Some(start) => (start / DAY_MS..=now.div_euclid(DAY_MS)).collect(),
        None => counted.iter().map(|(day, _)| *day).collect(),
    };
    days.into_iter().map(|day| (crate::time::date(day * DAY_MS), counts.get(&day).copied().unwrap_or(0))).collect()
}
