//! `ACCOUNT_BECAME_HOT` (design §18): an account that reaches the site's
//! hot threshold fires each such destination once, whatever its people do
//! next and however many instances see it; an excluded or cold account
//! fires nothing.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Client, TestApp, apps, postgres_instances, traffic::pageview};
use entity::alert_delivery;
use sea_orm::EntityTrait;
use serde_json::json;

async fn arm(client: &Client, site: i64) -> String {
    hot_at_40(client, site).await;
    destination(client, site).await
}

async fn hot_at_40(client: &Client, site: i64) {
    client.put(&format!("/api/sites/{site}"), json!({ "name": "Alerting" })).await.expect(200);
    let threshold = client
        .graphql(
            "mutation($s: Int!) { updateSite(id: $s, input: { hotThreshold: 40 }) { hotThreshold } }",
            json!({ "s": site }),
        )
        .await;
    assert_eq!(threshold["data"]["updateSite"]["hotThreshold"], 40, "{threshold}");
}

async fn destination(client: &Client, site: i64) -> String {
    let created = client
        .graphql(
            "mutation($s: Int!) { createDestination(siteId: $s, input: { name: \"accounts\", url: \"https://hooks.invalid/accounts\", trigger: ACCOUNT_BECAME_HOT }) { id trigger } }",
            json!({ "s": site }),
        )
        .await;
    assert_eq!(created["data"]["createDestination"]["trigger"], "ACCOUNT_BECAME_HOT", "{created}");
    created["data"]["createDestination"]["id"].as_str().unwrap().to_owned()
}

/// Someone at `domain` visits a few pages and identifies.
async fn person(app: &TestApp, client: &Client, site: i64, vid: &str, domain: &str) {
    for page in ["/", "/pricing", "/contact"] {
        app.collect(pageview(site, vid, &format!("https://alert.example{page}"))).await.expect(202);
    }
    client
        .identify(json!({ "siteId": site, "tracker_vid": vid, "email": format!("{vid}@{domain}") }))
        .await
        .expect(200);
    app.state.writer.flush().await;
}

async fn stored_score(app: &TestApp, site: i64, vid: &str) -> i32 {
    use sea_orm::{ColumnTrait, QueryFilter};
    entity::visitor::Entity::find()
        .filter(entity::visitor::Column::SiteId.eq(site))
        .filter(entity::visitor::Column::TrackerVid.eq(vid))
        .one(&app.state.db)
        .await
        .unwrap()
        .unwrap()
        .score
}

async fn fired(app: &TestApp) -> Vec<(String, String)> {
    let rows = alert_delivery::Entity::find().all(&app.state.db).await.unwrap();
    let mut fired: Vec<(String, String)> =
        rows.into_iter().filter_map(|row| Some((row.account_key?, row.trigger))).collect();
    fired.sort();
    fired
}

#[tokio::test]
async fn a_hot_account_fires_once_and_a_cold_or_excluded_one_never() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Alert", "alert.example").await;
        arm(&client, site).await;
        // One person at cold.example: below 40. Our own company is excluded.
        person(&app, &client, site, "solo", "cold.example").await;
        person(&app, &client, site, "ours0", "ours.example").await;
        let excluded = client
            .graphql(
                "mutation($s: Int!) { updateAccount(siteId: $s, key: \"ours.example\", input: { excluded: true }) { excluded } }",
                json!({ "s": site }),
            )
            .await;
        assert_eq!(excluded["data"]["updateAccount"]["excluded"], true, "{excluded}");
        for n in 1..5 {
            person(&app, &client, site, &format!("ours{n}"), "ours.example").await;
        }
        let ours = client.get(&format!("/api/accounts?siteId={site}&excluded=true&timeRange=all")).await;
        assert!(ours.expect(200)["accounts"][0]["hot"].as_bool().unwrap(), "ours is hot: {}", ours.text);
        assert_eq!(fired(&app).await, Vec::<(String, String)>::new(), "cold and excluded fire nothing");

        // Acme grows past 40 person by person; it fires once, and more
        // people after that fire nothing more.
        for n in 0..6 {
            person(&app, &client, site, &format!("acme{n}"), "acme.example").await;
        }
        let acme = client.get(&format!("/api/accounts/acme.example?siteId={site}")).await.expect(200).clone();
        assert!(acme["hot"].as_bool().unwrap(), "{acme}");
        assert_eq!(fired(&app).await, [("acme.example".to_owned(), "account_became_hot".to_owned())]);
    }
}

#[tokio::test]
async fn two_instances_fire_an_account_once() {
    let Some(apps) = postgres_instances(2).await else {
        eprintln!("SKIPPED: the two-instances account alert test needs TEST_DATABASE_URL (PostgreSQL)");
        return;
    };
    let (client, site) = apps[0].user_with_site("Duo", "duo.example").await;
    arm(&client, site).await;
    let token = client.session.clone().unwrap();
    let people = (0..12).map(|n| {
        let app = &apps[n % 2];
        let on = app.client().with_session(token.clone());
        async move { person(app, &on, site, &format!("p{n}"), "together.example").await }
    });
    futures_util::future::join_all(people).await;
    for app in &apps {
        app.state.writer.flush().await;
    }
    assert_eq!(fired(&apps[0]).await, [("together.example".to_owned(), "account_became_hot".to_owned())]);
}

/// The writer learns that a site has nothing an account could fire, and stops
/// looking; a destination created later must be heard of, so an account that
/// was already hot fires at its next visit.
#[tokio::test]
async fn an_account_hot_before_its_destination_fires_at_its_next_visit() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Late", "late.example").await;
        hot_at_40(&client, site).await;
        for n in 0..6 {
            person(&app, &client, site, &format!("early{n}"), "early.example").await;
        }
        assert_eq!(fired(&app).await, Vec::<(String, String)>::new(), "{}: no destination yet", app.backend);
        destination(&client, site).await;
        let before = stored_score(&app, site, "early0").await;
        app.collect(pageview(site, "early0", "https://alert.example/again")).await.expect(202);
        app.state.writer.flush().await;
        // Only the account can fire then: a visitor whose score rose would
        // have the destinations read for its own triggers anyway.
        assert_eq!(stored_score(&app, site, "early0").await, before, "the visit must leave the score as it was");
        assert_eq!(
            fired(&app).await,
            [("early.example".to_owned(), "account_became_hot".to_owned())],
            "{}",
            app.backend
        );
    }
}

/// The same across instances: the one whose writer stopped looking hears of
/// the destination created on the other.
#[tokio::test]
async fn a_destination_created_on_one_instance_arms_the_other() {
    let Some(apps) = postgres_instances(2).await else {
        eprintln!("SKIPPED: the two-instances late destination test needs TEST_DATABASE_URL (PostgreSQL)");
        return;
    };
    let (client, site) = apps[0].user_with_site("Far", "far.example").await;
    hot_at_40(&client, site).await;
    let on_second = apps[1].client().with_session(client.session.clone().unwrap());
    for n in 0..6 {
        person(&apps[1], &on_second, site, &format!("far{n}"), "far.example").await;
    }
    // The signal crosses PostgreSQL's NOTIFY; once the second instance has
    // heard it (its writer's record hears first), one more visit fires.
    let heard = std::sync::Arc::new(tokio::sync::Notify::new());
    let told = heard.clone();
    apps[1].state.cluster.on_change(move |change| {
        if change == (leadtrail::cluster::Changed::Alerts { site_id: site }) {
            told.notify_one();
        }
    });
    destination(&client, site).await;
    tokio::time::timeout(std::time::Duration::from_secs(10), heard.notified()).await.expect("the signal arrives");
    let before = stored_score(&apps[1], site, "far0").await;
    apps[1].collect(pageview(site, "far0", "https://alert.example/again")).await.expect(202);
    apps[1].state.writer.flush().await;
    assert_eq!(stored_score(&apps[1], site, "far0").await, before, "the visit must leave the score as it was");
    assert_eq!(fired(&apps[1]).await, [("far.example".to_owned(), "account_became_hot".to_owned())]);
}
