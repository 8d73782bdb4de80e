//! One error boundary: an internal failure reaches REST and GraphQL clients as
//! `INTERNAL_ERROR` with no internal text, and every GraphQL error carries a
//! code. The failure is real: a table the route reads is dropped under it.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps, gql_error_code};
use sea_orm::{ConnectionTrait, DbBackend, Statement};
use serde_json::{Value, json};

#[tokio::test]
async fn an_internal_failure_shows_no_internal_text() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Err", "err.example").await;
        let drop = match app.state.db.get_database_backend() {
            DbBackend::Postgres => "DROP TABLE identities CASCADE",
            _ => "DROP TABLE identities",
        };
        app.state.db.execute_unprepared(drop).await.expect("drop a table");

        let rest = client.get(&format!("/api/identify?tracker_vid=v-1&siteId={site}")).await;
        rest.expect_error(500, "INTERNAL_ERROR");
        assert_eq!(rest.body["message"], "internal error", "{}", rest.text);

        let query = "query($site: Int) { identity(trackerVid: \"v-1\", siteId: $site) { identified } }";
        let graphql = client.graphql(query, json!({ "site": site })).await;
        assert_eq!(gql_error_code(&graphql), "INTERNAL_ERROR", "{graphql}");
        let text = graphql.to_string().to_lowercase();
        for leak in ["identities", "no such table", "does not exist", "sql"] {
            assert!(!text.contains(leak), "internal text reached the client: {graphql}");
        }
    }
}

#[tokio::test]
async fn graphql_errors_from_graphql_itself_carry_a_code() {
    for app in apps().await {
        let (client, _) = app.user("Codes").await;
        for query in ["{ profile { nope } }", "{ profile { id ", "query($x: Int!) { profile { id } }"] {
            let reply = client.post("/graphql", json!({ "query": query })).await;
            let body = &reply.body;
            assert!(body["errors"].as_array().is_some_and(|errors| !errors.is_empty()), "{query}: {body}");
            for error in body["errors"].as_array().into_iter().flatten() {
                assert!(error["extensions"]["code"].is_string(), "{query}: an error without a code: {body}");
            }
        }
    }
}

#[tokio::test]
async fn a_nul_character_in_any_api_input_is_a_validation_error() {
    // PostgreSQL's text cannot hold U+0000; before this check each of these
    // answered 500 there and stored the text on SQLite.
    for app in apps().await {
        let (client, site) = app.user_with_site("Nia", "nia.example").await;
        let site_name = client.post("/api/sites", json!({ "domain": "z.example", "name": "a\u{0}b" })).await;
        site_name.expect_error(400, "VALIDATION_ERROR");
        assert!(site_name.body["message"].as_str().unwrap().contains("NUL"), "{}", site_name.text);
        client
            .post("/api/identify", json!({ "siteId": site, "tracker_vid": "v", "user_id": "u", "name": "N\u{0}" }))
            .await
            .expect_error(400, "VALIDATION_ERROR");

        let create = "mutation($input: SiteInput!) { createSite(input: $input) { id } }";
        let by_variable = client.graphql(create, json!({ "input": { "domain": "y.example", "name": "\u{0}" } })).await;
        assert_eq!(gql_error_code(&by_variable), "VALIDATION_ERROR", "{by_variable}");
        assert_eq!(
            by_variable["errors"][0]["message"], "input.name: must not contain the NUL character (U+0000)",
            "{by_variable}"
        );
        let literal = r#"mutation { createSite(input: {domain: "x.example", name: "a\u0000"}) { id } }"#;
        let by_literal = client.graphql(literal, json!({})).await;
        assert_eq!(gql_error_code(&by_literal), "VALIDATION_ERROR", "{by_literal}");

        // A NUL names no link: the person gets the "Link not found" page, the
        // QR image client the JSON error.
        for path in ["/l/a%00b/c", "/l/a/b%00"] {
            let reply = app.visit_link(reqwest::Method::GET, path, "Mozilla/5.0", &[]).await;
            assert_eq!(reply.status.as_u16(), 404, "{path}");
            assert!(reply.text.contains("<h1>Link not found</h1>"), "{path}: {}", reply.text);
        }
        let reply = app.visit_link(reqwest::Method::GET, "/l/a%00/b/qr.svg", "Mozilla/5.0", &[]).await;
        reply.expect_error(404, "NOT_FOUND");

        let identities = || async {
            let sql = "SELECT id FROM identities";
            let rows = app.state.db.query_all_raw(Statement::from_string(app.state.db.get_database_backend(), sql));
            rows.await.unwrap().len()
        };
        assert_eq!(identities().await, 0, "the refused identify stored nothing");
        let sites = client.get("/api/sites").await;
        assert_eq!(sites.expect(200)["sites"].as_array().unwrap().len(), 1, "no site was created");

        // A field the route does not take is never read, NUL or not; nor is a
        // NUL inside JSON, which is stored as an escape.
        client.post("/api/sites", json!({ "domain": "w.example", "junk\u{0}": "\u{0}" })).await.expect(200);
        client
            .post(
                "/api/identify",
                json!({ "siteId": site, "tracker_vid": "v", "user_id": "u", "traits": { "k": "\u{0}" } }),
            )
            .await
            .expect(200);
        // The same rule through /graphql, where traits sit inside the input object.
        let identify = "mutation($input: IdentifyVisitorInput!) { identify(input: $input) { success } }";
        let input = |extra: Value| {
            let mut input = json!({ "siteId": site, "trackerVid": "w", "userId": "u2" });
            input.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            json!({ "input": input })
        };
        let refused = client.graphql(identify, input(json!({ "company": "C\u{0}" }))).await;
        assert_eq!(refused["errors"][0]["message"], "input.company: must not contain the NUL character (U+0000)");
        let stored = client.graphql(identify, input(json!({ "traits": { "k": ["\u{0}"] } }))).await;
        assert_eq!(stored["data"]["identify"]["success"], true, "{stored}");
        assert_eq!(identities().await, 2);
        let sites = client.get("/api/sites").await;
        assert_eq!(sites.expect(200)["sites"].as_array().unwrap().len(), 2);
    }
}
