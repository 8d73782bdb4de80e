//! The explorer's parts: what the address holds (range, dates, comparison,
//! filters, the panel in full) and the links that change one of them; the
//! tiles with their change, the chart's series, and each panel's rows, each
//! row a link that filters the whole page by its value.

use serde::Deserialize;
use serde_json::{Value, json};

use super::page::PageInput;
use crate::{
    enrich::geo::country_name,
    web::{chart, format},
};

#[derive(Deserialize)]
pub struct Comparison {
    pub metrics: Vec<Value>,
    pub change: Vec<Value>,
}

#[derive(Deserialize)]
pub struct Row {
    pub dimensions: Vec<Value>,
    pub metrics: Vec<Value>,
    pub comparison: Option<Comparison>,
}

#[derive(Deserialize)]
pub struct Result {
    pub results: Vec<Row>,
    pub meta: Value,
}

#[derive(Deserialize)]
pub struct Panel {
    pub group: String,
    pub title: String,
    pub dimension: String,
    pub metric: String,
    pub result: Result,
}

#[derive(Deserialize)]
pub struct Explorer {
    pub range: String,
    pub compared: bool,
    pub totals: Result,
    pub series: Result,
    pub panels: Vec<Panel>,
}

/// What the address says; links change one part and keep the rest.
pub struct State {
    pub range: String,
    pub from: String,
    pub to: String,
    pub compare_off: bool,
    pub filters: Vec<Value>,
    pub panel: Option<String>,
    site_query: Option<String>,
}

/// A filter in force, and the link that drops it.
pub struct Chip {
    pub label: String,
    pub remove_href: String,
}

pub struct Tile {
    pub label: &'static str,
    pub value: String,
    /// `+12%`, `−3 pts`; empty without a comparison.
    pub change: String,
    /// `up`, `down` or `flat`, for the colour; bounce rate going up is bad.
    pub direction: &'static str,
    pub previous: String,
}

pub struct PanelRow {
    pub label: String,
    pub href: String,
    pub value: String,
    pub share: String,
    pub width: f64,
}

pub struct PanelView {
    pub title: String,
    pub head_label: String,
    pub head_value: String,
    pub rows: Vec<PanelRow>,
    pub total_rows: u64,
    pub more_href: Option<String>,
    pub csv_href: String,
    pub paths: bool,
}

/// A dimension's name in a sentence: `Country is Germany`.
pub fn dimension_label(dimension: &str) -> &str {
    match dimension {
        "visit:channel" => "Channel",
        "visit:source" => "Source",
        "visit:referrer" => "Referrer",
        "visit:utm_source" => "UTM source",
        "visit:utm_medium" => "UTM medium",
        "visit:utm_campaign" => "UTM campaign",
        "visit:utm_content" => "UTM content",
        "visit:utm_term" => "UTM term",
        "event:page" => "Page",
        "visit:entry_page" => "Entry page",
        "visit:exit_page" => "Exit page",
        "visit:country" | "visit:country_name" => "Country",
        "visit:region" => "Region",
        "visit:city" => "City",
        "visit:device" => "Device",
        "visit:browser" => "Browser",
        "visit:os" => "Operating system",
        "event:name" => "Event",
        "event:goal" => "Goal",
        "visit:link" => "Tracking link",
        other => other,
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A value as a row shows it: countries by name.
fn shown(dimension: &str, value: &str) -> String {
    match (dimension, value) {
        ("visit:country", "") => "Unknown".to_owned(),
        ("visit:country", code) => country_name(code).to_owned(),
        (_, "") => "(none)".to_owned(),
        (_, value) => value.to_owned(),
    }
}

impl State {
    pub fn from_input(input: &PageInput) -> Self {
        let filters = input
            .param("filters")
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .and_then(|value| value.as_array().cloned())
            .unwrap_or_default();
        State {
            range: input.param("range").unwrap_or("30d").to_owned(),
            from: input.param("from").unwrap_or_default().to_owned(),
            to: input.param("to").unwrap_or_default().to_owned(),
            compare_off: input.param("compare") == Some("off"),
            filters,
            panel: input.param("panel").map(str::to_owned),
            site_query: input.site_query.clone(),
        }
    }

    pub fn filters_text(&self) -> String {
        if self.filters.is_empty() { String::new() } else { Value::Array(self.filters.clone()).to_string() }
    }

    /// This page's address with the panel and filters given (else kept).
    pub fn href(&self, panel: Option<&str>, filters: Option<&[Value]>) -> String {
        let filters = filters.unwrap_or(&self.filters);
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query.append_pair("range", &self.range);
        if self.range == "custom" {
            query.append_pair("from", &self.from);
            query.append_pair("to", &self.to);
        }
        if self.compare_off {
            query.append_pair("compare", "off");
        }
        if !filters.is_empty() {
            query.append_pair("filters", &Value::Array(filters.to_vec()).to_string());
        }
        if let Some(panel) = panel {
            query.append_pair("panel", panel);
        }
        let mut href = format!("/?{}", query.finish());
        if let Some(site) = &self.site_query {
            href.push('&');
            href.push_str(site);
        }
        href
    }

    /// The filters with `dimension is value` in place of any other `is` on it.
    fn with_filter(&self, dimension: &str, value: &str) -> Vec<Value> {
        let mut filters: Vec<Value> = self
            .filters
            .iter()
            .filter(|filter| !(filter[0] == json!("is") && filter[1] == json!(dimension)))
            .cloned()
            .collect();
        filters.push(json!(["is", dimension, [value]]));
        filters
    }

    pub fn chips(&self) -> Vec<Chip> {
        self.filters
            .iter()
            .enumerate()
            .map(|(at, filter)| {
                let rest: Vec<Value> =
                    self.filters.iter().enumerate().filter(|(i, _)| *i != at).map(|(_, f)| f.clone()).collect();
                let dimension = filter[1].as_str().unwrap_or_default();
                let values: Vec<String> = filter[2]
                    .as_array()
                    .map(|values| values.iter().map(|v| shown(dimension, &text(v))).collect())
                    .unwrap_or_default();
                let operator = filter[0].as_str().unwrap_or_default().replace('_', " ");
                let label = if filter[1].is_string() {
                    format!("{} {operator} {}", dimension_label(dimension), values.join(" or "))
                } else {
                    filter.to_string()
                };
                Chip { label, remove_href: self.href(None, Some(&rest)) }
            })
            .collect()
    }
}

fn number(value: &Value) -> i64 {
    value.as_f64().map_or(0, |n| n.round() as i64)
}

/// The tiles, from the totals query's one row (metrics in `TOTALS` order).
pub fn tiles(totals: &Result, compared: bool) -> Vec<Tile> {
    const LABELS: [&str; 8] = [
        "Visitors",
        "Visits",
        "Pageviews",
        "Views per visit",
        "Bounce rate",
        "Visit duration",
        "Identified",
        "Hot leads",
    ];
    let Some(row) = totals.results.first() else { return Vec::new() };
    let shown = |at: usize, value: &Value| match at {
        3 => format!("{:.2}", value.as_f64().unwrap_or_default()),
        4 => format!("{}%", number(value)),
        5 => format::duration(number(value)),
        _ => format::number(number(value)),
    };
    LABELS
        .iter()
        .enumerate()
        .map(|(at, label)| {
            let value = row.metrics.get(at).cloned().unwrap_or(Value::Null);
            let comparison = row.comparison.as_ref().filter(|_| compared);
            let change = comparison.and_then(|c| c.change.get(at)).and_then(Value::as_f64);
            let (change_text, direction) = match change {
                None => (String::new(), "flat"),
                Some(delta) => {
                    let unit = if at == 4 { " pts" } else { "%" };
                    let sign = if delta > 0.0 {
                        "+"
                    } else if delta < 0.0 {
                        "−"
                    } else {
                        "±"
                    };
                    let better = if at == 4 { delta < 0.0 } else { delta > 0.0 };
                    let direction = if delta == 0.0 {
                        "flat"
                    } else if better {
                        "up"
                    } else {
                        "down"
                    };
                    (format!("{sign}{}{unit}", delta.abs().round() as i64), direction)
                }
            };
            let previous = comparison.and_then(|c| c.metrics.get(at)).map(|v| shown(at, v)).unwrap_or_default();
            Tile { label, value: shown(at, &value), change: change_text, direction, previous }
        })
        .collect()
}

/// Short labels for the chart's buckets: the hour, or the day.
fn bucket_label(label: &str) -> String {
    if let Ok(hour) = chrono::NaiveDateTime::parse_from_str(label, "%Y-%m-%d %H:%M:%S") {
        return hour.format("%H:00").to_string();
    }
    chrono::NaiveDate::parse_from_str(label, "%Y-%m-%d")
        .map_or_else(|_| label.to_owned(), |day| day.format("%b %d").to_string())
}

/// Labels, visitors, pageviews and the previous period's visitors per
/// bucket; a bucket without traffic is zero.
pub fn series(result: &Result) -> (Vec<String>, Vec<i64>, Vec<i64>, Vec<i64>) {
    let labels: Vec<String> =
        result.meta["time_labels"].as_array().map(|labels| labels.iter().map(text).collect()).unwrap_or_default();
    let mut visitors = vec![0; labels.len()];
    let mut pageviews = vec![0; labels.len()];
    let mut previous = vec![0; labels.len()];
    for row in &result.results {
        let Some(at) = labels.iter().position(|label| row.dimensions.first().map(text).as_deref() == Some(label))
        else {
            continue;
        };
        visitors[at] = row.metrics.first().map_or(0, number);
        pageviews[at] = row.metrics.get(1).map_or(0, number);
        previous[at] = row.comparison.as_ref().and_then(|c| c.metrics.first()).map_or(0, number);
    }
    (labels.iter().map(|label| bucket_label(label)).collect(), visitors, pageviews, previous)
}

/// A panel's rows, each linking to the page filtered by its value.
pub fn panel_view(panel: &Panel, state: &State, site: i64, full: bool) -> PanelView {
    let values: Vec<i64> = panel.result.results.iter().map(|row| row.metrics.first().map_or(0, number)).collect();
    let widths = chart::bar_percentages(&values);
    let rows = panel
        .result
        .results
        .iter()
        .zip(widths)
        .map(|(row, width)| {
            let raw = row.dimensions.first().map(text).unwrap_or_default();
            let share = row.metrics.get(1).and_then(Value::as_f64).map(|p| format!("{p:.1}%")).unwrap_or_default();
            PanelRow {
                label: shown(&panel.dimension, &raw),
                href: state.href(None, Some(&state.with_filter(&panel.dimension, &raw))),
                value: format::number(row.metrics.first().map_or(0, number)),
                share,
                width,
            }
        })
        .collect::<Vec<_>>();
    let total_rows = panel.result.meta["total_rows"].as_u64().unwrap_or(rows.len() as u64);
    let mut csv = url::form_urlencoded::Serializer::new(String::new());
    csv.append_pair("siteId", &site.to_string())
        .append_pair("panel", &panel.dimension)
        .append_pair("format", "csv")
        .append_pair("range", &state.range);
    if state.range == "custom" {
        csv.append_pair("from", &state.from).append_pair("to", &state.to);
    }
    if !state.filters.is_empty() {
        csv.append_pair("filters", &state.filters_text());
    }
    let head_value = match panel.metric.as_str() {
        "visits" => "Visits",
        "events" => "Events",
        "clicks" => "Clicks",
        _ => "Visitors",
    };
    PanelView {
        title: panel.title.clone(),
        head_label: dimension_label(&panel.dimension).to_owned(),
        head_value: head_value.to_owned(),
        more_href: (!full && total_rows > rows.len() as u64).then(|| state.href(Some(&panel.dimension), None)),
        rows,
        total_rows,
        csv_href: format!("/api/explorer?{}", csv.finish()),
        paths: panel.dimension.ends_with("page"),
    }
}
