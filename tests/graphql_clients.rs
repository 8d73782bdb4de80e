//! /graphql as real GraphQL clients see it: graphql-js loads the schema by
//! its standard introspection query, graphql-http's audit checks the
//! GraphQL-over-HTTP spec, and plain HTTP checks the media types, statuses and
//! limit errors behind both.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::{path::Path, process::Command};

use common::{TestApp, apps, apps_with};
use serde_json::{Value, json};

const GRAPHQL_RESPONSE_JSON: &str = "application/graphql-response+json";

/// Runs `node tests/clients/<script> <base> <args>`; None (after printing
/// SKIPPED) when node or the client packages are not installed.
async fn node(script: &str, base: &str, args: &[&str]) -> Option<std::process::Output> {
    let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients");
    if !clients.join("node_modules/graphql-http").is_dir() || !clients.join("node_modules/graphql").is_dir() {
        println!("SKIPPED: tests/clients/node_modules is missing; run `npm ci --prefix tests/clients`");
        return None;
    }
    let mut command = Command::new("node");
    command.arg(clients.join(script)).arg(base).args(args).current_dir(&clients);
    // The server runs on this test's runtime; wait for node off it.
    let output = tokio::task::spawn_blocking(move || command.output()).await.unwrap();
    match output {
        Ok(output) => Some(output),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            println!("SKIPPED: node is not installed");
            None
        }
        Err(err) => panic!("running node {script}: {err}"),
    }
}

fn report(output: &std::process::Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[tokio::test]
async fn graphql_js_loads_the_schema_by_its_standard_introspection_query() {
    for app in apps().await {
        // Compared with the SDL the code exports; whether schema.graphql holds
        // it is `graphql.rs`'s test.
        let dir = tempfile::tempdir().unwrap();
        let sdl = dir.path().join("schema.graphql");
        std::fs::write(&sdl, leadtrail::graphql::sdl()).unwrap();
        let schema = format!("--schema={}", sdl.display());
        // No session: tooling reads the schema before anyone signs in.
        let Some(output) = node("introspection.mjs", &app.base, &[&schema]).await else { return };
        assert!(output.status.success(), "[{}] {}", app.backend, report(&output));
        println!("[{}] {}", app.backend, String::from_utf8_lossy(&output.stdout).trim());
    }
}

#[tokio::test]
async fn graphql_over_http_audit_passes() {
    for app in apps().await {
        // Every audit, MUST, SHOULD and MAY alike, passes.
        let Some(output) = node("graphql_http_audit.mjs", &app.base, &["--strict"]).await else { return };
        assert!(output.status.success(), "[{}] {}", app.backend, report(&output));
        println!("[{}] {}", app.backend, String::from_utf8_lossy(&output.stdout).trim());
    }
}

#[tokio::test]
async fn introspection_turned_off_is_refused_with_a_code() {
    for app in apps_with(|config| config.graphql_introspection = false).await {
        if let Some(output) = node("introspection.mjs", &app.base, &[]).await {
            assert!(!output.status.success(), "[{}] introspection was served: {}", app.backend, report(&output));
            assert!(String::from_utf8_lossy(&output.stderr).contains("turned off"), "{}", report(&output));
        }
        for query in ["{ __schema { queryType { name } } }", "{ __type(name: \"Site\") { name } }"] {
            let (status, _, body) = post(&app, Some(GRAPHQL_RESPONSE_JSON), query).await;
            assert_eq!(status, 400, "{query}: {body}");
            assert!(body.get("data").is_none(), "{query}: {body}");
            assert_eq!(body["errors"][0]["extensions"]["code"], "BAD_REQUEST", "{query}: {body}");
        }
        // `__typename` is not introspection of the schema; clients add it everywhere.
        let (status, _, body) = post(&app, Some(GRAPHQL_RESPONSE_JSON), "{ __typename }").await;
        assert_eq!((status, &body), (200, &json!({ "data": { "__typename": "Query" } })));
    }
}

/// POST /graphql with `{"query": query}`: status, content type, body.
async fn post(app: &TestApp, accept: Option<&str>, query: &str) -> (u16, String, Value) {
    send(app, accept, Some("application/json"), json!({ "query": query }).to_string()).await
}

async fn send(app: &TestApp, accept: Option<&str>, content_type: Option<&str>, body: String) -> (u16, String, Value) {
    let mut request = reqwest::Client::new().post(format!("{}/graphql", app.base)).body(body);
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    if let Some(content_type) = content_type {
        request = request.header("content-type", content_type);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let media = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    let text = response.text().await.unwrap();
    (status, media, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test]
async fn the_answer_speaks_the_media_type_the_client_accepts() {
    for app in apps().await {
        for (accept, media) in [
            (Some("application/json"), "application/json"),
            (None, "application/json"),
            (Some("*/*"), "application/json"),
            (Some(GRAPHQL_RESPONSE_JSON), GRAPHQL_RESPONSE_JSON),
            (Some("application/graphql-response+json, application/json;q=0.9"), GRAPHQL_RESPONSE_JSON),
            (Some("application/graphql-response+json;q=0.5, application/json"), "application/json"),
        ] {
            let (status, content_type, body) = post(&app, accept, "{ __typename }").await;
            assert_eq!(status, 200, "{accept:?}: {body}");
            assert_eq!(content_type, media, "{accept:?}");
            assert_eq!(body, json!({ "data": { "__typename": "Query" } }));
        }
    }
}

#[tokio::test]
async fn request_errors_have_no_data_and_are_400_in_graphql_response_json() {
    for app in apps().await {
        let unknown_field = "{ noSuchField }";
        let unused_variable = "query($id: ID!) { __typename }";
        for query in ["{", "{ viewer { id ", unknown_field, unused_variable] {
            let (status, media, body) = post(&app, Some(GRAPHQL_RESPONSE_JSON), query).await;
            assert_eq!((status, media.as_str()), (400, GRAPHQL_RESPONSE_JSON), "{query}: {body}");
            assert!(body.get("data").is_none(), "{query}: a request error has no data entry: {body}");
            assert_eq!(body["errors"][0]["extensions"]["code"], "VALIDATION_ERROR", "{query}: {body}");

            // application/json keeps the status that clients before the spec expect.
            let (status, media, body) = post(&app, Some("application/json"), query).await;
            assert_eq!((status, media.as_str()), (200, "application/json"), "{query}: {body}");
            assert!(body.get("data").is_none(), "{query}: {body}");
            assert_eq!(body["errors"][0]["extensions"]["code"], "VALIDATION_ERROR", "{query}: {body}");
        }

        // An error while executing is not a request error: data stays, status 200.
        let (status, _, body) = post(&app, Some(GRAPHQL_RESPONSE_JSON), "{ sites { id } }").await;
        assert_eq!(status, 200, "{body}");
        assert!(body.get("data").is_some(), "{body}");
        assert_eq!(body["errors"][0]["extensions"]["code"], "UNAUTHORIZED", "{body}");
    }
}

#[tokio::test]
async fn a_body_that_is_not_json_is_415_with_the_error_body() {
    for app in apps().await {
        let query = json!({ "query": "{ __typename }" }).to_string();
        for content_type in
            [Some("text/plain"), Some("application/x-www-form-urlencoded"), Some("application/graphql"), None]
        {
            let (status, media, body) = send(&app, None, content_type, query.clone()).await;
            assert_eq!(status, 415, "{content_type:?}: {body}");
            assert_eq!(media, "application/json");
            assert_eq!(body["code"], "BAD_REQUEST", "{content_type:?}: {body}");
            assert!(body["message"].as_str().is_some_and(|m| m.contains("application/json")), "{body}");
            assert_eq!(body.as_object().unwrap().len(), 2, "only code and message: {body}");
        }
        let (status, _, _) = send(&app, None, Some("application/json; charset=utf-8"), query).await;
        assert_eq!(status, 200);
        // Parameters of the wrong type are refused before any GraphQL runs.
        for body in [json!({ "query": 1 }), json!({ "notquery": "{ __typename }" })] {
            let (status, _, answer) = send(&app, None, Some("application/json"), body.to_string()).await;
            assert_eq!((status, &answer["code"]), (400, &json!("VALIDATION_ERROR")), "{body}: {answer}");
        }
    }
}

fn nested(levels: usize) -> String {
    format!(
        "__schema {{ types {{ fields {{ type {}{{ name }}{} }} }} }}",
        "{ ofType ".repeat(levels),
        " }".repeat(levels)
    )
}

#[tokio::test]
async fn introspection_is_held_to_its_budget_not_the_depth_limit() {
    for app in apps().await {
        // 18 levels: past the depth limit, yet only schema tooling's shape.
        let deep = format!("{{ {} }}", nested(14));
        let (status, _, body) = post(&app, Some(GRAPHQL_RESPONSE_JSON), &deep).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.get("errors").is_none() && body["data"]["__schema"]["types"].is_array(), "{body}");

        // Lists under lists, repeated under aliases, multiply: refused whole.
        let fan_out: String = (0..30)
            .map(|i| format!("a{i}: __schema {{ types {{ fields {{ type {{ ofType {{ fields {{ name type {{ name }} }} }} }} }} }} }} "))
            .collect();
        let (status, _, body) = post(&app, Some(GRAPHQL_RESPONSE_JSON), &format!("{{ {fan_out} }}")).await;
        assert_eq!(status, 400, "{body}");
        assert!(body.get("data").is_none(), "{body}");
        assert_eq!(body["errors"].as_array().unwrap().len(), 1, "one error, not one per field: {body}");
        assert_eq!(body["errors"][0]["extensions"]["code"], "BAD_REQUEST", "{body}");
        assert!(body["errors"][0]["message"].as_str().unwrap().contains("Introspection is too large"), "{body}");
    }
}

#[tokio::test]
async fn limit_errors_carry_a_code() {
    for app in apps().await {
        let (client, _) = app.user("Limits").await;
        let session = client.session.clone().unwrap();
        let site = client.post("/api/sites", json!({ "domain": "limits.example" })).await.expect(200)["site"]["siteId"]
            .as_i64()
            .unwrap();
        let signed_in = |query: String, accept: &'static str| {
            let request = reqwest::Client::new()
                .post(format!("{}/graphql", app.base))
                .header("cookie", format!("session={session}"))
                .header("accept", accept)
                .json(&json!({ "query": query }));
            async move {
                let response = request.send().await.unwrap();
                (response.status().as_u16(), response.json::<Value>().await.unwrap())
            }
        };

        // A query that selects real fields keeps the depth limit, whatever else it nests.
        let deep = format!("{{ viewer {{ id }} {} }}", nested(14));
        let wide: String = (0..5)
            .map(|i| format!("a{i}: visitors(siteId: {site}, first: 500) {{ nodes {{ recentEvents {{ page }} }} }} "))
            .collect();
        // Past the parser's nesting limit (32).
        let recursive = format!("{{ viewer {}{{ id }}{} }}", "{ ... on User ".repeat(40), " }".repeat(40));
        for (query, words) in [(deep, "too deep"), (format!("{{ {wide} }}"), "too complex"), (recursive, "recursion")] {
            for (accept, status) in [("application/json", 200), (GRAPHQL_RESPONSE_JSON, 400)] {
                let (got, body) = signed_in(query.clone(), accept).await;
                assert_eq!(got, status, "{accept}: {body}");
                assert!(body.get("data").is_none(), "{body}");
                let error = &body["errors"][0];
                assert!(error["message"].as_str().unwrap().contains(words), "{words}: {body}");
                assert_eq!(error["extensions"]["code"], "BAD_REQUEST", "{words}: {body}");
            }
        }
    }
}

#[tokio::test]
async fn a_document_nested_past_every_limit_is_refused_not_a_crash() {
    for app in apps().await {
        // 25,000 levels fill most of the 256 KB body limit.
        for levels in [100, 25_000] {
            let query = format!("{{{}id{}}}", "viewer{".repeat(levels), "}".repeat(levels));
            let (status, _, body) = post(&app, Some(GRAPHQL_RESPONSE_JSON), &query).await;
            assert_eq!(status, 400, "{levels}: {body}");
            assert_eq!(body["errors"][0]["extensions"]["code"], "BAD_REQUEST", "{levels}: {body}");
        }
        app.client().get("/health/live").await.expect(200);
    }
}
