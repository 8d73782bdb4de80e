//! GraphQL's complexity limit counts rows: a nested query whose lists
//! multiply past the limit is refused, while the REST routes at their largest
//! (a list of 500 visitors, a full profile, a session) still fit.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps, gql_error_code, traffic::pageview};
use serde_json::json;

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
