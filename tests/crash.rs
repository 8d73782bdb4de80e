//! Crash safety of the real binary: SIGTERM in the middle of collect and
//! redirect traffic loses nothing that was answered 2xx. After a restart the
//! analytics count exactly the accepted events and the answered redirects.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use common::{
    apps,
    process::{launch, signal, wait},
    traffic::DESKTOP_UA,
};
use serde_json::json;

#[tokio::test]
async fn sigterm_mid_traffic_loses_nothing_answered() {
    for mut app in apps().await {
        let (client, site) = app.user_with_site("Cy", "crash.example").await;
        client.create_link(json!({ "siteId": site, "destinationUrl": "https://crash.example/", "slug": "go" })).await;
        let token = client.session.clone().unwrap();
        let database_url = app.state.config.database_url.clone();
        app.shut_down().await;

        let (child, base) = launch(&database_url).await;
        let accepted = Arc::new(AtomicU64::new(0));
        let redirected = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let mut workers = Vec::new();
        for worker in 0..8 {
            let (base, accepted, redirected, stop) = (base.clone(), accepted.clone(), redirected.clone(), stop.clone());
            workers.push(tokio::spawn(async move {
                let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let result = if worker % 2 == 0 {
                        let event = json!({ "site": site, "type": "pageview", "tracker_vid": format!("w{worker}-{n}"), "url": "https://crash.example/" });
                        http.post(format!("{base}/api/collect")).header("user-agent", DESKTOP_UA).body(event.to_string()).send().await
                    } else {
                        http.get(format!("{base}/l/crash-example/go")).header("user-agent", DESKTOP_UA).send().await
                    };
                    match result {
                        Ok(reply) if reply.status() == 202 => {
                            accepted.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(reply) if reply.status() == 302 => {
                            redirected.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(_) => {}
                        // The server is gone; nothing more can be answered.
                        Err(_) => break,
                    }
                }
            }));
        }
        // Mid-traffic: once both kinds are flowing (on a busy machine that
        // takes longer than on an idle one), and at least 700 ms in.
        let started = std::time::Instant::now();
        tokio::time::sleep(Duration::from_millis(700)).await;
        while (accepted.load(Ordering::Relaxed) <= 50 || redirected.load(Ordering::Relaxed) <= 50)
            && started.elapsed() < Duration::from_secs(30)
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        signal(&child, "TERM");
        let status = wait(child).await;
        assert!(status.success(), "a graceful shutdown exits cleanly: {status}");
        stop.store(true, Ordering::Relaxed);
        for worker in workers {
            worker.await.unwrap();
        }
        let (accepted, redirected) = (accepted.load(Ordering::Relaxed), redirected.load(Ordering::Relaxed));
        eprintln!("[{}] {accepted} events and {redirected} redirects answered before SIGTERM", app.backend);
        assert!(accepted > 50 && redirected > 50, "traffic was flowing: {accepted} events, {redirected} redirects");

        let (restarted, base) = launch(&database_url).await;
        let http = reqwest::Client::new();
        let get = |path: String| {
            let request = http.get(format!("{base}{path}")).header("cookie", format!("session={token}"));
            async move { request.send().await.unwrap().json::<serde_json::Value>().await.unwrap() }
        };
        let stats = get(format!("/api/stats?siteId={site}&timeRange=24h")).await;
        assert_eq!(stats["overview"]["total_events"], accepted, "every accepted event was stored: {stats}");
        assert_eq!(stats["overview"]["unique_visitors"], accepted);
        let clicks = get(format!("/api/link-analytics?siteId={site}")).await;
        assert_eq!(clicks["total"], redirected, "every answered redirect was recorded");
        signal(&restarted, "TERM");
        wait(restarted).await;
    }
}
