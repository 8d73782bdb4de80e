//! Digests through a real SMTP server: chosen per site on the account page,
//! queued at 8:00 in the site's time zone with the explorer's figures, once
//! per period however many instances look, and ended with one click.

// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use chrono::{Datelike, Days, Weekday};
use common::{
    TestApp, apps_with, gql_error_code, postgres_instances_with,
    smtp::{SmtpServer, smtp_missing},
    traffic::{at, pageview},
    web::{expect_page, post_form},
};
use leadtrail::service::email::digest::{
    self,
    schedule::{self, Frequency},
};
use serde_json::{Value, json};

const ZONE: chrono_tz::Tz = chrono_tz::Tz::Asia__Kolkata;

/// Moves the app's clock to 8:00 tomorrow in the site's zone: today's
/// digest is due, and today's period holds the traffic the test sends now.
fn to_tomorrow_eight(app: &TestApp) -> schedule::Period {
    let now = app.state.delivery.clock.now();
    let today = chrono::DateTime::from_timestamp_millis(now).unwrap().with_timezone(&ZONE).date_naive();
    let tomorrow = today.checked_add_days(Days::new(1)).unwrap();
    let eight = schedule::send_at(ZONE, tomorrow);
    app.state.delivery.clock.advance(eight - now + 1_000);
    let period = schedule::due(Frequency::Daily, ZONE, app.state.delivery.clock.now()).unwrap();
    assert_eq!(period.start, today);
    period
}

/// Before 8:00 in the site's zone the day before yesterday's digest is the
/// latest one due, not yesterday's: moves the app's clock to 8:00 today, so
/// the test means the same whatever hour it runs.
fn past_eight_today(app: &TestApp) {
    let now = app.state.delivery.clock.now();
    let today = chrono::DateTime::from_timestamp_millis(now).unwrap().with_timezone(&ZONE).date_naive();
    let eight = schedule::send_at(ZONE, today);
    if now < eight {
        app.state.delivery.clock.advance(eight - now + 1_000);
    }
}

/// `POST /api/v2/query` for the site.
async fn explore(client: &common::Client, site: i64, mut body: Value) -> Value {
    body["site_id"] = json!(site.to_string());
    client.post("/api/v2/query", body).await.expect(200).clone()
}

/// Feeds today's traffic: two visitors from a newsletter campaign, one from
/// a search engine, and one identified as a hot lead; and one visitor
/// yesterday, for the comparison.
async fn feed(app: &TestApp, client: &common::Client, site: i64) {
    let yesterday = app.state.delivery.clock.now() - 86_400_000;
    for (vid, url, referrer) in [
        ("n1", "https://shop.example/?utm_source=newsletter&utm_campaign=winter", None),
        ("n2", "https://shop.example/pricing?utm_source=newsletter&utm_campaign=winter", None),
        ("s1", "https://shop.example/docs", Some("https://www.google.com/")),
    ] {
        let mut event = pageview(site, vid, url);
        if let Some(referrer) = referrer {
            event["referrer"] = json!(referrer);
        }
        app.collect(event).await.expect(202);
    }
    app.collect(pageview(site, "n1", "https://shop.example/features")).await.expect(202);
    app.collect(at(pageview(site, "old", "https://shop.example/"), yesterday)).await.expect(202);
    client
        .identify(json!({ "siteId": site, "tracker_vid": "n1", "email": "lead@acme.example", "name": "<i>Lea</i> Lead",
            "company": "Acme" }))
        .await
        .expect(200);
    app.state.writer.flush().await;
}

#[tokio::test]
async fn a_daily_digest_goes_out_at_eight_local_with_the_explorers_figures() {
    if smtp_missing() {
        return;
    }
    let smtp = SmtpServer::start(0);
    for app in apps_with(|config| smtp.configure(config)).await {
        let (client, site) = app.user_with_site("Dana", "shop.example").await;
        let email = client.get("/api/auth/get-session").await.body["user"]["email"].as_str().unwrap().to_owned();
        client
            .put(&format!("/api/sites/{site}"), json!({ "timezone": "Asia/Kolkata", "name": "Shop <b>&</b> Co" }))
            .await
            .expect(200);
        let threshold = client
            .graphql(
                "mutation($s: Int!) { updateSite(id: $s, input: { hotThreshold: 1 }) { hotThreshold } }",
                json!({ "s": site }),
            )
            .await;
        assert_eq!(threshold["data"]["updateSite"]["hotThreshold"], 1, "{threshold}");

        // Chosen on the account page.
        let page = expect_page(&client.get("/settings/account").await, 200);
        assert!(
            page.contains("Email digests") && page.contains(&format!("name=\"digest_site\" value=\"{site}\"")),
            "{page}"
        );
        let saved = post_form(
            &client,
            "/settings/account",
            &[("action", "digest"), ("digest_site", &site.to_string()), ("frequency", "daily")],
            &[],
        )
        .await;
        assert_eq!(saved.status.as_u16(), 303, "{}", saved.text);
        let bad = post_form(
            &client,
            "/settings/account",
            &[("action", "digest"), ("digest_site", &site.to_string()), ("frequency", "hourly")],
            &[],
        )
        .await;
        assert!(expect_page(&bad, 400).contains("must be none, daily or weekly"), "{}", bad.text);
        let choices = client.graphql("{ digests { siteId frequency } }", json!({})).await;
        assert_eq!(choices["data"]["digests"], json!([{ "siteId": site, "frequency": "daily" }]));

        past_eight_today(&app);
        feed(&app, &client, site).await;
        // Just chosen: the latest due digest (yesterday's) goes at once; today's waits for 8:00 tomorrow.
        let yesterday = schedule::due(Frequency::Daily, ZONE, app.state.delivery.clock.now()).unwrap();
        assert_eq!(digest::queue_due(&app.state.db, &app.state.delivery).await.unwrap(), 1);
        assert_eq!(digest::queue_due(&app.state.db, &app.state.delivery).await.unwrap(), 0, "once per period");
        let first =
            smtp.wait_for_message(&email, &format!("Daily digest of Shop <b>&</b> Co: {}", yesterday.start)).await;
        assert!(first.text().contains("Visitors: 1"), "{}", first.text());
        let period = to_tomorrow_eight(&app);
        assert_eq!(digest::queue_due(&app.state.db, &app.state.delivery).await.unwrap(), 1);
        assert_eq!(digest::queue_due(&app.state.db, &app.state.delivery).await.unwrap(), 0, "once per period");
        let message =
            smtp.wait_for_message(&email, &format!("Daily digest of Shop <b>&</b> Co: {}", period.start)).await;

        // The explorer's answers for the same days.
        let day = json!([period.start.to_string(), period.last_day().to_string()]);
        let before = json!([period.previous(ZONE).start.to_string(), period.previous(ZONE).last_day().to_string()]);
        let totals = explore(&client, site, json!({ "metrics": ["visitors", "pageviews"], "date_range": day })).await;
        let earlier =
            explore(&client, site, json!({ "metrics": ["visitors", "pageviews"], "date_range": before })).await;
        let (visitors, pageviews) = (&totals["results"][0]["metrics"][0], &totals["results"][0]["metrics"][1]);
        assert_eq!((visitors, pageviews), (&json!(3), &json!(4)), "{totals}");
        let text = message.text();
        assert!(
            text.contains(&format!("Visitors: {visitors} (+200%, was {})", earlier["results"][0]["metrics"][0])),
            "{text}"
        );
        assert!(
            text.contains(&format!("Pageviews: {pageviews} (+300%, was {})", earlier["results"][0]["metrics"][1])),
            "{text}"
        );
        let sources = explore(
            &client,
            site,
            json!({ "metrics": ["visitors"], "dimensions": ["visit:source"], "date_range": day,
            "order_by": [["visitors", "desc"]] }),
        )
        .await;
        for row in sources["results"].as_array().unwrap() {
            let count = row["metrics"][0].as_u64().unwrap();
            let visitors = if count == 1 { "1 visitor".to_owned() } else { format!("{count} visitors") };
            let line = format!("- {}: {visitors}", row["dimensions"][0].as_str().unwrap());
            assert!(text.contains(&line), "{line} in {text}");
        }
        assert!(text.contains("- winter: 2 visitors"), "{text}");
        assert!(text.contains("<i>Lea</i> Lead (Acme"), "newly identified and hot: {text}");
        assert!(text.contains("Acme (score ") && text.contains(", 1 person)"), "a hot account: {text}");
        assert!(message.subject().starts_with("Daily digest of Shop <b>&</b> Co: "), "{}", message.subject());
        let html = message.html();
        assert!(!html.contains("<i>Lea") && !html.contains("<b>&"), "markup is escaped: {html}");

        // RFC 8058 headers, and the links work over HTTP.
        let unsubscribe = message.header("List-Unsubscribe").unwrap_or_default();
        assert!(unsubscribe.starts_with(&format!("<{}/unsubscribe?token=", app.base)), "{unsubscribe}");
        assert_eq!(message.header("List-Unsubscribe-Post").as_deref(), Some("List-Unsubscribe=One-Click"));
        let explore_link = message.link("range=custom");
        let explorer = expect_page(&client.get(explore_link.trim_start_matches(&app.base)).await, 200);
        assert!(explorer.contains(&period.start.to_string()), "the explorer opens on the digest's day");
        let lead = message.link("/visitor/n1");
        expect_page(&client.get(lead.trim_start_matches(&app.base)).await, 200);
        let link = unsubscribe.trim_start_matches('<').trim_end_matches('>').to_owned();
        let path = link.trim_start_matches(&app.base).to_owned();
        let confirm = expect_page(&app.client().get(&path).await, 200);
        assert!(confirm.contains("Unsubscribe"), "{confirm}");
        let digests = client.graphql("{ digests { frequency } }", json!({})).await;
        assert_eq!(digests["data"]["digests"][0]["frequency"], "daily", "a GET does not unsubscribe");
        // One click, as a mail client sends it: no cookie, the token in the address.
        let clicked = reqwest::Client::new()
            .post(&link)
            .header("content-type", "application/x-www-form-urlencoded")
            .body("List-Unsubscribe=One-Click")
            .send()
            .await
            .unwrap();
        assert_eq!(clicked.status().as_u16(), 200);
        let digests = client.graphql("{ digests { frequency } }", json!({})).await;
        assert_eq!(digests["data"]["digests"][0]["frequency"], "none");
        let again = reqwest::Client::new().post(&link).body("List-Unsubscribe=One-Click").send().await.unwrap();
        assert_eq!(again.status().as_u16(), 400);

        // Someone else's site is not found; no session is 401.
        let (stranger, _) = app.user("Stranger").await;
        let refused = stranger
            .graphql(
                "mutation($s: Int!) { setDigest(siteId: $s, frequency: \"daily\") { frequency } }",
                json!({ "s": site }),
            )
            .await;
        assert_eq!(gql_error_code(&refused), "NOT_FOUND");
        let anonymous = app.client().graphql("{ digests { frequency } }", json!({})).await;
        assert_eq!(gql_error_code(&anonymous), "UNAUTHORIZED");
    }
}

/// Every instance looks for due digests at once, three times; answers how
/// many these calls queued.
async fn queue_three_rounds(instances: &[TestApp]) -> usize {
    let mut queued = 0;
    for _ in 0..3 {
        let rounds = instances.iter().map(|instance| digest::queue_due(&instance.state.db, &instance.state.delivery));
        queued += futures_util::future::join_all(rounds).await.into_iter().map(Result::unwrap).sum::<usize>();
    }
    queued
}

/// The digests in the outbox to `recipient`, sent or not.
async fn digests_in_outbox(app: &TestApp, recipient: &str) -> usize {
    let rows = leadtrail::service::email::outbox::latest_to(&app.state.db, recipient, 20).await.unwrap();
    rows.iter().filter(|row| row.dedupe_key.as_deref().is_some_and(|key| key.starts_with("digest:"))).count()
}

#[tokio::test]
async fn two_instances_send_one_digest_per_member_and_period() {
    if smtp_missing() {
        return;
    }
    let smtp = SmtpServer::start(0);
    let Some(instances) = postgres_instances_with(2, |config| smtp.configure(config)).await else {
        eprintln!("SKIPPED: needs TEST_DATABASE_URL");
        return;
    };
    let (client, site) = instances[0].user_with_site("Pia", "pair.example").await;
    client.put(&format!("/api/sites/{site}"), json!({ "timezone": "Asia/Kolkata" })).await.expect(200);
    client
        .graphql(
            "mutation($s: Int!) { setDigest(siteId: $s, frequency: \"weekly\") { frequency } }",
            json!({ "s": site }),
        )
        .await;
    let email = client.get("/api/auth/get-session").await.body["user"]["email"].as_str().unwrap().to_owned();
    // Next Monday 8:00 local on both instances' clocks.
    let now = instances[0].state.delivery.clock.now();
    let today = chrono::DateTime::from_timestamp_millis(now).unwrap().with_timezone(&ZONE).date_naive();
    let monday = (1..=7)
        .map(|n| today.checked_add_days(Days::new(n)).unwrap())
        .find(|day| day.weekday() == Weekday::Mon)
        .unwrap();
    let target = schedule::send_at(ZONE, monday) + 1_000;
    // Both instances look, three times, for last week's digest and then,
    // on Monday, for this week's: each is queued once, and the outbox holds
    // it once. (Each server's own schedule first looks a minute after it
    // starts, so these calls are not raced for it.)
    assert_eq!(queue_three_rounds(&instances).await, 1);
    assert_eq!(digests_in_outbox(&instances[0], &email).await, 1);
    // Last week's digest is delivered before the clocks jump to Monday: a
    // jump of days while it is being sent outlives its claim, and the other
    // instance would rightly take it over and send it again.
    let last_week = schedule::due(Frequency::Weekly, ZONE, now).unwrap();
    smtp.wait_for_message(&email, &format!("{} to {}", last_week.start, last_week.last_day())).await;
    for instance in &instances {
        instance.state.delivery.clock.advance(target - instance.state.delivery.clock.now());
    }
    assert_eq!(queue_three_rounds(&instances).await, 1);
    assert_eq!(digests_in_outbox(&instances[0], &email).await, 2);
    let week = schedule::due(Frequency::Weekly, ZONE, target).unwrap();
    smtp.wait_for_message(&email, &format!("{} to {}", week.start, week.last_day())).await;
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let digests: Vec<String> = smtp
        .received()
        .into_iter()
        .filter(|m| m.rcpt.contains(&email) && m.subject().starts_with("Weekly digest"))
        .map(|m| m.subject())
        .collect();
    let sent = digests.len();
    let mut subjects = digests;
    subjects.sort();
    subjects.dedup();
    assert_eq!((sent, subjects.len()), (2, 2), "one digest per period: {subjects:?}");
}
