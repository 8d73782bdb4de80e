//! Headless Chromium under ChromeDriver, for the browser tests, and a
//! one-page web server standing in for a customer's site. The tests skip,
//! with a note, when Debian's chromium and chromium-driver are absent.
#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use super::{TestApp, traffic::DESKTOP_UA};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The ChromeDriver process; dropping it ends it.
pub struct Driver(std::process::Child);

impl Drop for Driver {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Serves one HTML page at every path, as a customer's site would.
pub async fn serve_page(html: String) -> String {
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

pub fn browser_missing() -> bool {
    let missing = !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists();
    if missing {
        eprintln!("SKIPPED: browser test needs Debian's chromium and chromium-driver ({CHROMIUM}, {CHROMEDRIVER})");
    }
    missing
}

/// ChromeDriver and a headless Chromium session, with extra Chromium flags.
pub async fn start_browser(extra_args: &[&str]) -> (Driver, fantoccini::Client) {
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

pub const AXE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/node_modules/axe-core/axe.min.js");
/// Chromium flags: a laptop-sized window, and no network but loopback (avatars stay local).
pub const FLAGS: [&str; 3] = [
    "--window-size=1280,800",
    "--force-device-scale-factor=1",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
];

/// Runs axe-core on the current page; panics on a serious or critical violation.
pub async fn axe(browser: &Client, page: &str) {
    let Ok(source) = std::fs::read_to_string(AXE) else {
        panic!("axe-core is missing at {AXE}; .ci/run installs it (npm ci in tests/clients)");
    };
    browser.execute(&format!("{source}\nreturn typeof axe;"), vec![]).await.unwrap();
    let script = r#"
        var done = arguments[arguments.length - 1];
        axe.run(document, { resultTypes: ["violations"] }).then(function (result) {
            done(result.violations
                .filter(function (v) { return v.impact === "serious" || v.impact === "critical"; })
                .map(function (v) {
                    return v.id + " (" + v.impact + "): " + v.nodes.slice(0, 3).map(function (n) { return n.target.join(" "); }).join(" | ");
                }));
        }, function (error) { done(["axe failed: " + error]); });
    "#;
    let found = browser.execute_async(script, vec![]).await.unwrap();
    assert_eq!(found, json!([]), "axe on {page}");
}

/// What no page may hold: a script that ran, a `javascript:` link, an inline handler.
pub async fn no_script_ran(browser: &Client, page: &str) {
    let check = r#"return {
        pwned: typeof window.__pwned,
        scriptLinks: document.querySelectorAll('a[href^="javascript" i], [href^=" javascript" i]').length,
        handlers: document.querySelectorAll("[onerror], [onload], [onclick]").length,
        inlineScripts: document.querySelectorAll("script:not([src])").length,
        inlineStyles: document.querySelectorAll("[style]").length
    };"#;
    let found = browser.execute(check, vec![]).await.unwrap();
    assert_eq!(
        found,
        json!({ "pwned": "undefined", "scriptLinks": 0, "handlers": 0, "inlineScripts": 0, "inlineStyles": 0 }),
        "{page}"
    );
}

pub async fn screenshot(browser: &Client, name: &str) {
    let png = browser.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "{name} is a PNG");
    let dir = if std::env::var("UPDATE_SCREENSHOTS").is_ok_and(|v| v == "1") {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/screenshots"))
    } else {
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("screenshots")
    };
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// The text of the first element matching `css`, waiting for it: a click that
/// submits a form returns before the next page has loaded.
/// An element found just before the page changes goes stale; it is looked
/// up again on the new page.
pub async fn text(browser: &Client, css: &str) -> String {
    for _ in 0..20 {
        let element = browser
            .wait()
            .at_most(Duration::from_secs(10))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|_| panic!("{css} on the page"));
        match element.text().await {
            Ok(text) => return text,
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    panic!("{css} kept going stale")
}

/// Waits until the browser has navigated to `path` (a submitted form's answer).
pub async fn wait_for_path(browser: &Client, path: &str) {
    for _ in 0..100 {
        if browser.current_url().await.unwrap().path() == path {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("expected {path}, at {}", browser.current_url().await.unwrap());
}

/// Signs in through the login form as a test user (password "correct
/// horse") and waits for the overview.
pub async fn sign_in(browser: &Client, base: &str, email: &str) {
    browser.goto(&format!("{base}/login")).await.unwrap();
    fill(browser, "#email", email).await;
    fill(browser, "#password", "correct horse").await;
    browser.find(Locator::Css("form button[type=submit]")).await.unwrap().click().await.unwrap();
    wait_for_path(browser, "/").await;
}

pub async fn fill(browser: &Client, css: &str, value: &str) {
    browser.find(Locator::Css(css)).await.unwrap().send_keys(value).await.unwrap();
}

pub async fn wait_for_events(app: &TestApp, count: usize) {
    for _ in 0..100 {
        app.state.writer.flush().await;
        if app.event_count().await >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("expected {count} events, have {}", app.event_count().await);
}
