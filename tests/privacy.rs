//! Privacy: erasure leaves every figure as if the visitor never came and no
//! row naming it; the access export holds what was sent and streams; retention
//! deletes old visitor data with an injectable clock and keeps the rollups;
//! Do Not Track stores nothing for sites that honour it; roles and tenants.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    Client, TestApp, apps,
    traffic::{DESKTOP_UA, at, pageview},
};
use futures_util::StreamExt;
use leadtrail::{auth::Viewer, service::privacy, time::DAY_MS};
use sea_orm::{ConnectionTrait, DbBackend, EntityTrait, QueryOrder, Statement};
use serde_json::{Value, json};

const MINUTE: i64 = 60_000;

/// A's traffic (erased later) and B's, with fixed times so two sites can be
/// fed the same events.
async fn feed(app: &TestApp, client: &Client, site: i64, with_a: bool, base: i64) {
    let domain = format!("https://s{site}.example");
    if with_a {
        for (i, page) in ["/pricing", "/a", "/b"].iter().enumerate() {
            let event = at(pageview(site, "a-1", &format!("{domain}{page}")), base + i as i64 * MINUTE);
            app.collect(event).await.expect(202);
        }
        let custom = json!({ "site": site, "type": "custom_event", "tracker_vid": "a-1", "url": format!("{domain}/b"),
            "event_name": "form_submit", "props": { "form_id": "demo" }, "ts": base + 3 * MINUTE });
        app.collect(custom).await.expect(202);
        client
            .post(
                "/api/identify",
                json!({ "siteId": site, "tracker_vid": "a-1", "email": "a@example.com", "name": "Ann" }),
            )
            .await
            .expect(200);
    }
    for (i, page) in ["/pricing", "/c"].iter().enumerate() {
        let event = at(pageview(site, "b-1", &format!("{domain}{page}")), base + 10 * MINUTE + i as i64 * MINUTE);
        app.collect(event).await.expect(202);
    }
}

/// What the site shows: stats for each window, the list, the live stream and
/// the link analytics, less what differs between two sites by construction.
async fn figures(client: &Client, site: i64) -> Value {
    let mut shown = json!({});
    for range in ["24h", "7d", "30d"] {
        shown[range] = client.get(&format!("/api/stats?siteId={site}&timeRange={range}")).await.expect(200).clone();
    }
    shown["list"] = client.get(&format!("/api/visitor?siteId={site}&timeRange=all")).await.expect(200).clone();
    let mut live = client.get(&format!("/api/visitors?siteId={site}")).await.expect(200).clone();
    live.as_object_mut().unwrap().remove("timestamp");
    shown["live"] = live;
    let mut links = client.get(&format!("/api/link-analytics?siteId={site}&range=all")).await.expect(200).clone();
    for click in links["clicks"].as_array_mut().into_iter().flatten() {
        let object = click.as_object_mut().unwrap();
        object.remove("id");
        object.remove("created_at");
    }
    shown["links"] = links;
    shown
}

/// The site's daily page rollups as (day, page, pageviews, events).
async fn page_days(app: &TestApp, site: i64) -> Vec<(i64, String, i64, i64)> {
    use sea_orm::{ColumnTrait, QueryFilter};
    entity::page_day::Entity::find()
        .filter(entity::page_day::Column::SiteId.eq(site))
        .order_by_asc(entity::page_day::Column::Day)
        .order_by_asc(entity::page_day::Column::Page)
        .all(&app.state.db)
        .await
        .unwrap()
        .into_iter()
        .map(|row| (row.day, row.page.replace(&format!("{site}"), ""), row.pageviews, row.events))
        .collect()
}

/// The site's hourly page rollups as (hour, page, pageviews, events).
async fn page_hours(app: &TestApp, site: i64) -> Vec<(i64, String, i64, i64)> {
    use sea_orm::{ColumnTrait, QueryFilter};
    entity::page_hour::Entity::find()
        .filter(entity::page_hour::Column::SiteId.eq(site))
        .order_by_asc(entity::page_hour::Column::Hour)
        .order_by_asc(entity::page_hour::Column::Page)
        .all(&app.state.db)
        .await
        .unwrap()
        .into_iter()
        .map(|row| (row.hour, row.page.replace(&format!("{site}"), ""), row.pageviews, row.events))
        .collect()
}

/// Every table with a `tracker_vid` column, found in the schema so a new
/// table cannot be forgotten.
/// The visitors a desk list answers, sorted; its total must agree.
async fn listed(client: &Client, path: &str) -> Vec<String> {
    let list = client.get(path).await.expect(200).clone();
    let mut vids: Vec<String> =
        list["visitors"].as_array().unwrap().iter().map(|v| v["tracker_vid"].as_str().unwrap().to_owned()).collect();
    vids.sort();
    assert_eq!(list["total"], vids.len(), "{path}: {list}");
    vids
}

async fn tables_naming_visitors(app: &TestApp) -> Vec<String> {
    let db = &app.state.db;
    let (backend, sql) = match db.get_database_backend() {
        DbBackend::Postgres => (
            DbBackend::Postgres,
            "SELECT table_name AS name FROM information_schema.columns WHERE column_name = 'tracker_vid' AND table_schema = 'public'",
        ),
        _ => (
            DbBackend::Sqlite,
            "SELECT m.name AS name FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name = 'tracker_vid'",
        ),
    };
    let rows = db.query_all_raw(Statement::from_string(backend, sql)).await.unwrap();
    rows.iter().map(|row| row.try_get::<String>("", "name").unwrap()).collect()
}

async fn rows_naming(app: &TestApp, table: &str, tracker_vid: &str) -> i64 {
    let db = &app.state.db;
    let backend = db.get_database_backend();
    let sql = format!("SELECT COUNT(*) AS n FROM {table} WHERE tracker_vid = '{tracker_vid}'");
    let row = db.query_one_raw(Statement::from_string(backend, sql)).await.unwrap().unwrap();
    row.try_get::<i64>("", "n").unwrap()
}

#[tokio::test]
async fn no_table_keeps_a_sign_in_address() {
    for app in apps().await {
        let (client, _site) = app.user_with_site("Ida", "ida.example").await;
        let reply = client.get("/api/auth/get-session").await;
        let session = reply.expect(200);
        assert!(session["session"]["ipAddress"].is_null(), "{session}");
        let db = &app.state.db;
        let sql = "SELECT COUNT(*) AS n FROM auth_sessions WHERE ip IS NOT NULL";
        let row = db.query_one_raw(Statement::from_string(db.get_database_backend(), sql)).await.unwrap().unwrap();
        assert_eq!(row.try_get::<i64>("", "n").unwrap(), 0);
    }
}

#[tokio::test]
async fn erasure_leaves_figures_as_if_the_visitor_never_came() {
    for app in apps().await {
        let (client, both) = app.user_with_site("Eve", "both.example").await;
        let alone = client.post("/api/sites", json!({ "domain": "alone.example" })).await.expect(200)["site"]["siteId"]
            .as_i64()
            .unwrap();
        let base = chrono::Utc::now().timestamp_millis() - 3 * 60 * MINUTE;
        // A lands on `both` through a tracking link; on `alone` the same click
        // never lands, so it is anonymous there from the start.
        for site in [both, alone] {
            let created = client
                .create_link(json!({ "siteId": site, "destinationUrl": "https://same.example/pricing", "slug": "go" }))
                .await;
            let path = created["fullUrl"].as_str().unwrap().split("/l/").nth(1).unwrap().to_owned();
            let location = app.click(&format!("/l/{path}"), &[]).await;
            if site == both {
                let url = url::Url::parse(&location).unwrap();
                let key = url.query_pairs().find(|(k, _)| k == "lt_click").unwrap().1.into_owned();
                let landing = json!({ "site": site, "type": "pageview", "tracker_vid": "a-1",
                    "url": format!("https://s{site}.example/pricing?lt_click={key}"), "ts": base - MINUTE });
                app.collect(landing).await.expect(202);
            }
        }
        feed(&app, &client, both, true, base).await;
        feed(&app, &client, alone, false, base).await;
        // A's landing pageview above counts as one more /pricing view on `both`.
        let before = figures(&client, both).await;
        assert_ne!(before["24h"], figures(&client, alone).await["24h"], "A's traffic shows before the erasure");

        let erased = client.delete(&format!("/api/visitor/a-1?siteId={both}")).await;
        assert_eq!(
            erased.expect(200),
            &json!({ "success": true, "erased": { "events": 5, "sessions": 1, "identities": 1, "clicks": 1 } })
        );
        assert_eq!(figures(&client, both).await, figures(&client, alone).await, "every figure as if A never came");
        assert_eq!(page_hours(&app, both).await, page_hours(&app, alone).await, "the rollups too");
        assert_eq!(page_days(&app, both).await, page_days(&app, alone).await, "and their days");

        let tables = tables_naming_visitors(&app).await;
        assert!(tables.len() >= 5, "the schema walk finds the visitor tables: {tables:?}");
        for table in &tables {
            assert_eq!(rows_naming(&app, table, "a-1").await, 0, "{table} still names the erased visitor");
        }
        client.get(&format!("/api/visitor/a-1?siteId={both}")).await.expect_error(404, "NOT_FOUND");
        client.delete(&format!("/api/visitor/a-1?siteId={both}")).await.expect_error(404, "NOT_FOUND");
        // B is untouched.
        client.get(&format!("/api/visitor/b-1?siteId={both}")).await.expect(200);
    }
}

#[tokio::test]
async fn erasure_and_export_need_an_admin_of_the_site() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Own", "roles-privacy.example").await;
        app.collect(pageview(site, "p-1", "https://roles-privacy.example/")).await.expect(202);
        let org =
            owner.graphql("{ orgs { id } }", json!({})).await["data"]["orgs"][0]["id"].as_str().unwrap().to_owned();
        for role in ["viewer", "member"] {
            let (client, email) = app.user(role).await;
            let added = common::invite_and_accept(&owner, &client, &org, &email, role).await;
            assert_eq!(added["data"]["acceptInvitation"]["role"], role, "{added}");
            client.delete(&format!("/api/visitor/p-1?siteId={site}")).await.expect_error(403, "FORBIDDEN");
            client.get(&format!("/api/visitor/p-1/export?siteId={site}")).await.expect_error(403, "FORBIDDEN");
        }
        let (stranger, _) = app.user("Stranger").await;
        stranger.delete(&format!("/api/visitor/p-1?siteId={site}")).await.expect_error(404, "NOT_FOUND");
        stranger.get(&format!("/api/visitor/p-1/export?siteId={site}")).await.expect_error(404, "NOT_FOUND");
        let anonymous = app.client();
        anonymous.delete(&format!("/api/visitor/p-1?siteId={site}")).await.expect_error(401, "UNAUTHORIZED");
        anonymous.get(&format!("/api/visitor/p-1/export?siteId={site}")).await.expect_error(401, "UNAUTHORIZED");
        owner.delete("/api/visitor/p-1").await.expect_error(400, "VALIDATION_ERROR");
        owner.get(&format!("/api/visitor/p-1/export?siteId={site}")).await.expect(200);
        owner.get(&format!("/api/visitor/p-1?siteId={site}")).await.expect(200);
    }
}

#[tokio::test]
async fn the_export_holds_every_stored_fact_as_a_download() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Exa", "export.example").await;
        let base = chrono::Utc::now().timestamp_millis() - 60 * MINUTE;
        feed(&app, &client, site, true, base).await;
        let reply = client.get(&format!("/api/visitor/a-1/export?siteId={site}")).await;
        let document = reply.expect(200).clone();
        let disposition = reply.headers["content-disposition"].to_str().unwrap();
        assert!(disposition.starts_with("attachment") && disposition.contains("visitor-a-1.json"), "{disposition}");
        assert_eq!(document["visitor"]["tracker_vid"], "a-1");
        assert_eq!(document["visitor"]["email"], "a@example.com");
        let pages: Vec<&str> =
            document["events"].as_array().unwrap().iter().map(|e| e["page"].as_str().unwrap()).collect();
        assert_eq!(pages, ["/pricing", "/a", "/b", "/b"]);
        assert_eq!(document["events"][3]["event_name"], "form_submit");
        assert_eq!(document["sessions"].as_array().unwrap().len(), 1);
        assert_eq!(document["identities"][0]["name"], "Ann");
        assert_eq!(document["clicks"], json!([]));
        assert!(!reply.text.contains("\"b-1\""), "another visitor's data is not exported");
    }
}

#[tokio::test]
async fn the_export_streams_a_page_of_rows_at_a_time() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Big", "big.example").await;
        let base = chrono::Utc::now().timestamp_millis() - 2 * DAY_MS;
        const EVENTS: i64 = 3_500;
        for batch in 0..EVENTS / 100 {
            let events: Vec<Value> = (0..100)
                .map(|i| {
                    at(pageview(site, "big-1", &format!("https://big.example/p{i}")), base + (batch * 100 + i) * 1000)
                })
                .collect();
            app.collect(json!({ "events": events })).await.expect(202);
        }
        let profile = client.get("/api/profile").await;
        let id = &profile.expect(200)["profile"]["id"];
        let user_id = id.as_i64().or_else(|| id.as_str().and_then(|id| id.parse().ok())).unwrap();
        let viewer = Viewer::User { user_id, session_id: 0, session_created_at: 0 };
        let stream = privacy::export_visitor(app.state.db.clone(), &viewer, site, "big-1").await.unwrap();
        let chunks: Vec<_> = stream.map(|chunk| chunk.unwrap()).collect().await;
        let largest = chunks.iter().map(|chunk| chunk.len()).max().unwrap();
        let total: usize = chunks.iter().map(|chunk| chunk.len()).sum();
        assert!(chunks.len() >= 4, "the events come in pages, not at once: {} chunks", chunks.len());
        assert!(largest * 3 < total, "no chunk holds most of the document: {largest} of {total} bytes");
        let whole: Vec<u8> = chunks.concat();
        let document: Value = serde_json::from_slice(&whole).unwrap();
        assert_eq!(document["events"].as_array().unwrap().len() as i64, EVENTS);
    }
}

#[tokio::test]
async fn retention_deletes_old_visitor_data_and_keeps_the_rollups() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Ret", "retention.example").await;
        let now = chrono::Utc::now().timestamp_millis();
        app.collect(at(pageview(site, "old-1", "https://retention.example/old"), now - 40 * DAY_MS)).await.expect(202);
        app.collect(at(pageview(site, "fresh-1", "https://retention.example/new"), now - MINUTE)).await.expect(202);
        // Back after forty days: the old visit's page leaves the desk's `visited` with its pageview.
        app.collect(at(pageview(site, "back-1", "https://retention.example/archive"), now - 40 * DAY_MS))
            .await
            .expect(202);
        app.collect(at(pageview(site, "back-1", "https://retention.example/new"), now - MINUTE)).await.expect(202);
        let visited = |page: &'static str| {
            let client = client.clone();
            async move { listed(&client, &format!("/api/visitor?siteId={site}&timeRange=all&visited={page}")).await }
        };
        assert_eq!(visited("/archive").await, ["back-1"]);
        client
            .post("/api/identify", json!({ "siteId": site, "tracker_vid": "fresh-1", "email": "f@example.com" }))
            .await
            .expect(200);
        client
            .put(&format!("/api/sites/{site}"), json!({ "retentionDays": 0 }))
            .await
            .expect_error(400, "VALIDATION_ERROR");
        client.put(&format!("/api/sites/{site}"), json!({ "retentionDays": 30 })).await.expect(200);
        let shown =
            client.graphql(&format!("{{ site(id: {site}) {{ retentionDays respectDoNotTrack }} }}"), json!({})).await;
        assert_eq!(shown["data"]["site"], json!({ "retentionDays": 30, "respectDoNotTrack": false }));
        let rollups = page_hours(&app, site).await;

        let purged = privacy::retention::purge(&app.state.db, now).await.unwrap();
        assert_eq!((purged.events, purged.sessions, purged.visitors), (2, 2, 1), "{purged:?}");
        assert_eq!(visited("/archive").await, Vec::<String>::new());
        assert_eq!(visited("/new").await, ["back-1", "fresh-1"]);
        client.get(&format!("/api/visitor/old-1?siteId={site}")).await.expect_error(404, "NOT_FOUND");
        client.get(&format!("/api/visitor/fresh-1?siteId={site}")).await.expect(200);
        assert_eq!(page_hours(&app, site).await, rollups, "the hourly rollups stay");
        // Visitor counts follow the rows the purge kept: the list's total is what it lists.
        let list = client.get(&format!("/api/visitor?siteId={site}&timeRange=all")).await;
        assert_eq!(list.expect(200)["total"], 2, "{}", list.text);
        // So do the totals the last-touch and country rollups count.
        for (filter, total) in [("channel=Direct", 2), ("status=identified", 1), ("channel=Direct&status=anonymous", 1)]
        {
            let list = client.get(&format!("/api/visitor?siteId={site}&timeRange=all&{filter}")).await;
            assert_eq!(list.expect(200)["total"], total, "{filter}: {}", list.text);
        }

        // The clock is the caller's: a month later the fresh visitor is old too.
        let later = privacy::retention::purge(&app.state.db, now + 31 * DAY_MS).await.unwrap();
        assert_eq!((later.events, later.identities, later.visitors), (2, 1, 2), "{later:?}");
        assert_eq!(visited("/new").await, Vec::<String>::new());
        client.get(&format!("/api/visitor/fresh-1?siteId={site}")).await.expect_error(404, "NOT_FOUND");
        for filter in ["channel=Direct", "status=identified", "country=DE"] {
            let list = client.get(&format!("/api/visitor?siteId={site}&timeRange=all&{filter}")).await;
            assert_eq!(list.expect(200)["total"], 0, "{filter}: {}", list.text);
        }
        // Without a retention nothing is deleted.
        client.put(&format!("/api/sites/{site}"), json!({ "retentionDays": null })).await.expect(200);
        app.collect(at(pageview(site, "kept-1", "https://retention.example/"), now - 100 * DAY_MS)).await.expect(202);
        let none = privacy::retention::purge(&app.state.db, now).await.unwrap();
        assert_eq!(none, privacy::retention::Purged::default());
    }
}

#[tokio::test]
async fn a_purge_beside_a_busy_writer_finishes_and_keeps_whoever_came_back() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Busy", "busy.example").await;
        let now = chrono::Utc::now().timestamp_millis();
        const OLD: usize = 600;
        let send = |vid: usize, ts: i64| {
            let app = &app;
            async move {
                let event = at(pageview(site, &format!("old-{vid}"), "https://busy.example/"), ts);
                app.collect_with(event, DESKTOP_UA, &[]).await.expect(202);
            }
        };
        futures_util::stream::iter(0..OLD).for_each_concurrent(20, |vid| send(vid, now - 40 * DAY_MS)).await;
        app.state.writer.flush().await;
        client.put(&format!("/api/sites/{site}"), json!({ "retentionDays": 30 })).await.expect(200);
        // Every other old visitor comes back while the purge deletes them in
        // batches: on PostgreSQL the writer and the purge lock the same
        // visitor rows, each in its own order, and one of them can be chosen
        // as a deadlock's victim. The writer retries its batch; so must the
        // purge, or the hour's purge ends there.
        let returning = futures_util::stream::iter((0..OLD).step_by(2)).for_each_concurrent(20, |vid| send(vid, now));
        let (purged, ()) = tokio::join!(privacy::retention::purge(&app.state.db, now), returning);
        let purged = purged.unwrap_or_else(|err| panic!("{}: the purge failed: {err:?}", app.backend));
        assert!(purged.visitors >= (OLD / 2) as u64, "{purged:?}");
        app.state.writer.flush().await;
        // Whoever came back is there once, whether the purge took them before
        // or after; whoever did not is gone.
        let expected: Vec<String> = {
            let mut vids: Vec<String> = (0..OLD).step_by(2).map(|vid| format!("old-{vid}")).collect();
            vids.sort();
            vids
        };
        let kept = listed(&client, &format!("/api/visitor?siteId={site}&timeRange=all&limit=500")).await;
        assert_eq!(kept, expected, "{}", app.backend);
        let stats = client.get(&format!("/api/stats?siteId={site}&timeRange=24h")).await.expect(200).clone();
        assert_eq!(stats["overview"]["unique_visitors"], OLD / 2, "{}: {stats}", app.backend);
        assert_eq!(stats["overview"]["pageviews"], OLD / 2, "{}: {stats}", app.backend);
        let again = privacy::retention::purge(&app.state.db, now).await.unwrap();
        assert_eq!(again.visitors, 0, "{}: nothing old is left: {again:?}", app.backend);
    }
}

#[tokio::test]
async fn do_not_track_stores_nothing_for_sites_that_honour_it() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Dnt", "dnt.example").await;
        // Off by default: the headers change nothing.
        let reply = app.collect_with(pageview(site, "d-1", "https://dnt.example/"), DESKTOP_UA, &[("dnt", "1")]).await;
        assert_eq!(reply.expect(202), &json!({ "accepted": 1 }));

        client.put(&format!("/api/sites/{site}"), json!({ "respectDoNotTrack": true })).await.expect(200);
        for header in [("dnt", "1"), ("sec-gpc", "1")] {
            let reply = app.collect_with(pageview(site, "d-2", "https://dnt.example/"), DESKTOP_UA, &[header]).await;
            assert_eq!(reply.expect(202), &json!({ "accepted": 0 }), "{header:?}");
        }
        let reply = app.collect_with(pageview(site, "d-3", "https://dnt.example/"), DESKTOP_UA, &[("dnt", "0")]).await;
        assert_eq!(reply.expect(202), &json!({ "accepted": 1 }));
        client.get(&format!("/api/visitor/d-2?siteId={site}")).await.expect_error(404, "NOT_FOUND");
        let stats = client.get(&format!("/api/stats?siteId={site}&timeRange=24h")).await;
        assert_eq!(stats.expect(200)["overview"]["unique_visitors"], 2);
    }
}

/// A visitor clicked a link long ago and comes back now: once retention has
/// taken the click, the desk's `link` filter no longer finds them, while a
/// visitor whose click is recent stays.
#[tokio::test]
async fn retention_takes_a_visitor_off_a_link_with_their_last_click() {
    use leadtrail::service::tracking::{self, WriteOp, quiet_sites::QuietSites};
    for app in apps().await {
        let (client, site) = app.user_with_site("Rel", "relink.example").await;
        client
            .create_link(json!({ "siteId": site, "slug": "old-ad", "destinationUrl": "https://relink.example/" }))
            .await;
        let link = app.stored_link(site).await;
        let now = chrono::Utc::now().timestamp_millis();
        for (vid, clicked) in [("old-clicker", now - 40 * DAY_MS), ("new-clicker", now - 2 * MINUTE)] {
            let key = format!("{vid}-click");
            let click = WriteOp::Click(Box::new(common::traffic::click_command(&link, key.clone(), clicked)));
            tracking::batch::apply(&app.state.db, &[&click], &QuietSites::default(), &Default::default())
                .await
                .unwrap();
            let landing = format!("https://relink.example/?lt_click={key}");
            app.collect(at(pageview(site, vid, &landing), clicked + 1_000)).await.expect(202);
            app.collect(at(pageview(site, vid, "https://relink.example/again"), now - MINUTE)).await.expect(202);
        }
        let clickers = || {
            let client = client.clone();
            async move { listed(&client, &format!("/api/visitor?siteId={site}&timeRange=all&link=old-ad")).await }
        };
        assert_eq!(clickers().await, ["new-clicker", "old-clicker"], "{}", app.backend);
        client.put(&format!("/api/sites/{site}"), json!({ "retentionDays": 30 })).await.expect(200);
        let purged = privacy::retention::purge(&app.state.db, now).await.unwrap();
        assert_eq!(purged.clicks, 1, "{purged:?}");
        assert_eq!(clickers().await, ["new-clicker"], "{}", app.backend);
    }
}
