//! Filtered whole-visit queries read a site's closed visits from the
//! instance's copy in memory (`visit_copy`, design §17). The copy must never
//! answer with rows a later write changed: a late event that grows a copied
//! visit, a new visit on a copied day, an erasure, and on PostgreSQL a write
//! taken by another instance. After each, every answer is compared with the
//! recount over the raw rows.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use chrono::{DateTime, NaiveDate};
use chrono_tz::Tz;
use common::{
    Client, TestApp, apps, apps_with,
    explore_recount::{answered, filter_json, recount, rows, same_numbers},
    postgres_instances,
    traffic::DESKTOP_UA,
};
use leadtrail::time::{DAY_MS, MINUTE_MS, now_ms};
use serde_json::json;

/// The metrics a visit's row holds: the copy answers these.
const METRICS: [&str; 7] =
    ["visitors", "visits", "pageviews", "events", "views_per_visit", "bounce_rate", "visit_duration"];

/// A custom event `signup` on `page`.
async fn send_signup(app: &TestApp, site: i64, vid: &str, ts: i64, page: &str) {
    let event = json!({
        "site": site, "type": "custom_event", "event_name": "signup", "tracker_vid": vid,
        "url": format!("https://copy.example{page}"), "ts": ts,
    });
    let reply = app.collect_with(json!({ "events": [event] }), DESKTOP_UA, &[]).await;
    assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
    app.state.writer.flush().await;
}

async fn send(app: &TestApp, site: i64, vid: &str, ts: i64, page: &str, referrer: Option<&str>) {
    let mut event = json!({
        "site": site, "type": "pageview", "tracker_vid": vid, "url": format!("https://copy.example{page}"), "ts": ts,
    });
    if let Some(referrer) = referrer {
        event["referrer"] = json!(referrer);
    }
    let reply = app.collect_with(json!({ "events": [event] }), DESKTOP_UA, &[]).await;
    assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
    app.state.writer.flush().await;
}

/// Every filtered whole-visit answer over the days, against the recount.
async fn answers_equal_the_recount(
    app: &TestApp,
    client: &Client,
    site: i64,
    (first, last): (NaiveDate, NaiveDate),
    label: &str,
) {
    let rows = rows(app, site).await;
    let midnight = |date: NaiveDate| date.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp_millis();
    let span = (midnight(first), midnight(last + chrono::Duration::days(1)), first);
    let mut cases: Vec<(&[&str], &[&str], &str)> = Vec::new();
    for dimensions in [&[][..], &["visit:source"][..], &["visit:entry_page"][..], &["time:day"][..]] {
        for filter in ["not-direct", "three"] {
            cases.push((dimensions, &METRICS, filter));
        }
    }
    // By an event's page or name, or filtered on one: read per event (the event copy).
    let counted = &["visitors", "visits", "pageviews", "events"][..];
    cases.extend([
        (&["event:page"][..], counted, "not-direct"),
        (&["event:name"][..], counted, "three"),
        (&["event:page"][..], counted, "pricing-or-blog"),
        (&["visit:source"][..], counted, "pricing-or-blog"),
        (&["time:day"][..], counted, "not-named"),
        (&[][..], counted, "named"),
        (&["visit:entry_page"][..], counted, "named"),
    ]);
    for (dimensions, metrics, filter) in cases {
        let body = json!({
            "site_id": site, "metrics": metrics, "dimensions": dimensions, "filters": filter_json(filter),
            "date_range": [first.to_string(), last.to_string()],
        });
        let got = answered(client.post("/api/v2/query", body).await.expect(200));
        let expected = recount(&rows, dimensions, metrics, filter, Tz::UTC, span);
        let case = format!("{label}: {dimensions:?} {filter}");
        assert_eq!(expected.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>(), "{case}");
        for (key, values) in &expected {
            assert!(same_numbers(values, &got[key]), "{case} {key:?}: expected {values:?}, got {:?}", got[key]);
        }
    }
}

/// Midnight (UTC) of the day `days` ago, and that day.
fn day_ago(days: i64) -> (i64, NaiveDate) {
    let day = DateTime::from_timestamp_millis(now_ms() - days * DAY_MS).unwrap().date_naive();
    (day.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp_millis(), day)
}

#[tokio::test]
async fn a_write_to_a_copied_day_is_seen_by_the_next_query() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Co", "copy.example").await;
        let (midnight, day) = day_ago(5);
        let days = (day - chrono::Duration::days(1), day + chrono::Duration::days(1));
        let google = Some("https://www.google.com/");
        send(&app, site, "a", midnight + 60 * MINUTE_MS, "/", google).await;
        send(&app, site, "a", midnight + 62 * MINUTE_MS, "/pricing", None).await;
        send_signup(&app, site, "a", midnight + 63 * MINUTE_MS, "/pricing").await;
        send(&app, site, "b", midnight + 120 * MINUTE_MS, "/blog", Some("https://news.ycombinator.com/")).await;
        send(&app, site, "c", midnight + 180 * MINUTE_MS, "/", None).await;
        // Across the next midnight: a visit of two days.
        send(&app, site, "d", midnight + DAY_MS - 5 * MINUTE_MS, "/", google).await;
        send(&app, site, "d", midnight + DAY_MS + 5 * MINUTE_MS, "/docs", None).await;
        // Today's visits are the tail the copy does not hold.
        send(&app, site, "e", now_ms() - MINUTE_MS, "/", google).await;
        send_signup(&app, site, "e", now_ms(), "/").await;
        answers_equal_the_recount(&app, &client, site, days, "first read").await;

        // A late event grows a copied visit: it is no longer a bounce.
        send(&app, site, "b", midnight + 125 * MINUTE_MS, "/blog/2", None).await;
        send_signup(&app, site, "b", midnight + 126 * MINUTE_MS, "/blog/2").await;
        answers_equal_the_recount(&app, &client, site, days, "a late event").await;

        // A new visit on a copied day.
        send(&app, site, "f", midnight + 300 * MINUTE_MS, "/", Some("https://duckduckgo.com/")).await;
        answers_equal_the_recount(&app, &client, site, days, "a new visit").await;

        // An erasure takes a copied visitor's visits.
        client.delete(&format!("/api/visitor/a?siteId={site}")).await.expect(200);
        answers_equal_the_recount(&app, &client, site, days, "an erasure").await;
        let whole = json!({
            "site_id": site, "metrics": ["visitors"], "filters": filter_json("not-direct"),
            "date_range": [days.0.to_string(), days.1.to_string()],
        });
        let reply = client.post("/api/v2/query", whole).await.expect(200).clone();
        assert_eq!(reply["results"][0]["metrics"][0], json!(3), "b, d and f: {reply}");
    }
}

/// How many of the instance's copies of `kind` (visits, events) have loaded.
async fn copies_loaded(app: &TestApp, kind: &str) -> u64 {
    let metrics = app.client().get("/metrics").await.text;
    let series = format!("leadtrail_explore_copy_loads_total{{kind=\"{kind}\",outcome=\"loaded\"}} ");
    metrics.lines().find_map(|line| line.strip_prefix(series.as_str())).map_or(0, |value| value.parse().unwrap())
}

/// Waits (ten seconds at most) until `loads` copies of each of `kinds` have loaded.
async fn wait_for(app: &TestApp, kinds: &[&str], loads: u64, label: &str) {
    for _ in 0..200 {
        let mut loaded = true;
        for kind in kinds {
            loaded &= copies_loaded(app, kind).await >= loads;
        }
        if loaded {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    for kind in kinds {
        assert_eq!(copies_loaded(app, kind).await, loads, "{label}: {kind} copies loaded");
    }
}

async fn wait_for_loads(app: &TestApp, loads: u64, label: &str) {
    wait_for(app, &["visits", "events"], loads, label).await;
}

/// With no wait, the first queries are answered from the rows while the
/// copies load behind them; once loaded, the next ones read them, and no
/// query loads them again until a write to a copied day.
#[tokio::test]
async fn the_copies_load_behind_the_first_query() {
    for app in apps_with(|config| config.explore_copy_wait_ms = 0).await {
        let (client, site) = app.user_with_site("Bg", "copy.example").await;
        let (midnight, day) = day_ago(3);
        let days = (day, day);
        send(&app, site, "a", midnight + 60 * MINUTE_MS, "/", Some("https://www.google.com/")).await;
        send(&app, site, "a", midnight + 61 * MINUTE_MS, "/pricing", None).await;
        send_signup(&app, site, "a", midnight + 62 * MINUTE_MS, "/pricing").await;
        send(&app, site, "b", midnight + 90 * MINUTE_MS, "/blog", Some("https://www.bing.com/")).await;
        assert_eq!(copies_loaded(&app, "visits").await, 0, "nothing asked for a copy yet");
        answers_equal_the_recount(&app, &client, site, days, "while the copies load").await;
        wait_for_loads(&app, 1, "after the first queries").await;
        answers_equal_the_recount(&app, &client, site, days, "from the copies").await;
        wait_for_loads(&app, 1, "read again, not loaded again").await;

        // A late event on the copied day: the next query loads them anew.
        send(&app, site, "b", midnight + 95 * MINUTE_MS, "/pricing", None).await;
        answers_equal_the_recount(&app, &client, site, days, "after a late event").await;
        wait_for_loads(&app, 2, "after a late event").await;
        answers_equal_the_recount(&app, &client, site, days, "from the new copies").await;
    }
}

/// A filter that keeps thousands of visitors: the copy counts the
/// identified and hot among them from the site's identified and nearly hot
/// visitors, not each visitor by id, and must agree with the rows (which
/// answer the first query, while the copy loads).
#[tokio::test]
async fn identified_and_hot_among_thousands_agree_with_the_rows() {
    for app in apps_with(|config| config.explore_copy_wait_ms = 0).await {
        let (client, site) = app.user_with_site("Th", "copy.example").await;
        let (midnight, day) = day_ago(3);
        // 2,400 visitors, one in ten direct; every seventh identified, and
        // others thrice on the pricing page (the highest stored score).
        for batch in 0..24 {
            let events: Vec<serde_json::Value> = (0..100)
                .flat_map(|n| {
                    let v = batch * 100 + n;
                    let ts = midnight + 3_600_000 + v * 1_000;
                    let mut landing = json!({
                        "site": site, "type": "pageview", "tracker_vid": format!("v{v}"),
                        "url": "https://copy.example/", "ts": ts,
                    });
                    if v % 10 != 0 {
                        landing["referrer"] = json!("https://www.google.com/");
                    }
                    let pricing = |after: i64| {
                        json!({
                            "site": site, "type": "pageview", "tracker_vid": format!("v{v}"),
                            "url": "https://copy.example/pricing", "ts": ts + after,
                        })
                    };
                    if v % 7 == 3 { vec![landing, pricing(100), pricing(200), pricing(300)] } else { vec![landing] }
                })
                .collect();
            for chunk in events.chunks(100) {
                let reply = app.collect_with(json!({ "events": chunk }), DESKTOP_UA, &[]).await;
                assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
            }
        }
        app.state.writer.flush().await;
        let identified: Vec<i64> = (0..2_400).filter(|v| v % 7 == 0).collect();
        for v in &identified {
            let body = json!({ "siteId": site, "tracker_vid": format!("v{v}"), "email": format!("p{v}@example.com") });
            client.identify(body).await.expect(200);
        }
        // Hot only with the points of a recent visit: above every stored score.
        let highest = rows(&app, site).await.visitors.values().map(|visitor| visitor.score).max().unwrap();
        let threshold = client
            .graphql(
                "mutation($s: Int!, $t: Int!) { updateSite(id: $s, input: { hotThreshold: $t }) { hotThreshold } }",
                json!({ "s": site, "t": highest + 2 }),
            )
            .await;
        assert_eq!(threshold["data"]["updateSite"]["hotThreshold"], highest + 2, "{threshold}");
        let body = json!({
            "site_id": site, "metrics": ["visitors", "identified_visitors", "hot_leads"],
            "filters": [["is_not", "visit:source", ["Direct / None"]]], "date_range": [day.to_string(), day.to_string()],
        });
        let from_rows = client.post("/api/v2/query", body.clone()).await.expect(200)["results"].clone();
        wait_for(&app, &["visits"], 1, "after the first query").await;
        let from_copy = client.post("/api/v2/query", body).await.expect(200)["results"].clone();
        assert_eq!(from_rows, from_copy, "the rows and the copy");
        let figures: Vec<i64> =
            from_copy[0]["metrics"].as_array().unwrap().iter().map(|n| n.as_i64().unwrap()).collect();
        let expected_identified = identified.iter().filter(|v| *v % 10 != 0).count() as i64;
        assert_eq!(figures[..2], [2_160, expected_identified], "{from_copy}");
        assert!(figures[2] > 0, "the pricing page's visitors are hot: {from_copy}");
    }
}

/// The visitors at each step of the funnel Docs then Pricing, one visit, 30 days.
async fn funnel_visitors(client: &Client, site: i64) -> Vec<i64> {
    let body = json!({ "site_id": site, "steps": ["Docs", "Pricing"], "date_range": "30d" });
    let reply = client.post("/api/v2/funnel", body).await.expect(200).clone();
    reply["steps"].as_array().unwrap().iter().map(|step| step["visitors"].as_i64().unwrap()).collect()
}

async fn make_funnel_goals(client: &Client, site: i64) {
    for goal in [json!({ "name": "Docs", "pagePath": "/docs*" }), json!({ "name": "Pricing", "pagePath": "/pricing" })]
    {
        let made = client
            .graphql(
                "mutation($s: Int!, $i: GoalInput!) { createGoal(siteId: $s, input: $i) { id } }",
                json!({ "s": site, "i": goal }),
            )
            .await;
        assert!(made["data"]["createGoal"]["id"].is_string(), "{made}");
    }
}

/// A funnel reads its step events from the instance's event copy: a late
/// event completing a copied visit's way through, and an erasure, are in
/// the next report.
#[tokio::test]
async fn a_funnel_sees_a_write_to_a_copied_day() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Fu", "copy.example").await;
        make_funnel_goals(&client, site).await;
        let (midnight, _) = day_ago(5);
        send(&app, site, "a", midnight + 60 * MINUTE_MS, "/docs/start", None).await;
        send(&app, site, "a", midnight + 62 * MINUTE_MS, "/pricing", None).await;
        send(&app, site, "b", midnight + 120 * MINUTE_MS, "/docs", None).await;
        // In the tail: today's.
        send(&app, site, "c", now_ms() - 3 * MINUTE_MS, "/docs/api", None).await;
        send(&app, site, "c", now_ms() - 2 * MINUTE_MS, "/pricing", None).await;
        assert_eq!(funnel_visitors(&client, site).await, [3, 2], "first read");

        send(&app, site, "b", midnight + 125 * MINUTE_MS, "/pricing", None).await;
        assert_eq!(funnel_visitors(&client, site).await, [3, 3], "a late event");

        // Pricing before Docs is no way through.
        send(&app, site, "d", midnight + 200 * MINUTE_MS, "/pricing", None).await;
        send(&app, site, "d", midnight + 201 * MINUTE_MS, "/docs", None).await;
        assert_eq!(funnel_visitors(&client, site).await, [4, 3], "a new visit, out of order");

        send(&app, site, "e", now_ms() - MINUTE_MS, "/docs", None).await;
        send(&app, site, "e", now_ms(), "/pricing", None).await;
        assert_eq!(funnel_visitors(&client, site).await, [5, 4], "a new visit in the tail");

        client.delete(&format!("/api/visitor/a?siteId={site}")).await.expect(200);
        assert_eq!(funnel_visitors(&client, site).await, [4, 3], "an erasure");
    }
}

/// One instance reads (and keeps) the copy; another takes a late event for
/// a copied visit; the first answers with it at once.
#[tokio::test]
async fn a_write_through_another_instance_is_seen_by_the_next_query() {
    let Some(instances) = postgres_instances(2).await else {
        eprintln!("SKIPPED: the many-instances test needs TEST_DATABASE_URL (PostgreSQL)");
        return;
    };
    let (reader, writer) = (&instances[0], &instances[1]);
    let (client, site) = reader.user_with_site("Cx", "copy.example").await;
    let (midnight, day) = day_ago(4);
    let days = (day, day);
    send(writer, site, "a", midnight + 60 * MINUTE_MS, "/", Some("https://www.google.com/")).await;
    send(writer, site, "b", midnight + 90 * MINUTE_MS, "/", Some("https://www.bing.com/")).await;
    make_funnel_goals(&client, site).await;
    send(writer, site, "b", midnight + 91 * MINUTE_MS, "/docs", None).await;
    answers_equal_the_recount(reader, &client, site, days, "first read").await;
    assert_eq!(funnel_visitors(&client, site).await, [1, 0], "first read");
    send(writer, site, "a", midnight + 65 * MINUTE_MS, "/pricing", None).await;
    send(writer, site, "b", midnight + 92 * MINUTE_MS, "/pricing", None).await;
    send(writer, site, "c", midnight + 95 * MINUTE_MS, "/", Some("https://www.bing.com/")).await;
    answers_equal_the_recount(reader, &client, site, days, "after the other instance's writes").await;
    assert_eq!(funnel_visitors(&client, site).await, [1, 1], "after the other instance's writes");

    // Today's visits, the tail, written through the other instance between reads.
    let (now, days) = (now_ms(), (day, day_ago(0).1));
    send(writer, site, "d", now - 9 * MINUTE_MS, "/", Some("https://www.google.com/")).await;
    answers_equal_the_recount(reader, &client, site, days, "a visit today").await;
    send(writer, site, "d", now - 8 * MINUTE_MS, "/pricing", None).await;
    send(writer, site, "e", now - 7 * MINUTE_MS, "/docs", Some("https://www.bing.com/")).await;
    answers_equal_the_recount(reader, &client, site, days, "today's visit grows, another begins").await;
    assert!(tail_reads(reader, "visits", "refreshed").await >= 1, "the reader refreshed its tail");
}

/// An engagement ping of `vid`'s open visit at `ts`.
async fn send_ping(app: &TestApp, site: i64, vid: &str, ts: i64) {
    let ping = json!({
        "site": site, "type": "ping", "tracker_vid": vid, "url": "https://copy.example/", "ts": ts, "engaged_ms": 30_000,
    });
    let reply = app.collect_with(json!({ "events": [ping] }), DESKTOP_UA, &[]).await;
    assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
    app.state.writer.flush().await;
}

/// How many tails of `kind` (visits, events) were read `how` (`read` whole,
/// `refreshed` from what was written since, or `read_again` whole).
async fn tail_reads(app: &TestApp, kind: &str, how: &str) -> u64 {
    let metrics = app.client().get("/metrics").await.text;
    let series = format!("leadtrail_explore_copy_tail_reads_total{{kind=\"{kind}\",how=\"{how}\"}} ");
    metrics.lines().find_map(|line| line.strip_prefix(series.as_str())).map_or(0, |value| value.parse().unwrap())
}

/// A live site's tail (what began since the copy's end) moves with every
/// event: each next query takes in what was written since, a new visit, a
/// visit that grew, a bot's event, an event at the instant of another,
/// without reading the tail whole again, and answers as the rows do.
#[tokio::test]
async fn a_live_sites_tail_takes_in_what_was_written_since() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Live", "copy.example").await;
        let (midnight, day) = day_ago(3);
        let today = day_ago(0).1;
        let days = (day, today);
        let google = Some("https://www.google.com/");
        send(&app, site, "a", midnight + 60 * MINUTE_MS, "/", google).await;
        send(&app, site, "a", midnight + 62 * MINUTE_MS, "/pricing", None).await;
        let now = now_ms();
        send(&app, site, "b", now - 20 * MINUTE_MS, "/", google).await;
        send(&app, site, "c", now - 10 * MINUTE_MS, "/blog", Some("https://news.ycombinator.com/")).await;
        answers_equal_the_recount(&app, &client, site, days, "first read").await;
        wait_for_loads(&app, 1, "first read").await;
        let read = (tail_reads(&app, "visits", "read").await, tail_reads(&app, "events", "read").await);

        // (what is written, its label): each is followed by every query.
        let steps: [(&str, i64, &str, Option<&str>, &str); 5] = [
            ("d", now - 5 * MINUTE_MS, "/", Some("https://duckduckgo.com/"), "a new visit"),
            ("b", now - 19 * MINUTE_MS, "/docs", None, "a visit grows: no longer a bounce"),
            ("c", now - 10 * MINUTE_MS, "/pricing", None, "an event at the instant of another"),
            ("e", now - 15 * MINUTE_MS, "/late", google, "a new visit begun before the last"),
            ("d", now - 4 * MINUTE_MS, "/pricing", None, "a visit grows again"),
        ];
        for (vid, at, page, referrer, label) in steps {
            send(&app, site, vid, at, page, referrer).await;
            answers_equal_the_recount(&app, &client, site, days, label).await;
        }
        let bot = json!({ "site": site, "type": "pageview", "tracker_vid": "bot", "url": "https://copy.example/", "ts": now });
        let reply = app.collect_with(json!({ "events": [bot] }), common::traffic::BOT_UA, &[]).await;
        assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
        app.state.writer.flush().await;
        send_signup(&app, site, "b", now - 18 * MINUTE_MS, "/docs").await;
        answers_equal_the_recount(&app, &client, site, days, "a bot's event and a signup").await;
        // An engagement ping stores no event: it moves its visit's end.
        send_ping(&app, site, "c", now - MINUTE_MS).await;
        answers_equal_the_recount(&app, &client, site, days, "a ping lengthens a visit").await;
        send_ping(&app, site, "c", now).await;
        send(&app, site, "f", now - 2 * MINUTE_MS, "/", google).await;
        answers_equal_the_recount(&app, &client, site, days, "a ping and a new visit").await;

        assert_eq!(
            (tail_reads(&app, "visits", "read").await, tail_reads(&app, "events", "read").await),
            read,
            "no tail read whole again"
        );
        assert_eq!(tail_reads(&app, "visits", "read_again").await, 0, "every visit tail refreshed");
        assert_eq!(tail_reads(&app, "events", "read_again").await, 0, "every event tail refreshed");
        assert!(tail_reads(&app, "visits", "refreshed").await >= 8, "the visit tail refreshed after each write");
        assert!(tail_reads(&app, "events", "refreshed").await >= 7, "the event tail refreshed after each write");
        wait_for_loads(&app, 1, "the copies are not loaded again").await;
    }
}

/// Every tail read of an instance, however it was read.
async fn all_tail_reads(app: &TestApp) -> u64 {
    let mut total = 0;
    for kind in ["visits", "events"] {
        for how in ["read", "refreshed", "read_again"] {
            total += tail_reads(app, kind, how).await;
        }
    }
    total
}

/// Another site's traffic leaves a quiet site's tail as it was kept: its
/// print counts only its own events (on PostgreSQL the table's highest id
/// moves with every site's).
#[tokio::test]
async fn another_sites_writes_leave_a_quiet_sites_tail_be() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Quiet", "copy.example").await;
        let busy = client.post("/api/sites", json!({ "domain": "busy.example" })).await.expect(200)["site"]["siteId"]
            .as_i64()
            .unwrap();
        let (midnight, day) = day_ago(3);
        let days = (day, day_ago(0).1);
        let now = now_ms();
        send(&app, site, "a", midnight + 60 * MINUTE_MS, "/", Some("https://www.google.com/")).await;
        send(&app, site, "b", now - 20 * MINUTE_MS, "/", None).await;
        answers_equal_the_recount(&app, &client, site, days, "first read").await;
        wait_for_loads(&app, 1, "first read").await;
        answers_equal_the_recount(&app, &client, site, days, "the tails kept").await;
        let before = all_tail_reads(&app).await;
        for (vid, minutes) in [("x", 9), ("y", 8), ("x", 7)] {
            send(&app, busy, vid, now - minutes * MINUTE_MS, "/", None).await;
        }
        answers_equal_the_recount(&app, &client, site, days, "after the other site's writes").await;
        assert_eq!(all_tail_reads(&app).await, before, "the quiet site's tails neither read nor refreshed");
        send(&app, site, "b", now - 5 * MINUTE_MS, "/docs", None).await;
        answers_equal_the_recount(&app, &client, site, days, "its own write").await;
        assert!(all_tail_reads(&app).await > before, "its own write moves its tail");
    }
}
