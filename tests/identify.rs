//! POST and GET /api/identify.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps, gql_error_code, traffic::pageview};
use serde_json::json;

#[tokio::test]
async fn identify_links_a_visitor_and_keeps_history() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Lia", "lia.example").await;
        app.collect(pageview(site, "anon-1", "https://lia.example/pricing")).await.expect(202);

        let reply = client
            .identify(json!({
                "siteId": site, "tracker_vid": "anon-1", "user_id": "u-42", "email": "Pat@Example.com",
                "name": "Pat", "company": "Acme", "phone": "+1 555 0100", "traits": { "plan": "pro", "seats": 5 },
                "source_detail": "signup form"
            }))
            .await;
        let body = reply.expect(200);
        assert_eq!(body["success"], true);
        assert_eq!(body["tracker_vid"], "anon-1");
        assert_eq!(body["identified_as"], "Pat@Example.com", "the email as given");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));

        let got = client.get(&format!("/api/identify?tracker_vid=anon-1&siteId={site}")).await;
        let got = got.expect(200);
        assert_eq!(got["tracker_vid"], "anon-1");
        assert_eq!(got["identified"], true);
        let identity = &got["identity"];
        assert_eq!(identity["user_id"], "u-42");
        assert_eq!(identity["email"], "Pat@Example.com");
        assert_eq!(identity["name"], "Pat");
        assert_eq!(identity["company"], "Acme");
        assert_eq!(identity["phone"], "+1 555 0100");
        assert_eq!(identity["traits"], json!({ "plan": "pro", "seats": 5 }));
        assert_eq!(identity["source"], "api", "source defaults to api");
        assert!(identity["identified_at"].as_str().unwrap().ends_with('Z'));

        let visitor = app.visitor(site, "anon-1").await;
        assert_eq!(visitor.status, "identified");
        assert_eq!(visitor.identified_user_id.as_deref(), Some("u-42"));
        assert_eq!(visitor.email.as_deref(), Some("Pat@Example.com"));
        assert_eq!(app.events_of(visitor.id).await.len(), 1, "earlier anonymous events stay attached");
        // 1 view (0) + 1 high-value view (6) + identified (10)
        assert_eq!(visitor.score, 6 + 10);

        let again = client
            .identify(json!({ "siteId": site, "tracker_vid": "anon-1", "user_id": "u-43", "source": "crm" }))
            .await;
        assert_eq!(again.expect(200)["identified_as"], "u-43", "the user id without an email");
        let latest = client.get(&format!("/api/identify?tracker_vid=anon-1&siteId={site}")).await;
        assert_eq!(latest.body["identity"]["user_id"], "u-43");
        assert_eq!(latest.body["identity"]["source"], "crm");
        assert_eq!(latest.body["identity"]["email"], json!(null));
        let history = client
            .graphql(
                "query($s: Int) { identity(siteId: $s, trackerVid: \"anon-1\") { identified } }",
                json!({ "s": site }),
            )
            .await;
        assert_eq!(history["data"]["identity"]["identified"], true);
        use sea_orm::EntityTrait;
        assert_eq!(entity::identity::Entity::find().all(&app.state.db).await.unwrap().len(), 2, "history is kept");
    }
}

#[tokio::test]
async fn identify_creates_unknown_visitors() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Mo", "mo.example").await;
        client
            .identify(json!({ "siteId": site, "tracker_vid": "fresh", "email": "fresh@example.com" }))
            .await
            .expect(200);
        let visitor = app.visitor(site, "fresh").await;
        assert_eq!(visitor.status, "identified");
        assert_eq!(visitor.identified_user_id.as_deref(), Some("fresh@example.com"));
        assert_eq!(visitor.total_sessions, 0);
        let unknown = client.get(&format!("/api/identify?tracker_vid=never-seen&siteId={site}")).await;
        assert_eq!(unknown.expect(200), &json!({ "tracker_vid": "never-seen", "identified": false, "identity": null }));
    }
}

#[tokio::test]
async fn site_id_defaults_to_4() {
    for app in apps().await {
        let (client, _) = app.user("Nia").await;
        for n in 1..=4 {
            client.post("/api/sites", json!({ "domain": format!("s{n}.example") })).await.expect(200);
        }
        let sites = client.get("/api/sites").await;
        let ids: Vec<i64> =
            sites.body["sites"].as_array().unwrap().iter().map(|s| s["siteId"].as_i64().unwrap()).collect();
        assert_eq!(ids, [1, 2, 3, 4]);
        client.identify(json!({ "tracker_vid": "dflt", "user_id": "u1" })).await.expect(200);
        assert_eq!(app.visitor(4, "dflt").await.identified_user_id.as_deref(), Some("u1"));
        let got = client.get("/api/identify?tracker_vid=dflt").await;
        assert_eq!(got.expect(200)["identified"], true);
    }
}

#[tokio::test]
async fn identify_rejects_bad_input() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Oli", "oli.example").await;
        let cases = [
            json!({ "siteId": site, "user_id": "u" }),
            json!({ "siteId": site, "tracker_vid": "v" }),
            json!({ "siteId": site, "tracker_vid": "undefined", "user_id": "u" }),
            json!({ "siteId": site, "tracker_vid": "null", "user_id": "u" }),
            json!({ "siteId": site, "tracker_vid": "v", "user_id": "anonymous" }),
            json!({ "siteId": site, "tracker_vid": "v", "email": "not-an-email" }),
            json!({ "siteId": site, "tracker_vid": "v", "user_id": "u", "traits": [1] }),
            json!({ "siteId": site, "tracker_vid": 7, "user_id": "u" }),
            json!({ "siteId": "four", "tracker_vid": "v", "user_id": "u" }),
        ];
        for body in cases {
            let reply = client.identify(body.clone()).await;
            assert_eq!(reply.status.as_u16(), 400, "{body}: {}", reply.text);
            assert_eq!(reply.body["code"], "VALIDATION_ERROR", "{body}");
        }
        client.post_raw("/api/identify", "{").await.expect_error(400, "BAD_REQUEST");
        client.get("/api/identify").await.expect_error(400, "VALIDATION_ERROR");
        client.get(&format!("/api/identify?tracker_vid=v&siteId=x{site}")).await.expect_error(400, "VALIDATION_ERROR");
        use sea_orm::EntityTrait;
        assert!(entity::visitor::Entity::find().all(&app.state.db).await.unwrap().is_empty(), "nothing stored");
    }
}

#[tokio::test]
async fn identify_needs_a_caller_with_access_to_the_site() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Pam", "pam.example").await;
        let (intruder, _) = app.user("Quo").await;
        let body = json!({ "siteId": site, "tracker_vid": "v", "user_id": "u" });
        app.client().identify(body.clone()).await.expect_error(401, "UNAUTHORIZED");
        app.client().get(&format!("/api/identify?tracker_vid=v&siteId={site}")).await.expect_error(401, "UNAUTHORIZED");
        intruder.identify(body.clone()).await.expect_error(404, "NOT_FOUND");
        intruder.get(&format!("/api/identify?tracker_vid=v&siteId={site}")).await.expect_error(404, "NOT_FOUND");
        intruder.identify(json!({ "tracker_vid": "v", "user_id": "u" })).await.expect_error(404, "NOT_FOUND");

        let key = owner.graphql("mutation { createApiKey(name: \"backend\") { key } }", json!({})).await;
        let key = key["data"]["createApiKey"]["key"].as_str().unwrap().to_owned();
        let backend = app.client().with_bearer(&key);
        backend.identify(body).await.expect(200);
        let got = backend.get(&format!("/api/identify?tracker_vid=v&siteId={site}")).await;
        assert_eq!(got.expect(200)["identity"]["user_id"], "u");
        let denied = intruder
            .graphql(
                "mutation($s: Int) { identify(input: { siteId: $s, trackerVid: \"v\", userId: \"x\" }) { success } }",
                json!({ "s": site }),
            )
            .await;
        assert_eq!(gql_error_code(&denied), "NOT_FOUND");
    }
}
