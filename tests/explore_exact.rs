//! Explore's figures equal a naive recount over the raw rows. Seeded random
//! traffic (sources, campaigns, devices, countries, custom events with
//! properties, bots, identifies) goes through the public collect endpoint
//! over 250 days, so a DST change of the site's zone lies inside the range.
//! Then `POST /api/v2/query` is asked every metric for every dimension, with
//! and without filters and comparisons, in UTC and in America/New_York, and
//! each answer is compared with what this file counts from the events,
//! sessions and visitors tables by itself: its own time zone arithmetic,
//! its own filter evaluation, its own rounding.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{Datelike, NaiveDate, TimeZone};
use chrono_tz::Tz;
use common::{
    Client, TestApp, apps_with,
    traffic::{BOT_UA, DESKTOP_UA, PHONE_UA, TABLET_UA},
};
use entity::{event, tracked_session, visitor};
use leadtrail::{
    config::TrustProxy,
    enrich::geo::country_name,
    time::{DAY_MS, MINUTE_MS, now_ms},
};
use rand::{Rng, SeedableRng, rngs::StdRng};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

const PAGES: [&str; 6] = ["/", "/pricing", "/blog/rollups", "/blog/dst", "/docs", "/contact"];
const COUNTRIES: [&str; 4] = ["DE", "FR", "US", ""];
const UAS: [&str; 4] = [DESKTOP_UA, PHONE_UA, TABLET_UA, DESKTOP_UA];
const SPAN_DAYS: i64 = 250;

/// Where a visit comes from: a query string and a referrer.
fn origin(rng: &mut StdRng) -> (&'static str, Option<&'static str>) {
    match rng.random_range(0..6) {
        0 => ("?utm_source=newsletter&utm_medium=email&utm_campaign=winter", None),
        1 => ("?utm_source=google&utm_medium=cpc&utm_campaign=spring&utm_term=crm", None),
        2 => ("", Some("https://www.google.com/search?q=leadtrail")),
        3 => ("", Some("https://news.ycombinator.com/item?id=1")),
        _ => ("", None),
    }
}

async fn feed(app: &TestApp, client: &Client, site: i64, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let now = now_ms();
    for n in 0..60 {
        let vid = format!("x{seed}-{n}");
        let bot = rng.random_bool(0.1);
        let ua = if bot { BOT_UA } else { UAS[rng.random_range(0..UAS.len())] };
        for _ in 0..rng.random_range(1..=3) {
            let mut ts = now - rng.random_range(1..SPAN_DAYS) * DAY_MS - rng.random_range(0..DAY_MS);
            let (query, referrer) = origin(&mut rng);
            let mut events = Vec::new();
            for step in 0..rng.random_range(1..=5) {
                let page = PAGES[rng.random_range(0..PAGES.len())];
                let url = format!("https://explore.example{page}{}", if step == 0 { query } else { "" });
                let mut event = if step > 0 && rng.random_bool(0.25) {
                    let plan = ["free", "pro"][rng.random_range(0..2)];
                    let props = if rng.random_bool(0.7) { json!({ "plan": plan }) } else { json!({}) };
                    json!({ "site": site, "type": "custom_event", "event_name": "signup", "props": props,
                            "tracker_vid": vid, "url": url, "ts": ts })
                } else {
                    json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": url, "ts": ts })
                };
                if step == 0
                    && let Some(referrer) = referrer
                {
                    event["referrer"] = json!(referrer);
                }
                events.push(event);
                ts += rng.random_range(1..=9) * MINUTE_MS;
            }
            let country = COUNTRIES[rng.random_range(0..COUNTRIES.len())];
            let headers: &[(&str, &str)] = if country.is_empty() { &[] } else { &[("cf-ipcountry", country)] };
            let reply = app.collect_with(json!({ "events": events }), ua, headers).await;
            assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
        }
        if rng.random_bool(0.3) {
            client
                .identify(json!({ "siteId": site, "tracker_vid": vid, "email": format!("{vid}@acme-{}.com", n % 3) }))
                .await
                .expect(200);
        }
    }
    app.state.writer.flush().await;
}

struct Rows {
    events: Vec<event::Model>,
    sessions: HashMap<i64, tracked_session::Model>,
    visitors: HashMap<i64, visitor::Model>,
}

async fn rows(app: &TestApp, site: i64) -> Rows {
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

fn filter_json(filter: &str) -> Value {
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
fn recount(
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

fn answered(reply: &Value) -> BTreeMap<Vec<String>, Vec<Value>> {
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

fn same_numbers(expected: &[Value], got: &[Value]) -> bool {
    expected.len() == got.len()
        && expected.iter().zip(got).all(|(a, b)| match (a.as_f64(), b.as_f64()) {
            (Some(a), Some(b)) => (a - b).abs() < 1e-9,
            _ => a == b,
        })
}

const VISIT_DIMENSIONS: [&str; 16] = [
    "visit:source",
    "visit:referrer",
    "visit:channel",
    "visit:utm_source",
    "visit:utm_medium",
    "visit:utm_campaign",
    "visit:utm_term",
    "visit:device",
    "visit:browser",
    "visit:os",
    "visit:country",
    "visit:country_name",
    "visit:entry_page",
    "visit:exit_page",
    "visitor:status",
    "visitor:account",
];
const EVENT_DIMENSIONS: [&str; 3] = ["event:page", "event:name", "event:props:plan"];
const TIME_DIMENSIONS: [&str; 4] = ["time:hour", "time:day", "time:week", "time:month"];
const VISIT_METRICS: [&str; 9] = [
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
const EVENT_METRICS: [&str; 6] = ["visitors", "visits", "pageviews", "events", "identified_visitors", "percentage"];

#[tokio::test]
async fn every_metric_for_every_dimension_equals_a_recount() {
    for app in apps_with(|config| config.trust_proxy = TrustProxy::Cloudflare).await {
        let (client, site) = app.user_with_site("Ex", "explore.example").await;
        feed(&app, &client, site, 35).await;
        let rows = rows(&app, site).await;
        for zone_name in ["UTC", "America/New_York"] {
            client.put(&format!("/api/sites/{site}"), json!({ "timezone": zone_name })).await.expect(200);
            let zone: Tz = zone_name.parse().unwrap();
            let today = zone.timestamp_millis_opt(now_ms()).unwrap().date_naive();
            let first = today - chrono::Duration::days(SPAN_DAYS + 1);
            let from = zone.from_local_datetime(&first.and_hms_opt(0, 0, 0).unwrap()).earliest().unwrap();
            let to = zone.from_local_datetime(&(today + chrono::Duration::days(1)).and_hms_opt(0, 0, 0).unwrap());
            let span = (from.timestamp_millis(), to.earliest().unwrap().timestamp_millis(), first);
            let date_range = json!([first.to_string(), today.to_string()]);
            let mut cases: Vec<(Vec<&str>, &[&str])> = vec![(vec![], &VISIT_METRICS)];
            cases.extend(VISIT_DIMENSIONS.iter().map(|d| (vec![*d], &VISIT_METRICS[..])));
            cases.extend(EVENT_DIMENSIONS.iter().map(|d| (vec![*d], &EVENT_METRICS[..])));
            cases.extend(TIME_DIMENSIONS.iter().map(|d| (vec![*d], &VISIT_METRICS[..])));
            cases.push((vec!["visit:country", "time:month"], &VISIT_METRICS));
            cases.push((vec!["event:page", "visit:source"], &EVENT_METRICS));
            for filter in ["none", "country", "country-name", "not-direct", "pricing-or-blog", "three", "has-done"] {
                for (dimensions, metrics) in &cases {
                    // Hours over 250 days are many rows: once, unfiltered, is enough.
                    if dimensions == &vec!["time:hour"] && filter != "none" {
                        continue;
                    }
                    let body = json!({
                        "site_id": "explore.example", "metrics": metrics, "date_range": date_range,
                        "dimensions": dimensions, "filters": filter_json(filter),
                    });
                    let reply = client.post("/api/v2/query", body.clone()).await;
                    let reply = reply.expect(200);
                    let expected = recount(&rows, dimensions, metrics, filter, zone, span);
                    let got = answered(reply);
                    assert_eq!(
                        expected.keys().collect::<Vec<_>>(),
                        got.keys().collect::<Vec<_>>(),
                        "{zone_name} {filter} {dimensions:?}"
                    );
                    for (key, values) in &expected {
                        assert!(
                            same_numbers(values, &got[key]),
                            "{zone_name} {filter} {dimensions:?} {key:?}: expected {values:?}, got {:?}",
                            got[key]
                        );
                    }
                }
            }
            // Each metric alone (a statement reads only what its metrics need),
            // unfiltered and under a visit filter.
            let alone: [&[&str]; 4] = [&[], &["event:page"], &["event:name"], &["time:day"]];
            for (dimensions, filter) in alone.iter().flat_map(|d| [(d.to_vec(), "none"), (d.to_vec(), "country")]) {
                let event = dimensions.first().is_some_and(|d| d.starts_with("event:"));
                for metric in if event { &EVENT_METRICS[..] } else { &VISIT_METRICS[..] } {
                    let metrics = [*metric];
                    let body = json!({
                        "site_id": "explore.example", "metrics": metrics, "date_range": date_range,
                        "dimensions": dimensions, "filters": filter_json(filter),
                    });
                    let got = answered(client.post("/api/v2/query", body).await.expect(200));
                    let expected = recount(&rows, &dimensions, &metrics, filter, zone, span);
                    assert_eq!(expected.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>(), "{metric} alone");
                    for (key, values) in &expected {
                        assert!(
                            same_numbers(values, &got[key]),
                            "{metric} alone {dimensions:?} {key:?}: {values:?} vs {:?}",
                            got[key]
                        );
                    }
                }
            }
            // The previous period, recounted the same way.
            let half = first + chrono::Duration::days(SPAN_DAYS / 2);
            let body = json!({
                "site_id": site, "metrics": ["visitors", "pageviews", "bounce_rate"],
                "date_range": [half.to_string(), today.to_string()], "dimensions": ["visit:channel"],
                "include": { "comparisons": { "mode": "previous_period" } },
            });
            let reply = client.post("/api/v2/query", body).await;
            let reply = reply.expect(200);
            let days = (today - half).num_days() + 1;
            let earlier_first = half - chrono::Duration::days(days);
            let midnight = |date: NaiveDate| {
                zone.from_local_datetime(&date.and_hms_opt(0, 0, 0).unwrap()).earliest().unwrap().timestamp_millis()
            };
            let earlier = recount(
                &rows,
                &["visit:channel"],
                &["visitors", "pageviews", "bounce_rate"],
                "none",
                zone,
                (midnight(earlier_first), midnight(half), earlier_first),
            );
            for row in reply["results"].as_array().unwrap() {
                let key = vec![row["dimensions"][0].as_str().unwrap().to_owned()];
                let zeros = vec![json!(0), json!(0), json!(0)];
                let old = earlier.get(&key).unwrap_or(&zeros);
                assert!(
                    same_numbers(old, row["comparison"]["metrics"].as_array().unwrap()),
                    "{zone_name} {key:?}: {row}"
                );
            }
        }
        // Erasing a visitor takes them out of every figure at once.
        let busiest = rows.visitors.values().filter(|v| !v.is_bot).max_by_key(|v| v.total_events).unwrap();
        client.delete(&format!("/api/visitor/{}?siteId={site}", busiest.tracker_vid)).await.expect(200);
        let erased = busiest.tracker_vid.clone();
        let rows = self::rows(&app, site).await;
        assert!(rows.visitors.values().all(|v| v.tracker_vid != erased));
        let zone = Tz::America__New_York;
        let today = zone.timestamp_millis_opt(now_ms()).unwrap().date_naive();
        let first = today - chrono::Duration::days(SPAN_DAYS + 1);
        let midnight = |date: NaiveDate| {
            zone.from_local_datetime(&date.and_hms_opt(0, 0, 0).unwrap()).earliest().unwrap().timestamp_millis()
        };
        let span = (midnight(first), midnight(today + chrono::Duration::days(1)), first);
        for dimensions in [vec![], vec!["visit:source"], vec!["event:page"], vec!["time:month"]] {
            let event = dimensions.first().is_some_and(|d: &&str| d.starts_with("event:"));
            let metrics = if event { &EVENT_METRICS[..] } else { &VISIT_METRICS[..] };
            let range = json!([first.to_string(), today.to_string()]);
            let body = json!({ "site_id": site, "metrics": metrics, "date_range": range, "dimensions": dimensions });
            let reply = client.post("/api/v2/query", body).await;
            let got = answered(reply.expect(200));
            let expected = recount(&rows, &dimensions, metrics, "none", zone, span);
            assert_eq!(expected.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>(), "erased {dimensions:?}");
            for (key, values) in &expected {
                assert!(same_numbers(values, &got[key]), "erased {dimensions:?} {key:?}: {values:?} vs {:?}", got[key]);
            }
        }
    }
}
