//! GET /l/<site>/<slug>: redirects, click recording, limits, attribution.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    apps, apps_with,
    traffic::{BOT_UA, DESKTOP_UA, click_command, landing_event, pageview},
};
use leadtrail::config::TrustProxy;
use leadtrail::service::tracking::{self, WriteOp};
use reqwest::Method;
use serde_json::json;

fn query_pairs(location: &str) -> Vec<(String, String)> {
    url::Url::parse(location).unwrap().query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

#[tokio::test]
async fn a_redirect_adds_utm_and_a_click_id_and_records_the_click() {
    let berlin =
        [("cf-ipcountry", "DE"), ("cf-ipcity", "Berlin"), ("cf-iplatitude", "52.52"), ("cf-iplongitude", "13.40")];
    for app in apps_with(|config| config.trust_proxy = TrustProxy::Cloudflare).await {
        let (client, site) = app.user_with_site("Ava", "ava.example").await;
        client
            .create_link(json!({
                "siteId": site, "slug": "sale", "destinationUrl": "https://ava.example/landing?utm_source=keep&ref=x",
                "campaign": "spring", "source": "newsletter", "medium": "email", "content": "hero"
            }))
            .await;
        let reply = app
            .visit_link(
                Method::GET,
                "/l/ava-example/sale",
                DESKTOP_UA,
                &[&berlin[..], &[("referer", "https://mail.example/")]].concat(),
            )
            .await;
        assert_eq!(reply.status.as_u16(), 302);
        assert_eq!(reply.headers["cache-control"], "no-store");
        let location = reply.headers["location"].to_str().unwrap();
        assert!(location.starts_with("https://ava.example/landing?"), "{location}");
        let pairs = query_pairs(location);
        let get = |key: &str| pairs.iter().filter(|(k, _)| k == key).map(|(_, v)| v.as_str()).collect::<Vec<_>>();
        assert_eq!(get("utm_source"), ["keep"], "the destination's own UTM wins");
        assert_eq!(get("utm_medium"), ["email"]);
        assert_eq!(get("utm_campaign"), ["spring"]);
        assert_eq!(get("utm_content"), ["hero"]);
        assert_eq!(get("ref"), ["x"]);
        let click_key = get("lt_click")[0].to_owned();
        assert!(click_key.len() >= 16);

        let clicks = app.clicks().await;
        assert_eq!(clicks.len(), 1);
        let click = &clicks[0];
        assert_eq!(click.click_key, click_key);
        assert_eq!(
            (click.slug.as_str(), click.campaign.as_str(), click.source.as_str()),
            ("sale", "spring", "newsletter")
        );
        assert_eq!((click.country.as_deref(), click.city.as_deref()), (Some("DE"), Some("Berlin")));
        assert_eq!((click.lat, click.lon), (Some(52.52), Some(13.40)));
        assert_eq!((click.device_type.as_deref(), click.browser.as_deref()), (Some("desktop"), Some("Chrome")));
        assert_eq!(click.referrer.as_deref(), Some("https://mail.example/"));
        assert!(!click.is_bot);
        assert_eq!(click.visitor_id, None, "not tied to a visitor until the tracker reports it");
    }
}

#[tokio::test]
async fn head_requests_and_bots_redirect_but_do_not_count() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Ben", "ben.example").await;
        let link =
            client.create_link(json!({ "siteId": site, "slug": "s", "destinationUrl": "https://ben.example/" })).await;
        let id = link["link"]["id"].as_str().unwrap().to_owned();
        client.put(&format!("/api/links/{id}"), json!({ "max_clicks": 1 })).await.expect(200);
        assert_eq!(app.visit_link(Method::HEAD, "/l/ben-example/s", DESKTOP_UA, &[]).await.status.as_u16(), 302);
        assert_eq!(app.visit_link(Method::GET, "/l/ben-example/s", BOT_UA, &[]).await.status.as_u16(), 302);
        app.click("/l/ben-example/s", &[]).await;
        let clicks = app.clicks().await;
        assert_eq!(clicks.len(), 3, "bot and HEAD hits are kept");
        assert_eq!(clicks.iter().filter(|c| c.is_bot).count(), 2);
        let list = client.get(&format!("/api/links?siteId={site}")).await;
        assert_eq!(list.body["links"][0]["total_clicks"], 1, "only the human click counts");
        assert_eq!(list.body["stats"]["totalClicks"], 1);
        assert_eq!(
            app.visit_link(Method::GET, "/l/ben-example/s", DESKTOP_UA, &[]).await.status.as_u16(),
            410,
            "capped at 1"
        );
    }
}

#[tokio::test]
async fn inactive_expired_capped_and_unknown_links() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Cy", "cy.example").await;
        let mut ids = Vec::new();
        for slug in ["off", "old", "cap"] {
            let link = client
                .create_link(json!({ "siteId": site, "slug": slug, "destinationUrl": "https://cy.example/" }))
                .await;
            ids.push(link["link"]["id"].as_str().unwrap().to_owned());
        }
        // Warm the cache first, so the changes below must evict it.
        app.click("/l/cy-example/off", &[]).await;
        client.put(&format!("/api/links/{}", ids[0]), json!({ "is_active": false })).await.expect(200);
        client
            .put(&format!("/api/links/{}", ids[1]), json!({ "expires_at": "2020-01-01T00:00:00.000Z" }))
            .await
            .expect(200);
        client.put(&format!("/api/links/{}", ids[2]), json!({ "max_clicks": 2 })).await.expect(200);
        for slug in ["off", "old"] {
            let gone = app.visit_link(Method::GET, &format!("/l/cy-example/{slug}"), DESKTOP_UA, &[]).await;
            assert_eq!(gone.status.as_u16(), 410, "{slug}");
            assert!(gone.headers["content-type"].to_str().unwrap().starts_with("text/html"));
            assert!(gone.text.contains("Link unavailable"));
            let policy = gone.headers["content-security-policy"].to_str().unwrap();
            assert!(policy.starts_with("default-src 'none'"), "{policy}");
            assert_eq!(gone.headers["x-content-type-options"], "nosniff");
        }
        app.click("/l/cy-example/cap", &[]).await;
        app.click("/l/cy-example/cap", &[]).await;
        assert_eq!(app.visit_link(Method::GET, "/l/cy-example/cap", DESKTOP_UA, &[]).await.status.as_u16(), 410);
        assert_eq!(app.clicks().await.len(), 3, "refused hits are not clicks");

        client.put(&format!("/api/links/{}", ids[0]), json!({ "is_active": true })).await.expect(200);
        app.click("/l/cy-example/off", &[]).await;
        // Unknown short links are a branded page for the person, not JSON.
        for path in ["/l/cy-example/missing", "/l/no-such-site/off"] {
            unknown_link_page(&app, path).await;
        }
        client.delete(&format!("/api/links/{}", ids[0])).await.expect(200);
        unknown_link_page(&app, "/l/cy-example/off").await;
    }
}

#[tokio::test]
async fn the_tracker_ties_a_click_to_its_visitor() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Dot", "dot.example").await;
        client
            .create_link(json!({ "siteId": site, "slug": "ig", "destinationUrl": "https://dot.example/", "source": "instagram", "link_type": "ad" }))
            .await;
        let location = app.click("/l/dot-example/ig", &[]).await;
        let click_key = query_pairs(&location).into_iter().find(|(k, _)| k == "lt_click").unwrap().1;
        let mut landing = pageview(site, "visitor-9", &location);
        landing["lt_click"] = json!(click_key);
        app.collect(landing.clone()).await.expect(202);
        app.collect(landing).await.expect(202);

        let click = &app.clicks().await[0];
        let visitor = app.visitor(site, "visitor-9").await;
        assert_eq!(click.visitor_id, Some(visitor.id));
        assert_eq!(click.tracker_vid.as_deref(), Some("visitor-9"));
        assert_eq!(visitor.clicks, 1, "a click counts once, however often it is reported");
        let session = &app.sessions_of(visitor.id).await[0];
        assert_eq!(session.channel, "Paid Social", "an ad link from a social source");
        assert_eq!(session.utm_source.as_deref(), Some("instagram"));
    }
}

#[tokio::test]
async fn concurrent_redirects_record_every_click_and_respect_the_cap() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Eli", "eli.example").await;
        client.create_link(json!({ "siteId": site, "slug": "busy", "destinationUrl": "https://eli.example/" })).await;
        let capped = client
            .create_link(json!({ "siteId": site, "slug": "few", "destinationUrl": "https://eli.example/" }))
            .await;
        let capped_id = capped["link"]["id"].as_str().unwrap();
        client.put(&format!("/api/links/{capped_id}"), json!({ "max_clicks": 100 })).await.expect(200);

        let statuses = fire(&app, "/l/eli-example/busy", 500, 32).await;
        assert!(statuses.iter().all(|&s| s == 302));
        let statuses = fire(&app, "/l/eli-example/few", 200, 32).await;
        assert_eq!(statuses.iter().filter(|&&s| s == 302).count(), 100);
        assert_eq!(statuses.iter().filter(|&&s| s == 410).count(), 100);

        let clicks = app.clicks().await;
        assert_eq!(clicks.iter().filter(|c| c.slug == "busy").count(), 500);
        assert_eq!(clicks.iter().filter(|c| c.slug == "few").count(), 100);
        let list = client.get(&format!("/api/links?siteId={site}")).await;
        assert_eq!(list.body["stats"]["totalClicks"], 600);
    }
}

async fn fire(app: &common::TestApp, path: &str, count: usize, concurrency: usize) -> Vec<u16> {
    use futures_util::StreamExt;
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let url = format!("{}{path}", app.base);
    futures_util::stream::iter(0..count)
        .map(|_| {
            let http = http.clone();
            let url = url.clone();
            async move {
                http.get(&url).header("user-agent", DESKTOP_UA).send().await.map(|r| r.status().as_u16()).unwrap_or(0)
            }
        })
        .buffer_unordered(concurrency)
        .collect()
        .await
}

#[tokio::test]
async fn a_graceful_shutdown_loses_no_click() {
    for mut app in apps().await {
        let (client, site) = app.user_with_site("Fay", "fay.example").await;
        client.create_link(json!({ "siteId": site, "slug": "go", "destinationUrl": "https://fay.example/" })).await;
        let statuses = fire(&app, "/l/fay-example/go", 300, 16).await;
        let redirected = statuses.iter().filter(|&&s| s == 302).count();
        app.shut_down().await;
        use sea_orm::EntityTrait;
        let stored = entity::link_click::Entity::find().all(&app.state.db).await.unwrap().len();
        assert_eq!(stored, redirected);
    }
}

#[tokio::test]
async fn links_stop_when_their_account_is_deleted() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Gus", "gus.example").await;
        client.create_link(json!({ "siteId": site, "slug": "bye", "destinationUrl": "https://gus.example/" })).await;
        app.click("/l/gus-example/bye", &[]).await;
        client.post("/api/auth/delete-user", json!({ "password": "correct horse" })).await.expect(200);
        unknown_link_page(&app, "/l/gus-example/bye").await;
        app.collect_with(pageview(site, "v", "https://gus.example/"), DESKTOP_UA, &[])
            .await
            .expect_error(404, "NOT_FOUND");
    }
}

fn click_on(link: &std::sync::Arc<entity::link::Model>, key: &str) -> WriteOp {
    WriteOp::Click(Box::new(click_command(link, key.to_owned(), chrono::Utc::now().timestamp_millis())))
}

/// A click and the landing that reports it, in one batch: the click is tied
/// to its visitor as it is stored, and the visitor is on the link's list.
#[tokio::test]
async fn a_click_and_its_landing_in_one_batch_put_the_visitor_on_the_link() {
    for app in apps().await {
        let (client, site) = app.user_with_site("One", "one.example").await;
        client.create_link(json!({ "siteId": site, "slug": "both", "destinationUrl": "https://one.example/" })).await;
        let link = app.stored_link(site).await;
        let now = chrono::Utc::now().timestamp_millis();
        let click = WriteOp::Click(Box::new(click_command(&link, "same-batch".to_owned(), now - 2_000)));
        let landing = WriteOp::Events(vec![landing_event(site, "lander", "/", "same-batch", now - 1_000)]);
        let quiet = tracking::quiet_sites::QuietSites::default();
        let written = tracking::visitor_values::WrittenValues::default();
        tracking::batch::apply(&app.state.db, &[&click, &landing], &quiet, &written).await.unwrap();
        let clicks = app.clicks().await;
        assert_eq!(clicks.len(), 1, "{}", app.backend);
        assert_eq!(clicks[0].tracker_vid.as_deref(), Some("lander"), "{}", app.backend);
        let list = client.get(&format!("/api/visitor?siteId={site}&timeRange=7d&link=both")).await.expect(200).clone();
        assert_eq!(list["total"], 1, "{}: {list}", app.backend);
        assert_eq!(list["visitors"][0]["tracker_vid"], "lander", "{}: {list}", app.backend);
    }
}

/// A click batch goes to SQLite as one call that opens and commits its own
/// transaction. One that fails part way must leave nothing behind: neither
/// its earlier rows nor a transaction still open on a pooled connection,
/// which would refuse or block every batch after it.
#[tokio::test]
async fn a_click_batch_that_fails_is_rolled_back_and_the_next_one_is_stored() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Wes", "wes.example").await;
        client.create_link(json!({ "siteId": site, "slug": "w", "destinationUrl": "https://wes.example/" })).await;
        let link = app.stored_link(site).await;
        let quiet = tracking::quiet_sites::QuietSites::default();
        let written = tracking::visitor_values::WrittenValues::default();

        let (first, duplicate) = (click_on(&link, "same-key"), click_on(&link, "same-key"));
        let failed = tracking::batch::apply(&app.state.db, &[&first, &duplicate], &quiet, &written).await;
        assert!(failed.is_err(), "{}: a repeated click key breaks the batch", app.backend);

        for round in 0..3 {
            let next = click_on(&link, &format!("next-{round}"));
            tracking::batch::apply(&app.state.db, &[&next], &quiet, &written).await.unwrap();
        }
        let mut keys: Vec<String> = app.clicks().await.into_iter().map(|click| click.click_key).collect();
        keys.sort();
        assert_eq!(keys, ["next-0", "next-1", "next-2"], "{}", app.backend);
        let list = client.get(&format!("/api/links?siteId={site}")).await;
        assert_eq!(list.body["links"][0]["total_clicks"], 3, "{}: the failed batch added no clicks", app.backend);
    }
}

/// A 404 HTML page that says the link is unknown, with the same headers as
/// the 410 pages.
async fn unknown_link_page(app: &common::TestApp, path: &str) {
    let reply = app.client().get(path).await;
    assert_eq!(reply.status.as_u16(), 404, "{path}");
    assert!(reply.headers["content-type"].to_str().unwrap().starts_with("text/html"), "{path}");
    assert!(reply.text.contains("<h1>Link not found</h1>") && reply.text.contains("Leadtrail"), "{}", reply.text);
    let policy = reply.headers["content-security-policy"].to_str().unwrap();
    assert!(policy.starts_with("default-src 'none'"), "{policy}");
    assert_eq!(reply.headers["cache-control"], "no-store");
}
