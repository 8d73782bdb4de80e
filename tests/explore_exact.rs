//! Explore's figures equal a naive recount over the raw rows. Seeded random
//! traffic (sources, campaigns, devices, countries, custom events with
//! properties, bots, identifies) goes through the public collect endpoint
//! over 250 days, so a DST change of the site's zone lies inside the range.
//! Then `POST /api/v2/query` is asked every metric for every dimension, with
//! and without filters and comparisons, in UTC and in America/New_York, and
//! each answer is compared with what `common::explore_recount` counts from
//! the events, sessions and visitors tables by itself.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use chrono::{NaiveDate, TimeZone};
use chrono_tz::Tz;
use common::{
    Client, TestApp, apps_with,
    explore_recount::{
        self, ROLLED_EVENT_METRICS, ROLLED_METRICS, Rows, VISIT_METRICS, answered, filter_json, recount, rows,
        same_numbers,
    },
    rollup_recount,
    traffic::{BOT_UA, DESKTOP_UA, PHONE_UA, TABLET_UA},
};
use leadtrail::{
    auth::Viewer,
    config::TrustProxy,
    service::explore,
    time::{DAY_MS, MINUTE_MS, now_ms},
};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::json;

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
            for filter in [
                "none",
                "country",
                "country-name",
                "not-direct",
                "pricing-or-blog",
                "three",
                "has-done",
                "named",
                "not-named",
            ] {
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
            // What the per-value rollups answer: every dimension they keep,
            // over the whole range, over its later half (the visits its start
            // cuts are counted from their events) and over its earlier half
            // (events lie after it: read from the rows).
            let half = first + chrono::Duration::days(SPAN_DAYS / 2);
            let midnight = |date: NaiveDate| {
                zone.from_local_datetime(&date.and_hms_opt(0, 0, 0).unwrap()).earliest().unwrap().timestamp_millis()
            };
            for (start, end) in [(first, today), (half, today), (first, half)] {
                let span = (midnight(start), midnight(end + chrono::Duration::days(1)), start);
                let range = json!([start.to_string(), end.to_string()]);
                assert_rolled_answers(&client, &rows, site, zone, span, range).await;
            }

            // The previous period, recounted the same way.
            let body = json!({
                "site_id": site, "metrics": ["visitors", "pageviews", "bounce_rate"],
                "date_range": [half.to_string(), today.to_string()], "dimensions": ["visit:channel"],
                "include": { "comparisons": { "mode": "previous_period" } },
            });
            let reply = client.post("/api/v2/query", body).await;
            let reply = reply.expect(200);
            let days = (today - half).num_days() + 1;
            let earlier_first = half - chrono::Duration::days(days);
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
        let rows = explore_recount::rows(&app, site).await;
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

/// Every query the rollups answer, each compared with the recount: the
/// whole site and every visit dimension with `ROLLED_METRICS`, pages and
/// names with `ROLLED_EVENT_METRICS`, and each metric alone.
async fn assert_rolled_answers(
    client: &Client,
    rows: &Rows,
    site: i64,
    zone: Tz,
    span: (i64, i64, NaiveDate),
    range: serde_json::Value,
) {
    let mut cases: Vec<(Vec<&str>, Vec<&str>)> = vec![(vec![], ROLLED_METRICS.to_vec())];
    // One custom event name's conversions: by name alone, and with each visit
    // dimension its pairs are kept for (and one they are not, from the rows).
    let mut named: Vec<Vec<&str>> = vec![vec![]];
    named.extend(
        [
            "visit:source",
            "visit:channel",
            "visit:utm_source",
            "visit:utm_medium",
            "visit:utm_campaign",
            "visit:country",
        ]
        .map(|d| vec![d]),
    );
    cases.extend(VISIT_DIMENSIONS.iter().filter(|d| d.starts_with("visit:")).map(|d| {
        // The entry and exit pages keep no visitor rows: their visits only.
        let metrics = if d.ends_with("_page") { ROLLED_METRICS[1..7].to_vec() } else { ROLLED_METRICS.to_vec() };
        (vec![*d], metrics)
    }));
    cases.extend(["event:page", "event:name"].map(|d| (vec![d], ROLLED_EVENT_METRICS.to_vec())));
    for metric in ROLLED_METRICS {
        cases.push((vec![], vec![metric]));
        cases.push((vec!["visit:source"], vec![metric]));
    }
    // Visitors, pageviews and events per time bucket and over the range
    // (which may end in the past) come from the active hours.
    // And visits, bounces and their length per bucket from the visits' hours.
    for time in ["time:hour", "time:day", "time:week", "time:month"] {
        cases.push((vec![time], vec!["visitors", "pageviews", "events"]));
        cases.push((vec![time], vec!["visitors"]));
        cases.push((vec![time], ROLLED_METRICS[..7].to_vec()));
        cases.push((vec![time], vec!["bounce_rate"]));
    }
    cases.push((vec![], vec!["visitors", "pageviews", "events"]));
    // The tiles, also over a range that ends in the past (the previous period).
    cases.push((vec![], VISIT_METRICS.iter().copied().filter(|metric| *metric != "percentage").collect()));
    let cases = cases
        .into_iter()
        .map(|(dimensions, metrics)| (dimensions, metrics, "none"))
        .chain(named.into_iter().map(|dimensions| (dimensions, vec!["visitors", "events", "pageviews"], "signed-up")));
    for (dimensions, metrics, filter) in cases {
        let body = json!({ "site_id": site, "metrics": metrics, "date_range": range, "dimensions": dimensions,
                           "filters": explore_recount::filter_json(filter) });
        let got = answered(client.post("/api/v2/query", body).await.expect(200));
        let expected = recount(rows, &dimensions, &metrics, filter, zone, span);
        let case = format!("rolled {range} {dimensions:?} {metrics:?} {filter}");
        assert_eq!(expected.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>(), "{case}");
        for (key, values) in &expected {
            assert!(same_numbers(values, &got[key]), "{case} {key:?}: expected {values:?}, got {:?}", got[key]);
        }
    }
}

/// The writer keeps the per-value rollups equal to a recount of the rows
/// (bots, identifies, visits across hours, an erasure), and an answerable
/// query reads them: a stored hour changed by hand shows in its answer, and
/// not in an answer they cannot give (a filter).
#[tokio::test]
async fn the_per_value_rollups_equal_a_recount_and_answer_what_they_hold() {
    for app in apps_with(|config| config.trust_proxy = TrustProxy::Cloudflare).await {
        let (client, site) = app.user_with_site("Ro", "rollups.example").await;
        feed(&app, &client, site, 36).await;
        // One visit's events one request at a time, across an hour's end:
        // the writer writes its values' visitor rows once an hour, then only
        // new pages and names.
        let hour = 60 * MINUTE_MS;
        let at = (now_ms() / hour - 1) * hour - 15 * MINUTE_MS;
        for (n, (kind, page)) in
            [("pageview", "/"), ("pageview", "/pricing"), ("custom_event", "/pricing"), ("pageview", "/")]
                .into_iter()
                .enumerate()
        {
            let event = json!({ "site": site, "type": kind, "event_name": "signup", "tracker_vid": "one-by-one",
                                "url": format!("https://explore.example{page}?utm_source=ads"), "ts": at + n as i64 * 10 * MINUTE_MS });
            let reply = app.collect_with(json!({ "events": [event] }), DESKTOP_UA, &[("cf-ipcountry", "DE")]).await;
            assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
            app.state.writer.flush().await;
        }
        // A visit whose second event is older and moves its start into the
        // hour before: its hours move with its start, and its entry page to
        // the older event's.
        let edge = (now_ms() / hour - 2) * hour;
        for (offset, page) in [(5 * MINUTE_MS, "/back"), (-10 * MINUTE_MS, "/earlier")] {
            let event = json!({ "site": site, "type": "pageview", "tracker_vid": "moved-back",
                                "url": format!("https://explore.example{page}"), "ts": edge + offset });
            let reply = app.collect_with(json!({ "events": [event] }), DESKTOP_UA, &[("cf-ipcountry", "DE")]).await;
            assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
            app.state.writer.flush().await;
        }
        // A ping older than a visit's start, in the hour before: the start
        // moves, and the hour of its one human event stays where it was.
        for (kind, offset) in [("pageview", 5 * MINUTE_MS), ("ping", -10 * MINUTE_MS)] {
            let event = json!({ "site": site, "type": kind, "tracker_vid": "pinged-back",
                                "url": "https://explore.example/pinged", "ts": edge + offset });
            let reply = app.collect_with(json!({ "events": [event] }), DESKTOP_UA, &[("cf-ipcountry", "DE")]).await;
            assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
            app.state.writer.flush().await;
        }
        // Two visits of one visitor end on /a; then the later one goes on to
        // /b, so the visitor's /a exit row falls back to the earlier visit.
        for (ts, page) in [(at - 6 * hour, "/a"), (at - 3 * hour, "/a"), (at - 3 * hour + 5 * MINUTE_MS, "/b")] {
            let event = json!({ "site": site, "type": "pageview", "tracker_vid": "two-exits",
                                "url": format!("https://explore.example{page}"), "ts": ts });
            let reply = app.collect_with(json!({ "events": [event] }), DESKTOP_UA, &[("cf-ipcountry", "FR")]).await;
            assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
            app.state.writer.flush().await;
        }
        // A visit leaves /a in the batch that opens an older visit on /a:
        // the visitor's /a row is recounted from the batch's own visits.
        let first = json!({ "site": site, "type": "pageview", "tracker_vid": "batch-holds",
                            "url": "https://explore.example/a", "ts": at - 3 * hour });
        let then = [(at - 3 * hour + 5 * MINUTE_MS, "/b"), (at - 6 * hour, "/a")].map(|(ts, page)| {
            json!({ "site": site, "type": "pageview", "tracker_vid": "batch-holds",
                    "url": format!("https://explore.example{page}"), "ts": ts })
        });
        for events in [json!([first]), json!(then)] {
            let reply = app.collect_with(json!({ "events": events }), DESKTOP_UA, &[("cf-ipcountry", "FR")]).await;
            assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
            app.state.writer.flush().await;
        }
        // Then older visits of the same visitor, out of order: an hour before
        // every stored one, then one between two stored ones.
        for hours_before in [5, 3] {
            let event = json!({ "site": site, "type": "pageview", "tracker_vid": "one-by-one",
                                "url": "https://explore.example/old", "ts": at - hours_before * hour });
            let reply = app.collect_with(json!({ "events": [event] }), DESKTOP_UA, &[("cf-ipcountry", "DE")]).await;
            assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
            app.state.writer.flush().await;
        }
        let rows = rows(&app, site).await;
        rollup_recount::assert_rollups_match(&app, site, &rows, "after collect").await;
        // An existing database gains them from its rows: the migration's fill
        // stores what the writer stored.
        use migration::MigratorTrait;
        // Every migration from the value rollups' on, so later ones do not hide it.
        let names: Vec<String> = migration::Migrator::migrations().iter().map(|m| m.name().to_owned()).collect();
        let first = names.iter().position(|name| name == "m20261205_000001_create_value_rollups").unwrap();
        migration::Migrator::down(&app.state.db, Some(u32::try_from(names.len() - first).unwrap())).await.unwrap();
        migration::Migrator::up(&app.state.db, None).await.unwrap();
        rollup_recount::assert_rollups_match(&app, site, &rows, "after the migration's fill").await;
        // Hours an earlier writer left early (here all of them, an hour late)
        // are counted again from the events by the entry and exit pages' fill.
        use sea_orm::ConnectionTrait;
        let early = format!("UPDATE tracked_sessions SET human_hours = human_hours * 2 WHERE site_id = {site}");
        app.state.db.execute_unprepared(&early).await.unwrap();
        let since = names.iter().position(|name| name == "m20261211_000001_fill_visit_page_values").unwrap();
        migration::Migrator::down(&app.state.db, Some(u32::try_from(names.len() - since).unwrap())).await.unwrap();
        migration::Migrator::up(&app.state.db, None).await.unwrap();
        rollup_recount::assert_rollups_match(&app, site, &rows, "after the hours' recount").await;

        let aggregate = json!({ "site_id": site, "metrics": ["visits"], "date_range": "all" });
        let filtered = json!({ "site_id": site, "metrics": ["visits"], "date_range": "all",
                               "filters": [["is_not", "visit:country", ["XX"]]] });
        let visits = |reply: &serde_json::Value| reply["results"][0]["metrics"][0].as_i64().unwrap();
        let before = visits(client.post("/api/v2/query", aggregate.clone()).await.expect(200));
        // "all" is whole days: they are read from the daily rows.
        let first_hour = rollup_recount::hours_of(&rows).keys().find(|(code, _, _)| *code == 0).unwrap().2;
        let first_day = first_hour.div_euclid(DAY_MS) * DAY_MS;
        let bump = |by: i64| {
            format!(
                "UPDATE value_days SET visits = visits + {by} WHERE site_id = {site} AND dimension = 0 AND day = {first_day}"
            )
        };
        app.state.db.execute_unprepared(&bump(1000)).await.unwrap();
        let read = visits(client.post("/api/v2/query", aggregate.clone()).await.expect(200));
        let unread = visits(client.post("/api/v2/query", filtered.clone()).await.expect(200));
        app.state.db.execute_unprepared(&bump(-1000)).await.unwrap();
        assert_eq!(read, before + 1000, "the aggregate is read from the rollups");
        assert_eq!(unread, before, "a filtered query is read from the rows");
        // One custom event name by source is read from the name's pairs with
        // the visits' sources; two names are read from the rows.
        let (code, value, pair_hour) = rollup_recount::hours_of(&rows).into_keys().find(|key| key.0 == 101).unwrap();
        let named = |names: &[&str]| {
            json!({ "site_id": site, "metrics": ["events"], "date_range": "all", "dimensions": ["visit:source"],
                    "filters": [["is", "event:name", names]] })
        };
        let events = |reply: &serde_json::Value| {
            reply["results"].as_array().unwrap().iter().map(|row| row["metrics"][0].as_i64().unwrap()).sum::<i64>()
        };
        let before = events(client.post("/api/v2/query", named(&["signup"])).await.expect(200));
        let pair_day = pair_hour.div_euclid(DAY_MS) * DAY_MS;
        let bump = |by: i64| {
            format!(
                "UPDATE value_days SET events = events + {by} \
                 WHERE site_id = {site} AND dimension = {code} AND day = {pair_day} AND value = '{value}'"
            )
        };
        app.state.db.execute_unprepared(&bump(1000)).await.unwrap();
        let read = events(client.post("/api/v2/query", named(&["signup"])).await.expect(200));
        let unread = events(client.post("/api/v2/query", named(&["signup", "never-sent"])).await.expect(200));
        app.state.db.execute_unprepared(&bump(-1000)).await.unwrap();
        assert_eq!(read, before + 1000, "one name by source is read from the rollups");
        assert_eq!(unread, before, "two names are read from the rows");
        // Visitors by day are read from the active-hour counts.
        let daily =
            json!({ "site_id": site, "metrics": ["visitors"], "date_range": "all", "dimensions": ["time:day"] });
        let first_active =
            rollup_recount::active_hours_of(&rows).values().filter_map(|hours| hours.first()).min().copied().unwrap();
        let update = format!(
            "UPDATE active_hour_visitors SET visitors = visitors + {{by}} \
             WHERE site_id = {site} AND hour = {first_active} AND previous_hour = 0"
        );
        let (before, read) = summed_with_bump(&app, &client, &daily, &update).await;
        assert_eq!(read, before + 1000, "visitors by day are read from the active hours");
        // Visits by day from the visits' hours.
        let daily = json!({ "site_id": site, "metrics": ["visits"], "date_range": "all", "dimensions": ["time:day"] });
        let (_, _, first_visit_hour) =
            rollup_recount::hours_of(&rows).into_keys().find(|(code, value, _)| *code == 19 && value == "0").unwrap();
        let update = format!(
            "UPDATE value_hours SET visits = visits + {{by}} \
             WHERE site_id = {site} AND dimension = 19 AND hour = {first_visit_hour} AND value = '0'"
        );
        let (before, read) = summed_with_bump(&app, &client, &daily, &update).await;
        assert_eq!(read, before + 1000, "visits by day are read from the visits' hours");
        // Visitors by exit page from the visitors' exit page rows.
        let exits =
            json!({ "site_id": site, "metrics": ["visitors"], "date_range": "all", "dimensions": ["visit:exit_page"] });
        let ((_, _, page), exit_hour) =
            rollup_recount::visitor_values_of(&rows).into_iter().find(|((_, code, _), _)| *code == 16).unwrap();
        // A range of whole days reads the daily counts.
        let exit_day = exit_hour.div_euclid(DAY_MS) * DAY_MS;
        let update = format!(
            "UPDATE value_visitor_days SET visitors = visitors + {{by}} \
             WHERE site_id = {site} AND dimension = 16 AND day = {exit_day} AND value = '{page}'"
        );
        let (before, read) = summed_with_bump(&app, &client, &exits, &update).await;
        assert_eq!(read, before + 1000, "visitors by exit page are read from the visitor rows' days");
        // Visits by the visitor's status from the visits' rows by status.
        let statuses =
            json!({ "site_id": site, "metrics": ["visits"], "date_range": "all", "dimensions": ["visitor:status"] });
        // An hour not at midnight: whole days read its day's row, a range
        // that starts at it reads the hour itself (and the days after it).
        let (_, status, status_hour) = rollup_recount::hours_of(&rows)
            .into_keys()
            .find(|(code, _, hour)| *code == 20 && hour % DAY_MS != 0)
            .unwrap();
        let status_day = status_hour.div_euclid(DAY_MS) * DAY_MS;
        let update = format!(
            "UPDATE value_days SET visits = visits + {{by}} \
             WHERE site_id = {site} AND dimension = 20 AND day = {status_day} AND value = '{status}'"
        );
        let (before, read) = summed_with_bump(&app, &client, &statuses, &update).await;
        assert_eq!(read, before + 1000, "visits by status over whole days are read from the daily rows");
        let utc = |ms: i64| Tz::UTC.timestamp_millis_opt(ms).unwrap().format("%Y-%m-%dT%H:%M:%S%:z").to_string();
        let from_the_hour = json!({ "site_id": site, "metrics": ["visits"], "dimensions": ["visitor:status"],
                                    "date_range": [utc(status_hour), utc(now_ms() + DAY_MS)] });
        let update = format!(
            "UPDATE value_hours SET visits = visits + {{by}} \
             WHERE site_id = {site} AND dimension = 20 AND hour = {status_hour} AND value = '{status}'"
        );
        let (before, read) = summed_with_bump(&app, &client, &from_the_hour, &update).await;
        assert_eq!(read, before + 1000, "the hours before a range's first whole day are read from the hourly rows");
        let (from_rows, rolled) = {
            let mut unrolled = from_the_hour.clone();
            unrolled["filters"] = json!([["is_not", "visit:country", ["XX"]]]);
            let rolled = client.post("/api/v2/query", from_the_hour.clone()).await.expect(200).clone();
            (client.post("/api/v2/query", unrolled).await.expect(200).clone(), rolled)
        };
        assert_eq!(rolled["results"], from_rows["results"], "hours and days together equal the rows");
        // Pageviews by page over whole days from the pages' daily rows.
        let pages =
            json!({ "site_id": site, "metrics": ["pageviews"], "date_range": "all", "dimensions": ["event:page"] });
        let viewed = rows.events.iter().find(|e| !e.is_bot && e.event_type == "pageview").unwrap();
        let (page, page_day) = (viewed.page.clone(), viewed.timestamp.div_euclid(DAY_MS) * DAY_MS);
        let update = format!(
            "UPDATE page_days SET pageviews = pageviews + {{by}} \
             WHERE site_id = {site} AND day = {page_day} AND page = '{page}'"
        );
        let (before, read) = summed_with_bump(&app, &client, &pages, &update).await;
        assert_eq!(read, before + 1000, "pageviews by page over whole days are read from the pages' days");
        // The tiles' known people and hot leads, read beside the rollups, equal
        // the rows' (a filter that keeps everything reads the rows).
        for range in [json!("all"), json!("7d"), json!("30d")] {
            let tiles = json!({ "site_id": site, "metrics": ["identified_visitors", "hot_leads", "visitors"], "date_range": range });
            let mut unrolled = tiles.clone();
            unrolled["filters"] = json!([["is_not", "visit:country", ["XX"]]]);
            let rolled = client.post("/api/v2/query", tiles.clone()).await.expect(200).clone();
            let from_rows = client.post("/api/v2/query", unrolled).await.expect(200).clone();
            assert_eq!(rolled["results"], from_rows["results"], "{range}");
            // Where the visit copy answers, the tiles' people are counted over
            // it; without a copy (an instance still loading it), beside the
            // rollups from the visitors' rows, and the same.
            let org_id = site_model(&app, site).await.org_id;
            let viewer = Viewer::ApiKey { org_id, key_id: 0 };
            let uncopied = explore::run(&app.state.db, &viewer, Some(site), &tiles, (now_ms(), None)).await.unwrap();
            assert_eq!(
                serde_json::to_value(&uncopied.results).unwrap(),
                from_rows["results"],
                "{range} without a copy"
            );
            assert!(rolled["results"][0]["metrics"][0].as_i64().unwrap() > 0 || range != json!("all"), "{rolled}");
        }

        // A zone half an hour off UTC: a range from a UTC hour on has day
        // edges the hourly rollups do not hold, so its days come from the rows.
        client.put(&format!("/api/sites/{site}"), json!({ "timezone": "Asia/Kolkata" })).await.expect(200);
        let zone = Tz::Asia__Kolkata;
        let from = (rows.events.iter().map(|e| e.timestamp).min().unwrap() / DAY_MS) * DAY_MS;
        let to = now_ms() + DAY_MS;
        let instant = |ms: i64| zone.timestamp_millis_opt(ms).unwrap().format("%Y-%m-%dT%H:%M:%S%:z").to_string();
        let first_day = zone.timestamp_millis_opt(from).unwrap().date_naive();
        let body = json!({ "site_id": site, "metrics": ["visitors", "pageviews"], "dimensions": ["time:day"],
                           "date_range": [instant(from), instant(to)] });
        let got = answered(client.post("/api/v2/query", body).await.expect(200));
        let expected =
            recount(&rows, &["time:day"], &["visitors", "pageviews"], "none", zone, (from, to + 1000, first_day));
        assert_eq!(expected.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>(), "Kolkata days");
        for (key, values) in &expected {
            assert!(same_numbers(values, &got[key]), "Kolkata {key:?}: expected {values:?}, got {:?}", got[key]);
        }
        client.put(&format!("/api/sites/{site}"), json!({ "timezone": "UTC" })).await.expect(200);

        let busiest = rows.visitors.values().filter(|v| !v.is_bot).max_by_key(|v| v.total_events).unwrap();
        client.delete(&format!("/api/visitor/{}?siteId={site}", busiest.tracker_vid)).await.expect(200);
        let rows = explore_recount::rows(&app, site).await;
        rollup_recount::assert_rollups_match(&app, site, &rows, "after an erasure").await;
    }
}

/// The first metric of `query` summed over its rows, before and while one
/// rollup row is 1,000 higher (`update` adds `{by}` to it): the second is
/// 1,000 more only when the query reads that row.
async fn summed_with_bump(app: &TestApp, client: &Client, query: &serde_json::Value, update: &str) -> (i64, i64) {
    use sea_orm::ConnectionTrait;
    let summed = |reply: &serde_json::Value| {
        reply["results"].as_array().unwrap().iter().map(|row| row["metrics"][0].as_i64().unwrap()).sum::<i64>()
    };
    let before = summed(client.post("/api/v2/query", query.clone()).await.expect(200));
    app.state.db.execute_unprepared(&update.replace("{by}", "1000")).await.unwrap();
    let read = summed(client.post("/api/v2/query", query.clone()).await.expect(200));
    app.state.db.execute_unprepared(&update.replace("{by}", "-1000")).await.unwrap();
    (before, read)
}

/// The site's row, for its organisation.
async fn site_model(app: &TestApp, site: i64) -> entity::site::Model {
    use sea_orm::EntityTrait;
    entity::site::Entity::find_by_id(site).one(&app.state.db).await.unwrap().unwrap()
}
