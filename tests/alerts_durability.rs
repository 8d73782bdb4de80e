//! Alerts are delivered at least once and never twice at once: a delivery
//! pending when the real binary is killed (SIGKILL) goes out after the
//! restart with its `webhook-id`, and two instances sharing one PostgreSQL
//! database send each delivery once.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::{collections::BTreeSet, time::Duration};

use common::{
    Client, apps_with, postgres_instances_with,
    process::{launch_with, signal, wait},
    receiver::{assert_signed, receiver},
    traffic::pageview,
};
use entity::alert_delivery;
use leadtrail::{config::Config, db};
use sea_orm::EntityTrait;
use serde_json::json;

fn lenient(config: &mut Config) {
    config.webhook_unsafe_allow_any_target = true;
    config.webhook_timeout_secs = 2;
}

const CREATE: &str =
    "mutation($site: Int!, $input: DestinationInput!) { createDestination(siteId: $site, input: $input) { id } }";

async fn create_destination(client: &Client, site: i64, url: String) {
    let input = json!({ "name": "sales", "url": url, "trigger": "IDENTIFIED" });
    let reply = client.graphql(CREATE, json!({ "site": site, "input": input })).await;
    assert!(reply["data"]["createDestination"]["id"].is_string(), "{reply}");
}

/// Polls every 100 ms for at most `seconds`.
async fn eventually<F: AsyncFn() -> bool>(what: &str, seconds: u64, check: F) {
    for _ in 0..seconds * 10 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn a_delivery_pending_at_sigkill_goes_out_after_the_restart() {
    for mut app in apps_with(lenient).await {
        let (client, site) = app.user_with_site("Kay", "kill.example").await;
        let (hook, inbox) = receiver().await;
        create_destination(&client, site, format!("{hook}/hook/hiccup")).await;
        let secret = client.graphql("{ webhookSigningSecret }", json!({})).await["data"]["webhookSigningSecret"]
            .as_str()
            .unwrap()
            .to_owned();
        let token = client.session.clone().unwrap();
        let database_url = app.state.config.database_url.clone();
        app.shut_down().await;

        let env = [("WEBHOOK_UNSAFE_ALLOW_ANY_TARGET", "true")];
        let (child, base) = launch_with(&database_url, &env).await;
        let mut binary = app.client().with_session(token);
        binary.base = base.clone();
        binary.post("/api/collect", pageview(site, "kim", "https://kill.example/")).await.expect(202);
        let identified = binary
            .post("/api/identify", json!({ "siteId": site, "tracker_vid": "kim", "email": "kim@example.com" }))
            .await;
        identified.expect(200);

        // The first attempt fails (503) and the retry is due in about 5 s.
        eventually("the first attempt", 10, async || inbox.at("hiccup").len() == 1).await;
        let db = db::connect(&app.state.config).await.unwrap();
        eventually("the first attempt recorded", 10, async || {
            let rows = alert_delivery::Entity::find().all(&db).await.unwrap();
            rows.len() == 1 && rows[0].attempts == 1 && rows[0].last_status_code == Some(503)
        })
        .await;
        signal(&child, "KILL");
        wait(child).await;
        let pending = alert_delivery::Entity::find().all(&db).await.unwrap();
        assert_eq!(pending[0].status, "pending", "pending when the process died");

        let (child, _) = launch_with(&database_url, &env).await;
        eventually("the retry after the restart", 20, async || inbox.at("hiccup").len() == 2).await;
        eventually("delivered", 10, async || {
            alert_delivery::Entity::find().all(&db).await.unwrap()[0].status == "delivered"
        })
        .await;
        let received = inbox.at("hiccup");
        assert_eq!(received[0].id(), received[1].id(), "one webhook-id across the crash");
        for attempt in &received {
            assert_signed(&secret, attempt);
        }
        assert_eq!(received[1].body()["tracker_vid"], "kim");
        signal(&child, "TERM");
        wait(child).await;
    }
}

#[tokio::test]
async fn two_instances_send_each_delivery_once() {
    let Some(apps) = postgres_instances_with(2, lenient).await else {
        eprintln!("SKIPPED: the two-instances alert test needs TEST_DATABASE_URL (PostgreSQL)");
        return;
    };
    let (client, site) = apps[0].user_with_site("Duo", "duo.example").await;
    let (hook, inbox) = receiver().await;
    create_destination(&client, site, format!("{hook}/hook/ok")).await;
    let token = client.session.clone().unwrap();
    const VISITORS: usize = 60;
    for n in 0..VISITORS {
        let app = &apps[n % 2];
        let on = app.client().with_session(token.clone());
        let vid = format!("v{n}");
        app.collect(pageview(site, &vid, "https://duo.example/")).await.expect(202);
        on.post("/api/identify", json!({ "siteId": site, "tracker_vid": vid, "email": format!("{vid}@example.com") }))
            .await
            .expect(200);
    }
    eventually("every alert", 20, async || inbox.at("ok").len() >= VISITORS).await;
    // Both workers keep polling; nothing more may arrive.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let received = inbox.at("ok");
    let ids: BTreeSet<String> = received.iter().map(|r| r.id()).collect();
    let vids: BTreeSet<String> =
        received.iter().map(|r| r.body()["tracker_vid"].as_str().unwrap().to_owned()).collect();
    assert_eq!(received.len(), VISITORS, "each delivery sent once");
    assert_eq!(ids.len(), VISITORS);
    assert_eq!(vids.len(), VISITORS);
    let rows = alert_delivery::Entity::find().all(&apps[0].state.db).await.unwrap();
    assert_eq!(rows.len(), VISITORS);
    assert!(rows.iter().all(|row| row.status == "delivered" && row.attempts == 1), "one attempt each");
}
