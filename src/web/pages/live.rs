//! `/live`: who is on the site in the last 24 hours. The page is complete as
//! served; `live.js` then subscribes to `liveVisitors` over `/graphql/ws` and
//! adds each new event to the activity table in place.

use askama::Template;
use serde::Deserialize;
use serde_json::Value;

use super::{
    page::PageInput,
    parts::{self, Card},
};
use crate::{
    error::{AppError, AppResult},
    time,
    web::{assets, bridge, format, layout::Layout},
};

/// The page's reads, under the `workspace` that scopes them.
#[derive(Deserialize)]
struct Answer {
    workspace: Scoped,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Scoped {
    live_stream: Stream,
}

#[derive(Deserialize)]
struct Stream {
    stats: Stats,
    visitors: Vec<LiveVisitor>,
    activity: Vec<Activity>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stats {
    unique_visitors: i64,
    sessions: i64,
    pageviews: i64,
    avg_duration: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LiveVisitor {
    tracker_vid: String,
    person: parts::Person,
    country: Option<String>,
    city: Option<String>,
    page: Option<String>,
    pages_viewed: i64,
    duration_seconds: i64,
    device_type: Option<String>,
    browser: Option<String>,
    last_seen: String,
    score: i64,
    hot: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Activity {
    tracker_vid: String,
    person: parts::Person,
    #[serde(rename = "type")]
    kind: String,
    event_name: String,
    page: String,
    timestamp: String,
}

pub struct VisitorRow {
    pub who: String,
    pub company: Option<String>,
    pub href: String,
    pub place: String,
    pub page: String,
    pub pages: i64,
    pub time: String,
    pub device: String,
    pub seen: String,
    pub score: i64,
    pub hot: bool,
}

pub struct EventRow {
    pub time: String,
    pub who: String,
    pub company: Option<String>,
    pub href: String,
    pub what: String,
    pub page: String,
}

#[derive(Template)]
#[template(path = "live.html")]
struct LivePage {
    layout: Layout,
    site_id: i64,
    cards: Vec<Card>,
    visitors: Vec<VisitorRow>,
    events: Vec<EventRow>,
}

/// `14:03:09` (UTC) of an ISO timestamp, as the script writes it too.
fn clock(iso: &str) -> String {
    match time::parse_iso(iso).and_then(chrono::DateTime::from_timestamp_millis) {
        Some(instant) => instant.format("%H:%M:%S").to_string(),
        None => iso.to_owned(),
    }
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let answer = bridge::decode::<Answer>(data)?.workspace;
    let stream = answer.live_stream;
    let cards = vec![
        Card { label: "Visitors", value: format::number(stream.stats.unique_visitors) },
        Card { label: "Sessions", value: format::number(stream.stats.sessions) },
        Card { label: "Pageviews", value: format::number(stream.stats.pageviews) },
        Card { label: "Average visit", value: format::duration(stream.stats.avg_duration) },
    ];
    let visitors = stream
        .visitors
        .into_iter()
        .map(|v| VisitorRow {
            who: v.person.display_name.clone(),
            company: v.person.company.clone(),
            href: parts::visitor_href(site, &v.tracker_vid),
            place: parts::place(v.city.as_deref(), v.country.as_deref()),
            page: format::or_dash(v.page.as_deref()),
            pages: v.pages_viewed,
            time: format::duration(v.duration_seconds),
            device: [v.device_type, v.browser].into_iter().flatten().collect::<Vec<_>>().join(" · "),
            seen: format::ago(&v.last_seen, input.now),
            score: v.score,
            hot: v.hot,
        })
        .collect();
    let events = stream
        .activity
        .into_iter()
        .map(|e| EventRow {
            time: clock(&e.timestamp),
            who: e.person.display_name.clone(),
            company: e.person.company.clone(),
            href: parts::visitor_href(site, &e.tracker_vid),
            what: parts::what(&e.kind, &e.event_name),
            page: e.page,
        })
        .collect();
    layout.title = "Live".to_owned();
    layout.live_js = Some(&assets::LIVE_JS);
    let page = LivePage { layout, site_id: site, cards, visitors, events };
    page.render().map_err(AppError::internal)
}
