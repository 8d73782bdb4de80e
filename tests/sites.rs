//! /api/profile and /api/sites.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps, apps_with};
use serde_json::json;

#[tokio::test]
async fn profile_has_the_spec_shape() {
    for app in apps().await {
        let (client, email) = app.user("Pia").await;
        client.post("/api/sites", json!({ "domain": "pia.example" })).await.expect(200);
        let reply = client.get("/api/profile").await;
        let profile = &reply.expect(200)["profile"];
        let mut keys: Vec<_> = profile.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, ["createdAt", "email", "id", "maxSites", "name", "org", "siteCount", "tier"]);
        assert!(profile["id"].is_string());
        assert_eq!(profile["email"], email);
        assert_eq!(profile["tier"], "free");
        assert_eq!(profile["maxSites"], 10);
        assert_eq!(profile["siteCount"], 1);
        let org = &profile["org"];
        let mut org_keys: Vec<_> = org.as_object().unwrap().keys().cloned().collect();
        org_keys.sort();
        assert_eq!(org_keys, ["id", "memberSince", "name", "role", "slug"]);
        assert!(org["id"].is_string());
        assert_eq!(org["role"], "owner");
        assert!(org["memberSince"].as_str().unwrap().ends_with('Z'));

        app.client().get("/api/profile").await.expect_error(401, "UNAUTHORIZED");
        app.client().with_session("forged".into()).get("/api/profile").await.expect_error(401, "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn max_sites_comes_from_config() {
    for app in apps_with(|config| config.max_sites_per_account = 3).await {
        let (client, _) = app.user("Quin").await;
        assert_eq!(client.get("/api/profile").await.expect(200)["profile"]["maxSites"], 3);
    }
}

#[tokio::test]
async fn sites_crud() {
    for app in apps().await {
        let (client, _) = app.user("Ray").await;
        assert_eq!(client.get("/api/sites").await.expect(200), &json!({ "sites": [] }));

        let created =
            client.post("/api/sites", json!({ "domain": "https://WWW.Shop.Example/path?q=1", "name": "Shop" })).await;
        let site = created.expect(200)["site"].clone();
        assert_eq!(site["name"], "Shop");
        assert_eq!(site["domain"], "www.shop.example", "stored as its host");
        let id = site["siteId"].as_i64().expect("numeric siteId");
        assert_eq!(site.as_object().unwrap().len(), 3, "site {{siteId, name, domain}}: {site}");

        let bare = client.post("/api/sites", json!({ "domain": "blog.example" })).await;
        assert_eq!(bare.expect(200)["site"]["name"], "blog.example", "name defaults to the domain");

        let list = client.get("/api/sites").await;
        let sites = list.expect(200)["sites"].as_array().unwrap().clone();
        assert_eq!(sites.len(), 2);
        assert_eq!(
            sites[0],
            json!({ "siteId": id, "name": "Shop", "domain": "www.shop.example", "trackingMode": "cookie", "firstPartyDomain": "" })
        );

        let renamed = client.put(&format!("/api/sites/{id}"), json!({ "name": "Shop 2" })).await;
        assert_eq!(
            renamed.expect(200),
            &json!({ "site": { "siteId": id, "name": "Shop 2", "domain": "www.shop.example" } })
        );
        let moved = client.put(&format!("/api/sites/{id}"), json!({ "domain": "shop.example" })).await;
        assert_eq!(moved.expect(200)["site"]["domain"], "shop.example");
        assert_eq!(moved.body["site"]["name"], "Shop 2", "unchanged fields are kept");
        let cookieless = client
            .put(
                &format!("/api/sites/{id}"),
                json!({ "trackingMode": "cookieless", "firstPartyDomain": "t.shop.example" }),
            )
            .await;
        cookieless.expect(200);
        let listed = client.get("/api/sites").await;
        assert_eq!(listed.body["sites"][0]["trackingMode"], "cookieless");
        assert_eq!(listed.body["sites"][0]["firstPartyDomain"], "t.shop.example");

        let deleted = client.delete(&format!("/api/sites/{id}")).await;
        assert_eq!(deleted.expect(200), &json!({ "success": true }));
        assert_eq!(client.get("/api/sites").await.body["sites"].as_array().unwrap().len(), 1);
        client.delete(&format!("/api/sites/{id}")).await.expect_error(404, "NOT_FOUND");
        client.put(&format!("/api/sites/{id}"), json!({ "name": "x" })).await.expect_error(404, "NOT_FOUND");
        assert_eq!(client.get("/api/profile").await.body["profile"]["siteCount"], 1);
    }
}

#[tokio::test]
async fn sites_reject_bad_input() {
    for app in apps().await {
        let (client, id) = app.user_with_site("Sol", "sol.example").await;
        for body in [
            json!({}),
            json!({ "domain": "" }),
            json!({ "domain": 7 }),
            json!({ "domain": "ftp://x.example" }),
            json!({ "domain": "http://" }),
            json!({ "domain": "shop.example*" }),
            json!({ "domain": "https://sh{op}.example/" }),
        ] {
            let reply = client.post("/api/sites", body.clone()).await;
            reply.expect_error(400, "VALIDATION_ERROR");
        }
        client.post_raw("/api/sites", "{oops").await.expect_error(400, "BAD_REQUEST");
        let path = format!("/api/sites/{id}");
        client.put(&path, json!({ "name": "" })).await.expect_error(400, "VALIDATION_ERROR");
        client.put(&path, json!({ "name": ["x"] })).await.expect_error(400, "VALIDATION_ERROR");
        client.put(&path, json!({ "trackingMode": "spy" })).await.expect_error(400, "VALIDATION_ERROR");
        client.put("/api/sites/abc", json!({ "name": "x" })).await.expect_error(404, "NOT_FOUND");
        client.delete("/api/sites/99999999").await.expect_error(404, "NOT_FOUND");
    }
}

#[tokio::test]
async fn sites_need_a_session() {
    for app in apps().await {
        let (_, id) = app.user_with_site("Tom", "tom.example").await;
        let anonymous = app.client();
        anonymous.get("/api/sites").await.expect_error(401, "UNAUTHORIZED");
        anonymous.post("/api/sites", json!({ "domain": "a.example" })).await.expect_error(401, "UNAUTHORIZED");
        anonymous.put(&format!("/api/sites/{id}"), json!({ "name": "x" })).await.expect_error(401, "UNAUTHORIZED");
        anonymous.delete(&format!("/api/sites/{id}")).await.expect_error(401, "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn another_tenants_site_is_not_found_and_unchanged() {
    for app in apps().await {
        let (owner, id) = app.user_with_site("Uma", "uma.example").await;
        let (intruder, _) = app.user("Vic").await;
        let path = format!("/api/sites/{id}");
        intruder.put(&path, json!({ "name": "mine now" })).await.expect_error(404, "NOT_FOUND");
        intruder.delete(&path).await.expect_error(404, "NOT_FOUND");
        assert_eq!(intruder.get("/api/sites").await.expect(200), &json!({ "sites": [] }));
        let sites = owner.get("/api/sites").await;
        assert_eq!(sites.body["sites"][0]["name"], "uma.example", "unchanged");
    }
}

#[tokio::test]
async fn site_limit_is_enforced() {
    for app in apps_with(|config| config.max_sites_per_account = 2).await {
        let (client, _) = app.user("Wes").await;
        client.post("/api/sites", json!({ "domain": "one.example" })).await.expect(200);
        client.post("/api/sites", json!({ "domain": "two.example" })).await.expect(200);
        client.post("/api/sites", json!({ "domain": "three.example" })).await.expect_error(403, "SITE_LIMIT_REACHED");
        let profile = client.get("/api/profile").await;
        assert_eq!(profile.body["profile"]["siteCount"], 2);
        assert_eq!(profile.body["profile"]["maxSites"], 2);
    }
}

#[tokio::test]
async fn site_slugs_are_unique_across_the_service() {
    for app in apps().await {
        let (first, _) = app.user("Xia").await;
        let (second, _) = app.user("Yan").await;
        first.post("/api/sites", json!({ "domain": "same.example" })).await.expect(200);
        second.post("/api/sites", json!({ "domain": "same.example" })).await.expect(200);
        let query = "{ sites { slug } }";
        let a = first.graphql(query, json!({})).await;
        let b = second.graphql(query, json!({})).await;
        assert_eq!(a["data"]["sites"][0]["slug"], "same-example");
        assert_eq!(b["data"]["sites"][0]["slug"], "same-example-2");
    }
}

#[tokio::test]
async fn deleting_a_site_removes_all_of_its_data() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Zed", "zed.example").await;
        let (_, other_site) = app.user_with_site("Zoe", "zoe.example").await;
        for target in [site, other_site] {
            app.collect(common::traffic::pageview(target, "v1", "https://zed.example/")).await.expect(202);
        }
        client.identify(json!({ "siteId": site, "tracker_vid": "v1", "user_id": "u1" })).await.expect(200);
        client.delete(&format!("/api/sites/{site}")).await.expect(200);
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        let db = &app.state.db;
        let left = |count: usize, what: &str| assert_eq!(count, 0, "{what} of the deleted site remain");
        left(
            entity::visitor::Entity::find()
                .filter(entity::visitor::Column::SiteId.eq(site))
                .all(db)
                .await
                .unwrap()
                .len(),
            "visitors",
        );
        left(
            entity::event::Entity::find().filter(entity::event::Column::SiteId.eq(site)).all(db).await.unwrap().len(),
            "events",
        );
        left(
            entity::tracked_session::Entity::find()
                .filter(entity::tracked_session::Column::SiteId.eq(site))
                .all(db)
                .await
                .unwrap()
                .len(),
            "sessions",
        );
        left(
            entity::identity::Entity::find()
                .filter(entity::identity::Column::SiteId.eq(site))
                .all(db)
                .await
                .unwrap()
                .len(),
            "identities",
        );
        assert_eq!(app.visitor(other_site, "v1").await.total_pageviews, 1, "other sites keep their data");
        app.collect_with(
            common::traffic::pageview(site, "v2", "https://zed.example/"),
            common::traffic::DESKTOP_UA,
            &[],
        )
        .await
        .expect_error(404, "NOT_FOUND");
    }
}

#[tokio::test]
async fn the_site_limit_holds_for_requests_made_at_once() {
    for app in apps_with(|config| config.max_sites_per_account = 3).await {
        let (client, _) = app.user("Ida").await;
        let replies = futures_util::future::join_all(
            (0..12).map(|n| client.post("/api/sites", json!({ "domain": format!("at-once-{n}.example") }))),
        )
        .await;
        let statuses: Vec<u16> = replies.iter().map(|reply| reply.status.as_u16()).collect();
        assert_eq!(statuses.iter().filter(|&&s| s == 200).count(), 3, "{statuses:?}");
        for reply in replies.iter().filter(|reply| reply.status.as_u16() != 200) {
            reply.expect_error(403, "SITE_LIMIT_REACHED");
        }
        let sites = client.get("/api/sites").await.expect(200)["sites"].as_array().map(Vec::len);
        assert_eq!(sites, Some(3));
    }
}
