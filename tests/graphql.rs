//! /graphql: explorer, limits, API keys, subscriptions, and the exported schema.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps, apps_with, gql_error_code};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest};

#[test]
fn schema_file_matches_the_schema() {
    let sdl = leadtrail::graphql::sdl();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema.graphql");
    if std::env::var("UPDATE_SCHEMA").is_ok_and(|v| v == "1") {
        std::fs::write(path, &sdl).expect("write schema.graphql");
    }
    let on_disk = std::fs::read_to_string(path).unwrap_or_default();
    assert!(on_disk == sdl, "schema.graphql is stale; run `UPDATE_SCHEMA=1 cargo test --test graphql schema_file`");
}

#[tokio::test]
async fn explorer_page_is_self_contained() {
    for app in apps().await {
        let page = app.client().get("/graphql").await;
        page.expect(200);
        assert!(page.headers["content-type"].to_str().unwrap().starts_with("text/html"));
        let csp = page.headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("script-src 'self'"), "{csp}");
        for src in page.text.split("src=\"").skip(1) {
            let target = src.split('"').next().unwrap();
            assert!(target.starts_with('/') && !target.starts_with("//"), "external resource {target}");
        }
        assert!(!page.text.contains("http://") && !page.text.contains("https://"), "no absolute URLs in the page");
        let script = app.client().get("/graphql/explorer.js").await;
        script.expect(200);
        assert!(script.text.contains("__schema"), "the explorer reads the schema by introspection");
        assert!(!script.text.contains("http://") && !script.text.contains("https://"));
    }
}

#[tokio::test]
async fn queries_run_over_post_and_get_but_mutations_need_post() {
    for app in apps().await {
        let (client, email) = app.user("Ada").await;
        let response = client.graphql("{ viewer { email } }", json!({})).await;
        assert_eq!(response["data"]["viewer"]["email"], email);

        let got = client.get("/graphql?query=%7B%20viewer%20%7B%20email%20%7D%20%7D").await;
        assert_eq!(got.expect(200)["data"]["viewer"]["email"], email);
        // 405, as the GraphQL-over-HTTP spec asks.
        let mutation = client.get("/graphql?query=mutation%20%7B%20signOut%20%7B%20success%20%7D%20%7D").await;
        mutation.expect_error(405, "BAD_REQUEST");
        assert_eq!(mutation.headers["allow"], "POST");
        client.get("/api/profile").await.expect(200);

        let anonymous = app.client().graphql("{ viewer { email } }", json!({})).await;
        assert_eq!(anonymous["data"]["viewer"], Value::Null);
        let denied = app.client().graphql("{ sites { id } }", json!({})).await;
        assert_eq!(gql_error_code(&denied), "UNAUTHORIZED");
        app.client().post_raw("/graphql", "{not json").await.expect_error(400, "BAD_REQUEST");
    }
}

#[tokio::test]
async fn depth_and_batch_limits_hold() {
    for app in apps().await {
        let (client, _) = app.user("Bea").await;
        // Introspection alone is schema tooling, exempt from the depth limit
        // (graphql_clients.rs); beside a real field it is held to it.
        let levels = 14;
        let introspection = format!(
            "__schema {{ types {{ fields {{ type {}{{ name }}{} }} }} }}",
            "{ ofType ".repeat(levels),
            " }".repeat(levels)
        );
        let response = client.graphql(&format!("{{ {introspection} }}"), json!({})).await;
        assert!(response["errors"].is_null() && response["data"]["__schema"].is_object(), "{response}");
        let response = client.graphql(&format!("{{ viewer {{ id }} {introspection} }}"), json!({})).await;
        assert!(response["errors"][0]["message"].as_str().unwrap().contains("too deep"), "{response}");
        assert_eq!(gql_error_code(&response), "BAD_REQUEST", "{response}");

        // Lists count their rows: 5 x 500 visitors with 50 recent events each is over the limit.
        let site = client.post("/api/sites", json!({ "domain": "bea.example" })).await.expect(200)["site"]["siteId"]
            .as_i64()
            .unwrap();
        let wide: String = (0..5)
            .map(|i| format!("a{i}: visitors(siteId: {site}, first: 500) {{ nodes {{ recentEvents {{ page }} }} }} "))
            .collect();
        let response = client.graphql(&format!("{{ {wide} }}"), json!({})).await;
        assert!(response["errors"][0]["message"].as_str().unwrap().contains("complex"), "{response}");
        assert_eq!(gql_error_code(&response), "BAD_REQUEST", "{response}");

        let batch: Vec<Value> = (0..11).map(|_| json!({ "query": "{ viewer { id } }" })).collect();
        client.post("/graphql", Value::Array(batch)).await.expect_error(400, "BAD_REQUEST");
        let batch: Vec<Value> = (0..2).map(|_| json!({ "query": "{ viewer { id } }" })).collect();
        let answers = client.post("/graphql", Value::Array(batch)).await;
        assert_eq!(answers.expect(200).as_array().unwrap().len(), 2);
    }
}

#[tokio::test]
async fn introspection_can_be_turned_off() {
    for app in apps_with(|config| config.graphql_introspection = false).await {
        let response = app.client().graphql("{ __schema { queryType { name } } }", json!({})).await;
        assert_eq!(gql_error_code(&response), "BAD_REQUEST", "{response}");
        assert!(response.get("data").is_none(), "{response}");
        let typename = app.client().graphql("{ __type(name: \"Site\") { name } }", json!({})).await;
        assert_eq!(gql_error_code(&typename), "BAD_REQUEST", "{typename}");
    }
}

#[tokio::test]
async fn api_keys_are_created_used_listed_and_revoked() {
    for app in apps().await {
        let (client, site_id) = app.user_with_site("Cy", "cy.example").await;
        let created = client
            .graphql(
                "mutation { createApiKey(name: \"backend\") { key apiKey { id name prefix orgId revokedAt } } }",
                json!({}),
            )
            .await;
        let key = created["data"]["createApiKey"]["key"].as_str().expect("key").to_owned();
        let record = &created["data"]["createApiKey"]["apiKey"];
        assert!(key.starts_with("lt_") && key.starts_with(record["prefix"].as_str().unwrap()));
        assert_eq!(record["revokedAt"], Value::Null);
        let key_id = record["id"].as_str().unwrap().to_owned();
        let org_id = record["orgId"].as_str().unwrap().to_owned();

        let bearer = app.client().with_bearer(&key);
        let sites = bearer.get("/api/sites").await;
        assert_eq!(sites.expect(200)["sites"][0]["siteId"], site_id);
        // A key acts for the org, not a person, and cannot manage sites.
        bearer.get("/api/profile").await.expect_error(403, "FORBIDDEN");
        bearer.delete(&format!("/api/sites/{site_id}")).await.expect_error(403, "FORBIDDEN");

        let listed = client
            .graphql("query($org: ID!) { apiKeys(orgId: $org) { id lastUsedAt } }", json!({ "org": org_id }))
            .await;
        assert_eq!(listed["data"]["apiKeys"][0]["id"], key_id.as_str());
        assert!(listed["data"]["apiKeys"][0]["lastUsedAt"].is_string(), "use is recorded");

        let (intruder, _) = app.user("Di").await;
        let stolen =
            intruder.graphql("mutation($id: ID!) { revokeApiKey(id: $id) { id } }", json!({ "id": key_id })).await;
        assert_eq!(gql_error_code(&stolen), "NOT_FOUND");
        let peek = intruder.graphql("query($org: ID!) { apiKeys(orgId: $org) { id } }", json!({ "org": org_id })).await;
        assert_eq!(gql_error_code(&peek), "NOT_FOUND");
        bearer.get("/api/sites").await.expect(200);

        let revoked =
            client.graphql("mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }", json!({ "id": key_id })).await;
        assert!(revoked["data"]["revokeApiKey"]["revokedAt"].is_string());
        bearer.get("/api/sites").await.expect_error(401, "UNAUTHORIZED");
        app.client().with_bearer("lt_forged").get("/api/sites").await.expect_error(401, "UNAUTHORIZED");

        let nameless = client.graphql("mutation { createApiKey(name: \" \") { key } }", json!({})).await;
        assert_eq!(gql_error_code(&nameless), "VALIDATION_ERROR");
    }
}

#[tokio::test]
async fn orgs_and_sites_queries_are_scoped() {
    for app in apps().await {
        let (client, site_id) = app.user_with_site("Ed", "ed.example").await;
        let orgs = client.graphql("{ orgs { id name role } }", json!({})).await;
        assert_eq!(orgs["data"]["orgs"].as_array().unwrap().len(), 1);
        assert_eq!(orgs["data"]["orgs"][0]["role"], "owner");
        let org_id = orgs["data"]["orgs"][0]["id"].as_str().unwrap().to_owned();

        let (other, _) = app.user("Flo").await;
        let org = other.graphql("query($id: ID!) { org(id: $id) { name } }", json!({ "id": org_id })).await;
        assert_eq!(gql_error_code(&org), "NOT_FOUND");
        let site = other.graphql("query($id: Int!) { site(id: $id) { name } }", json!({ "id": site_id })).await;
        assert_eq!(gql_error_code(&site), "NOT_FOUND");
        let update = other
            .graphql(
                "mutation($id: Int!) { updateSite(id: $id, input: { name: \"x\" }) { name } }",
                json!({ "id": site_id }),
            )
            .await;
        assert_eq!(gql_error_code(&update), "NOT_FOUND");
        let mine = client
            .graphql(
                "query($id: Int!) { site(id: $id) { name hotThreshold highValuePatterns } }",
                json!({ "id": site_id }),
            )
            .await;
        assert_eq!(mine["data"]["site"]["hotThreshold"], 70);
        assert_eq!(
            mine["data"]["site"]["highValuePatterns"],
            json!(["/pricing", "/demo", "/contact", "/signup", "/trial"])
        );
    }
}

async fn ws_connect(
    app: &common::TestApp,
    session: Option<&str>,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    let mut request = format!("{}/graphql/ws", app.base.replace("http://", "ws://")).into_client_request().unwrap();
    request.headers_mut().insert("sec-websocket-protocol", "graphql-transport-ws".parse().unwrap());
    if let Some(token) = session {
        request.headers_mut().insert("cookie", format!("session={token}").parse().unwrap());
    }
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.expect("websocket upgrade");
    socket.send(Message::text(json!({ "type": "connection_init" }).to_string())).await.unwrap();
    assert_eq!(next_json(&mut socket).await["type"], "connection_ack");
    socket
}

async fn next_json<S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin>(
    socket: &mut S,
) -> Value {
    loop {
        let message = tokio::time::timeout(std::time::Duration::from_secs(5), socket.next())
            .await
            .expect("message in time")
            .unwrap()
            .unwrap();
        if let Message::Text(text) = message {
            return serde_json::from_str(&text).unwrap();
        }
    }
}

#[tokio::test]
async fn live_visitors_subscription_streams_the_sites_activity() {
    for app in apps().await {
        let (client, site_id) = app.user_with_site("Gil", "gil.example").await;
        let (_, other_site) = app.user_with_site("Hana", "hana.example").await;
        let token = client.session.clone().unwrap();

        let mut socket = ws_connect(&app, Some(&token)).await;
        let query = "subscription($site: Int!) { liveVisitors(siteId: $site) { siteId trackerVid type page } }";
        socket
            .send(Message::text(json!({ "id": "denied", "type": "subscribe", "payload": { "query": query, "variables": { "site": other_site } } }).to_string()))
            .await
            .unwrap();
        let denied = next_json(&mut socket).await;
        assert_eq!(denied["id"], "denied");
        assert_eq!(denied["payload"]["errors"][0]["extensions"]["code"], "NOT_FOUND", "{denied}");
        assert_eq!(next_json(&mut socket).await, json!({ "id": "denied", "type": "complete" }));

        socket
            .send(Message::text(json!({ "id": "mine", "type": "subscribe", "payload": { "query": query, "variables": { "site": site_id } } }).to_string()))
            .await
            .unwrap();
        // Give the server a moment to register the subscription, then publish
        // one event for another site and one for ours.
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        for (site, vid) in [(other_site, "someone-else"), (site_id, "visitor-1")] {
            app.state
                .live
                .send(leadtrail::service::tracking::Activity {
                    site_id: site,
                    tracker_vid: vid.to_owned(),
                    identified_user_id: None,
                    event_type: "pageview",
                    event_name: String::new(),
                    page: "/pricing".to_owned(),
                    timestamp: 0,
                })
                .unwrap();
        }
        let next = next_json(&mut socket).await;
        assert_eq!(next["type"], "next", "{next}");
        assert_eq!(next["id"], "mine");
        assert_eq!(
            next["payload"]["data"]["liveVisitors"],
            json!({ "siteId": site_id, "trackerVid": "visitor-1", "type": "pageview", "page": "/pricing" })
        );

        let mut anonymous = ws_connect(&app, None).await;
        anonymous
            .send(Message::text(json!({ "id": "a", "type": "subscribe", "payload": { "query": query, "variables": { "site": site_id } } }).to_string()))
            .await
            .unwrap();
        let refused = next_json(&mut anonymous).await;
        assert_eq!(refused["payload"]["errors"][0]["extensions"]["code"], "UNAUTHORIZED", "{refused}");
    }
}

#[tokio::test]
async fn a_collected_event_reaches_live_visitors_subscribers() {
    for app in apps().await {
        let (client, site_id) = app.user_with_site("Ike", "ike.example").await;
        let token = client.session.clone().unwrap();
        let mut socket = ws_connect(&app, Some(&token)).await;
        let query = "subscription($site: Int!) { liveVisitors(siteId: $site) { trackerVid type eventName page visitor { totalPageviews highValueViews score } } }";
        let subscribe = json!({ "id": "live", "type": "subscribe", "payload": { "query": query, "variables": { "site": site_id } } });
        socket.send(Message::text(subscribe.to_string())).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        app.collect(common::traffic::pageview(site_id, "live-1", "https://ike.example/pricing")).await.expect(202);
        let next = next_json(&mut socket).await;
        assert_eq!(
            next["payload"]["data"]["liveVisitors"],
            json!({
                "trackerVid": "live-1",
                "type": "pageview",
                "eventName": "",
                "page": "/pricing",
                // 2 for the page view, 6 for a high-value page, 15 for recency.
                "visitor": { "totalPageviews": 1, "highValueViews": 1, "score": 21 }
            })
        );
        // A custom event arrives by its name, as a reload of /live shows it.
        let mut form = common::traffic::pageview(site_id, "live-1", "https://ike.example/contact");
        form["type"] = json!("custom_event");
        form["event_name"] = json!("form_submit");
        app.collect(form).await.expect(202);
        let next = next_json(&mut socket).await;
        let event = &next["payload"]["data"]["liveVisitors"];
        assert_eq!((&event["type"], &event["eventName"]), (&json!("custom_event"), &json!("form_submit")), "{next}");
    }
}
