//! The tracker in a real browser: headless Chromium loads a page that embeds
//! /script.js, navigates by pushState and submits a form. Skipped, with a
//! note, when Chromium or ChromeDriver is not installed (CI installs them).

mod common;

use std::{path::Path, process::Stdio, time::Duration};

use common::{apps, traffic::DESKTOP_UA};
use fantoccini::{ClientBuilder, Locator};
use serde_json::json;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

struct Driver(std::process::Child);

impl Drop for Driver {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Serves one HTML page, as a customer's site would.
async fn serve_page(html: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let page = move || {
        let html = html.clone();
        async move { axum::response::Html(html) }
    };
    let router = axum::Router::new().route("/", axum::routing::get(page.clone())).fallback(page);
    tokio::spawn(async move { axum::serve(listener, router).await.ok() });
    base
}

fn browser_missing() -> bool {
    let missing = !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists();
    if missing {
        eprintln!("SKIPPED: browser test needs Debian's chromium and chromium-driver ({CHROMIUM}, {CHROMEDRIVER})");
    }
    missing
}

/// ChromeDriver and a headless Chromium session, with extra Chromium flags.
async fn start_browser(extra_args: &[&str]) -> (Driver, fantoccini::Client) {
    let port = free_port();
    let driver = Driver(
        std::process::Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver"),
    );
    let mut args = vec![
        "--headless=new".to_owned(),
        "--no-sandbox".to_owned(),
        "--disable-gpu".to_owned(),
        "--disable-dev-shm-usage".to_owned(),
        "--disable-quic".to_owned(),
        "--no-first-run".to_owned(),
        "--disable-background-networking".to_owned(),
        "--disable-component-update".to_owned(),
        "--disable-sync".to_owned(),
        format!("--user-agent={DESKTOP_UA}"),
    ];
    args.extend(extra_args.iter().map(|arg| (*arg).to_owned()));
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("goog:chromeOptions".to_owned(), json!({ "binary": CHROMIUM, "args": args }));
    for _ in 0..50 {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        if let Ok(client) = ClientBuilder::new(connector)
            .capabilities(capabilities.clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
        {
            return (driver, client);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("no chromedriver session");
}

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
