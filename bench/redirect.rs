//! Redirect throughput: wrk on loopback against the real short-link redirect
//! (click recording on) and against a bare axum handler that answers the
//! same 302, in the same run. Needs `wrk` (Debian: apt-get install wrk).
//!
//! cargo bench --bench redirect

#[path = "common.rs"]
mod common;

// As in the binary, so the service is measured as it runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::Command;

use axum::{
    Router,
    http::{StatusCode, header},
    routing::get,
};
use serde_json::json;

const DURATION: &str = "5s";
/// Alternating rounds of baseline and real. Each round's ratio compares two
/// runs made seconds apart, and the median round is reported, so a noisy
/// moment on the machine does not decide the result.
const ROUNDS: usize = 5;
const CONNECTIONS: &str = "32";
const THREADS: &str = "2";

/// Runs wrk and returns (requests per second, completed requests).
fn wrk(url: &str) -> (f64, u64) {
    let output = Command::new("wrk")
        .args(["-t", THREADS, "-c", CONNECTIONS, "-d", DURATION, url])
        .output()
        .expect("wrk runs (apt-get install wrk)");
    let text = String::from_utf8_lossy(&output.stdout);
    let rate = text
        .lines()
        .find_map(|line| line.strip_prefix("Requests/sec:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("wrk output without a rate:\n{text}"));
    let completed = text
        .lines()
        .find_map(|line| line.trim().split_once(" requests in ").map(|(n, _)| n.trim().parse().unwrap_or(0)))
        .unwrap_or(0);
    if text.contains("Non-2xx or 3xx responses") {
        panic!("wrk saw errors:\n{text}");
    }
    (rate, completed)
}

#[tokio::main]
async fn main() {
    if Command::new("wrk").arg("--version").output().is_err() {
        eprintln!("redirect benchmark needs wrk: apt-get install wrk");
        return;
    }
    let server = common::start(|_| {}).await;
    let http = reqwest::Client::new();
    let created: serde_json::Value = http
        .post(format!("{}/api/links", server.base))
        .header("cookie", &server.cookie)
        .json(&json!({ "siteId": server.site, "slug": "go", "destinationUrl": "https://bench.example/landing", "source": "bench", "campaign": "wrk" }))
        .send()
        .await
        .expect("create link")
        .json()
        .await
        .expect("link body");
    let short = created["fullUrl"].as_str().expect("fullUrl").to_owned();

    let bare = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let bare_url = format!("http://{}/l/bench-example/go", bare.local_addr().expect("addr"));
    let router = Router::new().route(
        "/l/{site}/{link}",
        get(|| async {
            (
                StatusCode::FOUND,
                [
                    (header::LOCATION, "https://bench.example/landing?utm_source=bench&utm_campaign=wrk&lt_click=abcdefghijklmnopqrstuv"),
                    (header::CACHE_CONTROL, "no-store"),
                ],
            )
        }),
    );
    tokio::spawn(async move { axum::serve(bare, router).await.ok() });

    // wrk blocks; run it off the runtime so both servers keep serving.
    let mut bare_rates = Vec::new();
    let mut real_rates = Vec::new();
    let mut completed = 0;
    for _ in 0..ROUNDS {
        let url = bare_url.clone();
        bare_rates.push(tokio::task::spawn_blocking(move || wrk(&url)).await.expect("wrk").0);
        let url = short.clone();
        let (rate, done) = tokio::task::spawn_blocking(move || wrk(&url)).await.expect("wrk");
        real_rates.push(rate);
        completed += done;
    }
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let ratios: Vec<f64> = real_rates.iter().zip(&bare_rates).map(|(real, bare)| real / bare).collect();
    let ratio = median(ratios.clone());
    let (bare_rate, real_rate) = (median(bare_rates), median(real_rates));
    server.state.writer.flush().await;
    let stored = {
        use sea_orm::{EntityTrait, PaginatorTrait};
        entity::link_click::Entity::find().count(&server.state.db).await.expect("count")
    };

    println!(
        "redirect benchmark (wrk -t{THREADS} -c{CONNECTIONS} -d{DURATION}, loopback, median of {ROUNDS} alternating rounds)"
    );
    println!("  bare axum 302 handler:   {bare_rate:>10.0} requests/s (baseline, median)");
    println!("  real redirect:           {real_rate:>10.0} requests/s (click recording on, median)");
    let rounds: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
    println!("  ratio real / bare:       {ratio:.2} (median; rounds: {})", rounds.join(", "));
    println!("  clicks stored: {stored} for {completed} completed requests");
}
