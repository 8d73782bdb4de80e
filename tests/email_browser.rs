//! The email pages in headless Chromium, as a user meets them: "forgot your
//! password" from the sign-in form to the new password, an invitation link
//! that signs a newcomer up, choosing a digest, the digest itself (rendered
//! for the README) and its unsubscribe page; at 1400 and 390 px, axe-core
//! clean on each page.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{
    apps_with,
    browser::{FLAGS, axe, browser_missing, fill, screenshot, serve_page, start_browser, text, wait_for_path},
    smtp::{SmtpServer, smtp_missing},
    traffic::pageview,
    unique,
};
use fantoccini::{Client, Locator};
use leadtrail::service::email::digest::{self, schedule};
use serde_json::json;

async fn submit(browser: &Client, form: &str) {
    browser.find(Locator::Css(&format!("{form} button[type=submit]"))).await.unwrap().click().await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
}

/// Axe at both widths on the page the browser shows.
async fn axe_both(browser: &Client, page: &str) {
    for width in [1400, 390] {
        browser.set_window_size(width, 1400).await.unwrap();
        axe(browser, &format!("{page} at {width} px")).await;
        let overflow: bool = browser
            .execute("return document.documentElement.scrollWidth > window.innerWidth + 1;", vec![])
            .await
            .unwrap()
            .as_bool()
            .unwrap();
        assert!(!overflow, "{page} scrolls sideways at {width} px");
    }
    browser.set_window_size(1400, 1400).await.unwrap();
}

#[tokio::test]
async fn the_email_pages_work_in_a_browser() {
    if browser_missing() || smtp_missing() {
        return;
    }
    let smtp = SmtpServer::start(0);
    let app = apps_with(|config| smtp.configure(config)).await.remove(0);
    let (client, email) = app.user("Rosa").await;
    let site = client.post("/api/sites", json!({ "domain": "shop.example", "name": "Shop" })).await.expect(200)["site"]
        ["siteId"]
        .as_i64()
        .unwrap();
    let (_driver, browser) = start_browser(&FLAGS).await;

    // Forgot the password: from the sign-in form.
    browser.goto(&format!("{}/login", app.base)).await.unwrap();
    browser.find(Locator::LinkText("Forgot your password?")).await.unwrap().click().await.unwrap();
    wait_for_path(&browser, "/forgot-password").await;
    axe_both(&browser, "/forgot-password").await;
    fill(&browser, "#email", &email).await;
    submit(&browser, "form:has(#email)").await;
    assert!(text(&browser, "[role=status]").await.contains("is on its way"));
    axe_both(&browser, "check your email").await;
    let link = smtp.wait_for_message(&email, "Reset your Leadtrail password").await.link("/reset-password");
    browser.goto(&link).await.unwrap();
    axe_both(&browser, "/reset-password").await;
    fill(&browser, "#password", "correct horse 2").await;
    submit(&browser, "form:has(#password)").await;
    wait_for_path(&browser, "/login").await;
    assert!(text(&browser, "[role=status]").await.contains("Your password is changed"));
    // The used link says so.
    browser.goto(&link).await.unwrap();
    assert!(text(&browser, "[role=alert]").await.contains("already used"));
    axe_both(&browser, "a used reset link").await;

    // Back in with the new password; choose a daily digest.
    browser.goto(&format!("{}/login", app.base)).await.unwrap();
    fill(&browser, "#email", &email).await;
    fill(&browser, "#password", "correct horse 2").await;
    submit(&browser, "form:has(#email)").await;
    wait_for_path(&browser, "/").await;
    browser.goto(&format!("{}/settings/account", app.base)).await.unwrap();
    browser.find(Locator::Css(&format!("#digest-{site}"))).await.unwrap().select_by_label("Daily").await.unwrap();
    submit(&browser, &format!("form:has(#digest-{site})")).await;
    assert!(text(&browser, ".notice").await.contains("digest choice was saved"));
    axe_both(&browser, "/settings/account").await;

    // The reset ended the API session too: sign it in again.
    let signed_in =
        app.client().post("/api/auth/sign-in/email", json!({ "email": email, "password": "correct horse 2" })).await;
    let client = app.client().with_session(signed_in.session_cookie_value().unwrap());
    // A day of traffic, then 8:00 tomorrow: the digest, rendered as a mail client would.
    for (vid, url) in [
        ("a", "https://shop.example/?utm_source=newsletter&utm_campaign=winter"),
        ("b", "https://shop.example/pricing?utm_source=newsletter&utm_campaign=winter"),
        ("c", "https://shop.example/docs"),
    ] {
        app.collect(pageview(site, vid, url)).await.expect(202);
    }
    client
        .identify(json!({ "siteId": site, "tracker_vid": "a", "email": "lea@acme.example", "name": "Lea Lead", "company": "Acme" }))
        .await
        .expect(200);
    app.state.writer.flush().await;
    let now = app.state.delivery.clock.now();
    let today = chrono::DateTime::from_timestamp_millis(now).unwrap().date_naive();
    let eight = schedule::send_at(chrono_tz::Tz::UTC, today.succ_opt().unwrap());
    app.state.delivery.clock.advance(eight - now + 1_000);
    assert_eq!(digest::queue_due(&app.state.db, &app.state.delivery).await.unwrap(), 1);
    let message = smtp.wait_for_message(&email, "Daily digest").await;
    let shown = serve_page(message.html()).await;
    browser.goto(&shown).await.unwrap();
    browser.set_window_size(720, 1500).await.unwrap();
    screenshot(&browser, "digest").await;
    axe_both(&browser, "the digest").await;

    // Its unsubscribe page.
    let unsubscribe = message.link("/unsubscribe");
    browser.goto(&unsubscribe).await.unwrap();
    axe_both(&browser, "/unsubscribe").await;
    submit(&browser, "form:has(input[name=token])").await;
    assert!(text(&browser, "[role=status]").await.contains("no more digests of Shop"));

    // An invitation's link signs a newcomer up.
    let invited = format!("{}@example.com", unique("newcomer"));
    let org = client.graphql("{ profile { org { id } } }", json!({})).await["data"]["profile"]["org"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    client
        .graphql(
            "mutation($o: ID!, $e: String!) { inviteMember(orgId: $o, email: $e) { id } }",
            json!({ "o": org, "e": invited }),
        )
        .await;
    let join = smtp.wait_for_message(&invited, "invites you to").await.link("/join");
    browser.delete_all_cookies().await.unwrap();
    browser.goto(&join).await.unwrap();
    axe_both(&browser, "/join").await;
    fill(&browser, "#name", "Nina New").await;
    fill(&browser, "#password", "a long password").await;
    submit(&browser, "form:has(#name)").await;
    wait_for_path(&browser, "/").await;
    browser.goto(&format!("{}/settings/team", app.base)).await.unwrap();
    assert!(text(&browser, "body").await.contains("Nina New"));
}
