//! Property-based fuzzing of every route: random and mutated bodies, query
//! strings and path ids, from a signed-in caller. No answer may be a 5xx, and
//! the server must still be healthy afterwards. Also: every /api route refuses
//! an oversized body with 413.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{TestApp, apps};
use proptest::{prelude::*, strategy::ValueTree, test_runner::TestRunner};
use reqwest::Method;
use serde_json::{Value, json};

/// Field names the API knows, so random objects often hit real fields.
const KNOWN_KEYS: [&str; 24] = [
    "siteId",
    "site",
    "type",
    "tracker_vid",
    "url",
    "events",
    "destinationUrl",
    "slug",
    "campaign",
    "source",
    "medium",
    "link_type",
    "tags",
    "expires_at",
    "max_clicks",
    "is_active",
    "email",
    "password",
    "name",
    "query",
    "variables",
    "webhook_url",
    "webhook_type",
    "dry_run",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        ".{0,40}".prop_map(Value::String),
        Just(json!("https://example.com/a?b=c")),
        Just(json!("javascript:alert(1)")),
        // PostgreSQL's text cannot hold U+0000.
        Just(json!("a\u{0}b")),
        Just(json!("x".repeat(3000))),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KNOWN_KEYS.to_vec()).prop_map(str::to_owned), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

#[derive(Debug, Clone)]
enum Body {
    None,
    Json(Value),
    Raw(String),
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        Just(Body::None),
        json_value().prop_map(Body::Json),
        ".{0,200}".prop_map(Body::Raw),
        prop::collection::vec(any::<u8>(), 0..200)
            .prop_map(|bytes| Body::Raw(String::from_utf8_lossy(&bytes).into_owned())),
    ]
}

fn path_id() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        Just("lnk_1".to_owned()),
        "lnk_[0-9]{1,25}",
        "[a-zA-Z0-9_.~-]{0,80}",
        ".{1,20}".prop_map(|s| url::form_urlencoded::byte_serialize(s.as_bytes()).collect()),
        Just("..%2F..%2Fetc%2Fpasswd".to_owned()),
    ]
}

fn query() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        prop::sample::select(vec![
            "siteId",
            "limit",
            "timeRange",
            "filter",
            "range",
            "slug",
            "campaign",
            "source",
            "tracker_vid"
        ])
        .prop_map(str::to_owned),
        "[a-z]{1,8}",
    ];
    let value = prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        Just("1".to_owned()),
        Just("24h".to_owned()),
        Just("bot".to_owned()),
        Just("a%00b".to_owned()),
        ".{0,30}".prop_map(|s| url::form_urlencoded::byte_serialize(s.as_bytes()).collect()),
    ];
    prop::collection::vec((key, value), 0..5)
        .prop_map(|pairs| pairs.into_iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&"))
}

/// Every /api route, plus the public and GraphQL ones.
fn routes() -> Vec<(&'static str, &'static str)> {
    let mut routes = leadtrail::rest::route_list();
    routes.extend([
        ("POST", "/api/collect"),
        ("GET", "/l/{id}/{id}"),
        ("GET", "/l/{id}/{id}/qr.svg"),
        ("POST", "/graphql"),
        ("GET", "/graphql"),
        ("GET", "/script.js"),
    ]);
    routes
}

fn method(name: &str) -> Method {
    Method::from_bytes(name.as_bytes()).unwrap()
}

async fn fuzz(app: &TestApp, runtime_cases: u32) {
    let (client, _) = app.user_with_site("Fuzz", "fuzz.example").await;
    let routes = routes();
    let strategy = (0..routes.len(), path_id(), path_id(), query(), body());
    // Deterministic per run, so a failure can be replayed.
    let mut runner = TestRunner::deterministic();
    let cases: Vec<_> = (0..runtime_cases).map(|_| strategy.new_tree(&mut runner).expect("a case").current()).collect();
    for (index, first, second, query, body) in cases {
        let (verb, pattern) = routes[index];
        let mut path = pattern.replacen("{id}", &first, 1).replacen("{id}", &second, 1);
        if !query.is_empty() {
            path = format!("{path}?{query}");
        }
        // The account-deleting and signing-out routes would end the caller's session.
        if pattern == "/api/auth/delete-user" || pattern == "/api/auth/sign-out" {
            continue;
        }
        let body = match body {
            Body::None => None,
            Body::Json(value) => Some(common::RequestBody::Json(value)),
            Body::Raw(text) => Some(common::RequestBody::Raw(text)),
        };
        let reply = client.request(method(verb), &path, body).await;
        assert!(reply.status.as_u16() < 500, "{verb} {path} answered {}: {}", reply.status, reply.text);
    }
    app.client().get("/health/ready").await.expect(200);
}

#[tokio::test]
async fn no_input_makes_a_route_fail_with_5xx() {
    for app in apps().await {
        fuzz(&app, 600).await;
    }
}

#[tokio::test]
async fn every_api_route_refuses_an_oversized_body() {
    for app in apps().await {
        let (client, _) = app.user_with_site("Big", "big.example").await;
        let huge = json!({ "name": "x".repeat(2 * 1024 * 1024) });
        for (verb, pattern) in leadtrail::rest::route_list() {
            if verb == "GET" {
                continue;
            }
            let path = pattern.replace("{id}", "1");
            let reply = client.request(method(verb), &path, Some(common::RequestBody::Json(huge.clone()))).await;
            assert_eq!(reply.status.as_u16(), 413, "{verb} {path}: {}", reply.text);
            reply.expect_error(413, "PAYLOAD_TOO_LARGE");
        }
        for path in ["/api/collect", "/graphql"] {
            let reply = client.request(Method::POST, path, Some(common::RequestBody::Json(huge.clone()))).await;
            reply.expect_error(413, "PAYLOAD_TOO_LARGE");
        }
    }
}
