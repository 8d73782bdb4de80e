//! Health, metrics, fallbacks, body limits and response headers.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::apps;
use serde_json::json;

#[tokio::test]
async fn health_probes_answer() {
    for app in apps().await {
        let client = app.client();
        assert_eq!(client.get("/health/live").await.expect(200), &json!({ "status": "ok" }));
        assert_eq!(client.get("/health/ready").await.expect(200), &json!({ "status": "ok" }));
        app.state.db.clone().close().await.unwrap();
        // The background ping notices within a quarter of a second.
        let mut down = client.get("/health/ready").await;
        for _ in 0..40 {
            if down.status.as_u16() == 503 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            down = client.get("/health/ready").await;
        }
        down.expect_error(503, "UNAVAILABLE");
        assert!(down.headers.contains_key("retry-after"));
    }
}

#[tokio::test]
async fn metrics_count_requests_by_route() {
    for app in apps().await {
        let client = app.client();
        client.get("/health/live").await.expect(200);
        client.get("/api/sites/").await;
        let metrics = client.get("/metrics").await;
        metrics.expect(200);
        assert!(metrics.headers["content-type"].to_str().unwrap().starts_with("text/plain"));
        assert!(
            metrics.text.contains(r#"leadtrail_http_requests_total{method="GET",route="/health/live",status="200"} 1"#),
            "{}",
            metrics.text
        );
        assert!(metrics.text.contains("leadtrail_http_request_duration_seconds_bucket"));
    }
}

#[tokio::test]
async fn unknown_routes_answer_json_404() {
    for app in apps().await {
        app.client().get("/api/nothing-here").await.expect_error(404, "NOT_FOUND");
    }
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    for app in apps().await {
        let (client, _) = app.user("Big").await;
        let name = "x".repeat(100 * 1024);
        client.post("/api/auth/update-user", json!({ "name": name })).await.expect_error(413, "PAYLOAD_TOO_LARGE");
        let query = format!("{{ viewer {{ id }} }} #{}", "x".repeat(300 * 1024));
        client.post("/graphql", json!({ "query": query })).await.expect_error(413, "PAYLOAD_TOO_LARGE");
    }
}

#[tokio::test]
async fn responses_carry_security_headers() {
    for app in apps().await {
        for path in ["/api/profile", "/graphql", "/health/live"] {
            let reply = app.client().get(path).await;
            assert_eq!(reply.headers["x-content-type-options"], "nosniff", "{path}");
            assert_eq!(reply.headers["referrer-policy"], "strict-origin-when-cross-origin", "{path}");
        }
    }
}

#[tokio::test]
async fn no_session_is_401_before_any_input_is_checked() {
    for app in apps().await {
        let anonymous = app.client();
        for (method, path) in [
            ("POST", "/api/links"),
            ("POST", "/api/sites"),
            ("POST", "/api/identify"),
            ("POST", "/api/auth/update-user"),
            ("POST", "/api/auth/change-email"),
            ("POST", "/api/auth/change-password"),
            ("PUT", "/api/sites/abc"),
            ("PUT", "/api/links/nope"),
            ("GET", "/api/identify"),
            ("GET", "/api/links/check-slug"),
            ("GET", "/api/link-analytics?range=bogus"),
        ] {
            let reply = match method {
                "POST" => anonymous.post(path, json!({})).await,
                "PUT" => anonymous.put(path, json!({})).await,
                _ => anonymous.get(path).await,
            };
            assert_eq!(reply.status.as_u16(), 401, "{method} {path}: {}", reply.text);
            assert_eq!(reply.body["code"], "UNAUTHORIZED");
        }
    }
}

#[tokio::test]
async fn a_wrong_method_answers_405_with_the_error_body() {
    for app in apps().await {
        let reply = app.client().get("/api/links/lnk_1").await;
        assert_eq!(reply.status.as_u16(), 405, "{}", reply.text);
        assert_eq!(reply.body["code"], "BAD_REQUEST");
        let reply = app.client().delete("/api/profile").await;
        assert_eq!(reply.status.as_u16(), 405, "{}", reply.text);
        assert!(reply.body["message"].is_string());
    }
}
