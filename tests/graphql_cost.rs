//! GraphQL's complexity limit counts rows: a nested query whose lists
//! multiply past the limit is refused, while the REST routes at their largest
//! (a list of 500 visitors, a full profile, a session) still fit.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps, gql_error_code, traffic::pageview};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

#[tokio::test]
async fn nested_lists_that_multiply_past_the_limit_are_refused() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Cost", "cost.example").await;
        app.collect(pageview(site, "cost-1", "https://cost.example/")).await.expect(202);
        let nested =
            "query($site: Int!) { visitors(siteId: $site, first: 500) { nodes { sessions { events { page } } } } }";
        let refused = client.graphql(nested, json!({ "site": site })).await;
        assert!(refused.get("data").is_none_or(|data| data.is_null()), "{refused}");
        let message = refused["errors"][0]["message"].as_str().unwrap_or_default();
        assert!(message.to_lowercase().contains("complex"), "{refused}");
        assert_ne!(gql_error_code(&refused), "<no error>", "a limit error carries a code: {refused}");

        // The same shape over one visitor, or the list without nesting, is fine.
        let one = "query($site: Int!) { visitors(siteId: $site, first: 1) { nodes { sessions { events { page } } } } }";
        let fine = client.graphql(one, json!({ "site": site })).await;
        assert!(fine.get("errors").is_none(), "{fine}");
        let wide = "query($site: Int!) { visitors(siteId: $site, first: 500) { nodes { trackerVid score sessions { sessionId } } } }";
        let fine = client.graphql(wide, json!({ "site": site })).await;
        assert!(fine.get("errors").is_none(), "{fine}");
    }
}

#[tokio::test]
async fn the_rest_routes_fit_at_their_largest() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Fit", "fit.example").await;
        app.collect(pageview(site, "fit-1", "https://fit.example/pricing")).await.expect(202);
        client.get(&format!("/api/visitor?siteId={site}&limit=500&timeRange=all")).await.expect(200);
        let profile = client.get(&format!("/api/visitor/fit-1?siteId={site}")).await;
        let session = profile.expect(200)["sessions"][0]["session_id"].as_str().expect("session id").to_owned();
        client.get(&format!("/api/session/{session}?siteId={site}")).await.expect(200);
        client.get(&format!("/api/visitors?siteId={site}")).await.expect(200);
        client.get(&format!("/api/stats?siteId={site}&timeRange=30d")).await.expect(200);
    }
}

const GRAPHQL_RESPONSE_JSON: &str = "application/graphql-response+json";

/// POST /graphql as `client` with the modern media type: (status, headers, body).
async fn post_graphql(app: &common::TestApp, client: &common::Client, body: Value) -> (u16, HeaderMap, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/graphql", app.base))
        .header("cookie", format!("session={}", client.session.as_deref().unwrap()))
        .header("accept", GRAPHQL_RESPONSE_JSON)
        .json(&body)
        .send()
        .await
        .unwrap();
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    (status, headers, response.json().await.unwrap())
}

fn aliases(count: usize, field: &str) -> String {
    let fields: String = (0..count).map(|i| format!("a{i}: {field} ")).collect();
    format!("{{ {fields} }}")
}

#[tokio::test]
async fn a_thousand_aliases_are_refused_before_anything_runs() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Alias", "alias.example").await;
        let statements = || app.state.metrics.db_statements.get();

        let stats = format!("stats(siteId: {site}, timeRange: \"30d\") {{ overview {{ uniqueVisitors }} }}");
        // The counter is the whole app's, and background work (the alert
        // outbox's poll) may add a statement during a request: the fewest of
        // three tries is the request's own. Any resolver would run hundreds.
        let mut fewest = u64::MAX;
        for _ in 0..3 {
            let before = statements();
            let (status, _, body) = post_graphql(&app, &client, json!({ "query": aliases(1000, &stats) })).await;
            assert_eq!(status, 400, "{body}");
            assert!(body.get("data").is_none(), "{body}");
            assert_eq!(gql_error_code(&body), "BAD_REQUEST", "{body}");
            fewest = fewest.min(statements() - before);
        }
        // The caller's session is looked up; no resolver read anything.
        assert!(fewest <= 2, "{fewest} statements ran");

        // Nothing of a refused mutation happens.
        let create = "createSite(input: { domain: \"x.example\" }) { id }";
        let (status, _, body) =
            post_graphql(&app, &client, json!({ "query": format!("mutation {}", aliases(1000, create)) })).await;
        assert_eq!(status, 400, "{body}");
        let sites = client.graphql("{ sites { id } }", json!({})).await;
        assert_eq!(sites["data"]["sites"].as_array().unwrap().len(), 1, "{sites}");

        // Ten operations of three hundred aliases each: every one refused.
        let batch: Vec<Value> = (0..10).map(|_| json!({ "query": aliases(300, &stats) })).collect();
        let mut fewest = u64::MAX;
        for _ in 0..3 {
            let before = statements();
            let (status, _, body) = post_graphql(&app, &client, Value::Array(batch.clone())).await;
            assert_eq!(status, 400, "{body}");
            for entry in body.as_array().unwrap() {
                assert!(entry.get("data").is_none(), "{entry}");
                assert_eq!(gql_error_code(entry), "BAD_REQUEST", "{entry}");
            }
            fewest = fewest.min(statements() - before);
        }
        assert!(fewest <= 2, "{fewest} statements ran");
    }
}

#[tokio::test]
async fn a_window_costs_its_days() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Window", "window.example").await;
        let field = |range: &str| format!("stats(siteId: {site}, timeRange: \"{range}\") {{ timeRange }}");
        // Nineteen one-day windows are cheap; nineteen 30-day ones read too much.
        let (status, _, body) = post_graphql(&app, &client, json!({ "query": aliases(19, &field("24h")) })).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.get("errors").is_none(), "{body}");
        let (status, _, body) = post_graphql(&app, &client, json!({ "query": aliases(19, &field("30d")) })).await;
        assert_eq!(status, 400, "{body}");
        assert!(body["errors"][0]["message"].as_str().unwrap().contains("too complex"), "{body}");
        // A link list cannot multiply its links' windows either.
        let nested = "{ links { links { analytics(range: \"all\") { totalClicks } } } }";
        let (status, _, body) = post_graphql(&app, &client, json!({ "query": nested })).await;
        assert_eq!(status, 400, "{body}");
    }
}

#[tokio::test]
async fn each_caller_has_a_read_budget() {
    // The budget is raised to what one operation may cost (25,000).
    for app in common::apps_with(|config| config.query_cost_per_minute = 1).await {
        let (client, site) = app.user_with_site("Budget", "budget.example").await;
        let (other, other_site) = app.user_with_site("Other", "other-budget.example").await;
        // About 13,500 points: a list of 500 visitors with their sessions.
        let heavy = format!(
            "{{ visitors(siteId: {site}, first: 500, timeRange: \"30d\") {{ nodes {{ trackerVid sessions {{ sessionId }} }} }} }}"
        );
        let (status, _, body) = post_graphql(&app, &client, json!({ "query": heavy })).await;
        assert_eq!(status, 200, "{body}");
        let (status, headers, body) = post_graphql(&app, &client, json!({ "query": heavy })).await;
        assert_eq!(status, 429, "{body}");
        assert_eq!(gql_error_code(&body), "RATE_LIMITED", "{body}");
        assert!(headers["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);
        // REST reads run GraphQL and spend the same budget.
        let rest = client.get(&format!("/api/visitor?siteId={site}&limit=500&timeRange=30d")).await;
        rest.expect_error(429, "RATE_LIMITED");
        assert!(rest.headers.contains_key("retry-after"));
        // Another caller's budget is their own.
        let theirs = other.get(&format!("/api/visitor?siteId={other_site}&limit=500&timeRange=30d")).await;
        theirs.expect(200);
    }
}

/// On PostgreSQL, reads take turns (POSTGRES_READ_CONNECTIONS at once, as
/// SQLite's read connections cap them), so long reads always leave a CPU to
/// collect's writer and the short requests. With every turn taken, a read
/// waits for one; a mutation and collect do not.
#[tokio::test]
async fn reads_on_postgresql_wait_for_a_turn_and_writes_do_not() {
    for app in common::apps_with(|config| config.postgres_read_connections = Some(1)).await {
        let (client, site) = app.user_with_site("Turns", "turns.example").await;
        let Some(turns) = app.state.read_turns.clone() else {
            assert_eq!(app.backend, "sqlite", "only SQLite reads without turns");
            continue;
        };
        assert_eq!(turns.available_permits(), 1, "POSTGRES_READ_CONNECTIONS=1 is one turn");
        let held = turns.clone().acquire_owned().await.unwrap();

        let reader = client.clone();
        let read = tokio::spawn(async move {
            reader.graphql("query($site: Int!) { site(id: $site) { domain } }", json!({ "site": site })).await
        });
        // Writes go on while the read waits.
        let renamed = client
            .graphql(
                "mutation($site: Int!) { updateSite(id: $site, input: { name: \"Turns\" }) { name } }",
                json!({ "site": site }),
            )
            .await;
        assert_eq!(renamed["data"]["updateSite"]["name"], "Turns", "{renamed}");
        app.collect(pageview(site, "turns-1", "https://turns.example/")).await.expect(202);
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!read.is_finished(), "the read ran without a turn");

        drop(held);
        let answered = read.await.unwrap();
        assert_eq!(answered["data"]["site"]["domain"], "turns.example", "{answered}");
        assert_eq!(turns.available_permits(), 1, "the read gave its turn back");
    }
}
