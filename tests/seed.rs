//! `leadtrail seed`: generated traffic is stored through the real write path,
//! and the analytics endpoints count exactly what the seed reports.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicU64, Ordering};

use common::apps;
use leadtrail::seed::{self, SeedOptions};

#[tokio::test]
async fn seeded_traffic_adds_up_in_every_endpoint() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Seed", "seed.example").await;
        let done = AtomicU64::new(0);
        let options = SeedOptions { site_id: site, visitors: 300, days: 7, seed: 7 };
        let report = seed::run(&app.state.db, options, |n| {
            done.fetch_add(n, Ordering::Relaxed);
        })
        .await
        .expect("seed runs");
        assert_eq!(done.load(Ordering::Relaxed), 300, "progress covers every visitor");
        assert_eq!(report.visitors, 300);
        assert!(report.bots > 0 && report.identified > 0 && report.clicks > 0, "{report:?}");
        assert!(report.sessions > report.visitors, "some visitors return: {report:?}");
        assert!(report.events > 2 * report.sessions, "sessions have several events: {report:?}");

        let stats = client.get(&format!("/api/stats?siteId={site}&timeRange=7d")).await;
        let overview = &stats.expect(200)["overview"];
        assert_eq!(overview["unique_visitors"], report.visitors - report.bots, "{overview}");
        assert_eq!(overview["sessions"], report.human_sessions);
        assert_eq!(overview["total_events"], report.human_events);
        assert_eq!(overview["identified_visitors"], report.identified);
        assert!(stats.body["countries"].as_array().unwrap().len() >= 5, "several countries");

        let list = client.get(&format!("/api/visitor?siteId={site}&timeRange=all&limit=500")).await;
        assert_eq!(list.expect(200)["total"], report.visitors - report.bots);
        let devices: std::collections::BTreeSet<&str> =
            list.body["visitors"].as_array().unwrap().iter().filter_map(|v| v["device_type"].as_str()).collect();
        assert_eq!(devices.into_iter().collect::<Vec<_>>(), ["desktop", "mobile", "tablet"]);
        let bots = client.get(&format!("/api/visitor?siteId={site}&timeRange=all&filter=bot")).await;
        assert_eq!(bots.expect(200)["total"], report.bots);
        let clicks = client.get(&format!("/api/link-analytics?siteId={site}&range=all")).await;
        assert_eq!(clicks.expect(200)["total"], report.clicks);
        let clicked: i64 =
            list.body["visitors"].as_array().unwrap().iter().map(|v| v["clicks"].as_i64().unwrap()).sum();
        assert_eq!(clicked as u64, report.clicks, "every seeded click is tied to its visitor");

        // Companies: from their networks and their people's work emails;
        // the cable ISP makes none; each account's visitors add up.
        let accounts = client.get(&format!("/api/accounts?siteId={site}&timeRange=all&limit=200")).await;
        let accounts = accounts.expect(200).clone();
        let total = accounts["total"].as_u64().unwrap();
        assert!(total > 40, "many accounts: {total}");
        let keys: Vec<&str> =
            accounts["accounts"].as_array().unwrap().iter().map(|a| a["key"].as_str().unwrap()).collect();
        assert!(keys.iter().any(|k| k.starts_with("asn:")) && keys.iter().any(|k| k.ends_with(".example")), "{keys:?}");
        assert!(!keys.contains(&"asn:7922"), "an ISP is no company");
        let in_accounts: i64 =
            accounts["accounts"].as_array().unwrap().iter().map(|a| a["visitors"].as_i64().unwrap()).sum();
        let with_account = list.body["visitors"].as_array().unwrap().len() as i64;
        assert!(in_accounts > 0 && in_accounts < with_account, "{in_accounts} of {with_account} visitors in accounts");

        // Seeding again with another seed adds to the same site and reuses its links.
        let again = SeedOptions { site_id: site, visitors: 10, days: 7, seed: 8 };
        seed::run(&app.state.db, again, |_| {}).await.expect("seed runs twice");
        let links = client.get(&format!("/api/links?siteId={site}")).await;
        assert_eq!(links.expect(200)["links"].as_array().unwrap().len(), 3);
    }
}

#[tokio::test]
async fn seed_demo_prints_a_working_sign_in_and_fills_a_week() {
    for app in apps().await {
        let run = || {
            let output = std::process::Command::new(env!("CARGO_BIN_EXE_leadtrail"))
                .args(["seed", "--demo", "--visitors", "60"])
                .env("DATABASE_URL", &app.state.config.database_url)
                .env("RUST_LOG", "warn")
                .output()
                .expect("run leadtrail seed --demo");
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let line = stdout.lines().find(|l| l.starts_with("Demo account:")).expect("credentials printed").to_owned();
            let words: Vec<&str> = line.split_whitespace().collect();
            (words[2].to_owned(), words[4].to_owned(), stdout)
        };
        let (email, password, stdout) = run();
        assert!(stdout.contains("Seeded site"), "{stdout}");
        let signed_in = app
            .client()
            .post("/api/auth/sign-in/email", serde_json::json!({ "email": email, "password": password }))
            .await;
        let token = signed_in.expect(200)["token"].as_str().unwrap().to_owned();
        let client = app.client().with_session(token);
        let sites = client.get("/api/sites").await;
        let site = sites.expect(200)["sites"][0]["siteId"].as_i64().unwrap();
        let stats = client.get(&format!("/api/stats?siteId={site}&timeRange=7d")).await;
        assert!(stats.expect(200)["overview"]["unique_visitors"].as_i64().unwrap() > 0, "a week of traffic");

        // A second run refreshes the password and adds to the same site.
        let (again, new_password, _) = run();
        assert_eq!(again, email);
        assert_ne!(new_password, password);
        let sites = client.get("/api/sites").await;
        assert_eq!(sites.expect(200)["sites"].as_array().unwrap().len(), 1);
        let old = app
            .client()
            .post("/api/auth/sign-in/email", serde_json::json!({ "email": email, "password": password }))
            .await;
        old.expect_error(401, "INVALID_EMAIL_OR_PASSWORD");
    }
}
