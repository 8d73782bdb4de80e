//! `/talk/incoming?visitor=<id>`: the connect page for a lead. Who they are,
//! what they are doing now, their score, and one-click ways to reach them.

use askama::Template;
use serde::Deserialize;
use serde_json::Value;

use super::{page::PageInput, parts};
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
struct Scoped {
    site: SiteSettings,
    visitor: Visitor,
}

#[derive(Deserialize)]
struct SiteSettings {
    gravatar: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Visitor {
    tracker_vid: String,
    person: parts::Person,
    status: String,
    score: i64,
    hot: bool,
    email: Option<String>,
    gravatar_url: Option<String>,
    country: Option<String>,
    city: Option<String>,
    device_type: Option<String>,
    browser: Option<String>,
    last_seen: String,
    total_sessions: i64,
    total_pageviews: i64,
    identities: Vec<Identity>,
    recent_events: Vec<Event>,
}

#[derive(Deserialize)]
struct Identity {
    company: Option<String>,
    email: Option<String>,
    phone: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    page: String,
    page_title: Option<String>,
}

/// A way to reach the lead: the text, a link when it is a safe one, and a copy button.
pub struct Contact {
    pub label: &'static str,
    pub text: String,
    pub href: Option<String>,
    pub action: &'static str,
}

#[derive(Template)]
#[template(path = "talk.html")]
struct TalkPage {
    layout: Layout,
    name: String,
    company: String,
    status: String,
    score: i64,
    hot: bool,
    avatar: parts::Avatar,
    contacts: Vec<Contact>,
    page: String,
    page_title: String,
    seen: String,
    seen_ago: String,
    place: String,
    device: String,
    visits: String,
    profile_href: String,
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let scoped = bridge::decode::<Answer>(data)?.workspace;
    let (gravatar_on, v) = (scoped.site.gravatar, scoped.visitor);
    let latest = v.identities.into_iter().next();
    let known = |pick: fn(&Identity) -> Option<&String>| {
        latest.as_ref().and_then(pick).map(|text| text.trim().to_owned()).filter(|text| !text.is_empty())
    };
    let name = v.person.display_name.clone();
    let email = v.email.clone().or_else(|| known(|i| i.email.as_ref()));
    let phone = known(|i| i.phone.as_ref());
    let mut contacts = Vec::new();
    if let Some(email) = email {
        contacts.push(Contact { label: "Email", href: format::mailto_href(&email), text: email, action: "Write" });
    }
    if let Some(phone) = phone {
        contacts.push(Contact { label: "Phone", href: format::tel_href(&phone), text: phone, action: "Call" });
    }
    let current = v.recent_events.into_iter().next();
    layout.title = format!("Connect with {name}");
    let page = TalkPage {
        layout,
        company: format::or_dash(known(|i| i.company.as_ref()).as_deref()),
        status: v.status,
        score: v.score,
        hot: v.hot,
        avatar: parts::Avatar::new(gravatar_on, v.gravatar_url.clone(), &v.person),
        contacts,
        page: format::or_dash(current.as_ref().map(|e| e.page.as_str())),
        page_title: format::or_dash(current.as_ref().and_then(|e| e.page_title.as_deref())),
        seen: format::when(&v.last_seen),
        seen_ago: format::ago(&v.last_seen, input.now),
        place: parts::place(v.city.as_deref(), v.country.as_deref()),
        device: format::or_dash(Some(
            &[v.device_type, v.browser].into_iter().flatten().collect::<Vec<_>>().join(" · "),
        )),
        visits: format!(
            "{}, {}",
            format::count(v.total_sessions, "session", "sessions"),
            format::count(v.total_pageviews, "pageview", "pageviews")
        ),
        profile_href: parts::visitor_href(site, &v.tracker_vid),
        name,
    };
    page.render().map_err(AppError::internal)
}
