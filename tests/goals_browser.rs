//! Goals, funnels and revenue in headless Chromium, as a marketer sets them
//! up: create two goals in Settings, a funnel of them on /funnels, send
//! traffic through a tracking link that converts (with a server-side deal),
//! then see the funnel's figures, the explorer's goals panel and the link's
//! revenue; at 1400 and 390 px, axe-core clean on each page.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{
    apps,
    browser::{FLAGS, axe, browser_missing, fill, screenshot, sign_in, start_browser, text},
    traffic::pageview,
};
use fantoccini::{Client, Locator};
use serde_json::json;

async fn submit(browser: &Client, form: &str) {
    browser.find(Locator::Css(&format!("{form} button[type=submit]"))).await.unwrap().click().await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
}

#[tokio::test]
async fn a_marketer_sets_up_goals_and_a_funnel_and_sees_what_a_link_brought() {
    if browser_missing() {
        return;
    }
    for app in apps().await {
        let shots = app.backend == "sqlite";
        let (client, email) = app.user("Gwen").await;
        let site = client.post("/api/sites", json!({ "domain": "shop.example" })).await.expect(200)["site"]["siteId"]
            .as_i64()
            .unwrap();
        let link = client
            .create_link(json!({ "siteId": site, "slug": "winter", "destinationUrl": "https://shop.example/pricing" }))
            .await;
        let short = url::Url::parse(link["fullUrl"].as_str().unwrap()).unwrap().path().to_owned();
        let link_id = link["link"]["id"].as_str().unwrap().to_owned();

        let (_driver, browser) = start_browser(&FLAGS).await;
        sign_in(&browser, &app.base, &email).await;

        // Two goals through the settings form.
        for (name, path, event) in [("Saw pricing", "/pricing", ""), ("Signed up", "", "signup")] {
            browser.goto(&format!("{}/settings/goals", app.base)).await.unwrap();
            fill(&browser, "#new-goal-name", name).await;
            fill(&browser, "#new-goal-page_path", path).await;
            fill(&browser, "#new-goal-event_name", event).await;
            submit(&browser, "form:has(#new-goal-name)").await;
            assert!(text(&browser, ".notice").await.contains("The goal was added"), "{name}");
        }
        // A funnel of them on /funnels.
        browser.goto(&format!("{}/funnels", app.base)).await.unwrap();
        fill(&browser, "#funnel-name", "Pricing to signup").await;
        browser.find(Locator::Css("#funnel-step1")).await.unwrap().select_by_label("Saw pricing").await.unwrap();
        browser.find(Locator::Css("#funnel-step2")).await.unwrap().select_by_label("Signed up").await.unwrap();
        submit(&browser, "form:has(#funnel-name)").await;
        assert!(text(&browser, ".notice").await.contains("The funnel was saved"));
        let funnel_url = browser.current_url().await.unwrap().to_string();

        // Traffic: three visitors through the link; two sign up, one of them buys.
        for (vid, signs_up) in [("w1", true), ("w2", true), ("w3", false)] {
            let landing = app.click(&short, &[]).await;
            let mut events = vec![pageview(site, vid, &landing)];
            if signs_up {
                events.push(json!({ "site": site, "type": "custom_event", "event_name": "signup", "tracker_vid": vid,
                                    "url": "https://shop.example/welcome",
                                    "revenue": { "amount": "29.00", "currency": "USD" } }));
            }
            app.collect(json!({ "events": events })).await.expect(202);
        }
        app.state.writer.flush().await;

        for width in [1400, 390] {
            browser.set_window_size(width, 1800).await.unwrap();
            browser.goto(&funnel_url).await.unwrap();
            let steps = text(&browser, "table.funnel").await;
            assert!(steps.contains("Saw pricing") && steps.contains("Signed up"), "{steps}");
            assert!(steps.contains("66.7%"), "two of three went on: {steps}");
            if shots {
                screenshot(&browser, &format!("funnel-{width}")).await;
            }
            axe(&browser, &format!("/funnels at {width} px")).await;

            browser.goto(&format!("{}/?range=30d", app.base)).await.unwrap();
            let goals = text(&browser, r#"section.panel[aria-label="Goals"]"#).await;
            assert!(goals.contains("Signed up") && goals.contains("66.7%"), "{goals}");
            axe(&browser, &format!("explorer with goals at {width} px")).await;

            browser.goto(&format!("{}/links/{link_id}?range=30d", app.base)).await.unwrap();
            let brought = text(&browser, "section[aria-labelledby=brought-title]").await;
            assert!(brought.contains("58.00 USD"), "the link brought both purchases: {brought}");
            if shots {
                screenshot(&browser, &format!("link-revenue-{width}")).await;
            }
            axe(&browser, &format!("link page at {width} px")).await;

            browser.goto(&format!("{}/settings/goals", app.base)).await.unwrap();
            axe(&browser, &format!("/settings/goals at {width} px")).await;
        }
    }
}
