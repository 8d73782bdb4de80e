//! Every page at a desktop width (1400 px) and a phone width (390 px) in
//! headless Chromium: no page is wider than the window (no sideways scroll),
//! no word in a table or a form breaks in the middle, axe-core finds no
//! serious or critical violation, and each page leaves a screenshot per
//! width in `target/tmp/screenshots` (`docs/screenshots` with
//! `UPDATE_SCREENSHOTS=1`). The data is long on purpose: long names,
//! companies, campaigns and pages, a saved view, a link that is off.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{
    apps_with,
    browser::{FLAGS, axe, browser_missing, screenshot, sign_in, start_browser},
    traffic::{DESKTOP_UA, at, pageview},
};
use fantoccini::Client;
use leadtrail::time::{HOUR_MS, now_ms};
use serde_json::{Value, json};

fn cloudflare(config: &mut leadtrail::config::Config) {
    config.trust_proxy = leadtrail::config::TrustProxy::Cloudflare;
    config.collect_rate_limit_per_second = 1_000_000;
    config.collect_site_rate_limit_per_second = 1_000_000;
}

/// What the page looks like to a person at the window's width: how much
/// wider the document is than the window, and the words (outside paths,
/// URLs and code, which may wrap anywhere) that a line break cuts in two.
const LAYOUT: &str = r##"
    var wide = document.documentElement.scrollWidth - window.innerWidth;
    var cut = [];
    var walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode() && cut.length < 10) {
        var node = walker.currentNode;
        var element = node.parentElement;
        if (!element || element.closest(".path, .wrap, .short, code, pre, svg, .visually-hidden, option, script")) continue;
        if (!element.getClientRects().length) continue;
        var words = /[^\s\-\/·,.]+/g;
        var match;
        while ((match = words.exec(node.textContent))) {
            if (match[0].length > 24) continue;
            var range = document.createRange();
            range.setStart(node, match.index);
            range.setEnd(node, match.index + match[0].length);
            var tops = {};
            Array.prototype.forEach.call(range.getClientRects(), function (r) { if (r.width > 0) tops[Math.round(r.top)] = 1; });
            if (Object.keys(tops).length > 1) cut.push(match[0] + " in <" + element.tagName.toLowerCase() + ">");
        }
    }
    var edge = document.documentElement.clientWidth;
    var over = [];
    if (wide > 0) {
        document.querySelectorAll("body *").forEach(function (el) {
            var r = el.getBoundingClientRect();
            if (r.right > edge + 1 && over.length < 5) over.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && el.className.baseVal === undefined ? "." + el.className : "") + " right=" + Math.round(r.right));
        });
    }
    return { wide: wide, innerWidth: window.innerWidth, cut: cut, over: over };
"##;

async fn check(browser: &Client, base: &str, path: &str, name: &str, width: u32, shots: bool) {
    browser.goto(&format!("{base}{path}")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    if shots {
        screenshot(browser, &format!("{name}-{width}")).await;
    }
    let found = browser.execute(LAYOUT, vec![]).await.unwrap();
    assert_eq!(found["innerWidth"], json!(width), "the window is {width} px wide");
    assert!(
        found["wide"].as_i64().unwrap() <= 0,
        "{path} at {width} px scrolls sideways by {} px: {}",
        found["wide"],
        found["over"]
    );
    assert_eq!(found["cut"], json!([]), "{path} at {width} px breaks words in the middle");
    axe(browser, &format!("{path} at {width} px")).await;
}

async fn resize(browser: &Client, width: u32) {
    // Tall, so a screenshot shows most of a page.
    browser.set_window_size(width, 1800).await.unwrap();
    // The window's outer size includes nothing in headless mode, but wait for the layout.
    for _ in 0..20 {
        let inner = browser.execute("return window.innerWidth;", vec![]).await.unwrap();
        if inner == json!(width) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn every_page_fits_a_desktop_and_a_phone() {
    if browser_missing() {
        return;
    }
    for app in apps_with(cloudflare).await {
        let shots = app.backend == "sqlite";
        let (client, email) = app.user("Maximiliane").await;
        client
            .post("/api/auth/update-user", json!({ "name": "Maximiliane Wolfeschlegelsteinhausen" }))
            .await
            .expect(200);
        let site = client
            .post(
                "/api/sites",
                json!({ "domain": "www.a-rather-long-customer-domain.example", "name": "Customer shop" }),
            )
            .await
            .expect(200)["site"]["siteId"]
            .as_i64()
            .unwrap();
        let link = client
            .create_link(json!({ "siteId": site, "destinationUrl": "https://www.a-rather-long-customer-domain.example/pricing/enterprise-plans-for-large-organisations",
                "slug": "spring-enterprise-campaign", "campaign": "spring-enterprise-campaign-2026", "source": "newsletter",
                "medium": "email", "tags": ["enterprise", "spring"] }))
            .await;
        let link_id = link["link"]["id"].as_str().unwrap().to_owned();
        let short_path = url::Url::parse(link["fullUrl"].as_str().unwrap()).unwrap().path().to_owned();
        let location = app.click(&short_path, &[("cf-ipcountry", "DE"), ("cf-ipcity", "Berlin")]).await;
        let click_key =
            url::Url::parse(&location).unwrap().query_pairs().find(|(k, _)| k == "lt_click").unwrap().1.into_owned();

        let now = now_ms();
        let long_page = "https://www.a-rather-long-customer-domain.example/documentation/integrations/customer-relationship-management/setup";
        let vid = "visitor-with-a-long-identifier-0001";
        let mut events: Vec<Value> = vec![
            at(
                pageview(
                    site,
                    vid,
                    &format!(
                        "https://www.a-rather-long-customer-domain.example/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=spring-enterprise-campaign-2026&lt_click={click_key}"
                    ),
                ),
                now - 2 * HOUR_MS,
            ),
            at(pageview(site, vid, long_page), now - 2 * HOUR_MS + 60_000),
        ];
        events[0]["title"] = json!("Pricing for teams of every size, with volume discounts");
        let mut form = at(
            pageview(site, vid, "https://www.a-rather-long-customer-domain.example/contact"),
            now - 2 * HOUR_MS + 120_000,
        );
        form["type"] = json!("custom_event");
        form["event_name"] = json!("form_submit");
        form["props"] = json!({ "form": "enterprise-contact-request", "plan": "enterprise" });
        events.push(form);
        app.collect_with(
            json!({ "events": events }),
            DESKTOP_UA,
            &[("cf-ipcountry", "GB"), ("cf-ipcity", "Kingston upon Hull")],
        )
        .await
        .expect(202);
        for n in 0..60 {
            let other = format!("other-{n}");
            app.collect_with(
                json!(at(
                    pageview(
                        site,
                        &other,
                        "https://www.a-rather-long-customer-domain.example/blog/announcing-our-integration"
                    ),
                    now - (n % 20) * HOUR_MS - 60_000
                )),
                DESKTOP_UA,
                &[("cf-ipcountry", "US")],
            )
            .await
            .expect(202);
        }
        client
            .identify(json!({ "siteId": site, "tracker_vid": vid, "name": "Maximiliane Wolfeschlegelsteinhausen",
                "email": "maximiliane.wolfeschlegelsteinhausen@international-business-machines.example",
                "company": "International Consolidated Widgets and Holdings", "phone": "+44 20 7946 0958" }))
            .await
            .expect(200);
        app.state.writer.flush().await;
        let view = client
            .graphql(
                "mutation($s: Int!) { createSavedView(siteId: $s, input: { name: \"Enterprise leads from the newsletter\", query: \"range=30d&channel=Email&form=1\" }) { id } }",
                json!({ "s": site }),
            )
            .await;
        let view_id = view["data"]["createSavedView"]["id"].as_str().unwrap().to_owned();
        // Goals with long names and patterns, so the goals page and the
        // explorer's goals panel are laid out with real content.
        for input in [
            json!({ "name": "Requested an enterprise demo from the pricing page", "pagePath": "/pricing/enterprise/demo-request*" }),
            json!({ "eventName": "form_submit" }),
        ] {
            let made = client
                .graphql(
                    "mutation($s: Int!, $i: GoalInput!) { createGoal(siteId: $s, input: $i) { id } }",
                    json!({ "s": site, "i": input }),
                )
                .await;
            assert!(made["errors"].is_null(), "{made}");
        }
        let goal_ids = client.graphql("query($s: Int!) { goals(siteId: $s) { id } }", json!({ "s": site })).await;
        let goal_ids: Vec<Value> =
            goal_ids["data"]["goals"].as_array().unwrap().iter().map(|g| g["id"].clone()).collect();
        let funnel = client
            .graphql(
                "mutation($s: Int!, $steps: [ID!]!) { createFunnel(siteId: $s, input: { name: \"Enterprise demo requests from the pricing page\", steps: $steps, windowDays: 7 }) { id } }",
                json!({ "s": site, "steps": [goal_ids[0], goal_ids[1], goal_ids[0]] }),
            )
            .await;
        let funnel_id = funnel["data"]["createFunnel"]["id"].as_str().unwrap().to_owned();
        let destination = client
            .graphql(
                "mutation($s: Int!, $i: DestinationInput!) { createDestination(siteId: $s, input: $i) { id } }",
                json!({ "s": site, "i": { "name": "Sales team channel for enterprise leads", "url": "https://hooks.example.com/enterprise", "trigger": "IDENTIFIED" } }),
            )
            .await;
        assert!(destination["data"]["createDestination"]["id"].is_string(), "{destination}");
        let visitor = app.visitor(site, vid).await;
        let session = app.sessions_of(visitor.id).await[0].id;
        let site_slug = short_path.split('/').nth(2).unwrap().to_owned();

        let pages: Vec<(String, &str)> = vec![
            ("/".to_owned(), "overview"),
            (
                "/?range=custom&from=2026-01-01&to=2026-12-31&filters=%5B%5B%22is%22%2C%22visit%3Acountry%22%2C%5B%22GB%22%5D%5D%5D".to_owned(),
                "overview-filtered",
            ),
            ("/?range=30d&panel=event:page".to_owned(), "overview-panel"),
            ("/live".to_owned(), "live"),
            ("/leads?range=30d".to_owned(), "leads"),
            (format!("/leads?range=30d&channel=Email&form=1&view={view_id}"), "leads-view"),
            ("/leads?range=30d&visited=pricing".to_owned(), "leads-refused-filter"),
            ("/accounts?range=30d".to_owned(), "accounts"),
            ("/accounts/international-business-machines.example".to_owned(), "account-detail"),
            (format!("/visitor/{vid}?site={site}"), "visitor"),
            (format!("/session/{session}?site={site}"), "session"),
            (format!("/talk/incoming?visitor={vid}&site={site}"), "connect"),
            ("/funnels".to_owned(), "funnels"),
            (format!("/funnels?funnel={funnel_id}&range=30d&breakdown=campaign"), "funnel-report"),
            ("/links".to_owned(), "links"),
            (format!("/links/{link_id}"), "link"),
            ("/settings".to_owned(), "settings"),
            ("/settings/team".to_owned(), "team"),
            ("/settings/webhooks".to_owned(), "webhooks"),
            ("/settings/alerts".to_owned(), "alerts"),
            ("/settings/goals".to_owned(), "goals"),
            ("/settings/account".to_owned(), "account"),
            ("/no-such-page".to_owned(), "not-found"),
            (format!("/l/{site_slug}/no-such-link"), "short-link-unknown"),
        ];
        let (_driver, browser) = start_browser(&FLAGS).await;
        sign_in(&browser, &app.base, &email).await;
        for width in [1400, 390] {
            resize(&browser, width).await;
            for (path, name) in &pages {
                check(&browser, &app.base, path, name, width, shots).await;
            }
        }
        // The refused filter shows beside its input, and the list without it.
        browser.goto(&format!("{}/leads?range=30d&visited=pricing", app.base)).await.unwrap();
        let error = browser.find(fantoccini::Locator::Id("f-visited-error")).await.unwrap().text().await.unwrap();
        assert!(error.starts_with("Visited page: "), "{error}");
        // Signed out: the account forms.
        browser.find(fantoccini::Locator::Css(".signout button")).await.unwrap().click().await.unwrap();
        for width in [1400, 390] {
            resize(&browser, width).await;
            for (path, name) in [("/login", "login"), ("/signup", "signup")] {
                check(&browser, &app.base, path, name, width, shots).await;
            }
        }
        browser.close().await.ok();
    }
}
