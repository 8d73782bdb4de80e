//! Cross-site request forgery, login CSRF included: an unsafe request from a
//! foreign Origin or with `Sec-Fetch-Site: cross-site` is refused before it
//! can sign anyone in, and the account routes take JSON bodies only.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{TestApp, apps, unique};
use reqwest::{Method, header::HeaderMap};
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse";
const EVIL: &str = "https://evil.example";

/// The answer to one hand-made request.
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Value,
}

impl Answer {
    #[track_caller]
    fn expect_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.body["code"], code, "{}", self.body);
        assert!(self.body["message"].is_string(), "{}", self.body);
    }

    fn sets_session(&self) -> bool {
        self.headers.get_all("set-cookie").iter().any(|c| c.to_str().unwrap().starts_with("session="))
    }
}

/// Sends `body` with exactly the headers given (no Content-Type unless named).
async fn send(app: &TestApp, method: Method, path: &str, headers: &[(&str, &str)], body: Option<&str>) -> Answer {
    let mut request = reqwest::Client::new().request(method, format!("{}{path}", app.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.body(body.to_owned());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = serde_json::from_str(&response.text().await.unwrap()).unwrap_or(Value::Null);
    Answer { status, headers, body }
}

async fn post(app: &TestApp, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    send(app, Method::POST, path, headers, Some(body)).await
}

const JSON: (&str, &str) = ("content-type", "application/json");

fn sign_up_body() -> String {
    json!({ "name": "Eve", "email": format!("{}@example.com", unique("eve")), "password": PASSWORD }).to_string()
}

#[tokio::test]
async fn sign_in_and_sign_up_refuse_foreign_sites() {
    for app in apps().await {
        let (_, email) = app.user("Victim").await;
        let sign_in = json!({ "email": email, "password": PASSWORD }).to_string();
        let cross_site = ("sec-fetch-site", "cross-site");
        for headers in [vec![JSON, ("origin", EVIL)], vec![JSON, cross_site], vec![JSON, ("origin", "null")]] {
            let answer = post(&app, "/api/auth/sign-in/email", &headers, &sign_in).await;
            answer.expect_error(403, "INVALID_ORIGIN");
            assert!(!answer.sets_session(), "no cookie for a forged sign-in ({headers:?})");
            let answer = post(&app, "/api/auth/sign-up/email", &headers, &sign_up_body()).await;
            answer.expect_error(403, "INVALID_ORIGIN");
            assert!(!answer.sets_session(), "no cookie for a forged sign-up ({headers:?})");
        }
        // A foreign Origin loses even when fetch metadata claims otherwise.
        let mixed = [JSON, ("origin", EVIL), ("sec-fetch-site", "same-origin")];
        post(&app, "/api/auth/sign-in/email", &mixed, &sign_in).await.expect_error(403, "INVALID_ORIGIN");
        // GraphQL's own signIn is guarded the same way.
        let mutation = format!(r#"mutation {{ signIn(email: "{email}", password: "{PASSWORD}") {{ token }} }}"#);
        let graphql = json!({ "query": mutation }).to_string();
        let answer = post(&app, "/graphql", &[JSON, ("origin", EVIL)], &graphql).await;
        answer.expect_error(403, "INVALID_ORIGIN");
        assert!(!answer.sets_session());

        // This site, same-site and user-initiated fetches, and clients that
        // send no Origin at all (curl, servers, Better Auth's node client).
        let base = app.base.clone();
        for headers in [
            vec![JSON, ("origin", base.as_str()), ("sec-fetch-site", "same-origin")],
            vec![JSON, ("sec-fetch-site", "same-site")],
            vec![JSON, ("sec-fetch-site", "none")],
            vec![JSON],
        ] {
            let answer = post(&app, "/api/auth/sign-in/email", &headers, &sign_in).await;
            assert_eq!(answer.status, 200, "{headers:?}: {}", answer.body);
            assert!(answer.sets_session());
            let answer = post(&app, "/api/auth/sign-up/email", &headers, &sign_up_body()).await;
            assert_eq!(answer.status, 200, "{headers:?}: {}", answer.body);
        }
    }
}

#[tokio::test]
async fn the_account_routes_take_json_only() {
    for app in apps().await {
        let (client, email) = app.user("Form").await;
        let sign_in = json!({ "email": email, "password": PASSWORD }).to_string();
        // The bodies a page elsewhere can send without a CORS preflight.
        for content_type in ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded"] {
            let answer = post(&app, "/api/auth/sign-in/email", &[("content-type", content_type)], &sign_in).await;
            answer.expect_error(415, "BAD_REQUEST");
            assert!(!answer.sets_session(), "{content_type}");
            let answer =
                post(&app, "/api/auth/sign-up/email", &[("content-type", content_type)], &sign_up_body()).await;
            answer.expect_error(415, "BAD_REQUEST");
        }
        let form = "email=a%40example.com&password=x";
        let multipart = ("content-type", "multipart/form-data; boundary=x");
        post(&app, "/api/auth/sign-in/email", &[multipart], form).await.expect_error(415, "BAD_REQUEST");
        // A Blob body with no type is sent without Content-Type.
        post(&app, "/api/auth/sign-in/email", &[], &sign_in).await.expect_error(415, "BAD_REQUEST");
        let cookie = format!("session={}", client.session.clone().unwrap());
        let signed_in = [("cookie", cookie.as_str()), ("content-type", "text/plain")];
        post(&app, "/api/auth/update-user", &signed_in, r#"{"name":"x"}"#).await.expect_error(415, "BAD_REQUEST");

        // JSON with parameters is JSON.
        let charset = ("content-type", "Application/JSON; charset=utf-8");
        assert_eq!(post(&app, "/api/auth/sign-in/email", &[charset], &sign_in).await.status, 200);
        // Routes without a body work without one.
        let answer = send(&app, Method::POST, "/api/auth/sign-out", &[("cookie", cookie.as_str())], None).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert_eq!(answer.body, json!({ "success": true }));
    }
}

#[tokio::test]
async fn collect_stays_open_to_every_site() {
    for app in apps().await {
        let (_, site) = app.user_with_site("Shop", "shop.example").await;
        let event = json!({ "site": site, "type": "pageview", "url": "https://shop.example/", "tracker_vid": "v-1" });
        let headers = [("content-type", "text/plain"), ("origin", EVIL), ("sec-fetch-site", "cross-site")];
        let answer = post(&app, "/api/collect", &headers, &event.to_string()).await;
        assert_eq!(answer.status, 202, "{}", answer.body);
        assert_eq!(answer.headers["access-control-allow-origin"], "*");
    }
}

#[tokio::test]
async fn api_keys_are_not_cross_site_requests() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Ops", "ops.example").await;
        let created = client.graphql("mutation { createApiKey(name: \"backend\") { key } }", json!({})).await;
        let key = created["data"]["createApiKey"]["key"].as_str().unwrap().to_owned();
        let bearer = format!("Bearer {key}");
        let body = json!({ "siteId": site, "tracker_vid": "v-9", "email": "pat@example.com" }).to_string();
        // A browser cannot attach a bearer key to a foreign request by itself,
        // so whatever Origin the caller's runtime sends does not matter.
        let headers = [JSON, ("authorization", bearer.as_str()), ("origin", EVIL)];
        let answer = post(&app, "/api/identify", &headers, &body).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        // The same request with the cookie instead is a forgery.
        let cookie = format!("session={}", client.session.clone().unwrap());
        let headers = [JSON, ("cookie", cookie.as_str()), ("origin", EVIL)];
        post(&app, "/api/identify", &headers, &body).await.expect_error(403, "INVALID_ORIGIN");
        let headers = [JSON, ("cookie", cookie.as_str()), ("sec-fetch-site", "cross-site")];
        post(&app, "/api/identify", &headers, &body).await.expect_error(403, "INVALID_ORIGIN");
    }
}
