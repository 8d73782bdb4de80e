//! Redirect throughput and latency: wrk on loopback against the real
//! short-link redirect (each 302 sent after its click is committed) and
//! against a bare axum handler that answers the same 302, in the same run, at
//! 32 and at 128 connections. Then both at a fixed rate, half of the real
//! redirect's measured capacity, with latency percentiles. Needs `wrk`
//! (Debian: apt-get install wrk).
//!
//! cargo bench --bench redirect
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

#[path = "common.rs"]
mod common;

// As in the binary, so the service is measured as it runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::{
    net::SocketAddr,
    process::Command,
    time::{Duration, Instant},
};

use axum::{
    Router,
    http::{StatusCode, header},
    routing::get,
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const DURATION: &str = "5s";
/// Alternating rounds of baseline and real. Each round's ratio compares two
/// runs made seconds apart, and the median round is reported, so a noisy
/// moment on the machine does not decide the result.
const ROUNDS: usize = 5;
const CONNECTIONS: [usize; 2] = [32, 128];
const THREADS: &str = "2";
/// The fixed-rate run: connections, warm-up (not measured) and measured time.
const PACED_CONNECTIONS: usize = 128;
const PACED_WARM_UP: Duration = Duration::from_secs(2);
const PACED_MEASURE: Duration = Duration::from_secs(10);
const UA: &str =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";

/// Runs wrk and returns (requests per second, completed requests).
fn wrk(url: &str, connections: usize) -> (f64, u64) {
    let output = Command::new("wrk")
        .args(["-t", THREADS, "-c", &connections.to_string(), "-d", DURATION, url])
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
    if text.contains("Non-2xx or 3xx responses") || text.contains("Socket errors") {
        panic!("wrk saw errors:\n{text}");
    }
    (rate, completed)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// One connection count: bare and real in alternating rounds.
struct Sweep {
    connections: usize,
    bare: f64,
    real: f64,
    ratio: f64,
    ratios: Vec<f64>,
    completed: u64,
}

async fn sweep(bare_url: &str, real_url: &str, connections: usize) -> Sweep {
    let (mut bare, mut real, mut completed) = (Vec::new(), Vec::new(), 0);
    // wrk blocks; run it off the runtime so both servers keep serving.
    for _ in 0..ROUNDS {
        let url = bare_url.to_owned();
        bare.push(tokio::task::spawn_blocking(move || wrk(&url, connections)).await.expect("wrk").0);
        let url = real_url.to_owned();
        let (rate, done) = tokio::task::spawn_blocking(move || wrk(&url, connections)).await.expect("wrk");
        real.push(rate);
        completed += done;
    }
    let ratios: Vec<f64> = real.iter().zip(&bare).map(|(real, bare)| real / bare).collect();
    Sweep { connections, ratio: median(ratios.clone()), ratios, bare: median(bare), real: median(real), completed }
}

/// Latency at a fixed request rate.
struct Paced {
    rate: f64,
    achieved: f64,
    answered: usize,
    /// Every 302 answered, warm-up included.
    total: usize,
    errors: usize,
    p50: f64,
    p90: f64,
    p99: f64,
    p999: f64,
    max: f64,
    /// How late the load generator itself sent requests whose connection was
    /// free (its timer and scheduling; not counted as latency), p99 in ms.
    send_lag_p99: f64,
}

/// Reads one HTTP/1.1 response; returns its status.
async fn read_response(stream: &mut tokio::net::TcpStream, buf: &mut Vec<u8>) -> std::io::Result<u16> {
    buf.clear();
    let mut chunk = [0u8; 4096];
    let header_end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_ascii_lowercase();
    let status = head.get(9..12).and_then(|code| code.parse().ok()).unwrap_or(0);
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < header_end + length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(status)
}

/// One connection's share of a fixed-rate load: a request every `interval`
/// from `first`, whether or not the previous one was answered in time. When
/// the connection is still busy at a request's slot, its latency counts from
/// the slot (the time it should have gone out), so a slow answer is charged
/// for every request it held up (no coordinated omission). When the
/// connection is free, latency counts from the actual send.
async fn paced_connection(
    addr: SocketAddr,
    request: std::sync::Arc<Vec<u8>>,
    first: Instant,
    interval: Duration,
    measure_from: Instant,
    end: Instant,
) -> Answers {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).ok();
    let (mut latencies, mut lags, mut errors, mut total) = (Vec::new(), Vec::new(), 0, 0);
    let mut buf = Vec::with_capacity(4096);
    let mut free_at = Instant::now();
    for k in 0u32.. {
        let slot = first + interval * k;
        if slot >= end {
            break;
        }
        let held_up = free_at > slot;
        if !held_up {
            tokio::time::sleep_until(slot.into()).await;
        }
        let sent = Instant::now();
        let answered = match stream.write_all(&request).await {
            Ok(()) => read_response(&mut stream, &mut buf).await,
            Err(err) => Err(err),
        };
        let done = Instant::now();
        free_at = done;
        let status = answered.unwrap_or(0);
        if status == 0 {
            // Reconnect and go on; the failure counts as an error.
            stream = tokio::net::TcpStream::connect(addr).await.expect("reconnect");
            stream.set_nodelay(true).ok();
        }
        total += usize::from(status == 302);
        if slot >= measure_from {
            if status == 302 {
                latencies.push(done - if held_up { slot } else { sent });
                if !held_up {
                    lags.push(sent - slot);
                }
            } else {
                errors += 1;
            }
        }
    }
    Answers { latencies, lags, errors, total }
}

struct Answers {
    /// Measured 302s' latencies.
    latencies: Vec<Duration>,
    /// Send lags of the measured requests that went out on a free connection.
    lags: Vec<Duration>,
    /// Measured requests that failed or got another status.
    errors: usize,
    /// Every 302, warm-up included.
    total: usize,
}

/// Sends GETs to `url` at `rate` per second over `connections` connections,
/// from a runtime of its own (two threads, like wrk -t2), and measures latency.
fn paced(url: &str, rate: f64, connections: usize) -> Paced {
    let parsed = url::Url::parse(url).expect("url");
    let addr: SocketAddr = parsed.socket_addrs(|| None).expect("address")[0];
    let request = std::sync::Arc::new(
        format!("GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: {UA}\r\nAccept: */*\r\n\r\n", parsed.path(), addr)
            .into_bytes(),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    runtime.block_on(async move {
        let interval = Duration::from_secs_f64(connections as f64 / rate);
        let start = Instant::now() + Duration::from_millis(100);
        let measure_from = start + PACED_WARM_UP;
        let end = measure_from + PACED_MEASURE;
        let tasks: Vec<_> = (0..connections)
            .map(|c| {
                // Spread the connections' slots evenly over one interval.
                let first = start + interval.mul_f64(c as f64 / connections as f64);
                tokio::spawn(paced_connection(addr, request.clone(), first, interval, measure_from, end))
            })
            .collect();
        let (mut latencies, mut lags, mut errors, mut total) = (Vec::new(), Vec::new(), 0, 0);
        for task in tasks {
            let answers = task.await.expect("connection task");
            latencies.extend(answers.latencies);
            lags.extend(answers.lags);
            errors += answers.errors;
            total += answers.total;
        }
        latencies.sort();
        lags.sort();
        Paced {
            rate,
            achieved: common::rate(latencies.len(), PACED_MEASURE),
            answered: latencies.len(),
            total,
            errors,
            p50: common::percentile(&latencies, 0.5),
            p90: common::percentile(&latencies, 0.9),
            p99: common::percentile(&latencies, 0.99),
            p999: common::percentile(&latencies, 0.999),
            max: common::percentile(&latencies, 1.0),
            send_lag_p99: common::percentile(&lags, 0.99),
        }
    })
}

/// A counter's value from the Prometheus text at /metrics: the sum of the
/// samples named `name` whose labels contain every one of `labels`.
fn metric(text: &str, name: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (metric, rest) = series.split_once('{').unwrap_or((series, ""));
            (metric == name && labels.iter().all(|label| rest.contains(label))).then(|| value.parse::<f64>().ok())?
        })
        .sum()
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

    let load_before = common::load_average();
    let mut sweeps = Vec::new();
    for connections in CONNECTIONS {
        sweeps.push(sweep(&bare_url, &short, connections).await);
    }

    // Half of the real redirect's capacity: the best of its median rates.
    let capacity = sweeps.iter().map(|s| s.real).fold(0.0, f64::max);
    let rate = capacity / 2.0;
    let url = bare_url.clone();
    let bare_paced = tokio::task::spawn_blocking(move || paced(&url, rate, PACED_CONNECTIONS)).await.expect("paced");
    let url = short.clone();
    let real_paced = tokio::task::spawn_blocking(move || paced(&url, rate, PACED_CONNECTIONS)).await.expect("paced");

    server.state.writer.flush().await;
    let stored = {
        use sea_orm::{EntityTrait, PaginatorTrait};
        entity::link_click::Entity::find().count(&server.state.db).await.expect("count")
    };
    let metrics =
        http.get(format!("{}/metrics", server.base)).send().await.expect("metrics").text().await.expect("text");
    let redirected =
        metric(&metrics, "leadtrail_http_requests_total", &["route=\"/l/{site}/{link}\"", "status=\"302\""]) as u64;
    let unrecorded = metric(&metrics, "leadtrail_clicks_unrecorded_total", &[]) as u64;

    println!(
        "redirect benchmark ({}; wrk -t{THREADS} -d{DURATION} on loopback, median of {ROUNDS} alternating rounds; load average {load_before} before, {} after)",
        server.backend,
        common::load_average()
    );
    println!("  connections   bare axum 302   real redirect   ratio (median)   rounds");
    for s in &sweeps {
        let rounds: Vec<String> = s.ratios.iter().map(|r| format!("{r:.2}")).collect();
        println!(
            "  {:>11}   {:>9.0} req/s   {:>9.0} req/s   {:>14.2}   {}",
            s.connections,
            s.bare,
            s.real,
            s.ratio,
            rounds.join(", ")
        );
    }
    println!(
        "  fixed rate {rate:.0} req/s (half the real redirect's {capacity:.0}), {PACED_CONNECTIONS} connections, {}s measured after {}s warm-up; latency from the scheduled send:",
        PACED_MEASURE.as_secs(),
        PACED_WARM_UP.as_secs()
    );
    println!("  target          achieved     p50 ms   p90 ms   p99 ms  p99.9 ms   max ms   errors   send lag p99 ms");
    for (name, p) in [("bare axum 302", &bare_paced), ("real redirect", &real_paced)] {
        println!(
            "  {name:<14} {:>9.0}/s {:>9.2} {:>8.2} {:>8.2} {:>9.2} {:>8.2} {:>8} {:>17.2}",
            p.achieved, p.p50, p.p90, p.p99, p.p999, p.max, p.errors, p.send_lag_p99
        );
        assert!(p.rate > 0.0 && p.answered > 0, "{name} answered nothing at a fixed rate");
    }
    let wrk_completed: u64 = sweeps.iter().map(|s| s.completed).sum();
    println!(
        "  clicks stored: {stored} for {redirected} redirects answered (server count; wrk saw {wrk_completed}, the fixed-rate run {}); leadtrail_clicks_unrecorded_total {unrecorded}",
        real_paced.total
    );
}
