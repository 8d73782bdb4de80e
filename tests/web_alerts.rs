//! `/settings/alerts` over HTTP: an admin adds, tests, edits and deletes
//! destinations and retries a failed delivery; bad values come back beside
//! their inputs; the signed-out, strangers and non-admins are refused.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{
    Client, apps_with,
    receiver::receiver,
    traffic::pageview,
    web::{expect_page, join, location, org_of, post_form},
};
use serde_json::{Value, json};

const PAGE: &str = "/settings/alerts";

fn lenient(config: &mut leadtrail::config::Config) {
    config.webhook_unsafe_allow_any_target = true;
    config.webhook_timeout_secs = 2;
}

async fn destinations(client: &Client, site: i64) -> Vec<Value> {
    let reply = client
        .graphql(
            "query($s: Int!) { destinations(siteId: $s) { id name url webhookType trigger includeJourney includeEvents enabled deliveries { id status } } }",
            json!({ "s": site }),
        )
        .await;
    reply["data"]["destinations"].as_array().unwrap_or_else(|| panic!("{reply}")).clone()
}

fn create_fields<'a>(name: &'a str, url: &'a str, trigger: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("action", "create"),
        ("name", name),
        ("url", url),
        ("trigger", trigger),
        ("webhook_type", "custom"),
        ("include_journey", "1"),
        ("enabled", "1"),
    ]
}

async fn page_until(client: &Client, text: &str) -> String {
    for _ in 0..100 {
        let page = expect_page(&client.get(PAGE).await, 200);
        if page.contains(text) {
            return page;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the alerts page never showed {text:?}");
}

#[tokio::test]
async fn an_admin_adds_tests_edits_retries_and_deletes_destinations() {
    for app in apps_with(lenient).await {
        let (client, site) = app.user_with_site("Ada", "shop.example").await;
        let (hook, inbox) = receiver().await;
        let page = expect_page(&client.get(PAGE).await, 200);
        assert!(page.contains("Add a destination") && page.contains(r#"aria-current="page">Alerts"#), "{page}");

        let ok = format!("{hook}/hook/ok");
        let hostile = "<img src=x onerror=alert(1)>Sales";
        let created = post_form(&client, PAGE, &create_fields(hostile, &ok, "IDENTIFIED"), &[]).await;
        assert_eq!(location(&created), "/settings/alerts?done=alert-created");
        let stored = destinations(&client, site).await;
        assert_eq!(stored.len(), 1);
        let id = stored[0]["id"].as_str().unwrap().to_owned();
        assert_eq!(
            (
                &stored[0]["name"],
                &stored[0]["trigger"],
                &stored[0]["includeJourney"],
                &stored[0]["includeEvents"],
                &stored[0]["enabled"]
            ),
            (&json!(hostile), &json!("IDENTIFIED"), &json!(true), &json!(false), &json!(true))
        );
        let page = expect_page(&client.get("/settings/alerts?done=alert-created").await, 200);
        assert!(page.contains("The destination was added."), "{page}");
        assert!(page.contains("&#60;img src=x onerror=alert(1)&#62;Sales") && !page.contains("<img src=x"), "escaped");

        // A test sends a sample at once.
        let tested = post_form(&client, PAGE, &[("action", "test"), ("destination", &id)], &[]).await;
        assert_eq!(location(&tested), "/settings/alerts?done=alert-tested");
        assert_eq!(inbox.at("ok").len(), 1);

        // Bad values come back beside their inputs, with what was typed.
        let bad_url = [
            ("action", "save"),
            ("destination", &id),
            ("name", "Sales"),
            ("url", "ftp://x.example/"),
            ("trigger", "IDENTIFIED"),
            ("webhook_type", "custom"),
        ];
        let html = expect_page(&post_form(&client, PAGE, &bad_url, &[]).await, 400);
        assert!(html.contains(&format!(r#"id="dest-{id}-url-error""#)), "{html}");
        assert!(html.contains(r#"value="ftp://x.example/""#), "typed value kept");
        let bad_type = [
            ("action", "save"),
            ("destination", &id),
            ("name", "Sales"),
            ("url", &ok),
            ("trigger", "IDENTIFIED"),
            ("webhook_type", "fax"),
        ];
        let html = expect_page(&post_form(&client, PAGE, &bad_type, &[]).await, 400);
        assert!(html.contains(&format!(r#"id="dest-{id}-webhook_type-error""#)), "{html}");
        let html = expect_page(&post_form(&client, PAGE, &create_fields("", &ok, "IDENTIFIED"), &[]).await, 400);
        assert!(html.contains(r#"id="new-name-error""#), "{html}");
        let html = expect_page(&post_form(&client, PAGE, &create_fields("x", &ok, "SOMETIMES"), &[]).await, 400);
        assert!(html.contains(r#"id="new-trigger-error""#), "{html}");
        assert_eq!(destinations(&client, site).await.len(), 1, "nothing bad was stored");

        // Saving: every field replaced.
        let save = [
            ("action", "save"),
            ("destination", &id),
            ("name", "Sales"),
            ("url", &ok),
            ("trigger", "IDENTIFIED"),
            ("webhook_type", "crm_two"),
            ("include_events", "1"),
            ("enabled", "1"),
        ];
        assert_eq!(location(&post_form(&client, PAGE, &save, &[]).await), "/settings/alerts?done=alert-saved");
        let stored = &destinations(&client, site).await[0];
        assert_eq!(
            (&stored["name"], &stored["webhookType"], &stored["includeJourney"]),
            (&json!("Sales"), &json!("crm_two"), &json!(false))
        );

        // An identified visitor's alert shows as delivered.
        app.collect(pageview(site, "v1", "https://shop.example/")).await.expect(202);
        client.identify(json!({ "siteId": site, "tracker_vid": "v1", "email": "v1@example.com" })).await.expect(200);
        page_until(&client, "Delivered after 1 attempt.").await;
        let log = expect_page(&client.get("/settings/webhooks").await, 200);
        assert!(log.contains("crm_two (alert: identified, attempt 1)"), "the delivery log shows alerts: {log}");

        // A refused delivery offers a retry, which sends it again.
        let gone = format!("{hook}/hook/gone");
        post_form(&client, PAGE, &create_fields("Gone", &gone, "IDENTIFIED"), &[]).await;
        client.identify(json!({ "siteId": site, "tracker_vid": "v2", "email": "v2@example.com" })).await.expect(200);
        let page = page_until(&client, "Failed after 1 attempt.").await;
        assert!(page.contains("Last answer 410"), "{page}");
        let gone_destination = destinations(&client, site).await.into_iter().find(|d| d["name"] == "Gone").unwrap();
        let delivery = gone_destination["deliveries"][0]["id"].as_str().unwrap().to_owned();
        let retried = post_form(&client, PAGE, &[("action", "retry"), ("delivery", &delivery)], &[]).await;
        assert_eq!(location(&retried), "/settings/alerts?done=delivery-retried");
        assert_eq!(inbox.at("gone").len(), 2);
        page_until(&client, "Failed after 2 attempts.").await;

        // Deleting needs the box ticked.
        expect_page(&post_form(&client, PAGE, &[("action", "delete"), ("destination", &id)], &[]).await, 400);
        let deleted =
            post_form(&client, PAGE, &[("action", "delete"), ("destination", &id), ("confirm", "1")], &[]).await;
        assert_eq!(location(&deleted), "/settings/alerts?done=alert-deleted");
        assert_eq!(destinations(&client, site).await.len(), 1);
    }
}

#[tokio::test]
async fn the_alerts_page_refuses_the_signed_out_strangers_and_non_admins() {
    for app in apps_with(lenient).await {
        let (owner, site) = app.user_with_site("Olga", "shop.example").await;
        let (hook, _inbox) = receiver().await;
        let url = format!("{hook}/hook/gone");
        post_form(&owner, PAGE, &create_fields("Sales", &url, "IDENTIFIED"), &[]).await;
        let id = destinations(&owner, site).await[0]["id"].as_str().unwrap().to_owned();
        owner.identify(json!({ "siteId": site, "tracker_vid": "v1", "email": "v1@example.com" })).await.expect(200);
        let mut delivery = Value::Null;
        for _ in 0..100 {
            delivery = destinations(&owner, site).await[0]["deliveries"][0].clone();
            if delivery["status"] == "FAILED" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let delivery = delivery["id"].as_str().unwrap().to_owned();

        let signed_out = app.client();
        assert!(location(&signed_out.get(PAGE).await).starts_with("/login?next="));
        let reply = post_form(&signed_out, PAGE, &[("action", "test"), ("destination", &id)], &[]).await;
        assert!(matches!(reply.status.as_u16(), 303 | 401), "{}", reply.status);

        // A stranger, on their own site's page, with our ids: not found, nothing changes.
        let (stranger, _) = app.user_with_site("Sid", "other.example").await;
        let attempts = [
            vec![("action", "test"), ("destination", id.as_str())],
            vec![("action", "delete"), ("destination", id.as_str()), ("confirm", "1")],
            vec![
                ("action", "save"),
                ("destination", id.as_str()),
                ("name", "Mine"),
                ("url", url.as_str()),
                ("trigger", "IDENTIFIED"),
                ("webhook_type", "custom"),
            ],
            vec![("action", "retry"), ("delivery", delivery.as_str())],
        ];
        for fields in &attempts {
            expect_page(&post_form(&stranger, PAGE, fields, &[]).await, 404);
        }
        let forged = format!("{PAGE}?site={site}");
        let reply = stranger.get(&forged).await;
        assert!(matches!(reply.status.as_u16(), 403 | 404), "{}", reply.status);
        let after = destinations(&owner, site).await;
        assert_eq!((after.len(), &after[0]["name"]), (1, &json!("Sales")));

        // Members and viewers see no destinations and cannot post.
        let org = org_of(&owner, site).await;
        for role in ["member", "viewer"] {
            let other = join(&app, &owner, &org, role, role).await;
            let page = expect_page(&other.get(&forged).await, 200);
            assert!(page.contains("Admins of this site's organization manage its alerts."), "{page}");
            assert!(!page.contains(&url), "{role} does not see the target URL");
            let path = format!("{PAGE}?site={site}");
            expect_page(&post_form(&other, &path, &create_fields("Mine", &url, "IDENTIFIED"), &[]).await, 403);
            expect_page(&post_form(&other, &path, &[("action", "test"), ("destination", &id)], &[]).await, 403);
        }
    }
}
