//! The links and settings pages in headless Chromium: an admin adds a site
//! in settings, copies its snippet onto a test page, makes a link through
//! the form (the slug checked while typing), clicks its short URL and finds
//! the click tied to the visitor, caps it at one click and sees the next
//! answered 410; creates an API key and uses it with curl; changes a
//! member's role; rotates the webhook secret. axe-core checks every page.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{
    apps,
    browser::{
        FLAGS, axe, browser_missing, fill, no_script_ran, screenshot, serve_page, start_browser, text, wait_for_events,
        wait_for_path,
    },
};
use fantoccini::{Client, Locator};
use serde_json::json;

/// Submits the form whose `action` field is `action`.
async fn submit(browser: &Client, action: &str) {
    let xpath = format!("//form[input[@name='action' and @value='{action}']]//button[@type='submit']");
    browser.find(Locator::XPath(&xpath)).await.unwrap().click().await.unwrap();
}

/// Waits for the element's text to contain `wanted`.
async fn wait_for_text(browser: &Client, css: &str, wanted: &str) -> String {
    let mut seen = String::new();
    for _ in 0..100 {
        if let Ok(element) = browser.find(Locator::Css(css)).await {
            seen = element.text().await.unwrap_or_default();
            if seen.contains(wanted) {
                return seen;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{css} never showed {wanted:?}; last: {seen:?}");
}

async fn status_of(url: &str) -> u16 {
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let request = http.get(url).header("user-agent", common::traffic::DESKTOP_UA);
    request.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn an_admin_makes_a_site_a_link_a_key_and_manages_the_team_in_the_browser() {
    if browser_missing() {
        return;
    }
    for app in apps().await {
        let shots = app.backend == "sqlite";
        let (api, email) = app.user("Owen").await;
        let (colleague_api, colleague) = app.user("Cora").await;
        let (_driver, browser) = start_browser(&FLAGS).await;
        browser.goto(&format!("{}/login?next=%2Fsettings", app.base)).await.unwrap();
        fill(&browser, "#email", &email).await;
        fill(&browser, "#password", "correct horse").await;
        browser.find(Locator::Css("form button[type=submit]")).await.unwrap().click().await.unwrap();
        wait_for_path(&browser, "/settings").await;

        // A site, and its snippet on a customer's page.
        assert_eq!(text(&browser, "#new-site-title").await, "Add a site");
        axe(&browser, "/settings (no site)").await;
        fill(&browser, "#new-domain", "127.0.0.1").await;
        fill(&browser, "#new-name", "Shop").await;
        submit(&browser, "create").await;
        let snippet = wait_for_text(&browser, "#snippet", "data-site-id").await;
        assert!(text(&browser, ".notice").await.contains("The site was created."));
        axe(&browser, "/settings").await;
        no_script_ran(&browser, "/settings").await;
        if shots {
            screenshot(&browser, "settings").await;
        }
        let shop = serve_page(format!(
            r#"<!doctype html><html lang="en"><head><title>Spring sale</title>{snippet}</head><body><h1>Spring</h1></body></html>"#
        ))
        .await;
        browser.goto(&format!("{shop}/spring")).await.unwrap();
        wait_for_events(&app, 1).await;

        // A link through the form, the slug checked while typing.
        browser.goto(&format!("{}/links", app.base)).await.unwrap();
        axe(&browser, "/links (empty)").await;
        fill(&browser, "#create-destination", &format!("{shop}/spring")).await;
        fill(&browser, "#create-slug", "spring").await;
        wait_for_text(&browser, "#create-slug-status", "“spring” is free.").await;
        fill(&browser, "#create-campaign", "spring-sale").await;
        fill(&browser, "#create-source", "newsletter").await;
        fill(&browser, "#create-tags", "q2, email").await;
        submit(&browser, "create").await;
        wait_for_text(&browser, ".notice", "The link was created.").await;
        let short = text(&browser, "#short-url").await;
        let link_path = browser.current_url().await.unwrap().path().to_owned();
        assert!(link_path.starts_with("/links/lnk_"), "{link_path}");
        browser.goto(&format!("{}/links", app.base)).await.unwrap();
        fill(&browser, "#create-slug", "spring").await;
        wait_for_text(&browser, "#create-slug-status", "“spring” is taken on this site.").await;
        axe(&browser, "/links").await;
        if shots {
            screenshot(&browser, "links").await;
        }

        // Its short URL, clicked: the tracker on the destination ties the click.
        browser.goto(&short).await.unwrap();
        wait_for_events(&app, 2).await;
        let vid = browser.execute("return localStorage.getItem('lt_vid');", vec![]).await.unwrap();
        let vid = vid.as_str().unwrap().to_owned();
        let visitor_link = format!("a[href^='/visitor/{vid}']");
        let mut tied = false;
        for _ in 0..50 {
            browser.goto(&format!("{}{link_path}", app.base)).await.unwrap();
            if browser.find(Locator::Css(&visitor_link)).await.is_ok() {
                tied = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(tied, "the click is tied to {vid}: {}", text(&browser, "#clicks-title + *").await);
        assert!(text(&browser, "#chart-title").await.ends_with(": 1 click"));
        assert!(browser.find(Locator::Css(".chart svg polyline")).await.is_ok());
        axe(&browser, "/links/<id>").await;
        no_script_ran(&browser, "/links/<id>").await;
        if shots {
            screenshot(&browser, "link").await;
        }

        // At most one click: the next is 410.
        let max = browser.find(Locator::Css("#update-max_clicks")).await.unwrap();
        max.clear().await.unwrap();
        max.send_keys("1").await.unwrap();
        submit(&browser, "update").await;
        wait_for_text(&browser, ".notice", "The link was saved.").await;
        assert_eq!(status_of(&short).await, 410);

        // An API key, used with curl.
        browser.goto(&format!("{}/settings/team", app.base)).await.unwrap();
        fill(&browser, "#key-name", "CRM sync").await;
        submit(&browser, "create-key").await;
        let key = wait_for_text(&browser, "#new-key", "").await;
        assert!(!key.is_empty());
        // curl blocks, and the server shares this test's runtime.
        let (auth, url) = (format!("Authorization: Bearer {key}"), format!("{}/api/sites", app.base));
        let curl = tokio::task::spawn_blocking(move || {
            std::process::Command::new("curl")
                .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", &auth, &url])
                .output()
                .expect("curl runs")
        })
        .await
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&curl.stdout), "200");
        axe(&browser, "/settings/team").await;

        // A colleague invited as a viewer; once they accept, made a member.
        fill(&browser, "#member-email", &colleague).await;
        browser.find(Locator::Css("#member-role")).await.unwrap().select_by_value("viewer").await.unwrap();
        submit(&browser, "invite-member").await;
        wait_for_text(&browser, ".notice", "The invitation was sent.").await;
        let pending = format!("//tr[th[contains(., '{colleague}')]]//button[contains(., 'Withdraw')]");
        browser.find(Locator::XPath(&pending)).await.unwrap();
        axe(&browser, "/settings/team (invitation pending)").await;
        let invitations = colleague_api.graphql("{ myInvitations { id role } }", json!({})).await;
        let invitation = invitations["data"]["myInvitations"][0]["id"].clone();
        let accepted = colleague_api
            .graphql("mutation($id: ID!) { acceptInvitation(id: $id) { role } }", json!({ "id": invitation }))
            .await;
        assert_eq!(accepted["data"]["acceptInvitation"]["role"], "viewer", "{accepted}");
        browser.goto(&format!("{}/settings/team", app.base)).await.unwrap();
        let row = format!("//tr[td[contains(., '{colleague}')]]");
        let select = browser.find(Locator::XPath(&format!("{row}//select[@name='role']"))).await.unwrap();
        select.select_by_value("member").await.unwrap();
        browser
            .find(Locator::XPath(&format!("{row}//form[input[@value='change-role']]//button")))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait_for_text(&browser, ".notice", "The role was changed.").await;
        let org = api.graphql("{ profile { org { id } } }", json!({})).await["data"]["profile"]["org"]["id"].clone();
        let members = api.graphql("query($o: ID!) { members(orgId: $o) { email role } }", json!({ "o": org })).await;
        assert!(
            members["data"]["members"].as_array().unwrap().contains(&json!({ "email": colleague, "role": "member" }))
        );
        axe(&browser, "/settings/team (after)").await;
        if shots {
            screenshot(&browser, "team").await;
        }

        // The webhook secret, rotated after confirming.
        let before = api.graphql("{ webhookSigningSecret }", json!({})).await["data"]["webhookSigningSecret"].clone();
        browser.goto(&format!("{}/settings/webhooks", app.base)).await.unwrap();
        axe(&browser, "/settings/webhooks").await;
        browser.find(Locator::Css("#rotate-confirm")).await.unwrap().click().await.unwrap();
        submit(&browser, "rotate").await;
        wait_for_text(&browser, ".notice", "The signing secret was replaced.").await;
        let after = api.graphql("{ webhookSigningSecret }", json!({})).await["data"]["webhookSigningSecret"].clone();
        assert_ne!(before, after);

        // An alert destination for hot leads.
        browser.goto(&format!("{}/settings/alerts", app.base)).await.unwrap();
        axe(&browser, "/settings/alerts (empty)").await;
        fill(&browser, "#new-name", "Sales channel").await;
        fill(&browser, "#new-url", "https://hooks.example.com/leadtrail").await;
        browser.find(Locator::Css("#new-trigger option[value=FORM_SUBMITTED]")).await.unwrap().click().await.unwrap();
        submit(&browser, "create").await;
        wait_for_text(&browser, ".notice", "The destination was added.").await;
        let site = api.graphql("{ sites { id } }", json!({})).await["data"]["sites"][0]["id"].clone();
        let stored = api
            .graphql("query($s: Int!) { destinations(siteId: $s) { name trigger enabled } }", json!({ "s": site }))
            .await;
        assert_eq!(
            stored["data"]["destinations"],
            json!([{ "name": "Sales channel", "trigger": "FORM_SUBMITTED", "enabled": true }])
        );
        axe(&browser, "/settings/alerts").await;
        if shots {
            screenshot(&browser, "alerts").await;
        }

        browser.goto(&format!("{}/settings/account", app.base)).await.unwrap();
        axe(&browser, "/settings/account").await;
        no_script_ran(&browser, "/settings/account").await;
        browser.close().await.ok();
    }
}
