//! One display rule for a person (design §19): name, else email, else user
//! id, else "Anonymous" and the end of the visitor id; company beside them.
//! The same name in GraphQL on every type that names a visitor, and on the
//! pages, escaped.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps, traffic::pageview, web::expect_page};
use serde_json::json;

#[tokio::test]
async fn every_visitor_is_named_by_one_rule_everywhere() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Rita", "people.example").await;
        let url = "https://people.example/pricing";
        for vid in ["named", "mailed", "numbered", "anonymous-visitor-7f3a9c21"] {
            app.collect(pageview(site, vid, url)).await.expect(202);
        }
        app.state.writer.flush().await;
        let hostile = "<b>Ann</b> & \"co\"";
        client
            .identify(json!({ "siteId": site, "tracker_vid": "named", "user_id": "u-9", "email": "ann@people.example", "name": hostile, "company": "<i>Acme</i>" }))
            .await
            .expect(200);
        client
            .identify(json!({ "siteId": site, "tracker_vid": "mailed", "email": "bo@people.example" }))
            .await
            .expect(200);
        client.identify(json!({ "siteId": site, "tracker_vid": "numbered", "user_id": "u-77" })).await.expect(200);

        let expected = [
            ("named", hostile, Some("<i>Acme</i>")),
            // No company typed: the work email's domain is the account, shown beside them.
            ("mailed", "bo@people.example", Some("people.example")),
            ("numbered", "u-77", None),
            ("anonymous-visitor-7f3a9c21", "Anonymous 7f3a9c21", None),
        ];
        let listed = client
            .graphql(
                "query($s: Int!) { visitors(siteId: $s, timeRange: \"all\") { nodes { trackerVid person { displayName company identified } } }
                   liveStream(siteId: $s) { visitors { trackerVid person { displayName company } } activity { trackerVid person { displayName } } } }",
                json!({ "s": site }),
            )
            .await;
        assert!(listed.get("errors").is_none(), "{listed}");
        let find = |list: &serde_json::Value, vid: &str| {
            list.as_array().unwrap().iter().find(|row| row["trackerVid"] == vid).unwrap()["person"].clone()
        };
        for (vid, name, company) in expected {
            let person = find(&listed["data"]["visitors"]["nodes"], vid);
            assert_eq!(person["displayName"], name, "{vid}: {person}");
            assert_eq!(person["company"], json!(company), "{vid}");
            assert_eq!(person["identified"], vid != "anonymous-visitor-7f3a9c21", "{vid}");
            assert_eq!(find(&listed["data"]["liveStream"]["visitors"], vid)["displayName"], name, "{vid}");
            assert_eq!(find(&listed["data"]["liveStream"]["activity"], vid)["displayName"], name, "{vid}");
        }

        // A session and a delivery log entry name the same person.
        let session = client
            .graphql(
                "query($s: Int!) { visitor(siteId: $s, id: \"named\") { sessions { sessionId } } }",
                json!({ "s": site }),
            )
            .await;
        let session_id = session["data"]["visitor"]["sessions"][0]["sessionId"].as_str().unwrap().to_owned();
        let tracked = client
            .graphql(
                "query($s: Int!, $id: ID!) { trackedSession(siteId: $s, id: $id) { person { displayName company } } }",
                json!({ "s": site, "id": session_id }),
            )
            .await;
        assert_eq!(
            tracked["data"]["trackedSession"]["person"],
            json!({ "displayName": hostile, "company": "<i>Acme</i>" })
        );

        // The pages show the name and company escaped, never as markup.
        for path in
            ["/leads?range=all".to_owned(), "/".to_owned(), "/live".to_owned(), format!("/session/{session_id}")]
        {
            let html = expect_page(&client.get(&path).await, 200).to_owned();
            assert!(html.contains("&#60;b&#62;Ann&#60;/b&#62;"), "{path} names Ann escaped");
            assert!(!html.contains("<b>Ann</b>") && !html.contains("<i>Acme</i>"), "{path} shows no raw markup");
            assert!(html.contains("&#60;i&#62;Acme&#60;/i&#62;"), "{path} shows the company beside her");
        }
        let leads = expect_page(&client.get("/leads?range=all").await, 200).to_owned();
        for shown in ["bo@people.example", "u-77", "Anonymous 7f3a9c21"] {
            assert!(leads.contains(shown), "/leads shows {shown}");
        }

        // Another tenant's visitor cannot be named through a person field.
        let (stranger, _) = app.user_with_site("Stranger", "stranger.example").await;
        let peek = stranger
            .graphql(
                "query($s: Int!) { visitors(siteId: $s) { nodes { person { displayName } } } }",
                json!({ "s": site }),
            )
            .await;
        assert_eq!(common::gql_error_code(&peek), "NOT_FOUND", "{peek}");
    }
}
