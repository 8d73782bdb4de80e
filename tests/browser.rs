//! The tracker in a real browser: headless Chromium loads a page that embeds
//! /script.js, navigates by pushState and submits a form. Skipped, with a
//! note, when Chromium or ChromeDriver is not installed (CI installs them).
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{
    apps,
    browser::{browser_missing, serve_page, start_browser},
};
use fantoccini::Locator;

#[tokio::test]
async fn swagger_ui_renders_with_the_network_blocked() {
    if browser_missing() {
        return;
    }
    for app in apps().await {
        // Every host but loopback fails to resolve: nothing can come from a CDN.
        let (_driver, browser) = start_browser(&["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]).await;
        browser.goto(&format!("{}/docs/", app.base)).await.unwrap();
        let title =
            browser.wait().at_most(Duration::from_secs(20)).for_element(Locator::Css(".swagger-ui .info .title")).await;
        let title = title.expect("Swagger UI rendered the document").text().await.unwrap();
        assert!(title.contains("Leadtrail"), "{title}");
        let operations = browser.find_all(Locator::Css(".opblock")).await.unwrap();
        assert!(operations.len() >= 30, "every operation is listed: {}", operations.len());
        browser.close().await.ok();
    }
}

#[tokio::test]
async fn the_tracker_records_a_real_browser_session() {
    if browser_missing() {
        return;
    }
    for app in apps().await {
        let (_, site) = app.user_with_site("Web", "127.0.0.1").await;
        let page = format!(
            r#"<!doctype html><html><head><title>Browser test</title>
<script defer src="{base}/script.js" data-site-id="{site}"></script></head>
<body><h1>Hello</h1>
<form id="signup" name="signup" action="/thanks"><input name="email" value="pat@example.com"><button id="go" type="submit">Go</button></form>
<script>document.getElementById("signup").addEventListener("submit", function (e) {{ e.preventDefault(); }});</script>
</body></html>"#,
            base = app.base
        );
        let page_base = serve_page(page).await;

        let (_driver, browser) = start_browser(&[]).await;

        browser.goto(&format!("{page_base}/")).await.unwrap();
        wait_for_events(&app, 1).await;
        browser.execute("history.pushState({}, '', '/pricing');", vec![]).await.unwrap();
        wait_for_events(&app, 2).await;
        browser.find(Locator::Id("go")).await.unwrap().click().await.unwrap();
        wait_for_events(&app, 3).await;
        let vid = browser.execute("return localStorage.getItem('lt_vid');", vec![]).await.unwrap();
        let vid = vid.as_str().expect("visitor id in localStorage").to_owned();
        let cookie = browser.execute("return document.cookie;", vec![]).await.unwrap();
        assert!(cookie.as_str().unwrap().contains(&format!("lt_vid={vid}")), "first-party cookie set");
        browser.close().await.ok();

        let visitor = app.visitor(site, &vid).await;
        let events = app.events_of(visitor.id).await;
        let kinds: Vec<_> =
            events.iter().map(|e| (e.event_type.as_str(), e.event_name.as_str(), e.page.as_str())).collect();
        assert_eq!(
            kinds,
            [("pageview", "", "/"), ("pageview", "", "/pricing"), ("custom_event", "form_submit", "/pricing")],
            "recorded: {kinds:?}"
        );
        assert_eq!(events[0].page_title.as_deref(), Some("Browser test"));
        let props: serde_json::Value = serde_json::from_str(&events[2].props).unwrap();
        assert_eq!(props["form_id"], "signup");
        assert_eq!(visitor.device_type.as_deref(), Some("desktop"));
        assert_eq!(visitor.browser.as_deref(), Some("Chrome"));
        assert_eq!((visitor.total_sessions, visitor.total_pageviews, visitor.form_submits), (1, 2, 1));
    }
}

async fn wait_for_events(app: &common::TestApp, count: usize) {
    for _ in 0..100 {
        app.state.writer.flush().await;
        if app.event_count().await >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("expected {count} events, have {}", app.event_count().await);
}
