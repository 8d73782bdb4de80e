//! `/`: the current site's traffic in a window (24h, 7d or 30d), a chart of
//! pageviews and visitors over it, top pages, countries, sources, and the
//! hottest leads.

use askama::Template;
use serde::Deserialize;
use serde_json::Value;

use super::{
    page::PageInput,
    parts::{self, BarPanel, Card, Nodes, Tab},
};
use crate::{
    enrich::geo::country_name,
    error::{AppError, AppResult},
    time,
    web::{bridge, chart, format, layout::Layout},
};

/// The page's reads, under the `workspace` that scopes them.
#[derive(Deserialize)]
struct Answer {
    workspace: Scoped,
}

#[derive(Deserialize)]
struct Scoped {
    traffic: Traffic,
    hottest: Nodes<Lead>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Traffic {
    time_range: String,
    bucket_seconds: i64,
    buckets: Vec<Bucket>,
    unique_visitors: i64,
    sessions: i64,
    pageviews: i64,
    identified_visitors: i64,
    hot_leads: i64,
    top_pages: Vec<PageViews>,
    countries: Vec<Country>,
    sources: Vec<Source>,
}

#[derive(Deserialize)]
struct PageViews {
    page: String,
    views: i64,
}

#[derive(Deserialize)]
struct Country {
    country: Option<String>,
    visitors: i64,
}

#[derive(Deserialize)]
struct Bucket {
    start: String,
    pageviews: i64,
    visitors: i64,
    sessions: i64,
}

#[derive(Deserialize)]
struct Source {
    channel: String,
    sessions: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Lead {
    tracker_vid: String,
    person: parts::Person,
    score: i64,
    hot: bool,
    country: Option<String>,
    city: Option<String>,
    last_seen: String,
    total_pageviews: i64,
}

pub struct LeadRow {
    pub who: String,
    pub company: Option<String>,
    pub href: String,
    pub score: i64,
    pub hot: bool,
    pub place: String,
    pub pageviews: String,
    pub seen: String,
}

pub struct SeriesRow {
    pub label: String,
    pub pageviews: String,
    pub visitors: String,
    pub sessions: String,
}

#[derive(Template)]
#[template(path = "overview.html")]
struct OverviewPage {
    layout: Layout,
    range_label: &'static str,
    tabs: Vec<Tab>,
    cards: Vec<Card>,
    chart: chart::LineChart,
    series: Vec<SeriesRow>,
    panels: Vec<BarPanel>,
    leads: Vec<LeadRow>,
    leads_href: String,
}

const RANGES: [(&str, &str); 3] = [("24h", "Last 24 hours"), ("7d", "Last 7 days"), ("30d", "Last 30 days")];

/// A bucket's label under the chart: the hour, the day and hour, or the day.
fn bucket_label(start: &str, bucket_seconds: i64) -> String {
    let pattern = match bucket_seconds {
        s if s < 6 * 3600 => "%H:00",
        s if s < 24 * 3600 => "%a %H:00",
        _ => "%b %d",
    };
    time::parse_iso(start)
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(|| start.to_owned(), |instant| instant.format(pattern).to_string())
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let answer = bridge::decode::<Answer>(data)?.workspace;
    let traffic = answer.traffic;
    let range = traffic.time_range.clone();
    let site_param = input.site_query.as_deref().map(|q| format!("&{q}")).unwrap_or_default();
    let tabs = RANGES
        .iter()
        .map(|(value, label)| Tab { label, href: format!("/?range={value}{site_param}"), current: range == *value })
        .collect();
    let range_label = RANGES.iter().find(|(value, _)| *value == range).map_or("", |(_, label)| label);
    let cards = vec![
        Card { label: "Visitors", value: format::number(traffic.unique_visitors) },
        Card { label: "Pageviews", value: format::number(traffic.pageviews) },
        Card { label: "Sessions", value: format::number(traffic.sessions) },
        Card { label: "Identified", value: format::number(traffic.identified_visitors) },
        Card { label: "Hot leads", value: format::number(traffic.hot_leads) },
    ];
    let buckets = &traffic.buckets;
    let labels: Vec<String> = buckets.iter().map(|b| bucket_label(&b.start, traffic.bucket_seconds)).collect();
    let chart = chart::line_chart(
        &labels,
        &[
            ("Pageviews", "line-pageviews", buckets.iter().map(|b| b.pageviews).collect()),
            ("Visitors", "line-visitors", buckets.iter().map(|b| b.visitors).collect()),
        ],
    );
    let series = buckets
        .iter()
        .zip(&labels)
        .map(|(b, label)| SeriesRow {
            label: label.clone(),
            pageviews: format::number(b.pageviews),
            visitors: format::number(b.visitors),
            sessions: format::number(b.sessions),
        })
        .collect();
    let leads = answer
        .hottest
        .nodes
        .into_iter()
        .map(|lead| LeadRow {
            who: lead.person.display_name.clone(),
            company: lead.person.company.clone(),
            href: parts::visitor_href(site, &lead.tracker_vid),
            score: lead.score,
            hot: lead.hot,
            place: parts::place(lead.city.as_deref(), lead.country.as_deref()),
            pageviews: format::number(lead.total_pageviews),
            seen: format::ago(&lead.last_seen, input.now),
        })
        .collect();
    layout.title = "Overview".to_owned();
    let page = OverviewPage {
        layout,
        range_label,
        tabs,
        cards,
        chart,
        series,
        panels: vec![
            BarPanel {
                title: "Top pages",
                label_head: "Page",
                value_head: "Views",
                rows: parts::bars(traffic.top_pages.into_iter().map(|p| (p.page, p.views)).collect()),
                paths: true,
            },
            BarPanel {
                title: "Countries",
                label_head: "Country",
                value_head: "Visitors",
                rows: parts::bars(
                    traffic
                        .countries
                        .into_iter()
                        .map(|c| (c.country.as_deref().map_or("Unknown", country_name).to_owned(), c.visitors))
                        .collect(),
                ),
                paths: false,
            },
            BarPanel {
                title: "Sources",
                label_head: "Channel",
                value_head: "Sessions",
                rows: parts::bars(traffic.sources.into_iter().map(|s| (s.channel, s.sessions)).collect()),
                paths: false,
            },
        ],
        leads,
        leads_href: format!("/leads?range={range}{site_param}"),
    };
    page.render().map_err(AppError::internal)
}
