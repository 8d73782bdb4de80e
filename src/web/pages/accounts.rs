//! `/accounts` and `/accounts/<key>` (design §18): the companies behind the
//! site's visitors, ranked and searchable, and one company with its score's
//! reasons, its people and what an admin can change (rename, exclude, link
//! a network to it).

use askama::Template;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{
    leads,
    page::{PageInput, Param},
    pager::{PageLink, pager},
    parts::{self, Choice, choices},
    revenue_view,
};
use crate::{
    auth::Role,
    error::{AppError, AppResult},
    web::{
        bridge, format,
        forms::{self, Done, Form, FormInput, flag, input},
        layout::Layout,
        nav::{encode, encode_segment},
    },
};

use super::leads::PAGE_SIZE;

fn text(name: &'static str, raw: Option<&str>, variables: &mut Map<String, Value>) {
    variables.insert(name.to_owned(), raw.map(str::trim).filter(|t| !t.is_empty()).map_or(Value::Null, |t| json!(t)));
}

pub const PARAMS: [Param; 6] = [
    Param {
        name: "range",
        label: "Seen in",
        fill: |raw, variables| {
            text("range", raw, variables);
            Ok(())
        },
    },
    Param {
        name: "q",
        label: "Search",
        fill: |raw, variables| {
            text("search", raw, variables);
            Ok(())
        },
    },
    Param {
        name: "sort",
        label: "Sort by",
        fill: |raw, variables| {
            text("sort", raw, variables);
            Ok(())
        },
    },
    Param {
        name: "hot",
        label: "Hot accounts only",
        fill: |raw, variables| {
            variables.insert("hot".to_owned(), json!(flag("hot", raw)?));
            Ok(())
        },
    },
    Param {
        name: "excluded",
        label: "Excluded accounts instead",
        fill: |raw, variables| {
            variables.insert("excluded".to_owned(), json!(flag("excluded", raw)?));
            Ok(())
        },
    },
    Param { name: "page", label: "", fill: leads::page_variables },
];

/// The link to an account's page, keeping the chosen site.
pub fn account_href(key: &str, site_query: Option<&str>) -> String {
    match site_query {
        Some(site) => format!("/accounts/{}?{site}", encode_segment(key)),
        None => format!("/accounts/{}", encode_segment(key)),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListNode {
    key: String,
    name: String,
    score: i64,
    hot: bool,
    people: i64,
    visitors: i64,
    pageviews: i64,
    high_value_views: i64,
    form_submits: i64,
    last_seen: String,
    networks: Vec<String>,
}

#[derive(Deserialize)]
struct ListConnection {
    total: u64,
    nodes: Vec<ListNode>,
}

#[derive(Deserialize)]
struct ListWorkspace {
    accounts: ListConnection,
}

#[derive(Deserialize)]
struct ListAnswer {
    workspace: ListWorkspace,
}

pub struct AccountRow {
    pub name: String,
    pub key: String,
    pub href: String,
    pub score: i64,
    pub hot: bool,
    pub people: String,
    pub visitors: String,
    pub pageviews: String,
    pub intent: String,
    pub seen: String,
    pub networks: String,
}

const SORTS: [(&str, &str); 5] = [
    ("score", "Score"),
    ("last_seen", "Last seen"),
    ("people", "People"),
    ("visitors", "Visitors"),
    ("pageviews", "Page views"),
];

#[derive(Template)]
#[template(path = "accounts.html")]
struct AccountsPage<'a> {
    layout: Layout,
    site: Option<i64>,
    state: &'a forms::FormState,
    q: String,
    hot: bool,
    excluded: bool,
    ranges: Vec<Choice>,
    sorts: Vec<Choice>,
    total: String,
    rows: Vec<AccountRow>,
    pages: Vec<PageLink>,
    previous: Option<String>,
    next: Option<String>,
}

pub fn render_list(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let answer = bridge::decode::<ListAnswer>(data)?.workspace.accounts;
    let state = &input.form;
    let refused = (state.action == super::page::FILTER).then_some(state.field.as_str());
    let param = |name: &str| if refused == Some(name) { None } else { input.param(name) };
    let page = if refused == Some("page") { 1 } else { leads::page_number(input.param("page"))? };
    let site_query = input.site_query.as_deref();
    let link = |page: u64| {
        let mut out = url::form_urlencoded::Serializer::new(String::new());
        for name in ["range", "q", "sort", "hot", "excluded"] {
            if let Some(value) = param(name).filter(|v| !v.is_empty()) {
                out.append_pair(name, value);
            }
        }
        if page > 1 {
            out.append_pair("page", &page.to_string());
        }
        let mut query = out.finish();
        if let Some(site) = site_query {
            query = if query.is_empty() { site.to_owned() } else { format!("{query}&{site}") };
        }
        if query.is_empty() { "/accounts".to_owned() } else { format!("/accounts?{query}") }
    };
    let last_page = answer.total.div_ceil(PAGE_SIZE).max(1);
    let rows = answer
        .nodes
        .into_iter()
        .map(|node| AccountRow {
            href: account_href(&node.key, site_query),
            intent: format!(
                "{} high-value, {} {}",
                format::number(node.high_value_views),
                format::number(node.form_submits),
                if node.form_submits == 1 { "form" } else { "forms" }
            ),
            name: node.name,
            key: node.key,
            score: node.score,
            hot: node.hot,
            people: format::number(node.people),
            visitors: format::number(node.visitors),
            pageviews: format::number(node.pageviews),
            seen: format::ago(&node.last_seen, input.now),
            networks: node.networks.join(", "),
        })
        .collect();
    layout.title = "Accounts".to_owned();
    let view = AccountsPage {
        layout,
        site: input.site_query.as_ref().map(|_| site),
        state,
        q: param("q").unwrap_or_default().to_owned(),
        hot: flag("hot", param("hot")).unwrap_or(false),
        excluded: flag("excluded", param("excluded")).unwrap_or(false),
        ranges: choices(&parts::LIST_RANGES, param("range").unwrap_or("30d")),
        sorts: choices(&SORTS, param("sort").unwrap_or("score")),
        total: match answer.total {
            1 => "1 account".to_owned(),
            count => format!("{} accounts", format::number(count as i64)),
        },
        rows,
        pages: if last_page > 1 { pager(page, last_page, link) } else { Vec::new() },
        previous: (page > 1).then(|| link(page - 1)),
        next: (page < last_page).then(|| link(page + 1)),
    };
    view.render().map_err(AppError::internal)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Member {
    tracker_vid: String,
    person: parts::Person,
    status: String,
    score: i64,
    hot: bool,
    last_seen: String,
    total_pageviews: i64,
    last_page: Option<String>,
}

#[derive(Deserialize)]
struct Members {
    total: u64,
    nodes: Vec<Member>,
}

#[derive(Deserialize)]
struct Factor {
    points: i64,
    reason: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Detail {
    key: String,
    name: String,
    score: i64,
    hot: bool,
    people: i64,
    visitors: i64,
    sessions: i64,
    pageviews: i64,
    high_value_views: i64,
    form_submits: i64,
    engaged_seconds: i64,
    first_seen: String,
    last_seen: String,
    networks: Vec<String>,
    excluded: bool,
    renamed: bool,
    score_breakdown: Vec<Factor>,
    members: Members,
    conversions: i64,
    revenue: Vec<revenue_view::AmountData>,
}

#[derive(Deserialize)]
struct DetailOrg {
    role: String,
}

#[derive(Deserialize)]
struct DetailWorkspace {
    org: Option<DetailOrg>,
    account: Detail,
}

#[derive(Deserialize)]
struct DetailAnswer {
    workspace: DetailWorkspace,
}

pub struct MemberRow {
    pub who: String,
    pub href: String,
    pub status: String,
    pub score: i64,
    pub hot: bool,
    pub pageviews: String,
    pub last_page: String,
    pub seen: String,
}

#[derive(Template)]
#[template(path = "account_detail.html")]
struct DetailPage<'a> {
    layout: Layout,
    state: &'a forms::FormState,
    notice: Option<&'static str>,
    name: String,
    key: String,
    score: i64,
    hot: bool,
    reasons: Vec<(i64, String)>,
    facts: Vec<parts::Fact>,
    members: Vec<MemberRow>,
    members_total: String,
    leads_href: String,
    excluded: bool,
    renamed: bool,
    is_network: bool,
    can_manage: bool,
}

pub fn render_one(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let workspace = bridge::decode::<DetailAnswer>(data)?.workspace;
    let account = workspace.account;
    let role = workspace.org.as_ref().map_or(Role::Viewer, |org| Role::parse(&org.role));
    let mut facts = vec![
        parts::Fact { label: "Key", value: account.key.clone() },
        parts::Fact { label: "People", value: format::number(account.people) },
        parts::Fact { label: "Visitors", value: format::number(account.visitors) },
        parts::Fact { label: "Sessions", value: format::number(account.sessions) },
        parts::Fact { label: "Page views", value: format::number(account.pageviews) },
        parts::Fact { label: "High-value views", value: format::number(account.high_value_views) },
        parts::Fact { label: "Forms submitted", value: format::number(account.form_submits) },
        parts::Fact { label: "Engaged time", value: format::duration(account.engaged_seconds) },
        parts::Fact { label: "Conversions", value: format::number(account.conversions) },
        parts::Fact {
            label: "Revenue",
            value: if account.revenue.is_empty() { "none".to_owned() } else { revenue_view::amounts(&account.revenue) },
        },
        parts::Fact { label: "First seen", value: format::when(&account.first_seen) },
        parts::Fact { label: "Last seen", value: format::ago(&account.last_seen, input.now) },
    ];
    if !account.networks.is_empty() {
        facts.push(parts::Fact { label: "Networks", value: account.networks.join(", ") });
    }
    let members = account
        .members
        .nodes
        .into_iter()
        .map(|member| MemberRow {
            who: member.person.display_name,
            href: parts::visitor_href(site, &member.tracker_vid),
            status: member.status,
            score: member.score,
            hot: member.hot,
            pageviews: format::number(member.total_pageviews),
            last_page: format::or_dash(member.last_page.as_deref()),
            seen: format::ago(&member.last_seen, input.now),
        })
        .collect();
    let site_suffix = input.site_query.as_ref().map(|q| format!("&{q}")).unwrap_or_default();
    layout.title = format!("{} · Accounts", account.name);
    let view = DetailPage {
        layout,
        state: &input.form,
        notice: forms::notice(input.param("done")),
        leads_href: format!("/leads?range=all&account={}{site_suffix}", encode(&account.key)),
        members_total: match account.members.total {
            1 => "1 visitor".to_owned(),
            count => format!("{} visitors", format::number(count as i64)),
        },
        is_network: account.key.starts_with("asn:"),
        name: account.name,
        key: account.key,
        score: account.score,
        hot: account.hot,
        reasons: account.score_breakdown.into_iter().map(|f| (f.points, f.reason)).collect(),
        facts,
        members,
        excluded: account.excluded,
        renamed: account.renamed,
        can_manage: role >= Role::Admin,
    };
    view.render().map_err(AppError::internal)
}

const UPDATE_ACCOUNT: &str = include_str!("../documents/update_account.graphql");

/// Back to the account page the form was on (or, after linking a network,
/// the account it now counts in).
fn to_account(input: &FormInput, key: &str, done: &str) -> String {
    forms::back_to(input, &format!("/accounts/{}", encode_segment(key)), done)
}

pub const FORMS: [Form; 3] = [
    Form {
        action: "rename-account",
        document: UPDATE_ACCOUNT,
        variables: |input| {
            Ok(json!({ "siteId": input.site()?, "key": input.id()?, "input": { "name": input.text("name") } }))
        },
        inputs: &[input("name", "Name", "input.name")],
        done: Done::Redirect(|input, answer| {
            to_account(input, answer["updateAccount"]["key"].as_str().unwrap_or_default(), "account-saved")
        }),
    },
    Form {
        action: "exclude-account",
        document: UPDATE_ACCOUNT,
        variables: |input| {
            let excluded = input.flag("excluded")?;
            Ok(json!({ "siteId": input.site()?, "key": input.id()?, "input": { "excluded": excluded } }))
        },
        inputs: &[],
        done: Done::Redirect(|input, answer| {
            to_account(input, answer["updateAccount"]["key"].as_str().unwrap_or_default(), "account-saved")
        }),
    },
    Form {
        action: "link-network",
        document: UPDATE_ACCOUNT,
        variables: |input| {
            let network = input.text("network").to_lowercase();
            let network =
                if network.starts_with("asn:") { network } else { format!("asn:{}", network.trim_start_matches("as")) };
            Ok(json!({ "siteId": input.site()?, "key": network, "input": { "linkTo": input.id()? } }))
        },
        inputs: &[input("network", "Network", "key"), input("network", "Network", "input.linkTo")],
        done: Done::Redirect(|input, answer| {
            to_account(input, answer["updateAccount"]["key"].as_str().unwrap_or_default(), "network-linked")
        }),
    },
];
