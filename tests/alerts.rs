//! Alerts (design §15) against a local receiver: each trigger fires once per
//! visitor and destination, retries keep one `webhook-id` and a valid
//! Standard Webhooks signature, refusals are final, a day of failures turns a
//! destination off, tests and manual retries, input checks and roles. Time is
//! moved with the app's alert clock, never slept through.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{
    Client, TestApp, apps_with, gql_error_code,
    receiver::{assert_signed, receiver},
    traffic::pageview,
};
use leadtrail::time::HOUR_MS;
use serde_json::{Value, json};

fn lenient(config: &mut leadtrail::config::Config) {
    config.webhook_unsafe_allow_any_target = true;
    config.webhook_timeout_secs = 2;
}

async fn secret(client: &Client) -> String {
    let reply = client.graphql("{ webhookSigningSecret }", json!({})).await;
    reply["data"]["webhookSigningSecret"].as_str().unwrap().to_owned()
}

const CREATE: &str = "mutation($site: Int!, $input: DestinationInput!) {
    createDestination(siteId: $site, input: $input) { id name url webhookType trigger includeJourney includeEvents enabled disabledReason } }";

async fn create(client: &Client, site: i64, input: Value) -> String {
    let reply = client.graphql(CREATE, json!({ "site": site, "input": input })).await;
    reply["data"]["createDestination"]["id"].as_str().unwrap_or_else(|| panic!("created: {reply}")).to_owned()
}

const DELIVERIES: &str = "query($site: Int!) { destinations(siteId: $site) { id name disabledReason failingSince
    deliveries { id trigger trackerVid messageId status attempts nextAttemptAt lastStatusCode lastError deliveredAt
      log { attempt trigger messageId statusCode success error nextAttemptAt destinationId alertDeliveryId } } } }";

async fn destinations(client: &Client, site: i64) -> Vec<Value> {
    let reply = client.graphql(DELIVERIES, json!({ "site": site })).await;
    reply["data"]["destinations"].as_array().unwrap_or_else(|| panic!("destinations: {reply}")).clone()
}

async fn destination(client: &Client, site: i64, name: &str) -> Value {
    destinations(client, site).await.into_iter().find(|d| d["name"] == name).unwrap()
}

/// `leadtrail_alert_deliveries_total` for one outcome, 0 before the first.
async fn deliveries_counted(app: &TestApp, outcome: &str) -> u64 {
    let metrics = app.client().get("/metrics").await.text;
    let series = format!("leadtrail_alert_deliveries_total{{outcome=\"{outcome}\"}} ");
    metrics.lines().find_map(|line| line.strip_prefix(series.as_str())).map_or(0, |value| value.parse().unwrap())
}

/// Waits until `check` holds, for at most ten seconds of real time.
async fn eventually<F: AsyncFn() -> bool>(what: &str, check: F) {
    for _ in 0..100 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

fn form_submit(site: i64, vid: &str) -> Value {
    json!({ "site": site, "type": "custom_event", "event_name": "form_submit", "tracker_vid": vid,
        "url": "https://shop.example/contact" })
}

async fn identify(app: &TestApp, client: &Client, site: i64, vid: &str) {
    client
        .identify(json!({ "siteId": site, "tracker_vid": vid, "email": format!("{vid}@example.com") }))
        .await
        .expect(200);
    app.state.writer.flush().await;
}

#[tokio::test]
async fn each_trigger_fires_once_per_visitor() {
    for app in apps_with(lenient).await {
        let (client, site) = app.user_with_site("Ann", "shop.example").await;
        let (hook, inbox) = receiver().await;
        for (name, trigger, kind) in [
            ("hot", "BECAME_HOT", "chat_two"),
            ("known", "IDENTIFIED", "custom"),
            ("forms", "FORM_SUBMITTED", "crm_one"),
        ] {
            let url = format!("{hook}/hook/{name}");
            create(&client, site, json!({ "name": name, "url": url, "webhookType": kind, "trigger": trigger })).await;
        }
        let off =
            json!({ "name": "off", "url": format!("{hook}/hook/off"), "trigger": "IDENTIFIED", "enabled": false });
        create(&client, site, off).await;

        // A hot threshold this short visit can cross (README, "Lead score").
        let threshold = client
            .graphql(
                "mutation($id: Int!) { updateSite(id: $id, input: { hotThreshold: 45 }) { hotThreshold } }",
                json!({ "id": site }),
            )
            .await;
        assert_eq!(threshold["data"]["updateSite"]["hotThreshold"], 45, "{threshold}");
        // 3 pricing views: 1 for the views, 13 for high-value views and 15 for recency, 29 in all.
        let views: Vec<Value> = (0..3).map(|_| pageview(site, "v1", "https://shop.example/pricing")).collect();
        app.collect(json!({ "events": views })).await.expect(202);
        app.collect(pageview(site, "v2", "https://shop.example/")).await.expect(202);
        // A form: 39, so hot (45) is not reached yet.
        app.collect(form_submit(site, "v1")).await.expect(202);
        eventually("the form alert", async || inbox.at("forms").len() == 1).await;
        assert!(inbox.at("hot").is_empty(), "39 is not hot");
        // Identified: 49, crossing 45.
        identify(&app, &client, site, "v1").await;
        eventually("the hot and identified alerts", async || {
            inbox.at("hot").len() == 1 && inbox.at("known").len() == 1
        })
        .await;
        // A destination added now fires on visitors who become identified, not on v1 saying so again.
        create(&client, site, json!({ "name": "late", "url": format!("{hook}/hook/late"), "trigger": "IDENTIFIED" }))
            .await;
        // Everything again: nothing fires twice for v1.
        app.collect(form_submit(site, "v1")).await.expect(202);
        identify(&app, &client, site, "v1").await;
        app.collect(pageview(site, "v1", "https://shop.example/demo")).await.expect(202);

        // Another visitor identified fires `known` once more, for that visitor.
        identify(&app, &client, site, "v2").await;
        eventually("v2's alerts", async || inbox.at("known").len() == 2 && inbox.at("late").len() == 1).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(inbox.at("forms").len(), 1);
        assert_eq!(inbox.at("hot").len(), 1);
        assert_eq!(inbox.at("known").len(), 2);
        assert!(inbox.at("off").is_empty(), "a destination turned off gets nothing");
        assert_eq!(inbox.at("late")[0].body()["tracker_vid"], "v2");
        assert_eq!(inbox.at("late").len(), 1, "v1 was identified already");

        let known = inbox.at("known");
        assert_eq!(known[0].body()["tracker_vid"], "v1");
        assert_eq!(known[0].body()["status"], "identified");
        assert_eq!(known[1].body()["tracker_vid"], "v2");
        assert_ne!(known[0].id(), known[1].id());
        assert!(known[0].body()["journey"].is_array(), "the journey is included by default");
        assert!(inbox.at("forms")[0].body()["properties"].is_object(), "crm_one's shape");
        assert_eq!(inbox.at("hot")[0].body()["tracker_vid"], "v1", "became hot");
        let secret = secret(&client).await;
        for received in inbox.all() {
            assert_signed(&secret, &received);
            assert_eq!(received.headers["content-type"], "application/json");
        }

        let listed = destinations(&client, site).await;
        let hot = listed.iter().find(|d| d["name"] == "hot").unwrap();
        let delivery = &hot["deliveries"][0];
        assert_eq!(delivery["trigger"], "BECAME_HOT");
        assert_eq!(delivery["trackerVid"], "v1");
        assert_eq!(delivery["status"], "DELIVERED");
        assert_eq!(delivery["attempts"], 1);
        assert!(delivery["nextAttemptAt"].is_null());
        assert_eq!(delivery["messageId"].as_str().unwrap(), inbox.at("hot")[0].id());
        assert_eq!(delivery["log"][0]["trigger"], "became_hot");
        assert_eq!(delivery["log"][0]["statusCode"], 200);

        let metrics = app.client().get("/metrics").await.text;
        assert!(metrics.contains("leadtrail_alert_deliveries_total{outcome=\"delivered\"} 5"), "{metrics}");
        assert!(metrics.contains("leadtrail_alert_outbox_oldest_due_seconds 0"), "{metrics}");
    }
}

/// Whether a delivery's attempt number `attempts` is over and written down. A
/// claim already counts the attempt and sets `nextAttemptAt` to the end of its
/// lease, so neither says the attempt has settled; the settlement copies the
/// logged attempt's `nextAttemptAt` onto the delivery (it is logged first).
fn settled(delivery: &Value, attempts: usize) -> bool {
    let log = delivery["log"].as_array().map(Vec::as_slice).unwrap_or_default();
    delivery["attempts"] == attempts
        && log.len() == attempts
        && log.last().is_some_and(|last| last["nextAttemptAt"] == delivery["nextAttemptAt"])
}

#[tokio::test]
async fn a_failing_receiver_gets_retries_with_one_id_and_valid_signatures() {
    for app in apps_with(lenient).await {
        let (client, site) = app.user_with_site("Ann", "shop.example").await;
        let (hook, inbox) = receiver().await;
        create(&client, site, json!({ "name": "crm", "url": format!("{hook}/hook/flaky"), "trigger": "IDENTIFIED" }))
            .await;
        app.collect(pageview(site, "v1", "https://shop.example/")).await.expect(202);
        identify(&app, &client, site, "v1").await;
        eventually("the first attempt", async || inbox.at("flaky").len() == 1).await;
        let state = || async { destination(&client, site, "crm").await["deliveries"][0].clone() };
        eventually("the first attempt settled", async || settled(&state().await, 1)).await;
        let first = state().await;
        assert_eq!(first["status"], "PENDING");
        assert_eq!(first["lastStatusCode"], 503);
        let due = leadtrail::time::parse_iso(first["nextAttemptAt"].as_str().unwrap()).unwrap();
        let wait = due - leadtrail::time::now_ms();
        assert!((3_000..=6_100).contains(&wait), "the first retry comes after 5 s ± 20%: {wait}");
        tokio::time::sleep(Duration::from_millis(700)).await;
        assert_eq!(inbox.at("flaky").len(), 1, "not before it is due");

        app.state.delivery.clock.advance(7_000);
        eventually("the second attempt", async || inbox.at("flaky").len() == 2).await;
        eventually("the second attempt settled", async || settled(&state().await, 2)).await;
        let second = state().await;
        let due = leadtrail::time::parse_iso(second["nextAttemptAt"].as_str().unwrap()).unwrap();
        let wait = due - app.state.delivery.clock.now();
        assert!((4 * 60_000 - 1_000..=6 * 60_000).contains(&wait), "the second retry comes after 5 min ± 20%: {wait}");
        app.state.delivery.clock.advance(6 * 60_000 + 1_000);
        eventually("the third attempt", async || inbox.at("flaky").len() == 3).await;
        eventually("delivered", async || state().await["status"] == "DELIVERED").await;

        let received = inbox.at("flaky");
        let secret = secret(&client).await;
        for attempt in &received {
            assert_eq!(attempt.id(), received[0].id(), "one webhook-id across retries");
            assert_signed(&secret, attempt);
        }
        let delivery = state().await;
        assert_eq!(delivery["attempts"], 3);
        assert_eq!(delivery["messageId"].as_str().unwrap(), received[0].id());
        assert_eq!(delivery["id"].as_str().unwrap(), received[0].id(), "the webhook-id is the delivery's id");
        let log = delivery["log"].as_array().unwrap();
        let numbers: Vec<i64> = log.iter().map(|entry| entry["attempt"].as_i64().unwrap()).collect();
        assert_eq!(numbers, [1, 2, 3]);
        assert_eq!(log[0]["statusCode"], 503);
        assert!(!log[0]["nextAttemptAt"].is_null() && !log[1]["nextAttemptAt"].is_null());
        assert!(log[2]["nextAttemptAt"].is_null());
        assert_eq!(log[2]["success"], true);
        assert!(log.iter().all(|entry| entry["messageId"] == delivery["messageId"]));

        // The deliveries log of the org shows the attempts too.
        let org_log = client.graphql("{ webhookDeliveries { trigger attempt destinationId } }", json!({})).await;
        assert_eq!(org_log["data"]["webhookDeliveries"].as_array().unwrap().len(), 3);
        let metrics = app.client().get("/metrics").await.text;
        assert!(metrics.contains("leadtrail_alert_deliveries_total{outcome=\"retrying\"} 2"), "{metrics}");
        assert!(metrics.contains("leadtrail_alert_deliveries_total{outcome=\"delivered\"} 1"), "{metrics}");
    }
}

#[tokio::test]
async fn refusals_are_final_and_retry_after_is_honoured() {
    for app in apps_with(lenient).await {
        let (client, site) = app.user_with_site("Ann", "shop.example").await;
        let (hook, inbox) = receiver().await;
        for name in ["gone", "bad", "busy"] {
            let url = format!("{hook}/hook/{name}");
            create(&client, site, json!({ "name": name, "url": url, "trigger": "IDENTIFIED" })).await;
        }
        app.collect(pageview(site, "v1", "https://shop.example/")).await.expect(202);
        identify(&app, &client, site, "v1").await;
        for name in ["gone", "bad", "busy"] {
            eventually(name, async || destination(&client, site, name).await["deliveries"][0]["attempts"] == 1).await;
        }
        eventually("settled", async || {
            destinations(&client, site).await.iter().all(|d| d["deliveries"][0]["lastStatusCode"].is_i64())
        })
        .await;
        let busy = destination(&client, site, "busy").await["deliveries"][0].clone();
        assert_eq!(busy["status"], "PENDING", "429 is retried");
        let due = leadtrail::time::parse_iso(busy["nextAttemptAt"].as_str().unwrap()).unwrap();
        assert!(due - leadtrail::time::now_ms() > 3_500_000, "Retry-After: 3600 is honoured over the 5 s backoff");

        // Half a day passes: 410 and 400 are never tried again.
        for _ in 0..4 {
            app.state.delivery.clock.advance(3 * HOUR_MS);
            tokio::time::sleep(Duration::from_millis(800)).await;
        }
        assert_eq!(inbox.at("gone").len(), 1);
        assert_eq!(inbox.at("bad").len(), 1);
        assert!(inbox.at("busy").len() >= 2, "429 was tried again");
        let gone = destination(&client, site, "gone").await["deliveries"][0].clone();
        assert_eq!(gone["status"], "FAILED");
        assert_eq!(gone["lastStatusCode"], 410);
        assert!(gone["nextAttemptAt"].is_null());

        // An admin sends a failed one again, with its id, and the attempt is
        // counted like the worker's.
        let failed_before = deliveries_counted(&app, "failed").await;
        let retried = client
            .graphql(
                "mutation($id: ID!) { retryDelivery(id: $id) { status attempts lastStatusCode } }",
                json!({ "id": gone["id"] }),
            )
            .await;
        assert_eq!(
            retried["data"]["retryDelivery"],
            json!({ "status": "FAILED", "attempts": 2, "lastStatusCode": 410 })
        );
        assert_eq!(deliveries_counted(&app, "failed").await, failed_before + 1);
        let received = inbox.at("gone");
        assert_eq!(received.len(), 2);
        assert_eq!(received[0].id(), received[1].id());
        // Only a failed delivery can be retried.
        let busy_id = destination(&client, site, "busy").await["deliveries"][0]["id"].clone();
        let refused =
            client.graphql("mutation($id: ID!) { retryDelivery(id: $id) { status } }", json!({ "id": busy_id })).await;
        assert_eq!(gql_error_code(&refused), "VALIDATION_ERROR", "{refused}");
        let missing = client.graphql("mutation { retryDelivery(id: \"999999\") { status } }", json!({})).await;
        assert_eq!(gql_error_code(&missing), "NOT_FOUND");
        let junk = client.graphql("mutation { retryDelivery(id: \"x\") { status } }", json!({})).await;
        assert_eq!(gql_error_code(&junk), "NOT_FOUND");
    }
}

#[tokio::test]
async fn a_day_of_failures_turns_the_destination_off_until_it_is_saved() {
    for app in apps_with(lenient).await {
        let (client, site) = app.user_with_site("Ann", "shop.example").await;
        let (hook, inbox) = receiver().await;
        let input = json!({ "name": "down", "url": format!("{hook}/hook/broken"), "trigger": "IDENTIFIED" });
        let id = create(&client, site, input.clone()).await;
        app.collect(pageview(site, "v1", "https://shop.example/")).await.expect(202);
        identify(&app, &client, site, "v1").await;
        eventually("the first attempt", async || inbox.at("broken").len() == 1).await;
        eventually("failing", async || !destination(&client, site, "down").await["failingSince"].is_null()).await;
        // Each step lets the delivery's next attempt fail: (hours to advance, attempts by then).
        // The first gap is longer than any wait between attempts, so the run starts again at
        // the second; 25 hours after the first failure the destination is still on.
        for (hours, attempts) in [(14, 2), (11, 3), (12, 4)] {
            app.state.delivery.clock.advance(hours * HOUR_MS);
            eventually("the next attempt", async || inbox.at("broken").len() == attempts).await;
            eventually("settled", async || {
                settled(&destination(&client, site, "down").await["deliveries"][0], attempts)
            })
            .await;
            assert!(destination(&client, site, "down").await["disabledReason"].is_null(), "after {attempts} attempts");
        }
        // A day and more of failures in a row: turned off, with the reason.
        app.state.delivery.clock.advance(3 * HOUR_MS);
        eventually("turned off", async || !destination(&client, site, "down").await["disabledReason"].is_null()).await;
        let down = destination(&client, site, "down").await;
        let reason = down["disabledReason"].as_str().unwrap();
        assert!(reason.contains("24 hours") && reason.contains("500"), "{reason}");
        let attempts = inbox.at("broken").len();
        // Turned off: its pending delivery waits, and new visitors fire nothing.
        identify(&app, &client, site, "v2").await;
        app.state.delivery.clock.advance(11 * HOUR_MS);
        tokio::time::sleep(Duration::from_millis(1200)).await;
        assert_eq!(inbox.at("broken").len(), attempts);
        let metrics = app.client().get("/metrics").await.text;
        assert!(
            metrics.contains("leadtrail_alert_outbox_oldest_due_seconds 0"),
            "a turned-off destination's waiting delivery is not overdue: {metrics}"
        );
        assert_eq!(destination(&client, site, "down").await["deliveries"].as_array().unwrap().len(), 1);

        // Saving it (the receiver fixed) turns it back on; the waiting delivery goes out.
        let fixed = json!({ "name": "down", "url": format!("{hook}/hook/ok"), "trigger": "IDENTIFIED" });
        let saved = client
            .graphql(
                "mutation($id: ID!, $input: DestinationInput!) { updateDestination(id: $id, input: $input) { disabledReason url } }",
                json!({ "id": id, "input": fixed }),
            )
            .await;
        assert!(saved["data"]["updateDestination"]["disabledReason"].is_null(), "{saved}");
        eventually("delivered after saving", async || inbox.at("ok").len() == 1).await;
        assert_eq!(inbox.at("ok")[0].id(), inbox.at("broken")[0].id());
    }
}

#[tokio::test]
async fn destinations_are_checked_tested_and_managed_by_admins() {
    for app in apps_with(lenient).await {
        let (client, site) = app.user_with_site("Ann", "shop.example").await;
        let (hook, inbox) = receiver().await;
        let good = json!({ "name": "  Sales  ", "url": format!("{hook}/hook/ok"), "trigger": "BECAME_HOT" });
        let reply = client.graphql(CREATE, json!({ "site": site, "input": good })).await;
        let created = &reply["data"]["createDestination"];
        assert_eq!(created["name"], "Sales", "trimmed");
        assert_eq!(created["webhookType"], "custom", "custom by default");
        assert_eq!(created["trigger"], "BECAME_HOT");
        assert_eq!(
            (created["includeJourney"].clone(), created["includeEvents"].clone(), created["enabled"].clone()),
            (json!(true), json!(true), json!(true))
        );
        let id = created["id"].as_str().unwrap().to_owned();

        // (input, code, the input field the message names)
        let bad = [
            (
                json!({ "name": "", "url": format!("{hook}/hook/ok"), "trigger": "IDENTIFIED" }),
                "VALIDATION_ERROR",
                "name",
            ),
            (
                json!({ "name": "x".repeat(101), "url": format!("{hook}/hook/ok"), "trigger": "IDENTIFIED" }),
                "VALIDATION_ERROR",
                "name",
            ),
            (
                json!({ "name": "a", "url": format!("{hook}/hook/ok"), "trigger": "IDENTIFIED", "webhookType": "fax" }),
                "VALIDATION_ERROR",
                "webhookType",
            ),
            (
                json!({ "name": "a", "url": "ftp://example.com/", "trigger": "IDENTIFIED" }),
                "INVALID_WEBHOOK_URL",
                "url",
            ),
            (json!({ "name": "a", "url": "not a url", "trigger": "IDENTIFIED" }), "INVALID_WEBHOOK_URL", "url"),
        ];
        for (input, code, field) in bad {
            let reply = client.graphql(CREATE, json!({ "site": site, "input": input })).await;
            assert_eq!(gql_error_code(&reply), code, "{input}: {reply}");
            // The field as the caller sent it: inside the `input` argument.
            let message = reply["errors"][0]["message"].as_str().unwrap();
            let named = format!("input.{field}");
            assert!(message.starts_with(&format!("{named}:")), "{message}");
            assert_eq!(reply["errors"][0]["extensions"]["field"], named.as_str(), "{reply}");
        }
        let unknown_trigger = client
            .graphql(CREATE, json!({ "site": site, "input": { "name": "a", "url": "https://example.com/", "trigger": "SOMETIMES" } }))
            .await;
        assert!(unknown_trigger["errors"].is_array(), "{unknown_trigger}");

        // A test sends a signed sample now and answers how it went.
        let tested = client
            .graphql("mutation($id: ID!) { testDestination(id: $id) { success statusCode trigger messageId destinationId } }", json!({ "id": id }))
            .await;
        let tested = &tested["data"]["testDestination"];
        assert_eq!(tested["success"], true, "{tested}");
        assert_eq!(tested["statusCode"], 200);
        assert_eq!(tested["trigger"], "test");
        assert_eq!(tested["destinationId"], id.as_str());
        let sample = inbox.at("ok");
        assert_eq!(sample.len(), 1);
        assert_eq!(sample[0].id(), tested["messageId"].as_str().unwrap());
        assert_signed(&secret(&client).await, &sample[0]);
        assert_eq!(sample[0].body()["tracker_vid"], "leadtrail-test-visitor");

        // Members and viewers may not manage destinations; the signed-out are refused.
        let org = client.graphql("{ orgs { id } }", json!({})).await["data"]["orgs"][0]["id"].clone();
        for role in ["member", "viewer"] {
            let (other, email) = app.user(role).await;
            let added = common::invite_and_accept(&client, &other, org.as_str().unwrap(), &email, role).await;
            assert_eq!(added["data"]["acceptInvitation"]["role"], role, "{added}");
            let listed = other
                .graphql("query($site: Int!) { destinations(siteId: $site) { id } }", json!({ "site": site }))
                .await;
            assert_eq!(gql_error_code(&listed), "FORBIDDEN", "{role}: {listed}");
            let input = json!({ "name": "mine", "url": format!("{hook}/hook/ok"), "trigger": "IDENTIFIED" });
            let created = other.graphql(CREATE, json!({ "site": site, "input": input })).await;
            assert_eq!(gql_error_code(&created), "FORBIDDEN", "{role}: {created}");
            let deleted = other.graphql("mutation($id: ID!) { deleteDestination(id: $id) }", json!({ "id": id })).await;
            assert_eq!(gql_error_code(&deleted), "FORBIDDEN", "{role}: {deleted}");
        }
        let anonymous = app
            .client()
            .graphql("query($site: Int!) { destinations(siteId: $site) { id } }", json!({ "site": site }))
            .await;
        assert_eq!(gql_error_code(&anonymous), "UNAUTHORIZED", "{anonymous}");

        let deleted = client.graphql("mutation($id: ID!) { deleteDestination(id: $id) }", json!({ "id": id })).await;
        assert_eq!(deleted["data"]["deleteDestination"], true);
        assert!(destinations(&client, site).await.is_empty());
        let again = client.graphql("mutation($id: ID!) { deleteDestination(id: $id) }", json!({ "id": id })).await;
        assert_eq!(gql_error_code(&again), "NOT_FOUND");
    }
}

#[tokio::test]
async fn a_site_has_at_most_25_destinations_even_when_created_at_once() {
    for app in apps_with(lenient).await {
        let (client, site) = app.user_with_site("Lim", "limit.example").await;
        let input = |n: usize| json!({ "name": format!("d{n}"), "url": format!("http://127.0.0.1:9/hook/{n}"), "trigger": "IDENTIFIED" });
        // Forty at once: each request counts the site's destinations before it
        // adds one, so without a lock several would count 24 and all add.
        let replies = futures_util::future::join_all(
            (0..40).map(|n| client.graphql(CREATE, json!({ "site": site, "input": input(n) }))),
        )
        .await;
        let created = replies.iter().filter(|reply| reply["data"]["createDestination"]["id"].is_string()).count();
        assert_eq!(created, 25, "destinations created by forty requests at once");
        for reply in replies.iter().filter(|reply| reply["data"]["createDestination"].is_null()) {
            assert_eq!(gql_error_code(reply), "VALIDATION_ERROR", "{reply}");
        }
        assert_eq!(destinations(&client, site).await.len(), 25);
        let refused = client.graphql(CREATE, json!({ "site": site, "input": input(99) })).await;
        assert_eq!(gql_error_code(&refused), "VALIDATION_ERROR", "{refused}");
    }
}

/// `CONVERTED` fires once per conversion and destination: for one recorded
/// for a known visitor at once, for one waiting for its person when
/// identify ties it, never twice for the same `external_id`, and a second
/// conversion of the same visitor fires again.
#[tokio::test]
async fn converted_fires_once_per_conversion() {
    for app in apps_with(lenient).await {
        let (client, site) = app.user_with_site("Cora", "shop.example").await;
        let (hook, inbox) = receiver().await;
        create(&client, site, json!({ "name": "won", "url": format!("{hook}/hook/won"), "trigger": "CONVERTED" }))
            .await;
        let key =
            client.graphql("mutation { createApiKey(name: \"crm\") { key } }", json!({})).await["data"]["createApiKey"]
                ["key"]
                .as_str()
                .unwrap()
                .to_owned();
        let crm = app.client().with_bearer(&key);
        app.collect(pageview(site, "buyer", "https://shop.example/")).await.expect(202);
        app.state.writer.flush().await;
        let deal = |id: &str, person: Value| {
            let mut body =
                json!({ "siteId": site, "name": "Closed won", "amount": "100", "currency": "USD", "external_id": id });
            body.as_object_mut().unwrap().extend(person.as_object().unwrap().clone());
            body
        };
        crm.post("/api/conversions", deal("d1", json!({ "tracker_vid": "buyer" }))).await.expect(200);
        crm.post("/api/conversions", deal("d1", json!({ "tracker_vid": "buyer" }))).await.expect(200);
        crm.post("/api/conversions", deal("d2", json!({ "tracker_vid": "buyer" }))).await.expect(200);
        eventually("two conversion alerts", async || inbox.at("won").len() == 2).await;
        // One for someone not identified yet: nothing until identify names them.
        crm.post("/api/conversions", deal("d3", json!({ "email": "later@example.com" }))).await.expect(200);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(inbox.at("won").len(), 2, "nobody to alert about yet");
        app.collect(pageview(site, "later", "https://shop.example/")).await.expect(202);
        identify(&app, &client, site, "later").await;
        eventually("the tied conversion's alert", async || inbox.at("won").len() == 3).await;
        let later =
            inbox.at("won").into_iter().filter(|received| received.body().to_string().contains("later")).count();
        assert_eq!(later, 1, "the alert is about the person it joined");
        // Identifying them again fires nothing new.
        identify(&app, &client, site, "later").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(inbox.at("won").len(), 3);
        let listed = destination(&client, site, "won").await;
        assert_eq!(listed["deliveries"].as_array().unwrap().len(), 3, "{listed}");
        assert!(listed["deliveries"].as_array().unwrap().iter().all(|d| d["trigger"] == "CONVERTED"), "{listed}");
        // Each payload says which conversion it is about, with its exact amount.
        let mut told: Vec<(String, String, String, String)> = inbox
            .at("won")
            .into_iter()
            .map(|received| {
                let conversion = received.body()["conversion"].clone();
                let text =
                    |key: &str| conversion[key].as_str().unwrap_or_else(|| panic!("{key}: {conversion}")).to_owned();
                assert!(conversion["occurred_at"].as_str().is_some_and(|at| at.ends_with('Z')), "{conversion}");
                (text("external_id"), text("name"), text("amount"), text("currency"))
            })
            .collect();
        told.sort();
        let expected: Vec<(String, String, String, String)> = ["d1", "d2", "d3"]
            .iter()
            .map(|id| (id.to_string(), "Closed won".into(), "100.00".into(), "USD".into()))
            .collect();
        assert_eq!(told, expected);
    }
}
