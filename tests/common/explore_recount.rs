//! Explore's figures recounted by hand from the raw rows (events, sessions,
//! visitors): its own time zone arithmetic, its own filter evaluation, its
//! own rounding. `tests/explore_exact.rs` and `tests/explore_edges.rs`
//! compare `POST /api/v2/query` with it.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{Datelike, NaiveDate, TimeZone};
use chrono_tz::Tz;
use entity::{event, tracked_session, visitor};
use leadtrail::enrich::geo::country_name;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

use super::TestApp;

/// Every metric a whole-visit query answers, as the recount knows them.
pub const VISIT_METRICS: [&str; 9] = [
    "visitors",
    "visits",
    "pageviews",
    "events",
    "views_per_visit",
    "bounce_rate",
    "visit_duration",
    "identified_visitors",
    "percentage",
];

/// The metrics the writer's per-value rollups answer (design §17): a query
/// asking only these, unfiltered, by one visit dimension or none, over a
/// range past every event, is read from them.
pub const ROLLED_METRICS: [&str; 8] =
    ["visitors", "visits", "pageviews", "events", "views_per_visit", "bounce_rate", "visit_duration", "percentage"];
/// The same for an event dimension (pages, names).
pub const ROLLED_EVENT_METRICS: [&str; 4] = ["visitors", "pageviews", "events", "percentage"];

pub struct Rows {
    pub events: Vec<event::Model>,
    pub sessions: HashMap<i64, tracked_session::Model>,
    pub visitors: HashMap<i64, visitor::Model>,
}

pub async fn rows(app: &TestApp, site: i64) -> Rows {
    let db = &app.state.db;
    let events = event::Entity::find().filter(event::Column::SiteId.eq(site)).all(db).await.unwrap();
    let sessions =
        tracked_session::Entity::find().filter(tracked_session::Column::SiteId.eq(site)).all(db).await.unwrap();
    let visitors = visitor::Entity::find().filter(visitor::Column::SiteId.eq(site)).all(db).await.unwrap();
    Rows {
        events,
        sessions: sessions.into_iter().map(|s| (s.id, s)).collect(),
        visitors: visitors.into_iter().map(|v| (v.id, v)).collect(),
    }
}

fn text_or(value: &Option<String>, blank: &str) -> String {
    value.clone().filter(|v| !v.is_empty()).unwrap_or_else(|| blank.to_owned())
}

fn host_of(referrer: &str) -> Option<String> {
    let rest = referrer.split("://").nth(1)?;
    let host = rest.split(['/', '?', ':', '#']).next()?.to_lowercase();
    Some(host.strip_prefix("www.").unwrap_or(&host).to_owned())
}

/// What one event shows for a dimension, derived here from the raw rows.
fn value_of(rows: &Rows, e: &event::Model, dimension: &str, zone: Tz, first_day: NaiveDate) -> String {
    let s = &rows.sessions[&e.session_id];
    let v = &rows.visitors[&e.visitor_id];
    let local = zone.timestamp_millis_opt(e.timestamp).unwrap().naive_local();
    match dimension {
        "event:page" => e.page.clone(),
        "event:name" => {
            if e.event_type == "pageview" {
                "pageview".to_owned()
            } else {
                e.event_name.clone()
            }
        }
        "event:props:plan" => {
            let props: Value = serde_json::from_str(&e.props).unwrap();
            props.get("plan").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| "(none)".to_owned())
        }
        "visit:source" => match s.utm_source.clone().filter(|u| !u.is_empty()) {
            Some(source) => source,
            None => s.referrer.as_deref().and_then(host_of).unwrap_or_else(|| "Direct / None".to_owned()),
        },
        "visit:referrer" => text_or(&s.referrer, "Direct / None"),
        "visit:channel" => s.channel.clone(),
        "visit:utm_source" => text_or(&s.utm_source, "(not set)"),
        "visit:utm_medium" => text_or(&s.utm_medium, "(not set)"),
        "visit:utm_campaign" => text_or(&s.utm_campaign, "(not set)"),
        "visit:utm_term" => text_or(&s.utm_term, "(not set)"),
        "visit:device" => text_or(&s.device_type, "(not set)"),
        "visit:browser" => text_or(&s.browser, "(not set)"),
        "visit:os" => text_or(&s.os, "(not set)"),
        "visit:country" => text_or(&s.country, ""),
        "visit:country_name" => s.country.as_deref().map(country_name).unwrap_or_default().to_owned(),
        "visit:entry_page" => text_or(&s.entry_page, ""),
        "visit:exit_page" => text_or(&s.exit_page, ""),
        "visitor:status" => v.status.clone(),
        "visitor:account" => text_or(&v.account_key, "(none)"),
        "time:hour" => local.format("%Y-%m-%d %H:00:00").to_string(),
        "time:day" => local.date().to_string(),
        "time:week" => {
            let date = local.date();
            let monday = date - chrono::Duration::days(i64::from(date.weekday().num_days_from_monday()));
            monday.max(first_day).to_string()
        }
        "time:month" => local.date().with_day(1).unwrap().to_string(),
        other => panic!("no recount for {other}"),
    }
}

/// The filters tried, as sent and as this file evaluates them.
fn passes(rows: &Rows, e: &event::Model, filter: &str, zone: Tz, (from, to, first_day): (i64, i64, NaiveDate)) -> bool {
    let value = |dimension: &str| value_of(rows, e, dimension, zone, first_day);
    match filter {
        "none" => true,
        "country" => value("visit:country") == "DE",
        "country-name" => ["Germany", "United States"].contains(&value("visit:country_name").as_str()),
        "not-direct" => value("visit:source") != "Direct / None",
        "pricing-or-blog" => value("event:page").contains("pric") || value("event:page").starts_with("/blog"),
        "three" => {
            value("visit:device") != "Mobile"
                && ["winter", "spring"].contains(&value("visit:utm_campaign").as_str())
                && !value("visit:country").to_lowercase().contains("fr")
        }
        "named" => ["signup", "never-sent"].contains(&value("event:name").as_str()),
        "signed-up" => value("event:name") == "signup" && e.event_type == "custom_event",
        "not-named" => value("event:name") != "signup",
        "has-done" => rows.events.iter().any(|other| {
            other.session_id == e.session_id
                && !other.is_bot
                && other.timestamp >= from
                && other.timestamp < to
                && other.page == "/pricing"
        }),
        other => panic!("unknown filter {other}"),
    }
}

pub fn filter_json(filter: &str) -> Value {
    match filter {
        "none" => json!([]),
        "country" => json!([["is", "visit:country", ["DE"]]]),
        "country-name" => json!([["is", "visit:country_name", ["Germany", "United States"]]]),
        "not-direct" => json!([["is_not", "visit:source", ["Direct / None"]]]),
        "pricing-or-blog" => {
            json!([["or", [["contains", "event:page", ["pric"]], ["matches", "event:page", ["^/blog"]]]]])
        }
        "three" => json!([
            ["is_not", "visit:device", ["Mobile"]],
            ["is", "visit:utm_campaign", ["winter", "spring"]],
            ["not", ["contains", "visit:country", ["fr"], { "case_sensitive": false }]]
        ]),
        "has-done" => json!([["has_done", ["is", "event:page", ["/pricing"]]]]),
        // Custom events by name (read on their own index), and its negation.
        "named" => json!([["is", "event:name", ["signup", "never-sent"]]]),
        "signed-up" => json!([["is", "event:name", ["signup"]]]),
        "not-named" => json!([["not", ["is", "event:name", ["signup"]]]]),
        other => panic!("unknown filter {other}"),
    }
}

#[derive(Default, Clone)]
struct Tally {
    visitors: HashSet<i64>,
    identified: HashSet<i64>,
    sessions: HashSet<i64>,
    pageviews: i64,
    events: i64,
}

fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

/// The expected rows, keyed by their dimension labels, each with its metrics as JSON.
pub fn recount(
    rows: &Rows,
    dimensions: &[&str],
    metrics: &[&str],
    filter: &str,
    zone: Tz,
    span: (i64, i64, NaiveDate),
) -> BTreeMap<Vec<String>, Vec<Value>> {
    let (from, to, first_day) = span;
    let mut groups: BTreeMap<Vec<String>, Tally> = BTreeMap::new();
    let mut total: HashSet<i64> = HashSet::new();
    for e in rows.events.iter().filter(|e| !e.is_bot && e.timestamp >= from && e.timestamp < to) {
        if !passes(rows, e, filter, zone, span) {
            continue;
        }
        total.insert(e.visitor_id);
        let key: Vec<String> = dimensions.iter().map(|d| value_of(rows, e, d, zone, first_day)).collect();
        let tally = groups.entry(key).or_default();
        tally.visitors.insert(e.visitor_id);
        if rows.visitors[&e.visitor_id].status == "identified" {
            tally.identified.insert(e.visitor_id);
        }
        tally.sessions.insert(e.session_id);
        tally.pageviews += i64::from(e.event_type == "pageview");
        tally.events += 1;
    }
    if dimensions.is_empty() && groups.is_empty() {
        groups.insert(Vec::new(), Tally::default());
    }
    groups
        .into_iter()
        .map(|(key, tally)| {
            let visits = tally.sessions.len() as i64;
            let ratio = |part: f64| if visits == 0 { 0.0 } else { part / visits as f64 };
            let bounces = tally.sessions.iter().filter(|id| rows.sessions[id].event_count <= 1).count() as f64;
            let seconds: i64 = tally.sessions.iter().map(|id| rows.sessions[id].duration_seconds).sum();
            let values = metrics
                .iter()
                .map(|metric| match *metric {
                    "visitors" => json!(tally.visitors.len()),
                    "visits" => json!(visits),
                    "pageviews" => json!(tally.pageviews),
                    "events" => json!(tally.events),
                    "views_per_visit" => json!(round(ratio(tally.pageviews as f64), 2)),
                    "bounce_rate" => json!((ratio(bounces) * 100.0).round() as i64),
                    "visit_duration" => json!(ratio(seconds as f64).round() as i64),
                    "identified_visitors" => json!(tally.identified.len()),
                    "percentage" if total.is_empty() => Value::Null,
                    "percentage" => json!(round(tally.visitors.len() as f64 / total.len() as f64 * 100.0, 1)),
                    other => panic!("no recount for {other}"),
                })
                .collect();
            (key, values)
        })
        .collect()
}

pub fn answered(reply: &Value) -> BTreeMap<Vec<String>, Vec<Value>> {
    reply["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let key = row["dimensions"].as_array().unwrap().iter().map(|d| d.as_str().unwrap().to_owned()).collect();
            (key, row["metrics"].as_array().unwrap().clone())
        })
        .collect()
}

pub fn same_numbers(expected: &[Value], got: &[Value]) -> bool {
    expected.len() == got.len()
        && expected.iter().zip(got).all(|(a, b)| match (a.as_f64(), b.as_f64()) {
            (Some(a), Some(b)) => (a - b).abs() < 1e-9,
            _ => a == b,
        })
}
