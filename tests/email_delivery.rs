//! Email alerts and how sending copes: an alert destination of type
//! `email`, a server that refuses or hangs (retried, logged), hostile names
//! that try to add headers or markup, and a server without SMTP_URL.

// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{
    TestApp, apps, apps_with, gql_error_code,
    smtp::{SmtpServer, smtp_missing},
    traffic::pageview,
    web::expect_page,
};
use leadtrail::service::email::outbox;
use serde_json::json;

const CREATE: &str = "mutation($site: Int!, $input: DestinationInput!) {
    createDestination(siteId: $site, input: $input) { id url webhookType } }";

/// Waits until `check` holds, for at most twenty seconds of real time.
async fn eventually<F: AsyncFn() -> bool>(what: &str, check: F) {
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// The outbox rows to `recipient`, newest first.
async fn outbox_to(app: &TestApp, recipient: &str) -> Vec<entity::email_outbox::Model> {
    outbox::latest_to(&app.state.db, recipient, 20).await.unwrap()
}

#[tokio::test]
async fn an_email_alert_names_the_visitor_escapes_their_markup_and_links_to_them() {
    if smtp_missing() {
        return;
    }
    let smtp = SmtpServer::start(0);
    for app in apps_with(|config| smtp.configure(config)).await {
        let (client, site) = app.user_with_site("Ann", "shop.example").await;
        let to = [common::unique("sales") + "@example.com", common::unique("ceo") + "@example.com"];
        let created = client
            .graphql(
                CREATE,
                json!({ "site": site, "input": { "name": "Sales inbox", "url": format!("mailto:{}, {}", to[0], to[1]),
                    "webhookType": "email", "trigger": "IDENTIFIED" } }),
            )
            .await;
        assert_eq!(created["data"]["createDestination"]["url"], format!("mailto:{},{}", to[0], to[1]), "{created}");

        app.collect(pageview(site, "hostile", "https://shop.example/pricing")).await.expect(202);
        let name = "<script>alert(1)</script> Eve\r\nBcc: victim@example.com";
        client
            .identify(json!({ "siteId": site, "tracker_vid": "hostile", "email": "eve@example.com", "name": name,
                "company": "<b>Evil</b> Corp" }))
            .await
            .expect(200);
        app.state.writer.flush().await;

        let message = smtp.wait_for_message(&to[0], "was identified").await;
        assert_eq!(message.rcpt.len(), 2, "exactly the destination's addresses: {:?}", message.rcpt);
        assert!(message.rcpt.contains(&to[1]));
        let headers = message.header_block();
        assert!(!headers.lines().any(|line| line.to_ascii_lowercase().starts_with("bcc:")), "{headers}");
        assert!(message.subject().contains("Eve Bcc: victim@example.com was identified"), "{}", message.subject());
        let html = message.html();
        assert!(!html.contains("<script>") && !html.contains("<b>Evil"), "{html}");
        let escaped = |markup: &str| {
            html.contains(&markup.replace('<', "&lt;").replace('>', "&gt;"))
                || html.contains(&markup.replace('<', "&#60;").replace('>', "&#62;"))
        };
        assert!(escaped("<script>") && escaped("<b>Evil"), "{html}");
        let text = message.text();
        assert!(text.contains("Company: <b>Evil</b> Corp") && text.contains("Score: "), "{text}");
        // The links work for a member of the site.
        let visitor = message.link("/visitor/");
        assert_eq!(visitor, format!("{}/visitor/hostile", app.base));
        let page = expect_page(&client.get("/visitor/hostile").await, 200);
        assert!(page.contains("eve@example.com"), "{page}");
        assert!(message.link("/talk/incoming?visitor=hostile").starts_with(&app.base));

        // The delivery log has the attempt, as for a webhook.
        let log = client
            .graphql(
                "query($s: Int!) { destinations(siteId: $s) { webhookType deliveries { status attempts } } }",
                json!({ "s": site }),
            )
            .await;
        let destination = &log["data"]["destinations"][0];
        assert_eq!(destination["webhookType"], "email");
        assert_eq!(destination["deliveries"][0]["status"], "DELIVERED", "{log}");

        // Bad addresses are refused on `url`.
        for url in [
            "mailto:",
            "mailto:not-an-address",
            "https://hooks.example/x",
            "mailto:a@example.com\r\nBcc: v@example.com",
        ] {
            let refused = client
                .graphql(
                    CREATE,
                    json!({ "site": site, "input": { "name": "bad", "url": url, "webhookType": "email",
                    "trigger": "IDENTIFIED" } }),
                )
                .await;
            assert_eq!(gql_error_code(&refused), "VALIDATION_ERROR", "{url}: {refused}");
            assert_eq!(refused["errors"][0]["extensions"]["field"], "input.url", "{url}: {refused}");
        }
    }
}

#[tokio::test]
async fn a_refusing_server_is_retried_with_back_off_and_the_log_says_why() {
    if smtp_missing() {
        return;
    }
    let smtp = SmtpServer::start(1);
    // One app: the server refuses only the first message it is sent.
    let app = apps_with(|config| smtp.configure(config)).await.remove(0);
    let (_, email) = app.user("Busy").await;
    let rows = || async { outbox_to(&app, &email).await };
    eventually("the refused attempt", async || {
        rows().await.first().is_some_and(|row| row.attempts == 1 && row.last_error.is_some())
    })
    .await;
    let row = rows().await.remove(0);
    assert_eq!(row.status, outbox::PENDING);
    assert!(row.last_error.as_deref().unwrap_or_default().contains("451"), "{row:?}");
    let wait = row.next_attempt_at.unwrap() - app.state.delivery.clock.now();
    assert!((3_000..=6_100).contains(&wait), "retried after about 5 s: {wait}");
    assert!(smtp.received().is_empty());

    app.state.delivery.clock.advance(7_000);
    smtp.wait_for(1).await;
    eventually("sent", async || rows().await[0].status == outbox::SENT).await;
    let row = rows().await.remove(0);
    assert_eq!(row.attempts, 2);
    assert!(row.text_body.is_empty() && row.html_body.is_empty(), "a sent message keeps no link");
    assert_eq!(smtp.received().len(), 1, "sent once");
    let metrics = app.client().get("/metrics").await.text;
    assert!(metrics.contains("leadtrail_emails_total{outcome=\"retrying\"} 1"), "{metrics}");
    assert!(metrics.contains("leadtrail_emails_total{outcome=\"sent\"} 1"), "{metrics}");
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_retried() {
    // Accepts connections and says nothing, as a wedged server does.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let app = apps_with(|config| {
        config.smtp_url = Some(format!("smtp://127.0.0.1:{port}"));
        config.email_from = Some(common::smtp::FROM.to_owned());
        config.smtp_timeout_secs = 1;
    })
    .await
    .remove(0);
    let (_, email) = app.user("Wedged").await;
    eventually("the timed-out attempt", async || {
        outbox_to(&app, &email).await.first().is_some_and(|row| row.last_error.is_some())
    })
    .await;
    let row = outbox_to(&app, &email).await.remove(0);
    assert_eq!(row.status, outbox::PENDING, "{row:?}");
    assert!(row.next_attempt_at.is_some());
    let error = row.last_error.unwrap_or_default();
    assert!(error.contains("SMTP"), "{error}");
}

#[tokio::test]
async fn without_smtp_nothing_email_related_shows_and_nothing_breaks() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Plain", "plain.example").await;
        let asked = app.client().post("/api/auth/request-password-reset", json!({ "email": "a@example.com" })).await;
        asked.expect_error(400, "BAD_REQUEST");
        assert!(asked.text.contains("SMTP_URL"), "{}", asked.text);
        let login = expect_page(&app.client().get("/login").await, 200);
        assert!(!login.contains("/forgot-password"), "{login}");
        expect_page(&app.client().get("/forgot-password").await, 404);
        let alerts = expect_page(&client.get(&format!("/settings/alerts?site={site}")).await, 200);
        assert!(!alerts.contains("value=\"email\"") && !alerts.contains("mailto:"), "{alerts}");
        let refused = client
            .graphql(
                CREATE,
                json!({ "site": site, "input": { "name": "x", "url": "mailto:a@example.com",
                "webhookType": "email", "trigger": "IDENTIFIED" } }),
            )
            .await;
        assert_eq!(gql_error_code(&refused), "VALIDATION_ERROR", "{refused}");
        assert_eq!(refused["errors"][0]["extensions"]["field"], "input.webhookType");
        let enabled = client.graphql("{ emailEnabled }", json!({})).await;
        assert_eq!(enabled["data"]["emailEnabled"], false);
        // Sign-up and invitations work as before, and queue nothing.
        let (_, email) = app.user("Quiet").await;
        assert!(outbox_to(&app, &email).await.is_empty());
    }
}
