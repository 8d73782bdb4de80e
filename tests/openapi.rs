//! GET /api/openapi.json: every routed path is documented with its
//! parameters and answer schema, every documented path is routed, and real
//! answers conform to the documented schemas.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps_with, scenario, unique};
use leadtrail::config::TrustProxy;
use reqwest::Method;
use serde_json::{Value, json};

/// The routes outside `/api`'s table that the document covers.
const PUBLIC: [(&str, &str); 5] = [
    ("POST", "/api/collect"),
    ("GET", "/l/{site}/{link}"),
    ("GET", "/l/{site}/{link}/qr.svg"),
    ("GET", "/script.js"),
    ("GET", "/api/openapi.json"),
];

/// A small JSON Schema check: type, properties, required, items, anyOf.
fn conforms(value: &Value, schema: &Value, at: &str) -> Result<(), String> {
    if let Some(options) = schema["anyOf"].as_array() {
        return if options.iter().any(|option| conforms(value, option, at).is_ok()) {
            Ok(())
        } else {
            Err(format!("{at}: {value} matches no anyOf option"))
        };
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => return Ok(()),
    };
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    if !types.iter().any(|t| *t == kind || (*t == "number" && kind == "integer")) {
        return Err(format!("{at}: {kind} where the schema says {types:?}"));
    }
    if let (Value::Object(object), Some(properties)) = (value, schema["properties"].as_object()) {
        for key in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if !object.contains_key(key) {
                return Err(format!("{at}: missing {key}"));
            }
        }
        for (key, item) in object {
            match properties.get(key) {
                Some(property) => conforms(item, property, &format!("{at}.{key}"))?,
                None => return Err(format!("{at}: {key} is not documented")),
            }
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
        for (index, item) in items.iter().enumerate() {
            conforms(item, item_schema, &format!("{at}[{index}]"))?;
        }
    }
    Ok(())
}

#[tokio::test]
async fn the_document_covers_exactly_the_routes() {
    for app in apps_with(|config| config.trust_proxy = TrustProxy::Cloudflare).await {
        let reply = app.client().get("/api/openapi.json").await;
        let document = reply.expect(200).clone();
        assert_eq!(document["openapi"], "3.1.0");
        let mut routed: Vec<(String, String)> =
            leadtrail::rest::route_list().into_iter().map(|(m, p)| (m.to_owned(), p.to_owned())).collect();
        routed.extend(PUBLIC.iter().map(|(m, p)| ((*m).to_owned(), (*p).to_owned())));
        routed.sort();
        let mut documented: Vec<(String, String)> = Vec::new();
        for (path, item) in document["paths"].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                documented.push((method.to_uppercase(), path.clone()));
            }
        }
        documented.sort();
        assert_eq!(documented, routed, "the document and the router list the same operations");

        for (method, path) in &routed {
            let operation = &document["paths"][path][method.to_lowercase()];
            let success = ["200", "202", "302"].iter().find_map(|s| operation["responses"].get(*s));
            assert!(success.is_some(), "{method} {path} documents its success answer");
            let declared: Vec<&str> = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path")
                .filter_map(|p| p["name"].as_str())
                .collect();
            let in_path: Vec<&str> =
                path.split('/').filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}'))).collect();
            assert_eq!(declared, in_path, "{method} {path} declares its path parameters");
            if path.starts_with("/api/") && method == "GET" && !path.contains("openapi") {
                let schema = &operation["responses"]["200"]["content"]["application/json"]["schema"];
                assert!(
                    schema.get("type").is_some() || schema.get("anyOf").is_some(),
                    "{method} {path} has an answer schema"
                );
            }
            // The router serves every documented path: it never answers "no such route".
            let probe = path.replace("{id}", "1").replace("{site}", "x").replace("{link}", "y");
            let reply = app.client().request(Method::from_bytes(method.as_bytes()).unwrap(), &probe, None).await;
            assert_ne!(reply.status.as_u16(), 405, "{method} {path}");
            assert!(!reply.text.contains("route not found"), "{method} {path} is routed: {}", reply.text);
        }
        assert_eq!(document["components"]["schemas"]["Error"]["required"], json!(["code", "message"]));
    }
}

#[tokio::test]
async fn real_answers_conform_to_the_documented_schemas() {
    for app in apps_with(|config| config.trust_proxy = TrustProxy::Cloudflare).await {
        let document = app.client().get("/api/openapi.json").await.expect(200).clone();
        let s = scenario::feed(&app).await;
        let session = s.get(&format!("/api/visitor/alice?siteId={}", s.site)).await["sessions"][0]["session_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let site = s.site;
        let calls = [
            ("/api/profile", "/api/profile".to_owned()),
            ("/api/sites", "/api/sites".to_owned()),
            ("/api/auth/get-session", "/api/auth/get-session".to_owned()),
            ("/api/identify", format!("/api/identify?siteId={site}&tracker_vid=alice")),
            ("/api/links", format!("/api/links?siteId={site}")),
            ("/api/links/check-slug", format!("/api/links/check-slug?siteId={site}&slug=promo")),
            ("/api/link-analytics", format!("/api/link-analytics?siteId={site}")),
            ("/api/visitors", format!("/api/visitors?siteId={site}")),
            ("/api/visitor", format!("/api/visitor?siteId={site}&timeRange=all")),
            ("/api/visitor/{id}", format!("/api/visitor/alice?siteId={site}")),
            ("/api/visitor/{id}", format!("/api/visitor/bob?siteId={site}")),
            ("/api/stats", format!("/api/stats?siteId={site}")),
            ("/api/session/{id}", format!("/api/session/{session}?siteId={site}")),
            ("/api/webhook", "/api/webhook".to_owned()),
        ];
        for (pattern, path) in calls {
            let answer = s.get(&path).await;
            let schema =
                &document["paths"][pattern]["get"]["responses"]["200"]["content"]["application/json"]["schema"];
            conforms(&answer, schema, pattern).unwrap_or_else(|err| panic!("GET {path}: {err}"));
        }
        let error = s.client.get("/api/stats?siteId=abc").await;
        conforms(&error.body, &document["components"]["schemas"]["Error"], "error").unwrap();
        let preview = s
            .client
            .post("/api/webhook", json!({ "siteId": site, "tracker_vid": "alice", "webhook_url": "https://example.com/", "dry_run": true }))
            .await;
        let schema =
            &document["paths"]["/api/webhook"]["post"]["responses"]["200"]["content"]["application/json"]["schema"];
        conforms(preview.expect(200), schema, "webhook preview").unwrap();
    }
}

/// Provokes the answers each route is known to give and finds every one in
/// the document: a status the document leaves out breaks clients generated
/// from it, and schemathesis' status_code_conformance.
#[tokio::test]
async fn every_answer_the_server_gives_is_documented() {
    for app in apps_with(|config| config.auth_rate_limit_per_minute = 3).await {
        let document = app.client().get("/api/openapi.json").await.expect(200).clone();
        let documented = |method: &str, pattern: &str, status: u16| {
            let responses = &document["paths"][pattern][method.to_lowercase()]["responses"];
            assert!(responses.get(status.to_string()).is_some(), "{method} {pattern} answers {status}, undocumented");
            assert!(responses[status.to_string()]["content"]["application/json"].is_object(), "{method} {pattern}");
        };
        let mut seen = Vec::new();
        let mut record = |method: &str, pattern: &str, status: u16| {
            documented(method, pattern, status);
            seen.push((method.to_owned(), pattern.to_owned(), status));
        };
        let (client, email) = app.user("Doc").await;
        let http = reqwest::Client::new();
        for (method, pattern) in leadtrail::rest::route_list() {
            let path = pattern.replace("{id}", "1");
            let verb = Method::from_bytes(method.as_bytes()).unwrap();
            if !pattern.starts_with("/api/auth/") || method == "GET" {
                let signed_out = app.client().request(verb.clone(), &path, None).await;
                if signed_out.status.as_u16() != 200 {
                    record(method, pattern, signed_out.status.as_u16());
                }
            }
            // Any route refuses a body declared too large.
            let large = http.request(verb.clone(), format!("{}{path}", app.base)).header("content-length", "999999");
            let large = large.body(vec![b' '; 999_999]).send().await.unwrap();
            record(method, pattern, large.status().as_u16());
            if method == "GET" {
                continue;
            }
            let forged = client.clone().with_origin("https://evil.example").request(verb.clone(), &path, None).await;
            forged.expect_error(403, "INVALID_ORIGIN");
            record(method, pattern, 403);
            if pattern.starts_with("/api/auth/") {
                let form = http.post(format!("{}{path}", app.base)).header("content-type", "text/plain").body("{}");
                let form = form.send().await.unwrap();
                assert_eq!(form.status().as_u16(), 415, "{pattern}");
                record(method, pattern, 415);
            }
        }
        let sign_in = "/api/auth/sign-in/email";
        let wrong = app.client().post(sign_in, json!({ "email": email, "password": "wrong password" })).await;
        wrong.expect_error(401, "INVALID_EMAIL_OR_PASSWORD");
        record("POST", sign_in, 401);
        let mut limited = wrong;
        for _ in 0..3 {
            limited = app.client().post(sign_in, json!({ "email": email, "password": "wrong password" })).await;
        }
        limited.expect_error(429, "RATE_LIMITED");
        record("POST", sign_in, 429);
        let sign_up = "/api/auth/sign-up/email";
        let taken =
            app.client().post(sign_up, json!({ "name": "D", "email": email, "password": "correct horse" })).await;
        taken.expect_error(409, "EMAIL_IN_USE");
        record("POST", sign_up, 409);
        let bad = json!({ "name": "D", "email": format!("{}@example.com", unique("d")), "password": "short" });
        app.client().post(sign_up, bad).await.expect_error(400, "PASSWORD_TOO_SHORT");
        record("POST", sign_up, 400);
        assert!(seen.len() > 60, "every route was provoked: {}", seen.len());
        for pattern in ["/api/auth/sign-in/email", "/api/auth/sign-up/email", "/api/auth/change-password"] {
            documented("POST", pattern, 429);
            let retry_after = &document["paths"][pattern]["post"]["responses"]["429"]["headers"]["Retry-After"];
            assert_eq!(retry_after["required"], true, "{pattern}");
        }

        // The tracker script is documented with the media type it is served as.
        let script = app.client().get("/script.js").await;
        let served = script.headers["content-type"].to_str().unwrap().split(';').next().unwrap().to_owned();
        assert_eq!(served, "text/javascript");
        let content = &document["paths"]["/script.js"]["get"]["responses"]["200"]["content"];
        assert_eq!(content.as_object().unwrap().keys().collect::<Vec<_>>(), [&served]);
    }
}

/// The pattern the document gives `webhook_url` (with `\uXXXX` and `\xXX`
/// escapes as JSON Schema writes them, which the regex crate reads too).
fn webhook_url_pattern(document: &Value) -> regex::Regex {
    let body = &document["paths"]["/api/webhook"]["post"]["requestBody"]["content"]["application/json"]["schema"];
    let pattern = body["properties"]["webhook_url"]["pattern"].as_str().expect("webhook_url has a pattern");
    regex::Regex::new(pattern).unwrap()
}

#[tokio::test]
async fn the_webhook_url_pattern_describes_what_the_server_takes() {
    for app in common::apps().await {
        let document = app.client().get("/api/openapi.json").await.expect(200).clone();
        let pattern = webhook_url_pattern(&document);
        let (client, site) = app.user_with_site("Hook", "hook-pattern.example").await;
        app.collect(common::traffic::pageview(site, "hooked", "https://hook-pattern.example/")).await.expect(202);
        let dry_run = |url: &str| {
            let body = json!({ "siteId": site, "tracker_vid": "hooked", "webhook_url": url, "dry_run": true });
            client.post("/api/webhook", body)
        };
        // A port, an address literal of either kind, upper case and a query:
        // the server takes them, and so does the document.
        for url in [
            "https://hooks.example.com:8443/x",
            "http://1.1.1.1/hook",
            "https://[2606:4700:4700::1111]:8443/x",
            "https://Hooks.Example.com/x",
            "https://hooks.example.com?token=1",
            "https://hooks.example.com",
        ] {
            assert!(pattern.is_match(url), "the document refuses {url}");
            dry_run(url).await.expect(200);
        }
        // What the server refuses, the document refuses too.
        for url in [
            "ftp://hooks.example.com/x",
            "https://hooks example.com/",
            "https://hooks.example.com:99999/",
            "hooks.example.com",
        ] {
            assert!(!pattern.is_match(url), "the document takes {url}");
            assert_eq!(dry_run(url).await.status.as_u16(), 400, "{url}");
        }
    }
}
