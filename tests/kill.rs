//! Acknowledged means committed: SIGKILL to the real binary in the middle of
//! concurrent collect, identify and redirect traffic, then a restart, and every
//! event answered 202, every identify answered 200 and every click answered
//! 302 is in the database. Nothing is drained on SIGKILL, so only a write that
//! was committed before its answer can pass.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::{
    collections::BTreeSet,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use common::{
    apps,
    process::{launch, signal, wait},
    traffic::DESKTOP_UA,
};
use leadtrail::{config::SqliteSync, db};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;

#[derive(Default)]
struct Acknowledged {
    events: BTreeSet<String>,
    identifies: BTreeSet<String>,
    clicks: BTreeSet<String>,
}

const EVENTS_PER_REQUEST: usize = 5;

#[tokio::test]
async fn sigkill_mid_traffic_loses_nothing_acknowledged() {
    for mut app in apps().await {
        let (client, site) = app.user_with_site("Kay", "kill.example").await;
        client.create_link(json!({ "siteId": site, "destinationUrl": "https://kill.example/", "slug": "go" })).await;
        let token = client.session.clone().expect("session");
        let database_url = app.state.config.database_url.clone();
        app.shut_down().await;

        let (child, base) = launch(&database_url).await;
        let acknowledged = Arc::new(Mutex::new(Acknowledged::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let mut workers = Vec::new();
        for worker in 0..9 {
            let (base, token, acknowledged, stop) = (base.clone(), token.clone(), acknowledged.clone(), stop.clone());
            workers.push(tokio::spawn(async move {
                let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    match worker % 3 {
                        0 => {
                            let vids: Vec<String> = (0..EVENTS_PER_REQUEST).map(|k| format!("c{worker}-{n}-{k}")).collect();
                            let events: Vec<_> = vids
                                .iter()
                                .map(|vid| json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": "https://kill.example/a" }))
                                .collect();
                            let sent = http
                                .post(format!("{base}/api/collect"))
                                .header("user-agent", DESKTOP_UA)
                                .body(json!({ "events": events }).to_string())
                                .send()
                                .await;
                            match sent {
                                Ok(reply) if reply.status() == 202 => acknowledged.lock().unwrap().events.extend(vids),
                                Ok(_) => {}
                                Err(_) => break,
                            }
                        }
                        1 => {
                            let vid = format!("i{worker}-{n}");
                            let sent = http
                                .post(format!("{base}/api/identify"))
                                .header("cookie", format!("session={token}"))
                                .json(&json!({ "siteId": site, "tracker_vid": vid, "email": format!("{vid}@kill.example") }))
                                .send()
                                .await;
                            match sent {
                                Ok(reply) if reply.status() == 200 => {
                                    acknowledged.lock().unwrap().identifies.insert(vid);
                                }
                                Ok(_) => {}
                                Err(_) => break,
                            }
                        }
                        _ => {
                            let sent =
                                http.get(format!("{base}/l/kill-example/go")).header("user-agent", DESKTOP_UA).send().await;
                            match sent {
                                Ok(reply) if reply.status() == 302 => {
                                    let location = reply.headers()["location"].to_str().unwrap().to_owned();
                                    let url = url::Url::parse(&location).unwrap();
                                    let key = url.query_pairs().find(|(k, _)| k == "lt_click").unwrap().1.into_owned();
                                    acknowledged.lock().unwrap().clicks.insert(key);
                                }
                                Ok(_) => {}
                                Err(_) => break,
                            }
                        }
                    }
                }
            }));
        }
        // Killed once every kind of write is flowing (at least 1.5 s in, at most
        // 60 s): a busy machine answers fewer per second, not none.
        let flowing = || {
            let seen = acknowledged.lock().unwrap();
            seen.events.len() > 50 && seen.identifies.len() > 5 && seen.clicks.len() > 50
        };
        tokio::time::sleep(Duration::from_millis(1500)).await;
        for _ in 0..600 {
            if flowing() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        signal(&child, "KILL");
        let status = wait(child).await;
        assert!(!status.success(), "the process was killed: {status}");
        stop.store(true, Ordering::Relaxed);
        for worker in workers {
            worker.await.unwrap();
        }
        let acknowledged = std::mem::take(&mut *acknowledged.lock().unwrap());
        let (events, identifies, clicks) =
            (acknowledged.events.len(), acknowledged.identifies.len(), acknowledged.clicks.len());
        eprintln!(
            "[{}] acknowledged before SIGKILL: {events} events, {identifies} identifies, {clicks} clicks",
            app.backend
        );
        assert!(events > 50 && identifies > 5 && clicks > 50, "traffic was flowing: {events}/{identifies}/{clicks}");

        // The restarted binary opens the database after the crash; then every
        // acknowledged write is looked up by its own id.
        let (restarted, _) = launch(&database_url).await;
        let db = db::connect_url(&database_url, SqliteSync::Normal).await.expect("connect");
        let stored_vids: BTreeSet<String> = entity::visitor::Entity::find()
            .filter(entity::visitor::Column::SiteId.eq(site))
            .filter(entity::visitor::Column::TotalEvents.gt(0))
            .all(&db)
            .await
            .unwrap()
            .into_iter()
            .map(|visitor| visitor.tracker_vid)
            .collect();
        let lost: Vec<_> = acknowledged.events.difference(&stored_vids).collect();
        assert!(lost.is_empty(), "[{}] {} of {events} acknowledged events lost: {lost:?}", app.backend, lost.len());

        let identified: BTreeSet<String> = entity::identity::Entity::find()
            .filter(entity::identity::Column::SiteId.eq(site))
            .all(&db)
            .await
            .unwrap()
            .into_iter()
            .map(|identity| identity.tracker_vid)
            .collect();
        let lost: Vec<_> = acknowledged.identifies.difference(&identified).collect();
        assert!(lost.is_empty(), "[{}] {} of {identifies} acknowledged identifies lost", app.backend, lost.len());

        let recorded: BTreeSet<String> = entity::link_click::Entity::find()
            .filter(entity::link_click::Column::SiteId.eq(site))
            .all(&db)
            .await
            .unwrap()
            .into_iter()
            .map(|click| click.click_key)
            .collect();
        let lost: Vec<_> = acknowledged.clicks.difference(&recorded).collect();
        assert!(lost.is_empty(), "[{}] {} of {clicks} acknowledged clicks lost", app.backend, lost.len());
        db.close().await.ok();
        signal(&restarted, "TERM");
        wait(restarted).await;
    }
}
