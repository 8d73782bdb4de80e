//! The server does not let a slow or silent client hold a connection: a
//! head that stalls and a body that trickles are answered 408 within their
//! timeouts, an idle connection is closed, and connections past the cap
//! wait until one closes. Raw sockets, since an HTTP client would not
//! misbehave on purpose.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use common::apps_with;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

/// Everything the server sends until it closes the connection, or until
/// `within` has passed; and how long that took.
async fn read_until_closed(stream: &mut TcpStream, within: Duration) -> (String, Option<Duration>) {
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::time::timeout_at((started + within).into(), stream.read(&mut buffer)).await {
            Err(_) => return (String::from_utf8_lossy(&received).into_owned(), None),
            Ok(Ok(0) | Err(_)) => return (String::from_utf8_lossy(&received).into_owned(), Some(started.elapsed())),
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
        }
    }
}

async fn connect(base: &str) -> TcpStream {
    TcpStream::connect(base.trim_start_matches("http://")).await.unwrap()
}

fn short_timeouts(config: &mut leadtrail::config::Config) {
    config.header_timeout_secs = 1;
    config.body_timeout_secs = 1;
    config.idle_timeout_secs = 2;
}

#[tokio::test]
async fn a_stalled_head_is_answered_408() {
    for app in apps_with(short_timeouts).await {
        // Part of a head, then nothing.
        let mut stream = connect(&app.base).await;
        stream.write_all(b"GET /health/live HTTP/1.1\r\nHost: x\r\n").await.unwrap();
        let (answer, closed) = read_until_closed(&mut stream, Duration::from_secs(5)).await;
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer:?}");
        assert!(answer.contains(r#""code":"REQUEST_TIMEOUT""#), "{answer:?}");
        assert!(closed.is_some_and(|after| after < Duration::from_millis(2_500)), "{closed:?}");

        // A head trickled a line at a time does not buy more time.
        let mut stream = connect(&app.base).await;
        let started = Instant::now();
        stream.write_all(b"GET /health/live HTTP/1.1\r\n").await.unwrap();
        for line in 0..6 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            if stream.write_all(format!("X-Line-{line}: x\r\n").as_bytes()).await.is_err() {
                break;
            }
        }
        let (answer, _) = read_until_closed(&mut stream, Duration::from_secs(5)).await;
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    }
}

#[tokio::test]
async fn a_trickled_body_is_answered_408() {
    for app in apps_with(short_timeouts).await {
        let mut stream = connect(&app.base).await;
        let head =
            "POST /api/collect HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n";
        stream.write_all(head.as_bytes()).await.unwrap();
        let (mut reading, mut writing) = stream.into_split();
        let started = Instant::now();
        // A byte every 200 ms for four seconds, while the answer is awaited.
        tokio::spawn(async move {
            for _ in 0..20 {
                if writing.write_all(b"x").await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        let mut answer = Vec::new();
        let mut buffer = [0u8; 1024];
        while !answer.ends_with(b"}") {
            let n = tokio::time::timeout(Duration::from_secs(5), reading.read(&mut buffer)).await.unwrap().unwrap();
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&buffer[..n]);
        }
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer:?}");
        assert!(answer.contains("REQUEST_TIMEOUT"), "{answer:?}");
        assert!(answer.to_lowercase().contains("connection: close"), "{answer:?}");
        let after = started.elapsed();
        assert!(after >= Duration::from_millis(900) && after < Duration::from_millis(2_500), "{after:?}");
    }
}

#[tokio::test]
async fn an_idle_connection_is_closed() {
    for app in apps_with(short_timeouts).await {
        // Never a byte.
        let mut silent = connect(&app.base).await;
        let (answer, closed) = read_until_closed(&mut silent, Duration::from_secs(5)).await;
        assert_eq!(answer, "", "nothing is said to a silent client");
        assert!(closed.is_some_and(|after| after >= Duration::from_millis(1_500)), "{closed:?}");

        // Kept alive after a request, then quiet.
        let mut kept = connect(&app.base).await;
        kept.write_all(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
        let (answer, closed) = read_until_closed(&mut kept, Duration::from_secs(5)).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
        assert!(closed.is_some(), "the idle connection stayed open");
    }
}

#[tokio::test]
async fn connections_past_the_cap_wait_for_a_free_place() {
    for app in apps_with(|config| config.max_connections = 2).await {
        let first = connect(&app.base).await;
        let mut second = connect(&app.base).await;
        second.write_all(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
        let mut buffer = [0u8; 64];
        let n = second.read(&mut buffer).await.unwrap();
        assert!(buffer[..n].starts_with(b"HTTP/1.1 200"));

        // The third is accepted by the kernel but not served while two are open.
        let mut third = connect(&app.base).await;
        third.write_all(b"GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
        let waited = tokio::time::timeout(Duration::from_millis(500), third.read(&mut buffer)).await;
        assert!(waited.is_err(), "served past the cap");
        drop(first);
        let (answer, _) = read_until_closed(&mut third, Duration::from_secs(5)).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    }
}
