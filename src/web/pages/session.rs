//! `/session/<id>`: one visit's timeline.

use askama::Template;
use serde::Deserialize;
use serde_json::Value;

use super::{
    page::PageInput,
    parts::{self, Fact, MaybeLink},
};
use crate::{
    error::{AppError, AppResult},
    web::{bridge, format, layout::Layout},
};

/// The page's reads, under the `workspace` that scopes them.
#[derive(Deserialize)]
struct Answer {
    workspace: Scoped,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Scoped {
    tracked_session: Session,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Session {
    session_id: String,
    tracker_vid: String,
    person: parts::Person,
    started_at: String,
    duration_seconds: i64,
    event_count: i64,
    pageview_count: i64,
    entry_page: Option<String>,
    exit_page: Option<String>,
    referrer: Option<String>,
    channel: String,
    utm_source: Option<String>,
    utm_medium: Option<String>,
    utm_campaign: Option<String>,
    country: Option<String>,
    city: Option<String>,
    device_type: Option<String>,
    browser: Option<String>,
    os: Option<String>,
    timeline: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(rename = "type")]
    kind: String,
    event_name: String,
    page: String,
    page_title: Option<String>,
    timestamp: String,
    time_on_previous_page: i64,
    props: Value,
}

pub struct Step {
    pub time: String,
    pub gap: String,
    pub what: String,
    pub page: String,
    pub title: String,
    pub props: Vec<(String, String)>,
}

#[derive(Template)]
#[template(path = "session.html")]
struct SessionPage {
    layout: Layout,
    heading: String,
    visitor_href: String,
    visitor: String,
    referrer: MaybeLink,
    facts: Vec<Fact>,
    steps: Vec<Step>,
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let s = bridge::decode::<Answer>(data)?.workspace.tracked_session;
    let campaign: Vec<&str> =
        [s.utm_source.as_deref(), s.utm_medium.as_deref(), s.utm_campaign.as_deref()].into_iter().flatten().collect();
    let facts = vec![
        Fact { label: "Started", value: format::when(&s.started_at) },
        Fact { label: "Length", value: format::duration(s.duration_seconds) },
        Fact { label: "Pageviews", value: format::number(s.pageview_count) },
        Fact { label: "Events", value: format::number(s.event_count) },
        Fact { label: "Entry page", value: format::or_dash(s.entry_page.as_deref()) },
        Fact { label: "Exit page", value: format::or_dash(s.exit_page.as_deref()) },
        Fact { label: "Channel", value: s.channel },
        Fact { label: "Campaign", value: format::or_dash(Some(&campaign.join(" / "))) },
        Fact { label: "Location", value: parts::place(s.city.as_deref(), s.country.as_deref()) },
        Fact {
            label: "Device",
            value: format::or_dash(Some(
                &[s.device_type, s.browser, s.os].into_iter().flatten().collect::<Vec<_>>().join(" · "),
            )),
        },
    ];
    let steps = s
        .timeline
        .into_iter()
        .enumerate()
        .map(|(i, e)| Step {
            time: format::when_exact(&e.timestamp),
            gap: if i == 0 { "start".to_owned() } else { format!("+{}", format::duration(e.time_on_previous_page)) },
            what: parts::what(&e.kind, &e.event_name),
            page: e.page,
            title: format::or_dash(e.page_title.as_deref()),
            props: format::json_pairs(&e.props, 8),
        })
        .collect();
    layout.title = format!("Session {}", s.session_id);
    let page = SessionPage {
        layout,
        heading: format!("Session {}", s.session_id),
        visitor_href: parts::visitor_href(site, &s.tracker_vid),
        visitor: s.person.with_company(),
        referrer: MaybeLink::url(s.referrer.as_deref()),
        facts,
        steps,
    };
    page.render().map_err(AppError::internal)
}
