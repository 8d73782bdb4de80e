//! `/leads`: the scored visitor list with its time range, hot-only and bot
//! filters, fifty to a page.

use askama::Template;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{
    page::{PageInput, Param},
    parts,
};
use crate::web::forms::flag;
use crate::{
    error::{AppError, AppResult},
    web::{bridge, format, layout::Layout},
};

pub const PAGE_SIZE: u64 = 50;
/// The list refuses cursors past a million rows.
const MAX_PAGE: u64 = 1_000_000 / PAGE_SIZE;

pub const PARAMS: [Param; 4] = [
    Param {
        name: "range",
        fill: |raw, variables| {
            variables.insert("range".to_owned(), raw.map_or(Value::Null, |text| json!(text)));
            Ok(())
        },
    },
    Param {
        name: "hot",
        fill: |raw, variables| {
            variables.insert("hot".to_owned(), json!(flag("hot", raw)?));
            Ok(())
        },
    },
    Param {
        name: "bots",
        fill: |raw, variables| {
            let bots = flag("bots", raw)?;
            variables.insert("filter".to_owned(), if bots { json!("bot") } else { Value::Null });
            Ok(())
        },
    },
    Param { name: "page", fill: page_variables },
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

/// `first` and the cursor of the row before the page (the list's cursors are positions).
fn page_variables(raw: Option<&str>, variables: &mut Map<String, Value>) -> AppResult<()> {
    let page = page_number(raw)?;
    variables.insert("first".to_owned(), json!(PAGE_SIZE));
    let after = (page > 1).then(|| ((page - 1) * PAGE_SIZE - 1).to_string());
    variables.insert("after".to_owned(), after.map_or(Value::Null, Value::String));
    Ok(())
}

/// The page's reads, under the `workspace` that scopes them.
#[derive(Deserialize)]
struct Answer {
    workspace: Scoped,
}

#[derive(Deserialize)]
struct Scoped {
    visitors: Connection,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Connection {
    total: u64,
    page_info: PageInfo,
    nodes: Vec<Lead>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PageInfo {
    has_next_page: bool,
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
    device_type: Option<String>,
    browser: Option<String>,
    last_seen: String,
    total_sessions: i64,
    total_pageviews: i64,
    total_time_seconds: i64,
}

pub struct Row {
    pub who: String,
    pub company: Option<String>,
    pub href: String,
    pub status: String,
    pub score: i64,
    pub hot: bool,
    pub place: String,
    pub device: String,
    pub sessions: String,
    pub pageviews: String,
    pub time: String,
    pub seen: String,
}

pub struct RangeOption {
    pub value: &'static str,
    pub label: &'static str,
    pub selected: bool,
}

#[derive(Template)]
#[template(path = "leads.html")]
struct LeadsPage {
    layout: Layout,
    site: Option<i64>,
    ranges: Vec<RangeOption>,
    hot: bool,
    bots: bool,
    total: String,
    showing: String,
    rows: Vec<Row>,
    previous: Option<String>,
    next: Option<String>,
}

const RANGES: [(&str, &str); 4] =
    [("24h", "Last 24 hours"), ("7d", "Last 7 days"), ("30d", "Last 30 days"), ("all", "All time")];

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let answer = bridge::decode::<Answer>(data)?.workspace;
    let range = input.param("range").unwrap_or("7d");
    let hot = flag("hot", input.param("hot"))?;
    let bots = flag("bots", input.param("bots"))?;
    let page = page_number(input.param("page"))?;
    let link = |page: u64| {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query.append_pair("range", range);
        if hot {
            query.append_pair("hot", "1");
        }
        if bots {
            query.append_pair("bots", "1");
        }
        if page > 1 {
            query.append_pair("page", &page.to_string());
        }
        if input.site_query.is_some() {
            query.append_pair("site", &site.to_string());
        }
        format!("/leads?{}", query.finish())
    };
    let connection = answer.visitors;
    let first_row = (page - 1) * PAGE_SIZE + 1;
    let shown = connection.nodes.len() as u64;
    let rows: Vec<Row> = connection
        .nodes
        .into_iter()
        .map(|lead| Row {
            who: lead.person.display_name.clone(),
            company: lead.person.company.clone(),
            href: parts::visitor_href(site, &lead.tracker_vid),
            status: lead.status,
            score: lead.score,
            hot: lead.hot,
            place: parts::place(lead.city.as_deref(), lead.country.as_deref()),
            device: [lead.device_type, lead.browser].into_iter().flatten().collect::<Vec<_>>().join(" · "),
            sessions: format::number(lead.total_sessions),
            pageviews: format::number(lead.total_pageviews),
            time: format::duration(lead.total_time_seconds),
            seen: format::ago(&lead.last_seen, input.now),
        })
        .collect();
    layout.title = "Leads".to_owned();
    let page_view = LeadsPage {
        layout,
        site: input.site_query.as_ref().map(|_| site),
        ranges: RANGES.iter().map(|(value, label)| RangeOption { value, label, selected: *value == range }).collect(),
        hot,
        bots,
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
        previous: (page > 1).then(|| link(page - 1)),
        next: connection.page_info.has_next_page.then(|| link(page + 1)),
    };
    page_view.render().map_err(AppError::internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_become_positions_in_the_list() {
        let cases = [
            (None, Some((50, Value::Null))),
            (Some("1"), Some((50, Value::Null))),
            (Some("2"), Some((50, json!("49")))),
            (Some("3"), Some((50, json!("99")))),
            (Some("20000"), Some((50, json!("999949")))),
            (Some("20001"), None),
            (Some("0"), None),
            (Some("-1"), None),
            (Some("two"), None),
        ];
        for (raw, expected) in cases {
            let mut variables = Map::new();
            let result = page_variables(raw, &mut variables)
                .ok()
                .map(|()| (variables["first"].as_u64().unwrap_or(0), variables["after"].clone()));
            assert_eq!(result, expected, "{raw:?}");
        }
    }
}
