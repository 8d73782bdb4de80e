//! Every figure the reads answer from rollups equals a naive recount over the
//! raw rows. Random traffic (seeded, so a failure replays) goes through the
//! public endpoints: returning visitors, visits that split into sessions,
//! bots, countries that change, link clicks tied by `lt_click`, identifies,
//! and events imported out of order with `ts`. Then `/api/stats`,
//! `/api/visitor` (and its GraphQL pages, hot-only too) and `/api/visitors`
//! are compared with what the visitors, sessions and events tables say.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;

use common::{
    Client, TestApp, apps_with,
    traffic::{BOT_UA, DESKTOP_UA},
};
use entity::{event, tracked_session, visitor};
use leadtrail::{
    config::TrustProxy,
    service::scoring,
    time::{DAY_MS, HOUR_MS, MINUTE_MS, now_ms},
};
use rand::{Rng, SeedableRng, rngs::StdRng, seq::SliceRandom};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

const PAGES: [&str; 5] = ["/", "/pricing", "/blog/rollups", "/docs", "/contact"];
const COUNTRIES: [&str; 4] = ["DE", "FR", "US", ""];
const HOT_THRESHOLD: i32 = 30;

/// One visit: events a few minutes apart, sometimes with a long pause that
/// splits it into two sessions.
fn visit(rng: &mut StdRng, site: i64, vid: &str, start: i64, click_url: Option<&str>) -> Vec<Value> {
    let mut ts = start;
    let mut events = Vec::new();
    for n in 0..rng.random_range(1..=6) {
        let page = PAGES[rng.random_range(0..PAGES.len())];
        let url = match (n, click_url) {
            (0, Some(url)) => url.to_owned(),
            _ => format!("https://exact.example{page}"),
        };
        let event = if rng.random_bool(0.2) {
            let name = if rng.random_bool(0.5) { "form_submit" } else { "signup_click" };
            json!({ "site": site, "type": "custom_event", "event_name": name, "tracker_vid": vid, "url": url, "ts": ts })
        } else {
            json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": url, "ts": ts })
        };
        events.push(event);
        ts += if rng.random_bool(0.15) { 40 * MINUTE_MS } else { rng.random_range(1..=8) * MINUTE_MS };
    }
    events
}

/// A start inside day `days_ago` counted back from `now`, far enough from
/// every day boundary (where windows and recency step) that the few minutes
/// the test takes cannot move an event across one.
fn visit_start(rng: &mut StdRng, now: i64, days_ago: i64) -> i64 {
    now - days_ago * DAY_MS - rng.random_range(105..1_300) * MINUTE_MS - rng.random_range(0..60_000)
}

async fn feed(app: &TestApp, client: &Client, site: i64, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let now = now_ms();
    let link = client
        .create_link(json!({ "siteId": site, "slug": format!("exact-{seed}"), "destinationUrl": "https://exact.example/pricing" }))
        .await;
    let short = link["fullUrl"].as_str().unwrap().to_owned();
    let short_path = short[short.find("/l/").unwrap()..].to_owned();
    for n in 0..36 {
        let vid = format!("v{seed}-{n}");
        let is_bot = rng.random_bool(0.15);
        let mut requests: Vec<Vec<Value>> = Vec::new();
        for _ in 0..rng.random_range(1..=4) {
            let days_ago = rng.random_range(0..40);
            let click = if !is_bot && rng.random_bool(0.2) { Some(app.click(&short_path, &[]).await) } else { None };
            let start = visit_start(&mut rng, now, days_ago);
            requests.push(visit(&mut rng, site, &vid, start, click.as_deref()));
        }
        // Imports out of order: visits in random order, each split in parts.
        requests.shuffle(&mut rng);
        for events in requests {
            let at = rng.random_range(1..=events.len());
            for part in [&events[..at], &events[at..]] {
                if part.is_empty() {
                    continue;
                }
                let country = COUNTRIES[rng.random_range(0..COUNTRIES.len())];
                let headers: &[(&str, &str)] = if country.is_empty() { &[] } else { &[("cf-ipcountry", country)] };
                let reply = app
                    .collect_with(json!({ "events": part }), if is_bot { BOT_UA } else { DESKTOP_UA }, headers)
                    .await;
                assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
            }
        }
        if rng.random_bool(0.3) {
            let reply = client
                .identify(json!({ "siteId": site, "tracker_vid": vid, "email": format!("{vid}@exact.example") }))
                .await;
            assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
        }
    }
    // Heavy visitors: four visits of high-value pages and forms store 63
    // points (73 once identified), so they lead the list in a band where
    // several tie and the list ranks them by last visit.
    for n in 0..8 {
        let vid = format!("heavy{seed}-{n}");
        let mut days: Vec<i64> = (0..40).collect();
        days.shuffle(&mut rng);
        for &days_ago in &days[..4] {
            let start = visit_start(&mut rng, now, days_ago);
            let events: Vec<Value> = ["/pricing", "/docs", "/pricing", "/docs", "/pricing"]
                .iter()
                .enumerate()
                .map(|(i, page)| {
                    json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": format!("https://exact.example{page}"), "ts": start + i as i64 * 4 * MINUTE_MS })
                })
                .chain(std::iter::once(json!({ "site": site, "type": "custom_event", "event_name": "form_submit", "tracker_vid": vid, "url": "https://exact.example/contact", "ts": start + 20 * MINUTE_MS })))
                .collect();
            let reply = app.collect_with(json!({ "events": events }), DESKTOP_UA, &[]).await;
            assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
        }
        if rng.random_bool(0.5) {
            client
                .identify(json!({ "siteId": site, "tracker_vid": vid, "email": format!("{vid}@exact.example") }))
                .await
                .expect(200);
        }
    }
    // A visitor known only from an identify.
    client
        .identify(
            json!({ "siteId": site, "tracker_vid": format!("only-identified-{seed}"), "email": "o@exact.example" }),
        )
        .await
        .expect(200);
    app.state.writer.flush().await;
}

struct Rows {
    visitors: Vec<visitor::Model>,
    sessions: Vec<tracked_session::Model>,
    events: Vec<event::Model>,
}

async fn rows(app: &TestApp, site: i64) -> Rows {
    let db = &app.state.db;
    Rows {
        visitors: visitor::Entity::find().filter(visitor::Column::SiteId.eq(site)).all(db).await.unwrap(),
        sessions: tracked_session::Entity::find()
            .filter(tracked_session::Column::SiteId.eq(site))
            .all(db)
            .await
            .unwrap(),
        events: event::Entity::find().filter(event::Column::SiteId.eq(site)).all(db).await.unwrap(),
    }
}

/// Most first, then by key, the top ten.
fn top<K: Ord + Clone>(counts: HashMap<K, i64>, known_first: impl Fn(&K) -> bool) -> Vec<(K, i64)> {
    let mut rows: Vec<(K, i64)> = counts.into_iter().filter(|(_, n)| *n > 0).collect();
    rows.sort_by(|a, b| {
        b.1.cmp(&a.1).then_with(|| known_first(&b.0).cmp(&known_first(&a.0))).then_with(|| a.0.cmp(&b.0))
    });
    rows.truncate(10);
    rows
}

/// `/api/stats` and the live stream's figures, recounted from the rows.
fn recount_stats(rows: &Rows, start: i64, now: i64) -> Value {
    let visitors: Vec<&visitor::Model> = rows.visitors.iter().filter(|v| !v.is_bot && v.last_seen >= start).collect();
    let sessions: Vec<&tracked_session::Model> =
        rows.sessions.iter().filter(|s| !s.is_bot && s.ended_at >= start).collect();
    let events: Vec<&event::Model> = rows.events.iter().filter(|e| !e.is_bot && e.timestamp >= start).collect();
    let mut pages: HashMap<String, i64> = HashMap::new();
    for e in events.iter().filter(|e| e.event_type == "pageview") {
        *pages.entry(e.page.clone()).or_default() += 1;
    }
    let mut countries: HashMap<Option<String>, i64> = HashMap::new();
    for v in &visitors {
        *countries.entry(v.country.clone()).or_default() += 1;
    }
    let seconds: i64 = sessions.iter().map(|s| s.duration_seconds).sum();
    let avg = if sessions.is_empty() { 0 } else { (seconds as f64 / sessions.len() as f64).round() as i64 };
    json!({
        "overview": {
            "unique_visitors": visitors.len(),
            "sessions": sessions.len(),
            "pageviews": events.iter().filter(|e| e.event_type == "pageview").count(),
            "total_events": events.len(),
            "identified_visitors": visitors.iter().filter(|v| v.status == "identified").count(),
            "hot_leads": visitors.iter().filter(|v| scoring::total(v.score, v.last_seen, now) >= HOT_THRESHOLD).count(),
        },
        "avg_duration": avg,
        "top_pages": top(pages, |_| true).into_iter().map(|(page, views)| json!({ "page": page, "views": views })).collect::<Vec<_>>(),
        "countries": top(countries, Option::is_some).into_iter().map(|(country, n)| json!({ "country": country, "visitors": n })).collect::<Vec<_>>(),
    })
}

/// The scored list, recounted: (tracker_vid, score) in list order, and the total.
fn recount_list(rows: &Rows, bots: bool, start: Option<i64>, hot: bool, now: i64) -> (Vec<(String, i64)>, usize) {
    let mut listed: Vec<(&visitor::Model, i32)> = rows
        .visitors
        .iter()
        .filter(|v| v.is_bot == bots && start.is_none_or(|start| v.last_seen >= start))
        .map(|v| (v, scoring::total(v.score, v.last_seen, now)))
        .filter(|(_, score)| !hot || *score >= HOT_THRESHOLD)
        .collect();
    listed.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.last_seen.cmp(&a.0.last_seen)).then(b.0.id.cmp(&a.0.id)));
    let total = listed.len();
    (listed.into_iter().map(|(v, score)| (v.tracker_vid.clone(), i64::from(score))).collect(), total)
}

fn listed(rows: &Value) -> Vec<(String, i64)> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (v["tracker_vid"].as_str().or(v["trackerVid"].as_str()).unwrap().to_owned(), v["score"].as_i64().unwrap())
        })
        .collect()
}

/// Every page of the GraphQL list, `first` at a time.
async fn graphql_pages(
    client: &Client,
    site: i64,
    range: &str,
    bots: bool,
    hot: bool,
    first: i64,
) -> (Vec<(String, i64)>, i64) {
    let query =
        "query($siteId: Int!, $timeRange: String, $filter: String, $first: Int, $after: String, $hot: Boolean) {
        visitors(siteId: $siteId, timeRange: $timeRange, filter: $filter, first: $first, after: $after, hot: $hot) {
            nodes { trackerVid score } total pageInfo { hasNextPage endCursor } } }";
    let (mut all, mut after) = (Vec::new(), Value::Null);
    loop {
        let filter = if bots { json!("bot") } else { Value::Null };
        let variables =
            json!({ "siteId": site, "timeRange": range, "filter": filter, "first": first, "after": after, "hot": hot });
        let body = client.graphql(query, variables).await;
        let page = &body["data"]["visitors"];
        assert!(page.is_object(), "{body}");
        all.extend(listed(&page["nodes"]));
        if !page["pageInfo"]["hasNextPage"].as_bool().unwrap() {
            return (all, page["total"].as_i64().unwrap());
        }
        after = page["pageInfo"]["endCursor"].clone();
    }
}

#[tokio::test]
async fn every_read_equals_a_recount_of_the_raw_rows() {
    for app in apps_with(|config| config.trust_proxy = TrustProxy::Cloudflare).await {
        for seed in [3, 17, 40] {
            let (client, site) = app.user_with_site(&format!("Exact{seed}"), &format!("exact{seed}.example")).await;
            let updated = client
                .graphql(
                    "mutation($id: Int!, $t: Int!) { updateSite(id: $id, input: { hotThreshold: $t, highValuePatterns: [\"/pricing\"] }) { hotThreshold } }",
                    json!({ "id": site, "t": HOT_THRESHOLD }),
                )
                .await;
            assert_eq!(updated["data"]["updateSite"]["hotThreshold"], HOT_THRESHOLD, "{updated}");
            feed(&app, &client, site, seed).await;
            let rows = rows(&app, site).await;
            assert!(
                rows.sessions.len() > 60 && rows.events.len() > 150,
                "enough traffic: {} events",
                rows.events.len()
            );
            let now = now_ms();
            let leading = |days: i64| {
                rows.visitors
                    .iter()
                    .filter(|v| !v.is_bot && v.last_seen >= now - days * DAY_MS)
                    .filter(|v| scoring::total(v.score, v.last_seen, now) >= 60)
                    .count()
            };
            assert!(
                leading(7) >= 3 && leading(60) > leading(7),
                "visitors at 60 or more: {} in 7 days, {} in all",
                leading(7),
                leading(60)
            );

            for (range, span) in [("24h", 24 * HOUR_MS), ("7d", 7 * DAY_MS), ("30d", 30 * DAY_MS)] {
                let reply = client.get(&format!("/api/stats?siteId={site}&timeRange={range}")).await;
                let now = now_ms();
                let mut expected = recount_stats(&rows, now - span, now);
                expected.as_object_mut().unwrap().remove("avg_duration");
                expected["time_range"] = json!(range);
                assert_eq!(reply.expect(200), &expected, "seed {seed}, stats {range}");
            }

            let reply = client.get(&format!("/api/visitors?siteId={site}")).await;
            let live = reply.expect(200);
            let now = live["timestamp"].as_i64().unwrap_or_else(now_ms);
            let expected = recount_stats(&rows, now - 24 * HOUR_MS, now);
            assert_eq!(live["stats"]["unique_visitors"], expected["overview"]["unique_visitors"], "seed {seed}, live");
            assert_eq!(live["stats"]["sessions"], expected["overview"]["sessions"], "seed {seed}, live");
            assert_eq!(live["stats"]["pageviews"], expected["overview"]["pageviews"], "seed {seed}, live");
            assert_eq!(live["stats"]["avg_duration"], expected["avg_duration"], "seed {seed}, live");
            assert_eq!(live["countries"], expected["countries"], "seed {seed}, live");
            assert_eq!(live["pages"], expected["top_pages"], "seed {seed}, live");

            for (range, span) in
                [("24h", Some(24 * HOUR_MS)), ("7d", Some(7 * DAY_MS)), ("30d", Some(30 * DAY_MS)), ("all", None)]
            {
                for bots in [false, true] {
                    for limit in [3, 500] {
                        let filter = if bots { "&filter=bot" } else { "" };
                        let reply = client
                            .get(&format!("/api/visitor?siteId={site}&timeRange={range}&limit={limit}{filter}"))
                            .await;
                        let now = now_ms();
                        let (expected, total) = recount_list(&rows, bots, span.map(|span| now - span), false, now);
                        let body = reply.expect(200);
                        assert_eq!(
                            listed(&body["visitors"]),
                            expected[..expected.len().min(limit)],
                            "seed {seed}, {range}, bots {bots}, limit {limit}"
                        );
                        assert_eq!(
                            body["total"].as_u64().unwrap() as usize,
                            total,
                            "seed {seed}, {range}, bots {bots}"
                        );
                    }
                    for hot in [false, true] {
                        let (pages, total) = graphql_pages(&client, site, range, bots, hot, 4).await;
                        let now = now_ms();
                        let (expected, expected_total) =
                            recount_list(&rows, bots, span.map(|span| now - span), hot, now);
                        assert_eq!(pages, expected, "seed {seed}, {range}, bots {bots}, hot {hot}: pages of 4");
                        assert_eq!(total as usize, expected_total, "seed {seed}, {range}, bots {bots}, hot {hot}");
                    }
                }
            }
        }
    }
}

/// The migration that adds the visitor and session rollups builds them from
/// the rows already stored: undone and run again on a database with traffic,
/// every read answers as before.
#[tokio::test]
async fn the_rollup_backfill_rebuilds_what_the_writer_kept() {
    use migration::MigratorTrait;
    for app in apps_with(|config| config.trust_proxy = TrustProxy::Cloudflare).await {
        let (client, site) = app.user_with_site("Backfill", "backfill.example").await;
        feed(&app, &client, site, 5).await;
        let reads = [
            format!("/api/stats?siteId={site}&timeRange=24h"),
            format!("/api/stats?siteId={site}&timeRange=7d"),
            format!("/api/stats?siteId={site}&timeRange=30d"),
            format!("/api/visitor?siteId={site}&timeRange=all&limit=500"),
            format!("/api/visitor?siteId={site}&timeRange=30d&filter=bot"),
            // Counted from the visitors' links, which the migration fills from the clicks.
            format!("/api/visitor?siteId={site}&timeRange=7d&link=exact-5&limit=500"),
            format!("/api/visitor?siteId={site}&timeRange=all&link=exact-5&filter=bot"),
        ];
        let mut before = Vec::new();
        for path in &reads {
            before.push(client.get(path).await.expect(200).clone());
        }
        assert_ne!(before[5]["total"], 0, "some visitor clicked the link");
        let links_before = visitor_links(&app).await;
        // Undo every migration from the rollups' on, so later ones do not hide it.
        let names: Vec<String> = migration::Migrator::migrations().iter().map(|m| m.name().to_owned()).collect();
        let rollups = names
            .iter()
            .position(|name| name == "m20261123_130000_create_visitor_and_session_hours")
            .expect("the rollup migration is listed");
        let undo = u32::try_from(names.len() - rollups).unwrap();
        migration::Migrator::down(&app.state.db, Some(undo)).await.unwrap();
        migration::Migrator::up(&app.state.db, None).await.unwrap();
        for (path, expected) in reads.iter().zip(before) {
            assert_eq!(client.get(path).await.expect(200), &expected, "{path}");
        }
        assert_eq!(visitor_links(&app).await, links_before, "the backfill stores what the writer stored");
    }
}

/// Every `visitor_links` row but its id, in key order.
async fn visitor_links(app: &common::TestApp) -> Vec<(i64, i64, i64, i64, bool, i64)> {
    use sea_orm::QueryOrder;
    let rows = entity::visitor_link::Entity::find()
        .order_by_asc(entity::visitor_link::Column::VisitorId)
        .order_by_asc(entity::visitor_link::Column::LinkId)
        .all(&app.state.db)
        .await
        .unwrap();
    rows.into_iter().map(|r| (r.site_id, r.visitor_id, r.link_id, r.last_seen, r.is_bot, r.last_clicked)).collect()
}
