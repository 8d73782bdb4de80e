//! Collect throughput: events per second sustained through HTTP (accepted and
//! stored), against a raw batched insert of the same rows in the same run.
//!
//! cargo bench --bench collect            (SQLite)
//! BENCH_DATABASE_URL=postgres://... cargo bench --bench collect

#[path = "common.rs"]
mod common;

// As in the binary, so the service is measured as it runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;

use entity::event;
use futures_util::{StreamExt, stream};
use sea_orm::{ActiveValue::Set, EntityTrait, QueryOrder, TransactionTrait};
use serde_json::{Value, json};

const EVENTS: usize = 100_000;
const VISITORS: usize = 2_000;
const BATCH: usize = 100;
const CONCURRENCY: usize = 8;
const SINGLE_REQUESTS: usize = 10_000;
const UA: &str =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
const PAGES: [&str; 6] = ["/", "/pricing", "/blog/post", "/docs", "/contact", "/features"];

/// Realistic traffic: each visitor browses several pages within one session.
fn event(site: i64, n: usize, base_ts: i64) -> Value {
    let visitor = n % VISITORS;
    let step = n / VISITORS;
    json!({
        "site": site,
        "type": if n % 10 == 9 { "custom_event" } else { "pageview" },
        "event_name": "cta_click",
        "tracker_vid": format!("bench-{visitor}"),
        "url": format!("https://bench.example{}?utm_source=bench", PAGES[(visitor + step) % PAGES.len()]),
        "title": "Bench page",
        "referrer": "https://www.google.com/",
        "ts": base_ts + (step as i64) * 1_000,
    })
}

/// POSTs every body to `url` from a desktop browser, `concurrency` at a time;
/// returns the statuses.
async fn post_all(http: &reqwest::Client, url: &str, bodies: Vec<String>, concurrency: usize) -> Vec<u16> {
    stream::iter(bodies)
        .map(|body| async move {
            http.post(url)
                .header("user-agent", UA)
                .body(body)
                .send()
                .await
                .map(|response| response.status().as_u16())
                .unwrap_or(0)
        })
        .buffer_unordered(concurrency)
        .collect()
        .await
}

#[tokio::main]
async fn main() {
    if std::env::var("RUST_LOG").is_ok() {
        tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).init();
    }
    let server = common::start(|_| {}).await;
    let http = reqwest::Client::builder().pool_max_idle_per_host(CONCURRENCY).build().expect("client");
    let base_ts = leadtrail::time::now_ms() - 3_600_000;
    let url = format!("{}/api/collect", server.base);

    // Warm up connections and caches.
    let warm: Vec<Value> = (0..BATCH).map(|n| event(server.site, n, base_ts)).collect();
    http.post(&url).header("user-agent", UA).json(&json!({ "events": warm })).send().await.expect("warm-up");
    server.state.writer.flush().await;

    let bodies: Vec<String> = (0..EVENTS / BATCH)
        .map(|b| {
            let events: Vec<Value> = (0..BATCH).map(|i| event(server.site, BATCH + b * BATCH + i, base_ts)).collect();
            json!({ "events": events }).to_string()
        })
        .collect();
    let started = Instant::now();
    let statuses = post_all(&http, &url, bodies, CONCURRENCY).await;
    server.state.writer.flush().await;
    let http_elapsed = started.elapsed();
    let accepted = statuses.iter().filter(|&&s| s == 202).count() * BATCH;
    assert_eq!(accepted, EVENTS, "every batch accepted");
    let http_rate = common::rate(EVENTS, http_elapsed);

    // Tracker-style traffic: one event per request.
    let started = Instant::now();
    let singles: Vec<String> = (0..SINGLE_REQUESTS).map(|n| event(server.site, n, base_ts).to_string()).collect();
    let singles = post_all(&http, &url, singles, CONCURRENCY * 4).await;
    server.state.writer.flush().await;
    let single_rate = common::rate(SINGLE_REQUESTS, started.elapsed());
    assert!(singles.iter().all(|&s| s == 202), "every single event accepted");

    // Baseline: the same event rows, inserted raw in batches, no HTTP, no sessions.
    let template = event::Entity::find()
        .order_by_asc(event::Column::Id)
        .one(&server.state.db)
        .await
        .expect("query")
        .expect("an event");
    let rows: Vec<event::ActiveModel> = (0..EVENTS)
        .map(|n| event::ActiveModel {
            site_id: Set(template.site_id),
            visitor_id: Set(template.visitor_id),
            session_id: Set(template.session_id),
            event_type: Set("pageview".to_owned()),
            event_name: Set(String::new()),
            page: Set(PAGES[n % PAGES.len()].to_owned()),
            page_title: Set(Some("Bench page".to_owned())),
            referrer: Set(Some("https://www.google.com/".to_owned())),
            props: Set("{}".to_owned()),
            engaged_ms: Set(0),
            is_bot: Set(false),
            timestamp: Set(base_ts + n as i64),
            ..Default::default()
        })
        .collect();
    let started = Instant::now();
    for transaction in rows.chunks(2_000) {
        let txn = server.state.db.begin().await.expect("begin");
        for chunk in transaction.chunks(200) {
            event::Entity::insert_many(chunk.to_vec()).exec_without_returning(&txn).await.expect("insert");
        }
        txn.commit().await.expect("commit");
    }
    let raw_rate = common::rate(EVENTS, started.elapsed());

    let backend = if std::env::var("BENCH_DATABASE_URL").is_ok() { "PostgreSQL" } else { "SQLite" };
    println!(
        "collect benchmark ({backend}, {EVENTS} events, {VISITORS} visitors, batches of {BATCH}, concurrency {CONCURRENCY})"
    );
    println!("  through HTTP, batched:   {http_rate:>10.0} events/s (accepted and stored)");
    println!(
        "  through HTTP, single:    {single_rate:>10.0} events/s ({SINGLE_REQUESTS} requests, concurrency {})",
        CONCURRENCY * 4
    );
    println!("  raw batched insert:      {raw_rate:>10.0} rows/s (baseline)");
    println!("  ratio HTTP batched / raw insert: {:.2}", http_rate / raw_rate);
    println!("  ratio HTTP single / raw insert:  {:.2}", single_rate / raw_rate);
}
