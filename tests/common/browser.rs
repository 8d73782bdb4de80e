//! Headless Chromium under ChromeDriver, for the browser tests, and a
//! one-page web server standing in for a customer's site. The tests skip,
//! with a note, when Debian's chromium and chromium-driver are absent.
#![allow(dead_code)]

use std::{path::Path, process::Stdio, time::Duration};

use fantoccini::ClientBuilder;
use serde_json::json;

use super::traffic::DESKTOP_UA;

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
