//! `/`: the explorer (design §17). Tiles with their change against the
//! previous period, a chart of visitors with the previous period dashed,
//! panels of sources, pages, locations, devices, events and links whose
//! rows filter the whole page, a range picker, and each panel in full with
//! its CSV. Range, comparison and filters live in the address, so a view
//! can be shared; the hottest leads stay below.

use askama::Template;
use serde::Deserialize;
use serde_json::Value;

use super::{
    explorer_view::{self, Chip, PanelView, State, Tile},
    page::PageInput,
    parts::{self, Choice, Nodes},
};
use crate::{
    error::{AppError, AppResult},
    web::{bridge, chart, format, forms::FormState, layout::Layout},
};

#[derive(Deserialize)]
struct Answer {
    workspace: Scoped,
}

#[derive(Deserialize)]
struct Scoped {
    explorer: Option<explorer_view::Explorer>,
    hottest: Nodes<Lead>,
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
    pub visitors: String,
    pub pageviews: String,
    pub previous: String,
}

#[derive(Template)]
#[template(path = "overview.html")]
struct OverviewPage<'a> {
    layout: Layout,
    state: &'a FormState,
    range_label: String,
    ranges: Vec<Choice>,
    custom: bool,
    from: String,
    to: String,
    compared: bool,
    hidden_filters: String,
    site: Option<String>,
    chips: Vec<Chip>,
    clear_href: Option<String>,
    tiles: Vec<Tile>,
    chart: chart::LineChart,
    series: Vec<SeriesRow>,
    groups: Vec<(String, Vec<PanelView>)>,
    full: Option<PanelView>,
    back_href: String,
    leads: Vec<LeadRow>,
    leads_href: String,
}

/// The ranges the picker offers, as Explore names them.
pub const RANGES: [(&str, &str); 12] = [
    ("day", "Today"),
    ("24h", "Last 24 hours"),
    ("7d", "Last 7 days"),
    ("28d", "Last 28 days"),
    ("30d", "Last 30 days"),
    ("91d", "Last 91 days"),
    ("month", "This month"),
    ("6mo", "Last 6 months"),
    ("12mo", "Last 12 months"),
    ("year", "This year"),
    ("all", "All time"),
    ("custom", "Custom range"),
];

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let answer = bridge::decode::<Answer>(data)?.workspace;
    let state = State::from_input(input);
    let explorer = answer.explorer.ok_or_else(|| AppError::not_found("site"))?;
    let range = explorer.range.clone();
    let range_label = match range.as_str() {
        "custom" => format!("{} to {}", state.from, state.to),
        named => RANGES.iter().find(|(value, _)| *value == named).map_or(named, |(_, label)| label).to_owned(),
    };
    let (labels, visitors, pageviews, previous) = explorer_view::series(&explorer.series);
    let mut lines =
        vec![("Visitors", "line-visitors", visitors.clone()), ("Pageviews", "line-pageviews", pageviews.clone())];
    if explorer.compared {
        lines.push(("Visitors, previous period", "line-previous", previous.clone()));
    }
    let chart = chart::line_chart(&labels, &lines);
    let series = labels
        .iter()
        .enumerate()
        .map(|(at, label)| SeriesRow {
            label: label.clone(),
            visitors: format::number(visitors[at]),
            pageviews: format::number(pageviews[at]),
            previous: if explorer.compared { format::number(previous[at]) } else { String::new() },
        })
        .collect();
    let full = match state.panel.as_deref() {
        Some(_) => explorer.panels.first().map(|panel| explorer_view::panel_view(panel, &state, site, true)),
        None => None,
    };
    let mut groups: Vec<(String, Vec<PanelView>)> = Vec::new();
    if full.is_none() {
        for panel in &explorer.panels {
            let view = explorer_view::panel_view(panel, &state, site, false);
            match groups.iter_mut().find(|(group, _)| *group == panel.group) {
                Some((_, views)) => views.push(view),
                None => groups.push((panel.group.clone(), vec![view])),
            }
        }
    }
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
    let chips = state.chips();
    let page = OverviewPage {
        layout,
        state: &input.form,
        ranges: parts::choices(&RANGES, &range),
        custom: range == "custom" && (state.from.is_empty() || state.to.is_empty()),
        from: state.from.clone(),
        to: state.to.clone(),
        compared: explorer.compared,
        hidden_filters: state.filters_text(),
        site: input.site_query.as_ref().map(|_| site.to_string()),
        clear_href: (!chips.is_empty()).then(|| state.href(None, Some(&[]))),
        chips,
        tiles: explorer_view::tiles(&explorer.totals, explorer.compared),
        chart,
        series,
        groups,
        back_href: state.href(None, None),
        full,
        leads,
        leads_href: input.with_site("/leads"),
        range_label,
    };
    page.render().map_err(AppError::internal)
}
