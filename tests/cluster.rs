//! Several instances on one PostgreSQL database, each with its own writer and
//! caches, started at the same moment: figures stay exact when a visitor's
//! events alternate between them, `max_clicks` holds across them, a change on
//! one reaches the others within a second, and live subscribers see every
//! instance's events. Runs when TEST_DATABASE_URL is set.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use common::{TestApp, postgres_instances, traffic::DESKTOP_UA, ws};
use futures_util::{FutureExt, StreamExt, future, stream};
use serde_json::{Value, json};

const INSTANCES: usize = 3;

async fn instances() -> Option<Vec<TestApp>> {
    let apps = postgres_instances(INSTANCES).await;
    if apps.is_none() {
        eprintln!("SKIPPED: the many-instances tests need TEST_DATABASE_URL (PostgreSQL)");
    }
    apps
}

#[tokio::test]
async fn alternating_instances_keep_every_figure_exact() {
    let Some(apps) = instances().await else { return };
    let (client, site) = apps[0].user_with_site("Multi", "multi.example").await;
    const VISITORS: usize = 200;
    const EVENTS: usize = 10;
    let start = chrono::Utc::now().timestamp_millis() - 2 * 60 * 60 * 1000;
    // One visit per visitor, its events a minute apart and each sent to the
    // next instance, all at once: the instances write the same visitor at the
    // same moment, so a batch that wrote back what it read without holding
    // the visitor's row would lose another's increments or open a second
    // session.
    stream::iter(0..VISITORS)
        .for_each_concurrent(20, |v| {
            let apps = &apps;
            future::join_all((0..EVENTS).map(move |e| {
                let event = json!({
                    "site": site, "type": "pageview", "tracker_vid": format!("multi-{v}"),
                    "url": format!("https://multi.example/p{e}"), "ts": start + (e as i64) * 60_000,
                });
                async move {
                    apps[(v + e) % INSTANCES].collect_with(event, DESKTOP_UA, &[]).await.expect(202);
                }
            }))
            .map(|_| ())
        })
        .await;

    let stats = client.get(&format!("/api/stats?siteId={site}&timeRange=24h")).await;
    let overview = &stats.expect(200)["overview"];
    assert_eq!(overview["pageviews"], VISITORS * EVENTS, "{overview}");
    assert_eq!(overview["unique_visitors"], VISITORS, "{overview}");
    assert_eq!(overview["sessions"], VISITORS, "one session per visit, whichever instance took each event");

    let list = client.get(&format!("/api/visitor?siteId={site}&limit=500&timeRange=24h")).await;
    let list = list.expect(200);
    assert_eq!(list["total"], VISITORS);
    let visitors = list["visitors"].as_array().expect("visitors");
    assert_eq!(visitors.len(), VISITORS);
    for visitor in visitors {
        assert_eq!(visitor["total_pageviews"], EVENTS, "{visitor}");
        assert_eq!(visitor["total_sessions"], 1, "{visitor}");
        assert_eq!(visitor["total_time_seconds"], (EVENTS as i64 - 1) * 60, "{visitor}");
    }
    let pageviews: i64 = visitors.iter().map(|v| v["total_pageviews"].as_i64().unwrap_or(0)).sum();
    assert_eq!(pageviews, (VISITORS * EVENTS) as i64);
}

#[tokio::test]
async fn max_clicks_holds_across_instances() {
    let Some(apps) = instances().await else { return };
    let (client, site) = apps[0].user_with_site("Cap", "cap.example").await;
    let created =
        client.create_link(json!({ "siteId": site, "destinationUrl": "https://cap.example/", "slug": "cap" })).await;
    client.put(&format!("/api/links/{}", link_id(&created)), json!({ "max_clicks": 40 })).await.expect(200);
    let statuses: Vec<u16> =
        stream::iter(0..150)
            .map(|n| {
                let app = &apps[n % INSTANCES];
                async move {
                    app.visit_link(reqwest::Method::GET, "/l/cap-example/cap", DESKTOP_UA, &[]).await.status.as_u16()
                }
            })
            .buffer_unordered(30)
            .collect()
            .await;
    assert_eq!(statuses.iter().filter(|&&s| s == 302).count(), 40, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|&&s| s == 410).count(), 110, "{statuses:?}");
    let analytics = client.get(&format!("/api/link-analytics?siteId={site}&slug=cap&range=all")).await;
    assert_eq!(analytics.expect(200)["total"], 40);
}

fn link_id(created: &Value) -> String {
    created["link"]["id"].as_str().map(str::to_owned).unwrap_or_else(|| created["link"]["id"].to_string())
}

/// Polls `path` on `app` until it answers `status`, for at most a second.
async fn answers_within_a_second(app: &TestApp, path: &str, status: u16) -> Duration {
    let started = Instant::now();
    loop {
        let reply = app.visit_link(reqwest::Method::GET, path, DESKTOP_UA, &[]).await;
        if reply.status.as_u16() == status {
            return started.elapsed();
        }
        assert!(started.elapsed() < Duration::from_secs(1), "{} still answers {} at {path}", app.base, reply.status);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_change_on_one_instance_reaches_all_within_a_second() {
    let Some(apps) = instances().await else { return };
    let (client, site) = apps[0].user_with_site("Off", "off.example").await;
    let created =
        client.create_link(json!({ "siteId": site, "destinationUrl": "https://off.example/", "slug": "off" })).await;
    let id = link_id(&created);
    // Every instance has the link in its cache.
    for app in &apps {
        app.click("/l/off-example/off", &[]).await;
    }
    client.put(&format!("/api/links/{id}"), json!({ "is_active": false })).await.expect(200);
    for app in &apps {
        let took = answers_within_a_second(app, "/l/off-example/off", 410).await;
        eprintln!("{} answered 410 after {took:?}", app.base);
    }
    // Deleting the site reaches the others' site caches too: collect refuses it.
    client.delete(&format!("/api/sites/{site}")).await.expect(200);
    for app in &apps {
        let started = Instant::now();
        loop {
            let reply = app
                .collect_with(
                    json!({ "site": site, "type": "pageview", "tracker_vid": "gone", "url": "https://off.example/" }),
                    DESKTOP_UA,
                    &[],
                )
                .await;
            if reply.status.as_u16() == 404 {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(1), "{} still collects for a deleted site", app.base);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test]
async fn live_subscribers_see_events_from_every_instance() {
    let Some(apps) = instances().await else { return };
    let (client, site) = apps[0].user_with_site("Live", "live.example").await;
    let token = client.session.clone().expect("session");
    let mut socket = ws::connect(&apps[1], Some(&token)).await;
    let query = "subscription($site: Int!) { liveVisitors(siteId: $site) { siteId trackerVid type page } }";
    ws::subscribe(&mut socket, "live", query, json!({ "site": site })).await;
    // The subscription starts listening a moment after it is sent.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let event = json!({ "site": site, "type": "pageview", "tracker_vid": "far-away", "url": "https://live.example/from-elsewhere" });
    apps[2].collect_with(event, DESKTOP_UA, &[]).await.expect(202);
    let next: Value = ws::next_json(&mut socket).await;
    assert_eq!(next["type"], "next", "{next}");
    assert_eq!(
        next["payload"]["data"]["liveVisitors"],
        json!({ "siteId": site, "trackerVid": "far-away", "type": "pageview", "page": "/from-elsewhere" })
    );
}

#[tokio::test]
async fn a_click_landed_by_visitors_on_several_instances_is_tied_once() {
    let Some(apps) = instances().await else { return };
    let (client, site) = apps[0].user_with_site("Shared", "shared.example").await;
    client.create_link(json!({ "siteId": site, "destinationUrl": "https://shared.example/", "slug": "shared" })).await;
    const CLICKS: usize = 30;
    let mut keys = Vec::with_capacity(CLICKS);
    for _ in 0..CLICKS {
        let location = apps[0].click("/l/shared-example/shared", &[]).await;
        let url = url::Url::parse(&location).unwrap();
        keys.push(url.query_pairs().find(|(k, _)| k == "lt_click").unwrap().1.into_owned());
    }
    // Each click's landing URL is shared: one visitor per instance lands with
    // it at the same moment. The click goes to one of them, once, whichever
    // instance writes first; a writer that read it as untied without waiting
    // for the other would tie it a second time and count it on both.
    stream::iter(keys.iter().enumerate())
        .for_each_concurrent(10, |(n, key)| {
            let apps = &apps;
            future::join_all(apps.iter().enumerate().map(move |(i, app)| {
                let landing = json!({ "site": site, "type": "pageview", "tracker_vid": format!("sharer-{n}-{i}"),
                                      "url": format!("https://shared.example/?lt_click={key}") });
                async move {
                    app.collect_with(landing, DESKTOP_UA, &[]).await.expect(202);
                }
            }))
            .map(|_| ())
        })
        .await;
    for app in &apps {
        app.state.writer.flush().await;
    }
    let clicks = apps[0].clicks().await;
    assert_eq!(clicks.len(), CLICKS);
    assert!(clicks.iter().all(|click| click.visitor_id.is_some()), "every click is tied to a visitor");
    let list = client.get(&format!("/api/visitor?siteId={site}&limit=500&timeRange=24h")).await.expect(200).clone();
    let visitors = list["visitors"].as_array().expect("visitors");
    assert_eq!(visitors.len(), CLICKS * INSTANCES);
    let counted: i64 = visitors.iter().map(|v| v["clicks"].as_i64().unwrap()).sum();
    assert_eq!(counted, CLICKS as i64, "each click is counted on one visitor");
    for click in &clicks {
        let tied = visitors.iter().find(|v| Some(v["tracker_vid"].as_str().unwrap()) == click.tracker_vid.as_deref());
        assert_eq!(tied.map(|v| v["clicks"].as_i64().unwrap()), Some(1), "{:?}", click.tracker_vid);
    }
}
