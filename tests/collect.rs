//! POST /api/collect and GET /script.js: what is stored, exactly.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    apps, apps_with,
    traffic::{BOT_UA, DESKTOP_UA, PHONE_UA, TABLET_UA, at, pageview},
};
use leadtrail::time::{HOUR_MS, MINUTE_MS, now_ms};
use sea_orm::{ConnectionTrait, DbBackend, TransactionTrait};
use serde_json::{Value, json};

#[tokio::test]
async fn a_pageview_is_stored_with_everything_derived() {
    for app in apps().await {
        let (_, site) = app.user_with_site("Ana", "shop.example").await;
        let url = "https://shop.example/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=spring&utm_content=hero&utm_term=crm";
        let mut event = pageview(site, "vid-1", url);
        event["title"] = json!("Pricing");
        event["referrer"] = json!("https://news.example.org/post/1");
        let reply = app.collect(event).await;
        assert_eq!(reply.expect(202), &json!({ "accepted": 1 }));
        assert_eq!(reply.headers["access-control-allow-origin"], "*");

        let visitor = app.visitor(site, "vid-1").await;
        assert_eq!(
            (visitor.total_sessions, visitor.total_pageviews, visitor.total_events, visitor.high_value_views),
            (1, 1, 1, 1)
        );
        assert_eq!(visitor.status, "anonymous");
        assert_eq!(visitor.device_type.as_deref(), Some("desktop"));
        assert_eq!(visitor.browser.as_deref(), Some("Chrome"));
        assert_eq!(visitor.os.as_deref(), Some("Windows 10"));
        assert!(!visitor.is_bot);
        assert_eq!(visitor.first_referrer.as_deref(), Some("https://news.example.org/post/1"));
        assert_eq!(visitor.country, None, "unknown geo is null, never a guess");

        let sessions = app.sessions_of(visitor.id).await;
        assert_eq!(sessions.len(), 1);
        let session = &sessions[0];
        assert_eq!(session.entry_page.as_deref(), Some("/pricing"));
        assert_eq!(session.utm_source.as_deref(), Some("newsletter"));
        assert_eq!(session.utm_medium.as_deref(), Some("email"));
        assert_eq!(session.utm_campaign.as_deref(), Some("spring"));
        assert_eq!(session.utm_content.as_deref(), Some("hero"));
        assert_eq!(session.utm_term.as_deref(), Some("crm"));
        assert_eq!(session.channel, "Email");
        assert_eq!(session.referrer.as_deref(), Some("https://news.example.org/post/1"));
        assert_eq!(visitor.last_session_id, Some(session.id));

        let events = app.events_of(visitor.id).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].page, "/pricing");
        assert_eq!(events[0].event_type, "pageview");
        assert_eq!(events[0].event_name, "");
        assert_eq!(events[0].page_title.as_deref(), Some("Pricing"));
    }
}

#[tokio::test]
async fn collect_takes_json_batches_and_answers_cors_preflight() {
    for app in apps().await {
        let (_, site) = app.user_with_site("Bo", "bo.example").await;
        let events: Vec<_> = (0..3).map(|i| pageview(site, "vid-b", &format!("https://bo.example/p{i}"))).collect();
        let client = app.client();
        let reply = client.post("/api/collect", json!({ "events": events })).await;
        assert_eq!(reply.expect(202), &json!({ "accepted": 3 }));
        app.state.writer.flush().await;
        assert_eq!(app.visitor(site, "vid-b").await.total_pageviews, 3);

        let preflight = reqwest::Client::new()
            .request(reqwest::Method::OPTIONS, format!("{}/api/collect", app.base))
            .header("origin", "https://customer.example")
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type")
            .send()
            .await
            .unwrap();
        assert!(preflight.status().is_success());
        assert_eq!(preflight.headers()["access-control-allow-origin"], "*");
    }
}

#[tokio::test]
async fn sessions_split_after_30_idle_minutes_24_hours_or_a_new_campaign() {
    for app in apps().await {
        let (_, site) = app.user_with_site("Cy", "cy.example").await;
        let t0 = now_ms() - 3 * 24 * HOUR_MS;
        let url = "https://cy.example/";
        let idle = vec![
            at(pageview(site, "idle", url), t0),
            at(pageview(site, "idle", "https://cy.example/a"), t0 + 10 * MINUTE_MS),
            at(pageview(site, "idle", "https://cy.example/b"), t0 + 40 * MINUTE_MS),
            // 30 minutes after /b is still the same session; 31 is not.
            at(pageview(site, "idle", "https://cy.example/c"), t0 + 70 * MINUTE_MS),
            at(pageview(site, "idle", "https://cy.example/d"), t0 + 101 * MINUTE_MS),
        ];
        app.collect(json!({ "events": idle })).await.expect(202);
        let visitor = app.visitor(site, "idle").await;
        let sessions = app.sessions_of(visitor.id).await;
        assert_eq!(sessions.len(), 2);
        assert_eq!((sessions[0].pageview_count, sessions[1].pageview_count), (4, 1));
        assert_eq!(sessions[0].entry_page.as_deref(), Some("/"));
        assert_eq!(sessions[0].exit_page.as_deref(), Some("/c"));
        assert_eq!(sessions[0].duration_seconds, 70 * 60);
        assert_eq!(sessions[1].entry_page.as_deref(), Some("/d"));
        assert_eq!(visitor.total_sessions, 2);
        assert_eq!(visitor.total_time_seconds, 70 * 60);
        assert_eq!((visitor.first_seen, visitor.last_seen), (t0, t0 + 101 * MINUTE_MS));

        // Every 20 minutes for 25 hours: never idle, but capped at 24 hours.
        let long: Vec<_> = (0..76).map(|k| at(pageview(site, "long", url), t0 + k * 20 * MINUTE_MS)).collect();
        app.collect(json!({ "events": long })).await.expect(202);
        let long_visitor = app.visitor(site, "long").await;
        let sessions = app.sessions_of(long_visitor.id).await;
        assert_eq!(sessions.len(), 2);
        assert_eq!(sessions[0].pageview_count, 72);
        assert_eq!(sessions[1].pageview_count, 4);

        let campaign = vec![
            at(pageview(site, "camp", "https://cy.example/?utm_source=google&utm_medium=cpc&utm_campaign=a"), t0),
            at(pageview(site, "camp", "https://cy.example/next"), t0 + MINUTE_MS),
            at(
                pageview(site, "camp", "https://cy.example/?utm_source=google&utm_medium=cpc&utm_campaign=a"),
                t0 + 2 * MINUTE_MS,
            ),
            at(
                pageview(site, "camp", "https://cy.example/?utm_source=google&utm_medium=cpc&utm_campaign=b"),
                t0 + 3 * MINUTE_MS,
            ),
        ];
        app.collect(json!({ "events": campaign })).await.expect(202);
        let sessions = app.sessions_of(app.visitor(site, "camp").await.id).await;
        assert_eq!(sessions.len(), 2, "only a different campaign starts a session");
        assert_eq!(sessions[0].channel, "Paid Search");
        assert_eq!(sessions[0].pageview_count, 3);
        assert_eq!(sessions[1].utm_campaign.as_deref(), Some("b"));
    }
}

#[tokio::test]
async fn a_stored_session_grows_at_both_ends_and_keeps_everything_else() {
    for app in apps().await {
        let (_, site) = app.user_with_site("Gus", "gus.example").await;
        let t0 = now_ms() - 2 * HOUR_MS;
        let landing = "https://gus.example/?utm_source=news&utm_medium=email&utm_campaign=fall";
        let first = vec![
            at(pageview(site, "grow", landing), t0 + 10 * MINUTE_MS),
            at(pageview(site, "grow", "https://gus.example/b"), t0 + 20 * MINUTE_MS),
        ];
        app.collect(json!({ "events": first })).await.expect(202);
        let visitor = app.visitor(site, "grow").await;
        let stored = app.sessions_of(visitor.id).await.remove(0);

        // Another request moves the stored session's start (an import out of
        // order) and its end.
        let mut signup = at(pageview(site, "grow", "https://gus.example/c"), t0 + 25 * MINUTE_MS);
        signup["type"] = json!("custom_event");
        signup["event_name"] = json!("signup");
        let second = vec![at(pageview(site, "grow", "https://gus.example/a"), t0), signup];
        app.collect(json!({ "events": second })).await.expect(202);
        let sessions = app.sessions_of(visitor.id).await;
        assert_eq!(sessions.len(), 1, "both events continue the stored session");
        // The hours of its human events, as bits counted from its first hour.
        let hours = |minutes: &[i64]| {
            minutes.iter().fold(0_i64, |bits, m| bits | 1 << ((t0 + m * MINUTE_MS) / HOUR_MS - t0 / HOUR_MS))
        };
        let expected = entity::tracked_session::Model {
            started_at: t0,
            ended_at: t0 + 25 * MINUTE_MS,
            duration_seconds: 25 * 60,
            pageview_count: 3,
            event_count: 4,
            human_pageview_count: 3,
            human_event_count: 4,
            human_hours: hours(&[0, 10, 20, 25]),
            entry_page: Some("/a".to_owned()),
            ..stored.clone()
        };
        assert_eq!(sessions[0], expected, "only what the events change, and nothing else");

        // Then only its end moves.
        app.collect(at(pageview(site, "grow", "https://gus.example/d"), t0 + 26 * MINUTE_MS)).await.expect(202);
        let sessions = app.sessions_of(visitor.id).await;
        let expected = entity::tracked_session::Model {
            ended_at: t0 + 26 * MINUTE_MS,
            duration_seconds: 26 * 60,
            pageview_count: 4,
            event_count: 5,
            human_pageview_count: 4,
            human_event_count: 5,
            human_hours: hours(&[0, 10, 20, 25, 26]),
            exit_page: Some("/d".to_owned()),
            ..expected
        };
        assert_eq!(sessions, vec![expected]);
        let visitor = app.visitor(site, "grow").await;
        assert_eq!((visitor.total_sessions, visitor.total_time_seconds), (1, 26 * 60));
        assert_eq!((visitor.first_seen, visitor.last_seen), (t0, t0 + 26 * MINUTE_MS));
    }
}

/// Requests that queue up while the writer is busy go in one batch: past a
/// few hundred events its statements are built and sent in overlapping groups.
#[tokio::test]
async fn a_batch_gathered_from_many_requests_is_exact() {
    for app in apps().await {
        let (_, site) = app.user_with_site("Bo", "bo.example").await;
        let t0 = now_ms() - 2 * HOUR_MS;
        let view = |vid: String, minute: i64| {
            at(pageview(site, &vid, &format!("https://bo.example/{minute}")), t0 + minute * MINUTE_MS)
        };
        let known: Vec<_> = (0..50).flat_map(|k| [view(format!("k{k}"), 0), view(format!("k{k}"), 1)]).collect();
        app.collect(json!({ "events": known })).await.expect(202);

        // Hold the database, so what arrives meanwhile queues up.
        let lock = app.state.db.begin().await.unwrap();
        match lock.get_database_backend() {
            DbBackend::Postgres => {
                lock.execute_unprepared("LOCK TABLE visitors IN ACCESS EXCLUSIVE MODE").await.unwrap()
            }
            _ => lock.execute_unprepared("UPDATE sites SET name = name").await.unwrap(),
        };
        let mut bodies: Vec<Value> = (0..4)
            .map(|r| {
                let events: Vec<_> = (0..50)
                    .flat_map(|k| [view(format!("k{k}"), 2 + 2 * r), view(format!("k{k}"), 3 + 2 * r)])
                    .collect();
                json!({ "events": events })
            })
            .collect();
        let new: Vec<_> = (0..50).flat_map(|n| [view(format!("n{n}"), 0), view(format!("n{n}"), 1)]).collect();
        bodies.push(json!({ "events": new }));
        let sends: Vec<_> = bodies
            .into_iter()
            .map(|body| {
                let base = app.base.clone();
                tokio::spawn(async move {
                    reqwest::Client::new()
                        .post(format!("{base}/api/collect"))
                        .header("user-agent", DESKTOP_UA)
                        .body(body.to_string())
                        .send()
                        .await
                        .unwrap()
                        .status()
                        .as_u16()
                })
            })
            .collect();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        lock.rollback().await.unwrap();
        for send in sends {
            assert_eq!(send.await.unwrap(), 202);
        }

        for k in 0..50 {
            let visitor = app.visitor(site, &format!("k{k}")).await;
            assert_eq!((visitor.total_pageviews, visitor.total_sessions, visitor.total_time_seconds), (10, 1, 9 * 60));
            let sessions = app.sessions_of(visitor.id).await;
            assert_eq!(sessions.len(), 1, "every event continues the stored session");
            let session = &sessions[0];
            assert_eq!((session.started_at, session.ended_at), (t0, t0 + 9 * MINUTE_MS));
            assert_eq!((session.pageview_count, session.duration_seconds), (10, 9 * 60));
            assert_eq!((session.entry_page.as_deref(), session.exit_page.as_deref()), (Some("/0"), Some("/9")));
            assert_eq!(visitor.last_session_id, Some(session.id));
        }
        for n in 0..50 {
            let visitor = app.visitor(site, &format!("n{n}")).await;
            assert_eq!((visitor.total_pageviews, visitor.total_sessions, visitor.total_time_seconds), (2, 1, 60));
            let sessions = app.sessions_of(visitor.id).await;
            assert_eq!(sessions.len(), 1);
            assert_eq!(visitor.last_session_id, Some(sessions[0].id));
            assert_eq!(sessions[0].pageview_count, 2);
        }
        assert_eq!(app.event_count().await, 100 + 400 + 100);
    }
}

#[tokio::test]
async fn user_agents_are_classified() {
    for app in apps().await {
        let (_, site) = app.user_with_site("Di", "di.example").await;
        for (vid, ua) in [("d", DESKTOP_UA), ("m", PHONE_UA), ("t", TABLET_UA), ("b", BOT_UA)] {
            app.collect_with(pageview(site, vid, "https://di.example/"), ua, &[]).await.expect(202);
        }
        app.state.writer.flush().await;
        let class = |v: entity::visitor::Model| (v.device_type.unwrap(), v.is_bot);
        assert_eq!(class(app.visitor(site, "d").await), ("desktop".to_owned(), false));
        assert_eq!(class(app.visitor(site, "m").await), ("mobile".to_owned(), false));
        assert_eq!(class(app.visitor(site, "t").await), ("tablet".to_owned(), false));
        assert_eq!(class(app.visitor(site, "b").await), ("bot".to_owned(), true));
        let bot = app.visitor(site, "b").await;
        assert!(app.events_of(bot.id).await[0].is_bot, "bot events are kept, flagged");
    }
}

#[tokio::test]
async fn geo_comes_from_trusted_proxy_headers_only() {
    let cloudflare = [
        ("cf-ipcountry", "DE"),
        ("cf-ipcity", "Berlin"),
        ("cf-region", "Land Berlin"),
        ("cf-iplatitude", "52.52"),
        ("cf-iplongitude", "13.40"),
    ];
    for app in apps_with(|config| config.trust_proxy = leadtrail::config::TrustProxy::Cloudflare).await {
        let (_, site) = app.user_with_site("Ed", "ed.example").await;
        app.collect_with(pageview(site, "geo", "https://ed.example/"), DESKTOP_UA, &cloudflare).await.expect(202);
        app.state.writer.flush().await;
        let v = app.visitor(site, "geo").await;
        assert_eq!(v.country.as_deref(), Some("DE"));
        assert_eq!(v.city.as_deref(), Some("Berlin"));
        assert_eq!(v.region.as_deref(), Some("Land Berlin"));
        assert_eq!((v.lat, v.lon), (Some(52.52), Some(13.40)));
    }
    for app in apps().await {
        let (_, site) = app.user_with_site("Fi", "fi.example").await;
        app.collect_with(pageview(site, "spoof", "https://fi.example/"), DESKTOP_UA, &cloudflare).await.expect(202);
        app.state.writer.flush().await;
        assert_eq!(app.visitor(site, "spoof").await.country, None, "untrusted headers are ignored");
    }
    let vercel =
        [("x-vercel-ip-country", "JP"), ("x-vercel-ip-city", "T%C5%8Dky%C5%8D"), ("x-vercel-ip-country-region", "13")];
    for app in apps_with(|config| config.trust_proxy = leadtrail::config::TrustProxy::Vercel).await {
        let (_, site) = app.user_with_site("Gu", "gu.example").await;
        app.collect_with(pageview(site, "jp", "https://gu.example/"), DESKTOP_UA, &vercel).await.expect(202);
        app.state.writer.flush().await;
        let v = app.visitor(site, "jp").await;
        assert_eq!(
            (v.country.as_deref(), v.city.as_deref(), v.region.as_deref()),
            (Some("JP"), Some("Tōkyō"), Some("13"))
        );
    }
}

/// A two-network GeoLite2-City-shaped database, written for this test.
fn mmdb_fixture(dir: &std::path::Path) -> String {
    use maxminddb_writer::{Database, metadata::IpVersion, paths::IpAddrWithMask};
    let mut db = Database::default();
    db.metadata.ip_version = IpVersion::V4;
    db.metadata.database_type = "GeoLite2-City".to_owned();
    db.metadata.languages = vec!["en".to_owned()];
    db.metadata.binary_format_major_version = 2;
    let london = db
        .insert_value(json!({
            "country": { "iso_code": "GB", "names": { "en": "United Kingdom" } },
            "city": { "names": { "en": "London" } },
            "subdivisions": [{ "iso_code": "ENG", "names": { "en": "England" } }],
            "location": { "latitude": 51.5142, "longitude": -0.0931 }
        }))
        .unwrap();
    db.insert_node(IpAddrWithMask::new("81.2.69.0".parse().unwrap(), 24), london);
    let path = dir.join("fixture-city.mmdb");
    db.write_to(std::fs::File::create(&path).unwrap()).unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn geo_comes_from_a_geoip_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = mmdb_fixture(dir.path());
    let apps = apps_with(|config| {
        config.geoip_db_path = Some(path.clone());
        config.trust_proxy = leadtrail::config::TrustProxy::Xff;
    })
    .await;
    for app in apps {
        let (_, site) = app.user_with_site("Hu", "hu.example").await;
        let xff = [("x-forwarded-for", "10.0.0.1, 81.2.69.160")];
        app.collect_with(pageview(site, "uk", "https://hu.example/"), DESKTOP_UA, &xff).await.expect(202);
        let elsewhere = [("x-forwarded-for", "203.0.113.9")];
        app.collect_with(pageview(site, "nowhere", "https://hu.example/"), DESKTOP_UA, &elsewhere).await.expect(202);
        app.state.writer.flush().await;
        let v = app.visitor(site, "uk").await;
        assert_eq!(
            (v.country.as_deref(), v.city.as_deref(), v.region.as_deref()),
            (Some("GB"), Some("London"), Some("England"))
        );
        assert_eq!((v.lat, v.lon), (Some(51.5142), Some(-0.0931)));
        assert_eq!(app.visitor(site, "nowhere").await.country, None);
    }
}

#[tokio::test]
async fn visitor_aggregates_add_up() {
    for app in apps().await {
        let (_, site) = app.user_with_site("Ivy", "ivy.example").await;
        let t0 = now_ms() - 2 * HOUR_MS;
        let mut form = at(pageview(site, "agg", "https://ivy.example/contact"), t0 + 3 * MINUTE_MS);
        form["type"] = json!("custom_event");
        form["event_name"] = json!("form_submit");
        form["props"] = json!({ "form_id": "contact" });
        let mut ping = at(pageview(site, "agg", "https://ivy.example/contact"), t0 + 5 * MINUTE_MS);
        ping["type"] = json!("ping");
        ping["engaged_ms"] = json!(120_000);
        let mut first = at(pageview(site, "agg", "https://ivy.example/"), t0);
        first["referrer"] = json!("https://www.google.com/");
        let events = vec![
            first,
            at(pageview(site, "agg", "https://ivy.example/pricing"), t0 + MINUTE_MS),
            at(pageview(site, "agg", "https://ivy.example/contact"), t0 + 2 * MINUTE_MS),
            form,
            ping,
            at(pageview(site, "agg", "https://ivy.example/pricing/enterprise"), t0 + HOUR_MS),
        ];
        app.collect(json!({ "events": events })).await.expect(202);
        let v = app.visitor(site, "agg").await;
        assert_eq!(v.total_sessions, 2);
        assert_eq!(v.total_pageviews, 4);
        assert_eq!(v.total_events, 5, "pings are not events");
        assert_eq!(v.high_value_views, 3, "/pricing, /contact and /pricing/enterprise");
        assert_eq!(v.form_submits, 1);
        assert_eq!(v.total_time_seconds, 5 * 60, "the ping extends the first session to 5 minutes");
        assert_eq!(v.first_referrer.as_deref(), Some("https://www.google.com/"));
        let sessions = app.sessions_of(v.id).await;
        assert_eq!(sessions[0].channel, "Organic Search");
        assert_eq!(sessions[0].event_count, 4);
        assert_eq!(sessions[1].channel, "Direct");
        // 4 views (1) + 1 return visit (2) + 5 minutes (2) + 3 high-value (13) + 1 form (10)
        assert_eq!(v.score, 1 + 2 + 2 + 13 + 10);
        let stored = app.events_of(v.id).await;
        assert_eq!(stored.len(), 5, "the ping is not stored as an event");
        let form = stored.iter().find(|e| e.event_type == "custom_event").unwrap();
        assert_eq!(form.event_name, "form_submit");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&form.props).unwrap(), json!({ "form_id": "contact" }));
    }
}

#[tokio::test]
async fn bad_events_are_refused_and_nothing_is_stored() {
    for app in apps().await {
        let (_, site) = app.user_with_site("Jo", "jo.example").await;
        let ok = pageview(site, "v", "https://jo.example/");
        let with = |key: &str, value: serde_json::Value| {
            let mut event = ok.clone();
            event[key] = value;
            event
        };
        let cases = [
            (with("site", json!(999_999)), 404, "NOT_FOUND"),
            (with("site", json!("abc")), 400, "VALIDATION_ERROR"),
            (with("type", json!("purchase")), 400, "VALIDATION_ERROR"),
            (with("url", json!("javascript:alert(1)")), 400, "VALIDATION_ERROR"),
            (with("url", json!(format!("https://jo.example/{}", "a".repeat(2100)))), 400, "VALIDATION_ERROR"),
            (with("title", json!("t".repeat(513))), 400, "VALIDATION_ERROR"),
            (with("tracker_vid", json!("undefined")), 400, "VALIDATION_ERROR"),
            (with("tracker_vid", json!("v".repeat(129))), 400, "VALIDATION_ERROR"),
            (with("tracker_vid", json!(null)), 400, "VALIDATION_ERROR"),
            (with("type", json!("custom_event")), 400, "VALIDATION_ERROR"),
            (with("ts", json!(1)), 400, "VALIDATION_ERROR"),
            (with("ts", json!("yesterday")), 400, "VALIDATION_ERROR"),
            (with("props", json!({ "big": "x".repeat(5000) })), 400, "VALIDATION_ERROR"),
            (with("props", json!([1, 2])), 400, "VALIDATION_ERROR"),
            (with("referrer", json!("not a url")), 400, "VALIDATION_ERROR"),
            (json!({ "events": [] }), 400, "VALIDATION_ERROR"),
            (json!({ "events": vec![ok.clone(); 101] }), 413, "PAYLOAD_TOO_LARGE"),
            (json!({ "events": [ok.clone(), with("type", json!("nope"))] }), 400, "VALIDATION_ERROR"),
            (json!([ok.clone()]), 400, "BAD_REQUEST"),
        ];
        for (body, status, code) in cases {
            let reply = app.collect_with(body.clone(), DESKTOP_UA, &[]).await;
            assert_eq!(reply.status.as_u16(), status, "{body}: {}", reply.text);
            assert_eq!(reply.body["code"], code, "{body}");
        }
        let reply =
            app.collect_with(json!({ "events": [ok.clone(), with("type", json!("nope"))] }), DESKTOP_UA, &[]).await;
        assert!(reply.body["message"].as_str().unwrap().contains("events[1].type"), "{}", reply.text);
        let malformed =
            reqwest::Client::new().post(format!("{}/api/collect", app.base)).body("{oops").send().await.unwrap();
        assert_eq!(malformed.status().as_u16(), 400);
        app.state.writer.flush().await;
        assert_eq!(app.event_count().await, 0, "nothing stored");
    }
}

#[tokio::test]
async fn cookieless_sites_derive_the_visitor_on_the_server() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Kai", "kai.example").await;
        client.put(&format!("/api/sites/{site}"), json!({ "trackingMode": "cookieless" })).await.expect(200);
        let mut event = pageview(site, "ignored", "https://kai.example/");
        app.collect_with(event.clone(), DESKTOP_UA, &[]).await.expect(202);
        event.as_object_mut().unwrap().remove("tracker_vid");
        app.collect_with(event.clone(), DESKTOP_UA, &[]).await.expect(202);
        app.collect_with(event, PHONE_UA, &[]).await.expect(202);
        app.state.writer.flush().await;
        let visitors = entity::visitor::Entity::find().all(&app.state.db).await.unwrap();
        use sea_orm::EntityTrait;
        assert_eq!(visitors.len(), 2, "same IP and agent is one visitor; another agent is another");
        assert!(visitors.iter().all(|v| v.tracker_vid.starts_with("cl_") && v.tracker_vid != "ignored"));
        let desktop = visitors.iter().find(|v| v.device_type.as_deref() == Some("desktop")).unwrap();
        assert_eq!(desktop.total_pageviews, 2);
    }
}

#[tokio::test]
async fn the_tracker_script_is_small_cacheable_and_revalidated() {
    for app in apps().await {
        let client = app.client();
        let script = client.get("/script.js").await;
        script.expect(200);
        assert!(script.headers["content-type"].to_str().unwrap().starts_with("text/javascript"));
        assert!(script.headers["cache-control"].to_str().unwrap().contains("max-age"));
        let etag = script.headers["etag"].to_str().unwrap().to_owned();
        for feature in
            ["sendBeacon", "keepalive", "pushState", "popstate", "form_submit", "pagehide", "lt_click", "track"]
        {
            assert!(script.text.contains(feature), "tracker lacks {feature}");
        }
        let mut gzip = Vec::new();
        {
            use std::io::Write;
            let mut encoder = flate2::write::GzEncoder::new(&mut gzip, flate2::Compression::best());
            encoder.write_all(script.text.as_bytes()).unwrap();
        }
        assert!(gzip.len() < 2048, "tracker is {} bytes gzipped", gzip.len());
        let revalidated = reqwest::Client::new()
            .get(format!("{}/script.js", app.base))
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(revalidated.status().as_u16(), 304);
    }
}

#[tokio::test]
async fn collect_is_rate_limited_per_client_ip() {
    for app in apps_with(|config| config.collect_rate_limit_per_second = 3).await {
        let (_, site) = app.user_with_site("Lu", "lu.example").await;
        let mut statuses = Vec::new();
        for n in 0..6 {
            let reply =
                app.collect_with(pageview(site, &format!("r{n}"), "https://lu.example/"), DESKTOP_UA, &[]).await;
            statuses.push(reply.status.as_u16());
            if reply.status.as_u16() == 429 {
                reply.expect_error(429, "RATE_LIMITED");
                assert!(reply.headers.contains_key("retry-after"));
            }
        }
        assert_eq!(&statuses[..3], &[202, 202, 202]);
        assert!(statuses[3..].contains(&429), "{statuses:?}");
    }
}

#[tokio::test]
async fn spoofed_forwarding_headers_do_not_escape_the_ip_limit() {
    for app in apps_with(|config| config.collect_rate_limit_per_second = 3).await {
        let (_, site) = app.user_with_site("Sly", "sly.example").await;
        let mut statuses = Vec::new();
        for n in 0..6 {
            let forged = format!("203.0.113.{n}");
            let headers = [
                ("x-forwarded-for", forged.as_str()),
                ("cf-connecting-ip", forged.as_str()),
                ("x-real-ip", forged.as_str()),
            ];
            let reply =
                app.collect_with(pageview(site, &format!("s{n}"), "https://sly.example/"), DESKTOP_UA, &headers).await;
            statuses.push(reply.status.as_u16());
        }
        assert_eq!(&statuses[..3], &[202, 202, 202]);
        assert!(
            statuses[3..].iter().all(|&s| s == 429),
            "forged headers are ignored without TRUST_PROXY: {statuses:?}"
        );
    }
    // Behind a proxy that TRUST_PROXY names, its header is the client.
    for app in apps_with(|config| {
        config.collect_rate_limit_per_second = 3;
        config.trust_proxy = leadtrail::config::TrustProxy::Xff;
    })
    .await
    {
        let (_, site) = app.user_with_site("Pax", "pax.example").await;
        for n in 0..6 {
            let client = format!("198.51.100.{n}");
            let reply = app
                .collect_with(
                    pageview(site, &format!("p{n}"), "https://pax.example/"),
                    DESKTOP_UA,
                    &[("x-forwarded-for", client.as_str())],
                )
                .await;
            assert_eq!(reply.status.as_u16(), 202, "each client has its own budget");
        }
    }
}

#[tokio::test]
async fn collect_is_rate_limited_per_site() {
    for app in apps_with(|config| config.collect_site_rate_limit_per_second = 3).await {
        let (_, busy) = app.user_with_site("Bo", "busy.example").await;
        let (_, quiet) = app.user_with_site("Qi", "quiet.example").await;
        let mut statuses = Vec::new();
        for n in 0..6 {
            let reply =
                app.collect_with(pageview(busy, &format!("b{n}"), "https://busy.example/"), DESKTOP_UA, &[]).await;
            if reply.status.as_u16() == 429 {
                reply.expect_error(429, "RATE_LIMITED");
                assert!(reply.headers.contains_key("retry-after"));
            }
            statuses.push(reply.status.as_u16());
        }
        assert_eq!(&statuses[..3], &[202, 202, 202]);
        assert!(statuses[3..].contains(&429), "{statuses:?}");
        let other = app.collect_with(pageview(quiet, "q", "https://quiet.example/"), DESKTOP_UA, &[]).await;
        assert_eq!(other.status.as_u16(), 202, "another site keeps its own budget");
    }
}

#[tokio::test]
async fn text_with_a_nul_character_is_refused_on_both_databases() {
    // PostgreSQL's text cannot hold U+0000: stored, it failed the whole write
    // batch with a 500, taking other requests' events with it.
    for app in apps().await {
        let (_, site) = app.user_with_site("Nul", "nul.example").await;
        for (field, value) in [("title", "a\u{0}b"), ("event_name", "e\u{0}"), ("referrer", "https://r.example/\u{0}")]
        {
            let mut event = pageview(site, "vid-nul", "https://nul.example/a");
            event["type"] = json!("custom_event");
            event["event_name"] = json!("signup");
            event[field] = json!(value);
            let reply =
                app.collect(json!({ "events": [pageview(site, "vid-nul", "https://nul.example/b"), event] })).await;
            reply.expect_error(400, "VALIDATION_ERROR");
            assert!(reply.body["message"].as_str().unwrap().contains(field), "{field}: {}", reply.text);
        }
        assert_eq!(app.event_count().await, 0, "a refused batch stores nothing");
        // Inside props, a NUL is an escape in the stored JSON text, which both hold.
        let mut event = pageview(site, "vid-nul", "https://nul.example/c");
        event["props"] = json!({ "k": "v\u{0}" });
        app.collect(event).await.expect(202);
        assert_eq!(app.event_count().await, 1);
    }
}
