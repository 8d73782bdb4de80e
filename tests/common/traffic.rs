//! Feeding traffic through the public endpoints, and reading back what was stored.
#![allow(dead_code)]

use std::sync::Arc;

use entity::{event, link, tracked_session, visitor};
use leadtrail::{
    enrich::{geo::Geo, user_agent::classify_cached},
    service::tracking::{ClickCommand, Client as TrackedClient, CollectedEvent, EventKind},
};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::{Value, json};

use super::{Client, Reply, TestApp};

pub const DESKTOP_UA: &str =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
pub const PHONE_UA: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
pub const TABLET_UA: &str = "Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
pub const BOT_UA: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/// A pageview for `site` by `vid` at `url`.
pub fn pageview(site: i64, vid: &str, url: &str) -> Value {
    json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": url })
}

/// A desktop browser's human click on `link`, as the redirect hands it to the
/// writer, for tests that drive the writer directly.
pub fn click_command(link: &Arc<link::Model>, click_key: String, created_at: i64) -> ClickCommand {
    ClickCommand {
        link: link.clone(),
        click_key,
        referrer: None,
        is_bot: false,
        counted: false,
        client: Arc::new(TrackedClient { info: classify_cached(DESKTOP_UA), geo: Geo::default(), network: None }),
        created_at,
    }
}

/// A desktop browser's human pageview of `page` that reports the click
/// `click_key`, as collect hands it to the writer.
pub fn landing_event(site_id: i64, vid: &str, page: &str, click_key: &str, timestamp: i64) -> CollectedEvent {
    CollectedEvent {
        site_id,
        tracker_vid: vid.to_owned(),
        kind: EventKind::Pageview,
        event_name: "pageview".to_owned(),
        page: page.to_owned(),
        hostname: None,
        page_title: None,
        referrer: None,
        external_referrer_host: None,
        utm: Default::default(),
        click_key: Some(click_key.to_owned()),
        props: "{}".to_owned(),
        revenue: None,
        engaged_ms: 0,
        high_value: false,
        timestamp,
        client: Arc::new(TrackedClient { info: classify_cached(DESKTOP_UA), geo: Geo::default(), network: None }),
        network: None,
    }
}

/// `event` with its `ts` set to `ms`.
pub fn at(mut event: Value, ms: i64) -> Value {
    event["ts"] = json!(ms);
    event
}

impl TestApp {
    /// POSTs to /api/collect with a user agent and extra headers.
    pub async fn collect_with(&self, body: Value, user_agent: &str, headers: &[(&str, &str)]) -> Reply {
        let http = reqwest::Client::new();
        let mut request = http
            .post(format!("{}/api/collect", self.base))
            .header("content-type", "text/plain")
            .header("user-agent", user_agent)
            .body(body.to_string());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.expect("collect");
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap_or_default();
        Reply { status, headers, body: serde_json::from_str(&text).unwrap_or(Value::Null), text }
    }

    /// Collects from a desktop browser and waits until the events are stored.
    pub async fn collect(&self, body: Value) -> Reply {
        let reply = self.collect_with(body, DESKTOP_UA, &[]).await;
        self.state.writer.flush().await;
        reply
    }

    pub async fn visitor(&self, site: i64, vid: &str) -> visitor::Model {
        visitor::Entity::find()
            .filter(visitor::Column::SiteId.eq(site))
            .filter(visitor::Column::TrackerVid.eq(vid))
            .one(&self.state.db)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("visitor {vid} stored"))
    }

    pub async fn sessions_of(&self, visitor_id: i64) -> Vec<tracked_session::Model> {
        tracked_session::Entity::find()
            .filter(tracked_session::Column::VisitorId.eq(visitor_id))
            .order_by_asc(tracked_session::Column::StartedAt)
            .all(&self.state.db)
            .await
            .unwrap()
    }

    pub async fn events_of(&self, visitor_id: i64) -> Vec<event::Model> {
        event::Entity::find()
            .filter(event::Column::VisitorId.eq(visitor_id))
            .order_by_asc(event::Column::Timestamp)
            .order_by_asc(event::Column::Id)
            .all(&self.state.db)
            .await
            .unwrap()
    }

    pub async fn event_count(&self) -> usize {
        event::Entity::find().all(&self.state.db).await.unwrap().len()
    }
}

impl Client {
    /// POST /api/identify.
    pub async fn identify(&self, body: Value) -> Reply {
        self.post("/api/identify", body).await
    }
}

impl TestApp {
    /// Requests a short link (not following the redirect) with a user agent and headers.
    pub async fn visit_link(
        &self,
        method: reqwest::Method,
        path: &str,
        user_agent: &str,
        headers: &[(&str, &str)],
    ) -> Reply {
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let mut request = http.request(method, format!("{}{path}", self.base)).header("user-agent", user_agent);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.expect("redirect request");
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap_or_default();
        Reply { status, headers, body: serde_json::from_str(&text).unwrap_or(Value::Null), text }
    }

    /// A human click on a short link; returns the redirect's Location.
    pub async fn click(&self, path: &str, headers: &[(&str, &str)]) -> String {
        let reply = self.visit_link(reqwest::Method::GET, path, DESKTOP_UA, headers).await;
        assert_eq!(reply.status.as_u16(), 302, "{path}: {}", reply.text);
        reply.headers["location"].to_str().unwrap().to_owned()
    }

    /// The site's (first) stored link, as the redirect hands it to the
    /// writer, for tests that drive the writer directly.
    pub async fn stored_link(&self, site: i64) -> Arc<link::Model> {
        let link = link::Entity::find()
            .filter(link::Column::SiteId.eq(site))
            .order_by_asc(link::Column::Id)
            .one(&self.state.db)
            .await
            .unwrap()
            .unwrap();
        Arc::new(link)
    }

    pub async fn clicks(&self) -> Vec<entity::link_click::Model> {
        use sea_orm::EntityTrait;
        self.state.writer.flush().await;
        entity::link_click::Entity::find().all(&self.state.db).await.unwrap()
    }
}

impl Client {
    /// POST /api/links; returns the whole answer body ({link, fullUrl}).
    pub async fn create_link(&self, body: Value) -> Value {
        let reply = self.post("/api/links", body).await;
        reply.expect(200).clone()
    }
}
