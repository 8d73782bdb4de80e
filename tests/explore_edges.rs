//! Explore reads a visit that lies inside the range (and inside one time
//! bucket) from the counts its row keeps, and counts only the visits that
//! an edge cuts from their events. These visits sit on every edge there is:
//! the range's start and end, a midnight and an hour inside it, a bot event
//! in a person's visit and a person's event in a visit a bot began, and the
//! retention cutoff after a purge. Every answer is compared with the recount
//! over the raw rows (`common::explore_recount`).
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use chrono::{DateTime, NaiveDate};
use chrono_tz::Tz;
use common::{
    Client, TestApp, apps,
    explore_recount::{ROLLED_METRICS, Rows, VISIT_METRICS, answered, filter_json, recount, rows, same_numbers},
    traffic::{BOT_UA, DESKTOP_UA},
};
use leadtrail::{
    service::privacy,
    time::{DAY_MS, HOUR_MS, MINUTE_MS, now_ms},
};
use serde_json::{Value, json};

/// One event: (minutes from the day's midnight, custom event or pageview, a bot's).
type Step = (i64, bool, bool);

/// The visits, each one visitor's: (visitor, referrer of its first event, its events).
fn visits() -> Vec<(&'static str, Option<&'static str>, Vec<Step>)> {
    vec![
        // Across the range's start (and a midnight): two events before it.
        (
            "cut",
            Some("https://www.google.com/"),
            vec![(-10, false, false), (-5, false, false), (5, false, false), (20, true, false)],
        ),
        // Across an hour.
        ("hour", None, vec![(655, false, false), (665, false, false), (670, true, false)]),
        // A person's visit with one event from a bot's agent in the middle.
        (
            "mixed",
            Some("https://news.ycombinator.com/"),
            vec![(120, false, false), (125, false, true), (130, true, false)],
        ),
        // A visit a bot's agent began, then a person's event.
        ("bot-first", None, vec![(180, false, true), (185, false, false)]),
        // Begun by a bot's agent before the range's end, with a person's
        // event only after it: no visit of the range.
        ("bot-to-end", None, vec![(1435, false, true), (1445, false, false)]),
        // Across the range's end.
        ("end", Some("https://www.google.com/"), vec![(1430, false, false), (1450, false, false), (1455, true, false)]),
        // Inside everything.
        ("inside", None, vec![(300, false, false), (310, false, false), (320, true, false)]),
        ("single", None, vec![(360, false, false)]),
        ("bot", None, vec![(420, false, true), (425, false, true)]),
    ]
}

async fn feed(app: &TestApp, client: &Client, site: i64, midnight: i64) {
    for (vid, referrer, steps) in visits() {
        for (at, (minutes, custom, bot)) in steps.into_iter().enumerate() {
            let ts = midnight + minutes * MINUTE_MS;
            let url = format!("https://edges.example/p{}", at % 2);
            let mut event = if custom {
                json!({ "site": site, "type": "custom_event", "event_name": "signup", "tracker_vid": vid, "url": url, "ts": ts })
            } else {
                json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": url, "ts": ts })
            };
            if at == 0
                && let Some(referrer) = referrer
            {
                event["referrer"] = json!(referrer);
            }
            let ua = if bot { BOT_UA } else { DESKTOP_UA };
            let reply = app.collect_with(json!({ "events": [event] }), ua, &[]).await;
            assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
            // One at a time: each event meets the visit the ones before it left.
            app.state.writer.flush().await;
        }
    }
    client.identify(json!({ "siteId": site, "tracker_vid": "inside", "email": "in@acme.example" })).await.expect(200);
}

/// Asks every range around the day for every dimension and filter, and
/// compares each answer with the recount.
async fn every_answer_equals_the_recount(client: &Client, rows: &Rows, day: NaiveDate, label: &str) {
    let zone = Tz::UTC;
    let midnight = |date: NaiveDate| date.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp_millis();
    let one = chrono::Duration::days(1);
    let ranges = [(day, day), (day - one, day), (day, day + one), (day - one, day + one)];
    let dimensions: [&[&str]; 5] = [&[], &["visit:source"], &["time:hour"], &["time:day"], &["visitor:status"]];
    for (first, last) in ranges {
        let span = (midnight(first), midnight(last + one), first);
        // The rolled metrics alone, unfiltered, are read from the per-value
        // rollups where the range allows, and visitors, pageviews and events
        // from the active hours (also per hour and day, for these past days).
        let metric_sets: [&[&str]; 4] =
            [&VISIT_METRICS, &ROLLED_METRICS, &["visitors", "pageviews", "events"], &VISIT_METRICS[..8]];
        for (dimensions, metrics) in dimensions.iter().flat_map(|d| metric_sets.map(|m| (*d, m))) {
            for filter in ["none", "not-direct"] {
                let body = json!({
                    "site_id": "edges.example", "metrics": metrics,
                    "date_range": [first.to_string(), last.to_string()],
                    "dimensions": dimensions, "filters": filter_json(filter),
                });
                let got = answered(client.post("/api/v2/query", body).await.expect(200));
                let expected = recount(rows, dimensions, metrics, filter, zone, span);
                let case = format!("{label} {first}..{last} {dimensions:?} {metrics:?} {filter}");
                assert_eq!(expected.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>(), "{case}");
                for (key, values) in &expected {
                    assert!(same_numbers(values, &got[key]), "{case} {key:?}: expected {values:?}, got {:?}", got[key]);
                }
            }
        }
    }
}

#[tokio::test]
async fn visits_cut_by_an_edge_count_only_their_events_inside_it() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Ed", "edges.example").await;
        let now = now_ms();
        let day = DateTime::from_timestamp_millis(now - 3 * DAY_MS).unwrap().date_naive();
        let midnight = day.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp_millis();
        feed(&app, &client, site, midnight).await;
        let before = rows(&app, site).await;
        // The cases are what they claim: every edge has its visit.
        let session_of = |vid: &str| {
            let visitor = before.visitors.values().find(|v| v.tracker_vid == vid).unwrap();
            before.sessions.values().filter(|s| s.visitor_id == visitor.id).cloned().collect::<Vec<_>>()
        };
        assert!(session_of("cut").iter().any(|s| s.started_at < midnight && s.ended_at >= midnight));
        assert!(session_of("hour").iter().any(|s| s.started_at / HOUR_MS != s.ended_at / HOUR_MS));
        assert!(session_of("mixed").iter().any(|s| !s.is_bot && s.human_event_count < s.event_count));
        assert!(session_of("bot-first").iter().any(|s| s.is_bot && s.human_event_count == 1));
        let to = midnight + DAY_MS;
        assert!(
            session_of("bot-to-end").iter().any(|s| s.started_at < to && s.ended_at >= to && s.human_event_count == 1)
        );
        every_answer_equals_the_recount(&client, &before, day, "stored").await;

        // A purge with the cutoff at the day's midnight takes the cut visit's
        // first two events and keeps its row.
        client.put(&format!("/api/sites/{site}"), json!({ "retentionDays": 3 })).await.expect(200);
        let purged = privacy::retention::purge(&app.state.db, midnight + 3 * DAY_MS).await.unwrap();
        assert_eq!(purged.events, 2, "{purged:?}");
        let after = rows(&app, site).await;
        let cut = after.sessions.values().find(|s| s.started_at < midnight).unwrap();
        assert_eq!((cut.human_event_count, cut.human_pageview_count), (2, 1), "recounted from the events left");
        every_answer_equals_the_recount(&client, &after, day, "after the purge").await;
        let all: Value = client
            .post("/api/v2/query", json!({ "site_id": site, "metrics": ["pageviews", "events"], "date_range": "all" }))
            .await
            .expect(200)
            .clone();
        let stored = after.events.iter().filter(|e| !e.is_bot).count();
        assert_eq!(all["results"][0]["metrics"][1], json!(stored), "{all}");
    }
}

/// The periods of a comparison read one snapshot, each from its own visits:
/// under a filter they are read from the rows, and on SQLite between the
/// first and last id of the visits a span may hold, taken once per span. The
/// earlier visits are written first, so the range's own ids do not hold
/// them, and the earlier period read with the range's ids would count none.
#[tokio::test]
async fn each_period_of_a_filtered_comparison_counts_its_own_visits() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Cy", "edges.example").await;
        let midnight = |date: NaiveDate| date.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp_millis();
        let first = DateTime::from_timestamp_millis(now_ms() - 6 * DAY_MS).unwrap().date_naive();
        let one = chrono::Duration::days(1);
        // The range is two days; its previous period the two before, whose
        // first day holds the earlier visits (a day before the range's reach).
        let earlier = first - one - one;
        feed(&app, &client, site, midnight(earlier)).await;
        feed(&app, &client, site, midnight(first)).await;
        let rows = rows(&app, site).await;
        let metrics = ["visitors", "visits", "pageviews", "bounce_rate"];
        for dimensions in [&[][..], &["visit:source"][..]] {
            for filter in ["not-direct", "signed-up"] {
                let body = json!({
                    "site_id": site, "metrics": metrics, "dimensions": dimensions, "filters": filter_json(filter),
                    "date_range": [first.to_string(), (first + one).to_string()],
                    "include": { "comparisons": { "mode": "previous_period" } },
                });
                let reply = client.post("/api/v2/query", body).await.expect(200).clone();
                let now = recount(
                    &rows,
                    dimensions,
                    &metrics,
                    filter,
                    Tz::UTC,
                    (midnight(first), midnight(first + one + one), first),
                );
                let before = recount(
                    &rows,
                    dimensions,
                    &metrics,
                    filter,
                    Tz::UTC,
                    (midnight(earlier), midnight(first), earlier),
                );
                let results = reply["results"].as_array().unwrap();
                assert_eq!(results.len(), now.len(), "{dimensions:?} {filter}: {reply}");
                for row in results {
                    let key: Vec<String> =
                        row["dimensions"].as_array().unwrap().iter().map(|d| d.as_str().unwrap().to_owned()).collect();
                    let case = format!("{dimensions:?} {filter} {key:?}: {row}");
                    assert!(same_numbers(&now[&key], row["metrics"].as_array().unwrap()), "{case}");
                    let old = before.get(&key).expect("every source of the range had visits in the earlier days too");
                    assert!(old[0].as_i64().unwrap() > 0, "{case}");
                    assert!(same_numbers(old, row["comparison"]["metrics"].as_array().unwrap()), "{case}");
                }
            }
        }
    }
}
