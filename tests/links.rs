//! /api/links, /api/links/check-slug and the link CRUD rules.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::apps;
use serde_json::json;

#[tokio::test]
async fn links_are_created_listed_updated_and_deleted() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Al", "al.example").await;
        let created = client
            .create_link(json!({
                "siteId": site, "destinationUrl": "https://al.example/landing", "slug": "spring-sale",
                "campaign": "spring", "source": "newsletter", "medium": "email"
            }))
            .await;
        let link = &created["link"];
        let mut keys: Vec<_> = link.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "campaign",
                "content",
                "destination_url",
                "id",
                "is_active",
                "link_type",
                "medium",
                "notes",
                "site_id",
                "slug",
                "source"
            ]
        );
        assert!(link["id"].as_str().unwrap().starts_with("lnk_"));
        assert_eq!(link["site_id"], site);
        assert_eq!(link["slug"], "spring-sale");
        assert_eq!(link["content"], "", "omitted content is empty");
        assert_eq!(link["notes"], "", "omitted notes is empty");
        assert_eq!(link["link_type"], "content");
        assert_eq!(link["is_active"], true);
        assert_eq!(created["fullUrl"], format!("{}/l/al-example/spring-sale", app.base));

        let generated = client
            .create_link(json!({ "siteId": site, "destinationUrl": "https://al.example/x", "link_type": "ad" }))
            .await;
        let slug = generated["link"]["slug"].as_str().unwrap();
        assert_eq!(slug.len(), 7);
        assert!(slug.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(generated["link"]["link_type"], "ad");

        let list = client.get(&format!("/api/links?siteId={site}")).await;
        let body = list.expect(200);
        assert_eq!(body["siteSlug"], "al-example");
        assert_eq!(body["stats"], json!({ "totalLinks": 2, "totalClicks": 0, "clicksToday": 0, "topSource": "" }));
        let listed = body["links"].as_array().unwrap();
        assert_eq!(listed.len(), 2);
        let sale = listed.iter().find(|l| l["slug"] == "spring-sale").unwrap();
        assert_eq!(sale["total_clicks"], 0);
        assert_eq!(sale["clicks_today"], 0);
        assert_eq!(sale["last_clicked_at"], json!(null));
        assert_eq!(sale["tags"], json!([]));
        // Without siteId, the first accessible site is used.
        assert_eq!(client.get("/api/links").await.expect(200)["links"].as_array().unwrap().len(), 2);

        let id = link["id"].as_str().unwrap();
        let updated = client
            .put(
                &format!("/api/links/{id}"),
                json!({ "campaign": "summer", "notes": "for the launch", "is_active": false, "tags": ["launch", "q2"],
                        "expires_at": "2030-01-01T00:00:00.000Z", "max_clicks": 500 }),
            )
            .await;
        let link = &updated.expect(200)["link"];
        assert_eq!(link["id"], id);
        assert_eq!(link["slug"], "spring-sale");
        assert_eq!(link["campaign"], "summer");
        assert_eq!(link["notes"], "for the launch");
        assert_eq!(link["is_active"], false);
        assert_eq!(link["tags"], json!(["launch", "q2"]));
        assert_eq!(link["expires_at"], "2030-01-01T00:00:00.000Z");
        assert_eq!(link["max_clicks"], 500);
        assert_eq!(link["source"], "newsletter", "fields not given are kept");

        let cleared = client.put(&format!("/api/links/{id}"), json!({ "expires_at": null, "is_active": true })).await;
        assert_eq!(cleared.expect(200)["link"]["expires_at"], json!(null));
        assert_eq!(cleared.body["link"]["max_clicks"], 500, "absent fields stay");
        assert_eq!(cleared.body["link"]["tags"], json!(["launch", "q2"]));

        assert_eq!(client.delete(&format!("/api/links/{id}")).await.expect(200), &json!({ "success": true }));
        client.delete(&format!("/api/links/{id}")).await.expect_error(404, "NOT_FOUND");
        client.put(&format!("/api/links/{id}"), json!({ "notes": "x" })).await.expect_error(404, "NOT_FOUND");
        assert_eq!(client.get(&format!("/api/links?siteId={site}")).await.body["stats"]["totalLinks"], 1);
    }
}

#[tokio::test]
async fn link_input_is_validated() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Bea", "bea.example").await;
        let base = json!({ "siteId": site, "destinationUrl": "https://bea.example/" });
        let with = |key: &str, value: serde_json::Value| {
            let mut body = base.clone();
            body[key] = value;
            body
        };
        for url in [
            "javascript:alert(1)",
            "data:text/html,hi",
            "//evil.example/",
            "ftp://bea.example/",
            "https://bea.example/\u{7}",
            "not a url",
            "",
        ] {
            client.post("/api/links", with("destinationUrl", json!(url))).await.expect_error(400, "INVALID_URL");
        }
        let long = format!("https://bea.example/{}", "a".repeat(2048));
        client.post("/api/links", with("destinationUrl", json!(long))).await.expect_error(400, "INVALID_URL");
        for slug in ["has space", "ünïcode", "a/b", &"x".repeat(65)] {
            client.post("/api/links", with("slug", json!(slug))).await.expect_error(400, "VALIDATION_ERROR");
        }
        client.post("/api/links", with("link_type", json!("banner"))).await.expect_error(400, "VALIDATION_ERROR");
        client.post("/api/links", with("campaign", json!(7))).await.expect_error(400, "VALIDATION_ERROR");
        client.post("/api/links", json!({ "siteId": site })).await.expect_error(400, "VALIDATION_ERROR");
        client
            .post("/api/links", json!({ "destinationUrl": "https://bea.example/" }))
            .await
            .expect_error(400, "VALIDATION_ERROR");
        client.post_raw("/api/links", "{").await.expect_error(400, "BAD_REQUEST");

        client.create_link(with("slug", json!("Promo"))).await;
        client.post("/api/links", with("slug", json!("Promo"))).await.expect_error(409, "SLUG_TAKEN");
        client.create_link(with("slug", json!("promo"))).await;
        let other = client.create_link(with("slug", json!("other"))).await;
        let id = other["link"]["id"].as_str().unwrap();
        let path = format!("/api/links/{id}");
        client.put(&path, json!({ "slug": "Promo" })).await.expect_error(409, "SLUG_TAKEN");
        client.put(&path, json!({ "slug": "bad slug" })).await.expect_error(400, "VALIDATION_ERROR");
        client.put(&path, json!({ "destinationUrl": "javascript:x" })).await.expect_error(400, "INVALID_URL");
        client.put(&path, json!({ "tags": vec!["t"; 21] })).await.expect_error(400, "VALIDATION_ERROR");
        client.put(&path, json!({ "tags": ["x".repeat(51)] })).await.expect_error(400, "VALIDATION_ERROR");
        client.put(&path, json!({ "tags": "not-a-list" })).await.expect_error(400, "VALIDATION_ERROR");
        client.put(&path, json!({ "max_clicks": 0 })).await.expect_error(400, "VALIDATION_ERROR");
        client.put(&path, json!({ "expires_at": "soon" })).await.expect_error(400, "VALIDATION_ERROR");
        client.put(&path, json!({ "is_active": "yes" })).await.expect_error(400, "VALIDATION_ERROR");
        client.put("/api/links/12", json!({ "notes": "x" })).await.expect_error(404, "NOT_FOUND");
        client.get("/api/links?siteId=abc").await.expect_error(400, "VALIDATION_ERROR");
    }
}

#[tokio::test]
async fn check_slug_reports_availability() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Cal", "cal.example").await;
        client.create_link(json!({ "siteId": site, "destinationUrl": "https://cal.example/", "slug": "taken" })).await;
        let taken = client.get(&format!("/api/links/check-slug?slug=taken&siteId={site}")).await;
        assert_eq!(taken.expect(200), &json!({ "available": false, "slug": "taken" }));
        let free = client.get(&format!("/api/links/check-slug?slug=Taken&siteId={site}")).await;
        assert_eq!(free.expect(200), &json!({ "available": true, "slug": "Taken" }), "slugs are case-sensitive");
        let active_site = client.get("/api/links/check-slug?slug=taken").await;
        assert_eq!(active_site.expect(200)["available"], false, "defaults to the first site");
        client.get("/api/links/check-slug").await.expect_error(400, "VALIDATION_ERROR");
        client.get("/api/links/check-slug?slug=no%20way").await.expect_error(400, "VALIDATION_ERROR");
    }
}

#[tokio::test]
async fn link_routes_need_a_session() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Dee", "dee.example").await;
        let created = client.create_link(json!({ "siteId": site, "destinationUrl": "https://dee.example/" })).await;
        let id = created["link"]["id"].as_str().unwrap();
        let anonymous = app.client();
        anonymous.get("/api/links").await.expect_error(401, "UNAUTHORIZED");
        anonymous
            .post("/api/links", json!({ "siteId": site, "destinationUrl": "https://dee.example/" }))
            .await
            .expect_error(401, "UNAUTHORIZED");
        anonymous.put(&format!("/api/links/{id}"), json!({ "notes": "x" })).await.expect_error(401, "UNAUTHORIZED");
        anonymous.delete(&format!("/api/links/{id}")).await.expect_error(401, "UNAUTHORIZED");
        anonymous.get("/api/links/check-slug?slug=x").await.expect_error(401, "UNAUTHORIZED");
        anonymous.get("/api/link-analytics").await.expect_error(401, "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn another_tenants_links_are_not_found() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Eve", "eve.example").await;
        let created = owner
            .create_link(json!({ "siteId": site, "destinationUrl": "https://eve.example/", "slug": "mine" }))
            .await;
        let id = created["link"]["id"].as_str().unwrap();
        let (intruder, _) = app.user_with_site("Fox", "fox.example").await;
        intruder
            .put(&format!("/api/links/{id}"), json!({ "destinationUrl": "https://evil.example/" }))
            .await
            .expect_error(404, "NOT_FOUND");
        intruder.delete(&format!("/api/links/{id}")).await.expect_error(404, "NOT_FOUND");
        intruder.get(&format!("/api/links?siteId={site}")).await.expect_error(404, "NOT_FOUND");
        intruder
            .post("/api/links", json!({ "siteId": site, "destinationUrl": "https://evil.example/" }))
            .await
            .expect_error(404, "NOT_FOUND");
        intruder.get(&format!("/api/links/check-slug?slug=mine&siteId={site}")).await.expect_error(404, "NOT_FOUND");
        intruder.get(&format!("/api/link-analytics?siteId={site}")).await.expect_error(404, "NOT_FOUND");
        let list = owner.get(&format!("/api/links?siteId={site}")).await;
        assert_eq!(list.body["links"][0]["destination_url"], "https://eve.example/", "unchanged");
    }
}

#[tokio::test]
async fn links_answer_to_graphql_with_a_qr_code() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Gia", "gia.example").await;
        client.create_link(json!({ "siteId": site, "destinationUrl": "https://gia.example/", "slug": "qr" })).await;
        let response = client
            .graphql(
                "query($s: Int) { links(siteId: $s) { links { id fullUrl qrSvg totalClicks } } }",
                json!({ "s": site }),
            )
            .await;
        let link = &response["data"]["links"]["links"][0];
        assert!(link["qrSvg"].as_str().unwrap().contains("<svg"));
        assert_eq!(link["fullUrl"], format!("{}/l/gia-example/qr", app.base));
        let svg = app.client().get("/l/gia-example/qr/qr.svg").await;
        svg.expect(200);
        assert_eq!(svg.headers["content-type"], "image/svg+xml");
        assert!(svg.text.starts_with("<?xml") || svg.text.contains("<svg"));
        app.client().get("/l/gia-example/nope/qr.svg").await.expect_error(404, "NOT_FOUND");
    }
}

#[tokio::test]
async fn lenient_forms_of_link_input() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Hal", "hal.example").await;
        let link = client.create_link(json!({ "siteId": site, "destinationUrl": "https://hal.example/" })).await;
        let path = format!("/api/links/{}", link["link"]["id"].as_str().unwrap());
        let dated = client.put(&path, json!({ "expires_at": "2031-05-06", "tags": ["a"] })).await;
        assert_eq!(dated.expect(200)["link"]["expires_at"], "2031-05-06T00:00:00.000Z", "a bare date is midnight UTC");
        let cleared = client.put(&path, json!({ "tags": null })).await;
        assert_eq!(cleared.expect(200)["link"]["tags"], json!([]));
        let empty_range = client.get(&format!("/api/link-analytics?siteId={site}&range=")).await;
        assert_eq!(empty_range.expect(200)["byDay"].as_array().unwrap().len(), 7, "an empty range is the default 7d");
    }
}
