//! GET /metrics in both text formats, read by real parsers: Prometheus text 0.0.4
//! by default, OpenMetrics 1.0 when the scraper asks for it. The bodies go through
//! prometheus_client's Python parsers (tests/clients/parse_metrics.py) and, when it
//! is installed, `promtool check metrics`.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::{
    io::Write,
    process::{Command, Stdio},
};

use common::{TestApp, apps};

const PROMETHEUS: &str = "text/plain; version=0.0.4; charset=utf-8";
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// What Prometheus itself sends when scraping with its default protocols.
const PROMETHEUS_SCRAPER: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

/// The Content-Type and body of GET /metrics with an optional Accept header.
async fn scrape(app: &TestApp, accept: Option<&str>) -> (String, String) {
    let mut request = reqwest::Client::new().get(format!("{}/metrics", app.base));
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
    (content_type, response.text().await.unwrap())
}

/// Runs a program with `input` on stdin; `None` when the program is not installed.
fn run(program: &str, args: &[&str], input: &str) -> Option<std::process::Output> {
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => panic!("{program}: {err}"),
    };
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    Some(child.wait_with_output().unwrap())
}

/// (family, type, samples) as prometheus_client parses `body`; `None` when python3
/// or prometheus_client is missing (CI installs it with pip).
fn families(format: &str, body: &str) -> Option<Vec<(String, String, usize)>> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/parse_metrics.py");
    let Some(output) = run("python3", &[script, format], body) else {
        println!("SKIPPED: python3 is not installed");
        return None;
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(77) {
        println!("SKIPPED: {}", stderr.trim());
        return None;
    }
    assert!(output.status.success(), "{format} does not parse: {stderr}\n{body}");
    let parsed = String::from_utf8(output.stdout).unwrap();
    Some(
        parsed
            .lines()
            .map(|line| {
                let mut fields = line.split(' ');
                let (name, kind, samples) = (fields.next().unwrap(), fields.next().unwrap(), fields.next().unwrap());
                (name.to_owned(), kind.to_owned(), samples.parse().unwrap())
            })
            .collect(),
    )
}

fn assert_typed(format: &str, families: &[(String, String, usize)]) {
    for (name, kind) in [
        ("leadtrail_http_requests", "counter"),
        ("leadtrail_db_statements", "counter"),
        ("leadtrail_http_request_duration_seconds", "histogram"),
    ] {
        let found = families.iter().find(|(family, ..)| family == name);
        let Some((_, found_kind, samples)) = found else { panic!("{format}: no family {name} in {families:?}") };
        assert_eq!(found_kind, kind, "{format}: {name}");
        assert!(*samples > 0, "{format}: {name} has no samples: {families:?}");
    }
    let untyped: Vec<_> = families.iter().filter(|(_, kind, _)| kind == "untyped" || kind == "unknown").collect();
    assert!(untyped.is_empty(), "{format}: samples outside their family: {untyped:?}");
}

#[tokio::test]
async fn metrics_parse_as_prometheus_text_and_as_openmetrics() {
    for app in apps().await {
        let client = app.client();
        client.get("/health/live").await.expect(200);
        client.get("/api/sites").await;
        client.get("/no/such/route").await;

        let (content_type, text) = scrape(&app, None).await;
        assert_eq!(content_type, PROMETHEUS);
        assert!(text.contains("# TYPE leadtrail_http_requests_total counter\n"), "{text}");
        assert!(text.contains("# HELP leadtrail_db_statements_total "), "{text}");
        assert!(
            text.contains(r#"leadtrail_http_requests_total{method="GET",route="/health/live",status="200"} 1"#),
            "{text}"
        );
        assert!(!text.contains("# EOF"), "{text}");
        for accept in ["*/*", "text/plain", "text/plain;version=0.0.4;q=0.9,*/*;q=0.1"] {
            assert_eq!(scrape(&app, Some(accept)).await.0, PROMETHEUS, "{accept}");
        }

        let (content_type, openmetrics) = scrape(&app, Some("application/openmetrics-text")).await;
        assert_eq!(content_type, OPENMETRICS);
        assert!(openmetrics.contains("# TYPE leadtrail_http_requests counter\n"), "{openmetrics}");
        assert!(openmetrics.contains("leadtrail_http_requests_total{"), "{openmetrics}");
        assert!(openmetrics.ends_with("# EOF\n"), "{openmetrics}");
        assert_eq!(scrape(&app, Some(PROMETHEUS_SCRAPER)).await.0, OPENMETRICS);

        for (format, body) in [("prometheus", &text), ("openmetrics", &openmetrics)] {
            if let Some(families) = families(format, body) {
                assert_typed(format, &families);
            }
        }

        match run("promtool", &["check", "metrics"], &text) {
            None => println!("SKIPPED: promtool is not installed"),
            Some(output) => assert!(
                output.status.success(),
                "promtool check metrics: {}{}\n{text}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
        }
    }
}
