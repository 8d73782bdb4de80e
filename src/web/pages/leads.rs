//! `/leads`: the lead desk (design §19). The scored list with its search,
//! filters, sort and range in the address, fifty to a page with page
//! numbers and the total, a CSV export of every matching row, and the
//! site's saved views: save the filters as a view, rename or delete it.

use askama::Template;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{
    page::{FILTER, PageInput, Param},
    pager::{PageLink, pager},
    parts::{self, Choice, choices},
};
use crate::{
    auth::Role,
    enrich::source::CHANNELS,
    error::{AppError, AppResult},
    service::saved_views,
    web::{
        bridge, format,
        forms::{self, flag},
        layout::Layout,
    },
};

pub const PAGE_SIZE: u64 = 50;
/// The list refuses positions past a million rows.
const MAX_PAGE: u64 = 1_000_000 / PAGE_SIZE;

/// A text parameter passed on under the variable `$variable`; the document
/// checks it.
macro_rules! text_param {
    ($name:literal, $variable:literal, $label:literal) => {
        Param {
            name: $name,
            label: $label,
            fill: |raw, variables| {
                variables.insert($variable.to_owned(), raw.map_or(Value::Null, |text| json!(text)));
                Ok(())
            },
        }
    };
}

pub const PARAMS: [Param; 16] = [
    text_param!("range", "range", "Seen in"),
    text_param!("q", "search", "Search"),
    text_param!("sort", "sort", "Sort by"),
    text_param!("order", "order", "Order"),
    text_param!("status", "status", "Status"),
    text_param!("country", "country", "Country"),
    text_param!("channel", "channel", "Channel"),
    text_param!("campaign", "campaign", "Campaign"),
    text_param!("link", "link", "Tracking link"),
    text_param!("visited", "visited", "Visited page"),
    text_param!("account", "account", "Account"),
    Param {
        name: "minScore",
        label: "Score at least",
        fill: |raw, variables| {
            let score = match raw.map(str::trim) {
                None | Some("") => Value::Null,
                Some(text) => {
                    json!(text.parse::<i64>().map_err(|_| AppError::validation("minScore", "must be a whole number"))?)
                }
            };
            variables.insert("minScore".to_owned(), score);
            Ok(())
        },
    },
    Param {
        name: "hot",
        label: "Hot leads only",
        fill: |raw, variables| {
            variables.insert("hot".to_owned(), json!(flag("hot", raw)?));
            Ok(())
        },
    },
    Param {
        name: "form",
        label: "Submitted a form",
        fill: |raw, variables| {
            variables.insert("form".to_owned(), json!(flag("form", raw)?));
            Ok(())
        },
    },
    Param {
        name: "bots",
        label: "Bot traffic instead",
        fill: |raw, variables| {
            let bots = flag("bots", raw)?;
            variables.insert("filter".to_owned(), if bots { json!("bot") } else { Value::Null });
            Ok(())
        },
    },
    Param { name: "page", label: "Page", fill: page_variables },
];

/// The page number, 1 when absent.
pub fn page_number(raw: Option<&str>) -> AppResult<u64> {
    match raw {
        None => Ok(1),
        Some(text) => text
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|page| (1..=MAX_PAGE).contains(page))
            .ok_or_else(|| AppError::validation("page", format!("must be a page number from 1 to {MAX_PAGE}"))),
    }
}

/// `first` and the 1-based `page` of the list (the accounts list pages alike).
pub(super) fn page_variables(raw: Option<&str>, variables: &mut Map<String, Value>) -> AppResult<()> {
    variables.insert("first".to_owned(), json!(PAGE_SIZE));
    variables.insert("page".to_owned(), json!(page_number(raw)?));
    Ok(())
}

/// The page's reads, under the `workspace` that scopes them.
#[derive(Deserialize)]
struct Answer {
    workspace: Scoped,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Scoped {
    visitors: Connection,
    #[serde(default)]
    saved_views: Vec<SavedView>,
    org: Option<OrgRole>,
}

#[derive(Deserialize)]
struct OrgRole {
    role: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SavedView {
    id: String,
    name: String,
    query: String,
    can_manage: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Connection {
    total: u64,
    nodes: Vec<Lead>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Lead {
    tracker_vid: String,
    person: parts::Person,
    status: String,
    score: i64,
    hot: bool,
    country: Option<String>,
    city: Option<String>,
    last_seen: String,
    total_sessions: i64,
    total_pageviews: i64,
    total_time_seconds: i64,
    last_channel: Option<String>,
    last_campaign: Option<String>,
    last_page: Option<String>,
    account: Option<LeadAccount>,
}

#[derive(Deserialize)]
struct LeadAccount {
    key: String,
}

pub struct Row {
    pub who: String,
    pub company: Option<String>,
    /// The list narrowed to the visitor's account, when one is known.
    pub account_href: Option<String>,
    pub href: String,
    pub status: String,
    pub score: i64,
    pub hot: bool,
    pub channel: String,
    pub campaign: Option<String>,
    pub last_page: String,
    pub place: String,
    pub sessions: String,
    pub pageviews: String,
    pub time: String,
    pub seen: String,
}

/// What the filter form shows: the address's values.
pub struct Filters {
    pub q: String,
    pub country: String,
    pub campaign: String,
    pub link: String,
    pub visited: String,
    pub account: String,
    pub min_score: String,
    pub hot: bool,
    pub form: bool,
    pub bots: bool,
}

/// The view the page shows, when the address names one of the site's.
pub struct CurrentView {
    pub id: String,
    pub name: String,
    pub can_manage: bool,
    /// The filters on screen differ from the view's.
    pub changed: bool,
}

#[derive(Template)]
#[template(path = "leads.html")]
struct LeadsPage<'a> {
    layout: Layout,
    site: Option<i64>,
    state: &'a forms::FormState,
    notice: Option<&'static str>,
    filters: Filters,
    ranges: Vec<Choice>,
    sorts: Vec<Choice>,
    orders: Vec<Choice>,
    statuses: Vec<Choice>,
    channels: Vec<Choice>,
    total: String,
    showing: String,
    rows: Vec<Row>,
    pages: Vec<PageLink>,
    previous: Option<String>,
    next: Option<String>,
    export_href: String,
    /// This page as shown, where its forms post (a refusal shows it again).
    self_href: String,
    /// The filters as a saved view keeps them (canonical).
    view_query: String,
    view: Option<CurrentView>,
    can_save: bool,
    /// How many filters (not the range or the sort) narrow the list.
    active_filters: usize,
}

const SORTS: [(&str, &str); 5] = [
    ("score", "Score"),
    ("last_seen", "Last seen"),
    ("pageviews", "Pageviews"),
    ("time", "Time on site"),
    ("sessions", "Sessions"),
];
const ORDERS: [(&str, &str); 2] = [("desc", "Highest first"), ("asc", "Lowest first")];
const STATUSES: [(&str, &str); 3] = [("", "Anyone"), ("identified", "Identified"), ("anonymous", "Anonymous")];

/// The address's filters as the parameters of `GET /api/visitor`, for the
/// export link (`range` is `timeRange` there, `bots` is `filter=bot`).
fn export_href(site: i64, query: &str) -> String {
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    out.append_pair("siteId", &site.to_string());
    out.append_pair("format", "csv");
    for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
        match name.as_ref() {
            "range" => out.append_pair("timeRange", &value),
            "bots" => out.append_pair("filter", "bot"),
            _ => out.append_pair(&name, &value),
        };
    }
    format!("/api/visitor?{}", out.finish())
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let answer = bridge::decode::<Answer>(data)?.workspace;
    let state = &input.form;
    // A refused filter is dropped from what the page shows and keeps.
    let refused = (state.action == FILTER).then_some(state.field.as_str());
    let param = |name: &str| if refused == Some(name) { None } else { input.param(name) };
    let page = if refused == Some("page") { 1 } else { page_number(input.param("page"))? };

    // The filters in one canonical form: what a view saves and links keep.
    let mut raw = url::form_urlencoded::Serializer::new(String::new());
    for name in saved_views::PARAMETERS {
        if let Some(value) = param(name) {
            raw.append_pair(name, value);
        }
    }
    let view_query = saved_views::canonical_query(&raw.finish()).unwrap_or_default();
    let link = |page: u64| {
        let mut parts: Vec<String> = Vec::new();
        if !view_query.is_empty() {
            parts.push(view_query.clone());
        }
        if let Some(view) = input.param("view") {
            parts.push(format!("view={}", crate::web::nav::encode(view)));
        }
        if page > 1 {
            parts.push(format!("page={page}"));
        }
        if let Some(site_query) = &input.site_query {
            parts.push(site_query.clone());
        }
        if parts.is_empty() { "/leads".to_owned() } else { format!("/leads?{}", parts.join("&")) }
    };

    let connection = answer.visitors;
    let last_page = connection.total.div_ceil(PAGE_SIZE).clamp(1, MAX_PAGE);
    let first_row = (page - 1) * PAGE_SIZE + 1;
    let shown = connection.nodes.len() as u64;
    let rows: Vec<Row> = connection
        .nodes
        .into_iter()
        .map(|lead| Row {
            who: lead.person.display_name.clone(),
            company: lead.person.company.clone(),
            account_href: lead.account.map(|account| {
                let site_query = input.site_query.as_ref().map(|query| format!("&{query}")).unwrap_or_default();
                format!("/leads?account={}{site_query}", crate::web::nav::encode(&account.key))
            }),
            href: parts::visitor_href(site, &lead.tracker_vid),
            status: lead.status,
            score: lead.score,
            hot: lead.hot,
            channel: format::or_dash(lead.last_channel.as_deref()),
            campaign: lead.last_campaign.filter(|campaign| !campaign.trim().is_empty()),
            last_page: format::or_dash(lead.last_page.as_deref()),
            place: parts::place(lead.city.as_deref(), lead.country.as_deref()),
            sessions: format::number(lead.total_sessions),
            pageviews: format::number(lead.total_pageviews),
            time: format::duration(lead.total_time_seconds),
            seen: format::ago(&lead.last_seen, input.now),
        })
        .collect();

    let role = answer.org.as_ref().map_or(Role::Viewer, |org| Role::parse(&org.role));
    let view = input.param("view").and_then(|id| answer.saved_views.iter().find(|view| view.id == id)).map(|view| {
        CurrentView {
            id: view.id.clone(),
            name: view.name.clone(),
            can_manage: view.can_manage,
            changed: view.query != view_query,
        }
    });
    if let Some(view) = &view {
        layout.title = format!("{} · Leads", view.name);
    } else {
        layout.title = "Leads".to_owned();
    }
    let channel_options: Vec<(&'static str, &'static str)> =
        std::iter::once(("", "Any channel")).chain(CHANNELS.iter().map(|name| (*name, *name))).collect();
    let page_view = LeadsPage {
        layout,
        site: input.site_query.as_ref().map(|_| site),
        notice: forms::notice(input.param("done")),
        filters: Filters {
            q: param("q").unwrap_or_default().to_owned(),
            country: param("country").unwrap_or_default().to_owned(),
            campaign: param("campaign").unwrap_or_default().to_owned(),
            link: param("link").unwrap_or_default().to_owned(),
            visited: param("visited").unwrap_or_default().to_owned(),
            account: param("account").unwrap_or_default().to_owned(),
            min_score: param("minScore").unwrap_or_default().to_owned(),
            hot: flag("hot", param("hot")).unwrap_or(false),
            form: flag("form", param("form")).unwrap_or(false),
            bots: flag("bots", param("bots")).unwrap_or(false),
        },
        ranges: choices(&parts::LIST_RANGES, param("range").unwrap_or("7d")),
        sorts: choices(&SORTS, param("sort").unwrap_or("score")),
        orders: choices(&ORDERS, param("order").unwrap_or("desc")),
        statuses: choices(&STATUSES, param("status").unwrap_or("")),
        channels: choices(&channel_options, param("channel").unwrap_or("")),
        total: match connection.total {
            1 => "1 visitor".to_owned(),
            count => format!("{} visitors", format::number(count as i64)),
        },
        showing: if shown == 0 {
            String::new()
        } else {
            format!("{}–{}", format::number(first_row as i64), format::number((first_row + shown - 1) as i64))
        },
        rows,
        pages: if last_page > 1 { pager(page, last_page, link) } else { Vec::new() },
        previous: (page > 1).then(|| link(page - 1)),
        next: (page < last_page).then(|| link(page + 1)),
        export_href: export_href(site, &view_query),
        self_href: link(page),
        view_query,
        view,
        can_save: role >= Role::Member,
        active_filters: [
            "q", "status", "country", "channel", "campaign", "link", "visited", "account", "minScore", "hot", "form",
            "bots",
        ]
        .iter()
        .filter(|name| param(name).is_some_and(|value| !matches!(value, "0" | "false")))
        .count(),
        state,
    };
    page_view.render().map_err(AppError::internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_become_page_numbers_of_the_list() {
        let cases = [
            (None, Some(1)),
            (Some("1"), Some(1)),
            (Some("3"), Some(3)),
            (Some("20000"), Some(20_000)),
            (Some("20001"), None),
            (Some("0"), None),
            (Some("-1"), None),
            (Some("two"), None),
        ];
        for (raw, expected) in cases {
            let mut variables = Map::new();
            let result = page_variables(raw, &mut variables).ok().map(|()| variables["page"].as_u64().unwrap_or(0));
            assert_eq!(result, expected, "{raw:?}");
            if expected.is_some() {
                assert_eq!(variables["first"], json!(PAGE_SIZE));
            }
        }
    }

    #[test]
    fn the_export_link_speaks_the_api() {
        assert_eq!(
            export_href(4, "range=30d&q=acme+corp&bots=1&visited=%2Fdocs%2F*"),
            "/api/visitor?siteId=4&format=csv&timeRange=30d&q=acme+corp&filter=bot&visited=%2Fdocs%2F*"
        );
    }
}
