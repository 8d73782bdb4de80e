//! POST/GET /api/webhook against a local receiver: the five payloads field by
//! field, include flags, Standard Webhooks signatures, outcomes, Slack's `ok`
//! rule, redirects, dry runs, the delivery log, and the SSRF guard.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    Router,
    body::Bytes,
    extract::{Path, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
    routing::post,
};
use base64::{Engine, engine::general_purpose::STANDARD};
use common::{TestApp, apps_with, scenario};
use hmac::{Hmac, Mac};
use leadtrail::{config::TrustProxy, time::iso};
use serde_json::{Value, json};
use sha2::Sha256;

/// What the receiver got.
#[derive(Clone)]
struct Received {
    headers: HeaderMap,
    body: Value,
    raw: String,
}

type Inbox = Arc<Mutex<Vec<Received>>>;

async fn receive(
    State(inbox): State<Inbox>,
    Path(behaviour): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let raw = String::from_utf8_lossy(&body).into_owned();
    inbox.lock().unwrap().push(Received { headers, body: serde_json::from_str(&raw).unwrap_or(Value::Null), raw });
    match behaviour.as_str() {
        "ok" => (StatusCode::OK, "ok").into_response(),
        "accepted" => StatusCode::ACCEPTED.into_response(),
        "bad-request" => (StatusCode::BAD_REQUEST, "no").into_response(),
        "broken" => (StatusCode::INTERNAL_SERVER_ERROR, "oops").into_response(),
        "slow" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            StatusCode::OK.into_response()
        }
        "redirect" => (StatusCode::FOUND, [(header::LOCATION, "http://example.com/")]).into_response(),
        "slack-error" => (StatusCode::OK, "invalid_payload").into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// A local receiver on a free port.
async fn receiver() -> (String, Inbox) {
    let inbox: Inbox = Arc::default();
    let router = Router::new().route("/hook/{behaviour}", post(receive)).with_state(inbox.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (base, inbox)
}

fn lenient(config: &mut leadtrail::config::Config) {
    config.trust_proxy = TrustProxy::Cloudflare;
    config.webhook_unsafe_allow_any_target = true;
    config.webhook_timeout_secs = 1;
}

fn strict(config: &mut leadtrail::config::Config) {
    config.trust_proxy = TrustProxy::Cloudflare;
}

async fn send(s: &scenario::Scenario, body: Value) -> common::Reply {
    s.client.post("/api/webhook", body).await
}

fn last(inbox: &Inbox) -> Received {
    inbox.lock().unwrap().last().cloned().expect("the receiver got a request")
}

async fn secret(s: &scenario::Scenario) -> String {
    let reply = s.client.graphql("{ webhookSigningSecret }", json!({})).await;
    reply["data"]["webhookSigningSecret"].as_str().expect("secret").to_owned()
}

fn verify(secret: &str, received: &Received) {
    let id = received.headers["webhook-id"].to_str().unwrap();
    let ts = received.headers["webhook-timestamp"].to_str().unwrap();
    let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{ts}.{}", received.raw).as_bytes());
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    assert_eq!(received.headers["webhook-signature"].to_str().unwrap(), expected);
    assert!(id.starts_with("msg_"));
    let age = leadtrail::time::now_ms() / 1000 - ts.parse::<i64>().unwrap();
    assert!((0..60).contains(&age), "timestamp is now");
}

#[tokio::test]
async fn the_info_lists_the_five_types() {
    for app in apps_with(lenient).await {
        let (client, _) = app.user("Ann").await;
        let info = client.get("/api/webhook").await;
        let info = info.expect(200);
        assert_eq!(info["supported_types"], json!(["custom", "crm_one", "crm_two", "chat_one", "chat_two"]));
        let example = &info["example_payload"];
        for key in ["tracker_vid", "webhook_url", "webhook_type", "include_journey", "include_events", "siteId"] {
            assert!(example.get(key).is_some(), "example has {key}");
        }
        assert_eq!(example["siteId"], 4);
        app.client().get("/api/webhook").await.expect_error(401, "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn the_custom_payload_is_signed_and_complete() {
    for app in apps_with(lenient).await {
        let s = scenario::feed(&app).await;
        let (hook, inbox) = receiver().await;
        let reply =
            send(&s, json!({ "tracker_vid": "alice", "webhook_url": format!("{hook}/hook/ok"), "siteId": s.site }))
                .await;
        let body = reply.expect(200);
        assert_eq!(body["success"], true);
        assert_eq!(body["tracker_vid"], "alice");
        assert_eq!(body["webhook_type"], "custom", "custom is the default");
        assert!(leadtrail::time::parse_iso(body["delivered_at"].as_str().unwrap()).is_some());
        assert_eq!(body.as_object().unwrap().len(), 4, "{body}");

        let received = last(&inbox);
        assert_eq!(received.headers["content-type"], "application/json");
        verify(&secret(&s).await, &received);
        let payload = &received.body;
        let mut head = payload.clone();
        for key in ["journey", "recent_events", "exported_at"] {
            head.as_object_mut().unwrap().remove(key);
        }
        assert_eq!(
            head,
            json!({
                "tracker_vid": "alice", "status": "identified", "identified_user_id": "u-1", "score": 45,
                "location": { "country": "DE", "city": "Berlin" },
                "device": { "type": "desktop", "browser": "Chrome" },
                "engagement": {
                    "total_sessions": 2, "total_pageviews": 4, "total_time_seconds": 120,
                    "first_seen": iso(s.alice_first), "last_seen": iso(s.alice_second + 30_000),
                },
                "links": {
                    "profile": format!("{}/visitor/alice", app.base),
                    "connect": format!("{}/talk/incoming?visitor=alice", app.base),
                },
            })
        );
        let journey = payload["journey"].as_array().unwrap();
        assert_eq!(journey.len(), 2);
        assert_eq!(journey[0]["started_at"], iso(s.alice_first), "the journey is in order");
        assert_eq!(journey[0]["entry_page"], "/");
        assert_eq!(journey[0]["exit_page"], "/pricing");
        assert_eq!(journey[0]["pageview_count"], 2);
        assert_eq!(journey[0]["referrer"], scenario::GOOGLE);
        assert!(journey[0]["session_id"].is_string());
        let events = payload["recent_events"].as_array().unwrap();
        assert_eq!(events.len(), 5);
        assert_eq!(
            events[0],
            json!({ "type": "pageview", "page": "/docs", "timestamp": iso(s.alice_second + 30_000) })
        );

        let bare = json!({ "tracker_vid": "alice", "webhook_url": format!("{hook}/hook/accepted"), "siteId": s.site,
            "include_journey": false, "include_events": false });
        send(&s, bare).await.expect(200);
        let received = last(&inbox);
        assert!(received.body.get("journey").is_none() && received.body.get("recent_events").is_none());
        assert_eq!(received.body["tracker_vid"], "alice");
    }
}

#[tokio::test]
async fn the_crm_and_chat_payloads_have_their_shapes() {
    for app in apps_with(lenient).await {
        let s = scenario::feed(&app).await;
        let (hook, inbox) = receiver().await;
        let url = format!("{hook}/hook/ok");
        let kinds = ["crm_one", "crm_two", "chat_one", "chat_two"];
        let mut payloads = Vec::new();
        for kind in kinds {
            let reply =
                send(&s, json!({ "tracker_vid": "alice", "webhook_url": url, "webhook_type": kind, "siteId": s.site }))
                    .await;
            assert_eq!(reply.expect(200)["webhook_type"], kind);
            payloads.push(last(&inbox).body);
        }
        assert_eq!(
            payloads[0],
            json!({ "properties": {
                "tracker_visitor_id": "alice", "email": "Alice@Example.com", "city": "Berlin", "country": "DE",
                "analytics_source": "Leadtrail", "tracker_score": "45", "tracker_sessions": "2", "tracker_pageviews": "4",
                "tracker_first_seen": iso(s.alice_first), "tracker_last_seen": iso(s.alice_second + 30_000),
                // HubSpot's own company property: her work email's domain is her account.
                "company": "example.com",
            }})
        );
        assert_eq!(
            payloads[1],
            json!({
                "Tracker_Visitor_ID__c": "alice", "Email": "Alice@Example.com", "City": "Berlin", "Country": "DE",
                "LeadSource": "Leadtrail", "Tracker_Score__c": 45, "Tracker_Sessions__c": 2, "Tracker_Pageviews__c": 4,
                "Company": "example.com",
            })
        );
        assert_eq!(
            payloads[2],
            json!({ "blocks": [
                { "type": "header", "text": { "type": "plain_text", "text": "New lead from Leadtrail" } },
                { "type": "section", "fields": [
                    { "type": "mrkdwn", "text": "*Visitor ID:*\nalice" },
                    { "type": "mrkdwn", "text": "*Score:*\n45/100" },
                    { "type": "mrkdwn", "text": "*Location:*\nBerlin, DE" },
                    { "type": "mrkdwn", "text": "*Sessions:*\n2" },
                ]},
            ]})
        );
        let chat_two = &payloads[3];
        let keys: std::collections::BTreeSet<&str> = chat_two.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys.into_iter().collect::<Vec<_>>(),
            ["engagement", "identified_user_id", "location", "recent_events", "score", "status", "tracker_vid"]
        );
        assert_eq!(
            chat_two["engagement"],
            json!({ "total_sessions": 2, "total_pageviews": 4, "total_time_seconds": 120 })
        );
        assert_eq!(chat_two["recent_events"].as_array().unwrap().len(), 5);
    }
}

#[tokio::test]
async fn slack_text_is_escaped() {
    for app in apps_with(lenient).await {
        let (client, site) = app.user_with_site("Esc", "esc.example").await;
        app.collect(common::traffic::pageview(site, "<b>&co", "https://esc.example/")).await.expect(202);
        let (hook, inbox) = receiver().await;
        let body = json!({ "tracker_vid": "<b>&co", "webhook_url": format!("{hook}/hook/ok"), "webhook_type": "chat_one", "siteId": site });
        client.post("/api/webhook", body).await.expect(200);
        assert_eq!(last(&inbox).body["blocks"][1]["fields"][0]["text"], "*Visitor ID:*\n&lt;b&gt;&amp;co");
    }
}

#[tokio::test]
async fn failed_deliveries_answer_502_and_every_attempt_is_logged() {
    for app in apps_with(lenient).await {
        let s = scenario::feed(&app).await;
        let (hook, inbox) = receiver().await;
        for (path, kind) in [
            ("bad-request", "custom"),
            ("broken", "custom"),
            ("slow", "custom"),
            ("redirect", "custom"),
            ("slack-error", "chat_one"),
            ("accepted", "chat_one"),
        ] {
            let body = json!({ "tracker_vid": "alice", "webhook_url": format!("{hook}/hook/{path}"), "webhook_type": kind, "siteId": s.site });
            send(&s, body).await.expect_error(502, "DELIVERY_FAILED");
        }
        assert_eq!(inbox.lock().unwrap().len(), 6, "each target was tried once, redirects not followed");
        let ok = json!({ "tracker_vid": "alice", "webhook_url": format!("{hook}/hook/ok"), "webhook_type": "chat_one", "siteId": s.site });
        send(&s, ok).await.expect(200);

        let log = s
            .client
            .graphql("{ webhookDeliveries { webhookType targetHost statusCode success error } }", json!({}))
            .await;
        let rows = log["data"]["webhookDeliveries"].as_array().expect("log").clone();
        assert_eq!(rows.len(), 7, "{log}");
        let statuses: Vec<&Value> = rows.iter().map(|r| &r["statusCode"]).collect();
        assert_eq!(
            statuses,
            [&json!(200), &json!(202), &json!(200), &json!(302), &Value::Null, &json!(500), &json!(400)]
        );
        assert_eq!(rows[0]["success"], true);
        assert!(rows[1..].iter().all(|r| r["success"] == false && r["error"].is_string()));
        assert_eq!(rows[0]["targetHost"], "127.0.0.1");
        assert!(rows[4]["error"].as_str().unwrap().contains("in time"), "{}", rows[4]);
    }
}

#[tokio::test]
async fn a_dry_run_shows_the_request_without_sending_it() {
    for app in apps_with(lenient).await {
        let s = scenario::feed(&app).await;
        let (hook, inbox) = receiver().await;
        let body = json!({ "tracker_vid": "alice", "webhook_url": format!("{hook}/hook/ok"), "webhook_type": "crm_two", "siteId": s.site, "dry_run": true });
        let reply = send(&s, body).await;
        let preview = reply.expect(200);
        assert_eq!(preview["dry_run"], true);
        assert_eq!(preview["delivered_at"], Value::Null);
        assert_eq!(preview["payload"]["LeadSource"], "Leadtrail");
        assert_eq!(preview["headers"]["content-type"], "application/json");
        assert!(preview["headers"]["webhook-signature"].as_str().unwrap().starts_with("v1,"));
        assert!(inbox.lock().unwrap().is_empty(), "nothing was sent");
    }
}

#[tokio::test]
async fn the_secret_is_for_admins_and_rotates() {
    for app in apps_with(lenient).await {
        let s = scenario::feed(&app).await;
        let old = secret(&s).await;
        assert!(old.starts_with("whsec_"));
        let rotated = s.client.graphql("mutation { rotateWebhookSecret }", json!({})).await;
        let new = rotated["data"]["rotateWebhookSecret"].as_str().unwrap().to_owned();
        assert_ne!(new, old);
        assert_eq!(secret(&s).await, new);
        let (hook, inbox) = receiver().await;
        send(&s, json!({ "tracker_vid": "alice", "webhook_url": format!("{hook}/hook/ok"), "siteId": s.site }))
            .await
            .expect(200);
        verify(&new, &last(&inbox));

        // API keys act as members: they may send, but not read or rotate the secret.
        let created = s.client.graphql("mutation { createApiKey(name: \"crm sync\") { key } }", json!({})).await;
        let key = created["data"]["createApiKey"]["key"].as_str().unwrap().to_owned();
        let member = app.client().with_bearer(&key);
        for query in ["{ webhookSigningSecret }", "mutation { rotateWebhookSecret }"] {
            let denied = member.graphql(query, json!({})).await;
            assert_eq!(common::gql_error_code(&denied), "FORBIDDEN", "{denied}");
        }
        let sent = json!({ "tracker_vid": "alice", "webhook_url": format!("{hook}/hook/ok"), "siteId": s.site });
        member.post("/api/webhook", sent).await.expect(200);
        assert_eq!(secret(&s).await, new, "the secret did not change");
    }
}

#[tokio::test]
async fn bad_input_strangers_and_anonymous_callers_are_refused() {
    for app in apps_with(lenient).await {
        let s = scenario::feed(&app).await;
        let (hook, inbox) = receiver().await;
        let url = format!("{hook}/hook/ok");
        s.client
            .post("/api/webhook", json!({ "webhook_url": url, "siteId": s.site }))
            .await
            .expect_error(400, "VALIDATION_ERROR");
        s.client
            .post("/api/webhook", json!({ "tracker_vid": "alice", "siteId": s.site }))
            .await
            .expect_error(400, "VALIDATION_ERROR");
        let wrong_type = json!({ "tracker_vid": "alice", "webhook_url": url, "webhook_type": "fax", "siteId": s.site });
        s.client.post("/api/webhook", wrong_type).await.expect_error(400, "VALIDATION_ERROR");
        let wrong_flag =
            json!({ "tracker_vid": "alice", "webhook_url": url, "include_events": "yes", "siteId": s.site });
        s.client.post("/api/webhook", wrong_flag).await.expect_error(400, "VALIDATION_ERROR");
        s.client.post_raw("/api/webhook", "{not json").await.expect_error(400, "BAD_REQUEST");
        send(&s, json!({ "tracker_vid": "nobody", "webhook_url": url, "siteId": s.site }))
            .await
            .expect_error(404, "NOT_FOUND");
        let (stranger, _) = app.user_with_site("Zed", "zed.example").await;
        let foreign = json!({ "tracker_vid": "alice", "webhook_url": url, "siteId": s.site });
        stranger.post("/api/webhook", foreign.clone()).await.expect_error(404, "NOT_FOUND");
        app.client().post("/api/webhook", foreign).await.expect_error(401, "UNAUTHORIZED");
        assert!(inbox.lock().unwrap().is_empty());
    }
}

async fn refused(app: &TestApp, s: &scenario::Scenario, url: &str, kind: &str) {
    let body = json!({ "tracker_vid": "alice", "webhook_url": url, "webhook_type": kind, "siteId": s.site });
    let reply = s.client.post("/api/webhook", body).await;
    assert_eq!(reply.status.as_u16(), 400, "{url} ({}): {}", app.backend, reply.text);
    reply.expect_error(400, "INVALID_WEBHOOK_URL");
}

#[tokio::test]
async fn the_ssrf_guard_refuses_private_targets() {
    for app in apps_with(strict).await {
        let s = scenario::feed(&app).await;
        let (hook, inbox) = receiver().await;
        let port = hook.rsplit(':').next().unwrap().to_owned();
        for url in [
            format!("http://127.0.0.1:{port}/hook/ok"),
            "http://10.0.0.5/".to_owned(),
            "http://172.16.3.4/".to_owned(),
            "http://192.168.1.1/".to_owned(),
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "http://100.64.0.1/".to_owned(),
            "http://0.0.0.0/".to_owned(),
            "http://[::1]/".to_owned(),
            "http://[fc00::1]/".to_owned(),
            "http://[fd12:3456::1]/".to_owned(),
            "http://[fe80::1]/".to_owned(),
            "http://[::ffff:127.0.0.1]/".to_owned(),
            "http://[::ffff:10.0.0.1]/".to_owned(),
            "http://[2002:7f00:1::]/".to_owned(),
            "http://[64:ff9b::7f00:1]/".to_owned(),
            "http://[2001::1]/".to_owned(),
            format!("http://2130706433:{port}/hook/ok"),
            format!("http://0177.0.0.1:{port}/hook/ok"),
            format!("http://0x7f.1:{port}/hook/ok"),
            format!("http://localhost:{port}/hook/ok"),
            "ftp://example.com/hook".to_owned(),
            "file:///etc/passwd".to_owned(),
            "javascript:alert(1)".to_owned(),
            "not a url".to_owned(),
        ] {
            refused(&app, &s, &url, "custom").await;
        }
        // The product targets must be the products' own URLs.
        refused(&app, &s, "https://example.com/services/T/B/X", "chat_one").await;
        refused(&app, &s, "http://hooks.slack.com/services/T/B/X", "chat_one").await;
        refused(&app, &s, "https://example.com/workflows/1", "chat_two").await;
        assert!(inbox.lock().unwrap().is_empty(), "no request reached the receiver");
        // The name that resolved to loopback was an attempt, and it is logged.
        let log = s.client.graphql("{ webhookDeliveries { targetHost success error } }", json!({})).await;
        let rows = log["data"]["webhookDeliveries"].as_array().expect("log").clone();
        assert_eq!(rows.len(), 1, "{log}");
        assert_eq!(rows[0]["targetHost"], "localhost");
        assert_eq!(rows[0]["success"], false);
    }
}
