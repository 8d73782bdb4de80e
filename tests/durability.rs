//! Events answered 2xx are stored: across a graceful shutdown, and when the
//! database stalls (then the queue fills and collect answers 503).
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    apps, apps_with,
    traffic::{DESKTOP_UA, pageview},
};
use sea_orm::{ConnectionTrait, DbBackend, TransactionTrait};
use serde_json::json;

#[tokio::test]
async fn a_graceful_shutdown_loses_no_accepted_event() {
    for mut app in apps().await {
        let (_, site) = app.user_with_site("Ray", "ray.example").await;
        let mut sends = Vec::new();
        for request in 0..40 {
            let app_base = app.base.clone();
            sends.push(tokio::spawn(async move {
                let events: Vec<_> = (0..10)
                    .map(|i| pageview(site, &format!("v{request}"), &format!("https://ray.example/{i}")))
                    .collect();
                let reply = reqwest::Client::new()
                    .post(format!("{app_base}/api/collect"))
                    .header("user-agent", DESKTOP_UA)
                    .body(json!({ "events": events }).to_string())
                    .send()
                    .await;
                match reply {
                    Ok(response) if response.status().as_u16() == 202 => 10,
                    _ => 0,
                }
            }));
        }
        let mut accepted = 0;
        for send in sends {
            accepted += send.await.unwrap();
        }
        assert_eq!(accepted, 400, "all were accepted");
        // Shut down at once: the queue may still hold most of them.
        app.shut_down().await;
        assert_eq!(app.event_count().await, accepted, "every accepted event is stored");
    }
}

#[tokio::test]
async fn shutdown_during_traffic_drains_the_queue() {
    for mut app in apps().await {
        let (_, site) = app.user_with_site("Sam", "sam.example").await;
        let base = app.base.clone();
        let traffic = tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut accepted = 0;
            for request in 0..200 {
                let events: Vec<_> = (0..5)
                    .map(|i| pageview(site, &format!("s{request}"), &format!("https://sam.example/{i}")))
                    .collect();
                match http
                    .post(format!("{base}/api/collect"))
                    .body(json!({ "events": events }).to_string())
                    .send()
                    .await
                {
                    Ok(response) if response.status().as_u16() == 202 => accepted += 5,
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            accepted
        });
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        app.shut_down().await;
        let accepted = traffic.await.unwrap();
        assert!(accepted > 0, "some traffic got through before the shutdown");
        assert_eq!(app.event_count().await, accepted);
    }
}

#[tokio::test]
async fn a_full_queue_answers_503_and_nothing_accepted_is_lost() {
    for app in apps_with(|config| config.collect_queue_capacity = 5).await {
        let (_, site) = app.user_with_site("Tia", "tia.example").await;
        // Hold the database so the writer stalls with what it took.
        let lock = app.state.db.begin().await.unwrap();
        match lock.get_database_backend() {
            DbBackend::Postgres => {
                lock.execute_unprepared("LOCK TABLE visitors IN ACCESS EXCLUSIVE MODE").await.unwrap()
            }
            _ => lock.execute_unprepared("UPDATE sites SET name = name").await.unwrap(),
        };
        // Each request waits for its commit, so they are sent side by side.
        let sends: Vec<_> = (0..20)
            .map(|request| {
                let base = app.base.clone();
                tokio::spawn(async move {
                    let event = pageview(site, &format!("q{request}"), "https://tia.example/");
                    let reply = reqwest::Client::new()
                        .post(format!("{base}/api/collect"))
                        .header("user-agent", DESKTOP_UA)
                        .body(event.to_string())
                        .send()
                        .await
                        .unwrap();
                    let status = reply.status().as_u16();
                    let retry_after = reply.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
                    (status, retry_after, reply.json::<serde_json::Value>().await.unwrap_or_default())
                })
            })
            .collect();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        lock.rollback().await.unwrap();
        let mut accepted = 0;
        let mut refused = 0;
        for send in sends {
            match send.await.unwrap() {
                (202, _, _) => accepted += 1,
                (503, retry_after, body) => {
                    refused += 1;
                    assert_eq!(body["code"], "UNAVAILABLE", "{body}");
                    assert!(retry_after.and_then(|v| v.parse::<u64>().ok()).is_some_and(|secs| secs >= 1));
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(refused >= 15, "the queue holds 5 events; the rest are refused at once: {refused}");
        assert!((1..=5).contains(&accepted), "{accepted}");
        assert_eq!(app.event_count().await, accepted, "what was answered 202 is stored, and only that");
        let again = app.collect(pageview(site, "after", "https://tia.example/")).await;
        again.expect(202);
        assert_eq!(app.event_count().await, accepted + 1, "the service recovers by itself");
    }
}

#[tokio::test]
async fn sqlite_checkpoints_run_beside_the_writer_and_keep_the_log_bounded() {
    for app in apps().await {
        let (_, site) = app.user_with_site("Cal", "cal.example").await;
        for request in 0..40 {
            let events: Vec<_> =
                (0..100).map(|i| pageview(site, &format!("c{request}-{i}"), "https://cal.example/")).collect();
            app.collect(json!({ "events": events })).await.expect(202);
        }
        let checkpoints = &app.state.metrics.sqlite_checkpoints;
        if app.backend != "sqlite" {
            assert_eq!(checkpoints.get(), 0, "PostgreSQL has no WAL file to copy back");
            continue;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while checkpoints.get() == 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(checkpoints.get() > 0, "the checkpoint task ran after the batches committed");
        let database = app.state.config.database_url.trim_start_matches("sqlite://");
        let database = database.split('?').next().unwrap();
        let log = std::fs::metadata(format!("{database}-wal")).unwrap().len();
        let page_size = 4_096;
        assert!(log <= u64::from(leadtrail::db::BACKSTOP_PAGES) * page_size * 2, "the log stays bounded: {log} bytes");
    }
}

#[tokio::test]
async fn sqlite_checkpoints_do_not_wait_for_the_pools_connection() {
    for app in apps().await {
        if app.backend != "sqlite" {
            continue;
        }
        let (_, site) = app.user_with_site("Cy", "cy.example").await;
        let checkpoints = &app.state.metrics.sqlite_checkpoints;
        // A checkpoint follows each commit after a short pause. Holding the
        // pool's one connection through that pause must not hold it up. A
        // checkpoint that ran before the hold began proves nothing, so try a
        // few times; one that waited for the connection never counts.
        let mut ran_while_held = false;
        for round in 0..5 {
            app.collect(pageview(site, &format!("cy-{round}"), "https://cy.example/")).await.expect(202);
            let before = checkpoints.get();
            let held = app.state.db.begin().await.unwrap();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
            while checkpoints.get() == before && std::time::Instant::now() < deadline {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            ran_while_held = checkpoints.get() > before;
            held.rollback().await.unwrap();
            if ran_while_held {
                break;
            }
        }
        assert!(ran_while_held, "a checkpoint ran while the pool's connection was held");
    }
}
