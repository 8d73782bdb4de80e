//! Explore counts a range's clicks over its whole UTC days from the daily
//! click rollup and over the hours at its edges from the clicks: every
//! answer, by link, campaign, source, country and in all, over dates in a
//! zone half an hour off UTC and over instants, equals the recount over the
//! stored clicks. Clicks go through the redirect; each round's clicks (and
//! their rollup rows, with them) are then moved back whole days, so the
//! range holds clicks on several days.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDate, TimeZone};
use chrono_tz::Tz;
use common::{
    TestApp, apps_with,
    explore_recount::answered,
    traffic::{BOT_UA, DESKTOP_UA},
};
use leadtrail::{
    config::TrustProxy,
    time::{DAY_MS, HOUR_MS, MINUTE_MS, now_ms, start_of_day},
};
use sea_orm::ConnectionTrait;
use serde_json::{Value, json};

const ZONE: &str = "Asia/Kolkata";

/// A click: which link, the country it comes from, whether a bot's.
type Click = (usize, &'static str, bool);

/// Each round: how many days back its clicks are moved, and its clicks.
fn rounds() -> Vec<(i64, Vec<Click>)> {
    vec![
        (9, vec![(0, "DE", false), (1, "DE", false)]),
        (5, vec![(0, "DE", false), (0, "FR", false), (1, "", false), (0, "DE", true)]),
        (2, vec![(1, "FR", false), (1, "FR", false), (0, "", true)]),
        (0, vec![(0, "US", false)]),
    ]
}

/// Moves the site's clicks of today (UTC), and their rollup rows, `days` back.
async fn move_back(app: &TestApp, site: i64, days: i64) {
    app.clicks().await;
    let today = start_of_day(now_ms());
    let shift = days * DAY_MS;
    let db = &app.state.db;
    db.execute_unprepared(&format!(
        "UPDATE link_clicks SET created_at = created_at - {shift} WHERE site_id = {site} AND created_at >= {today}"
    ))
    .await
    .unwrap();
    db.execute_unprepared(&format!(
        "UPDATE link_click_days SET day = day - {shift} WHERE site_id = {site} AND day >= {today}"
    ))
    .await
    .unwrap();
}

/// The human clicks of `[from, to)` by `dimension`, labelled as Explore labels them.
fn recount(
    clicks: &[entity::link_click::Model],
    dimension: Option<&str>,
    (from, to): (i64, i64),
) -> Vec<(Vec<String>, i64)> {
    let mut groups: BTreeMap<Vec<String>, i64> = BTreeMap::new();
    for click in clicks.iter().filter(|click| !click.is_bot && click.created_at >= from && click.created_at < to) {
        // Blanks as Plausible names them: `(not set)` for UTM, `""` for a place.
        let label =
            |value: Option<&str>, blank: &str| value.filter(|value| !value.is_empty()).unwrap_or(blank).to_owned();
        let key = match dimension {
            None => vec![],
            Some("visit:link") => vec![click.slug.clone()],
            Some("visit:utm_campaign") => vec![label(Some(&click.campaign), "(not set)")],
            Some("visit:utm_source") => vec![label(Some(&click.source), "(not set)")],
            Some("visit:country") => vec![label(click.country.as_deref(), "")],
            Some(other) => panic!("no recount for {other}"),
        };
        *groups.entry(key).or_default() += 1;
    }
    if dimension.is_none() && groups.is_empty() {
        groups.insert(vec![], 0);
    }
    groups.into_iter().collect()
}

fn midnight(zone: Tz, date: NaiveDate) -> i64 {
    zone.from_local_datetime(&date.and_hms_opt(0, 0, 0).unwrap()).unwrap().timestamp_millis()
}

#[tokio::test]
async fn clicks_over_whole_days_and_their_edges_equal_a_recount_of_the_clicks() {
    let zone: Tz = ZONE.parse().unwrap();
    for app in apps_with(|config| config.trust_proxy = TrustProxy::Cloudflare).await {
        let (client, site) = app.user_with_site("Clicker", "clicks.example").await;
        client.put(&format!("/api/sites/{site}"), json!({ "timezone": ZONE })).await.expect(200);
        let mut paths = Vec::new();
        // One link with a campaign and a source, one without.
        let bodies = [
            json!({ "siteId": site, "slug": "spring", "destinationUrl": "https://clicks.example/",
                    "campaign": "spring", "source": "newsletter" }),
            json!({ "siteId": site, "slug": "bio", "destinationUrl": "https://clicks.example/" }),
        ];
        for body in bodies {
            let link = client.create_link(body).await;
            paths.push(url::Url::parse(link["fullUrl"].as_str().unwrap()).unwrap().path().to_owned());
        }
        for (days_back, clicks) in rounds() {
            for (link, country, bot) in clicks {
                let headers: &[(&str, &str)] = if country.is_empty() { &[] } else { &[("cf-ipcountry", country)] };
                let agent = if bot { BOT_UA } else { DESKTOP_UA };
                app.visit_link(reqwest::Method::GET, &paths[link], agent, headers).await;
            }
            if days_back > 0 {
                move_back(&app, site, days_back).await;
            }
        }
        let clicks = app.clicks().await;
        assert_eq!(clicks.iter().filter(|click| !click.is_bot).count(), 8, "every human click is stored");

        let now = now_ms();
        let today = DateTime::from_timestamp_millis(now).unwrap().with_timezone(&zone).date_naive();
        let days = |first: i64, last: i64| {
            let (first, last) = (today - Duration::days(first), today - Duration::days(last));
            let span = (midnight(zone, first), midnight(zone, last + Duration::days(1)));
            (json!([first.to_string(), last.to_string()]), span)
        };
        let instants = |from: i64, to: i64| {
            let text = |ms: i64| DateTime::from_timestamp_millis(ms).unwrap().with_timezone(&zone).to_rfc3339();
            (json!([text(from), text(to)]), (from, to))
        };
        // Whole local days (whole UTC days inside, half days at the edges),
        // one day, and instants half an hour off the hour on both sides.
        let ranges = [
            days(13, 0),
            days(6, 1),
            days(5, 5),
            instants(now - 9 * DAY_MS - 90 * MINUTE_MS, now - 2 * DAY_MS + 30 * MINUTE_MS),
            instants(now - 5 * DAY_MS - 2 * HOUR_MS, now - 5 * DAY_MS + 2 * HOUR_MS),
        ];
        let dimensions =
            [None, Some("visit:link"), Some("visit:utm_campaign"), Some("visit:utm_source"), Some("visit:country")];
        for (date_range, span) in &ranges {
            for dimension in dimensions {
                let body = json!({ "site_id": site, "metrics": ["clicks"], "date_range": date_range,
                                   "dimensions": dimension.map_or_else(Vec::new, |d| vec![d]) });
                let reply = client.post("/api/v2/query", body.clone()).await;
                let got: Vec<(Vec<String>, i64)> = answered(reply.expect(200))
                    .into_iter()
                    .map(|(key, metrics)| (key, metrics[0].as_i64().unwrap()))
                    .filter(|(key, clicks)| *clicks > 0 || key.is_empty())
                    .collect();
                assert_eq!(got, recount(&clicks, dimension, *span), "{body}");
            }
        }
        let whole: Value = json!({ "site_id": site, "metrics": ["clicks"], "date_range": days(13, 0).0 });
        let reply = client.post("/api/v2/query", whole).await;
        assert_eq!(reply.expect(200)["results"][0]["metrics"], json!([8]), "the fortnight holds every human click");
    }
}
