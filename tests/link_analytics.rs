//! GET /api/link-analytics: clicks through the real redirect, grouped exactly.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use common::{
    apps_with,
    traffic::{BOT_UA, click_command},
};
use entity::{link, link_click};
use leadtrail::{
    config::TrustProxy,
    seed::{self, SeedOptions},
    time::{DAY_MS, date, now_ms},
};
use reqwest::Method;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

/// Cloudflare's geo headers for one place.
type Place<'a> = [(&'a str, &'a str); 4];

fn place<'a>(country: &'a str, city: &'a str, lat: &'a str, lon: &'a str) -> Place<'a> {
    [("cf-ipcountry", country), ("cf-ipcity", city), ("cf-iplatitude", lat), ("cf-iplongitude", lon)]
}

#[tokio::test]
async fn analytics_group_human_clicks_exactly() {
    for app in apps_with(|config| config.trust_proxy = TrustProxy::Cloudflare).await {
        let (client, site) = app.user_with_site("Ana", "ana.example").await;
        for (slug, campaign, source) in
            [("a", "spring", "newsletter"), ("b", "spring", "twitter"), ("c", "fall", "twitter")]
        {
            client
                .create_link(json!({ "siteId": site, "slug": slug, "destinationUrl": "https://ana.example/", "campaign": campaign, "source": source }))
                .await;
        }
        let berlin = place("DE", "Berlin", "52.52", "13.40");
        let munich = place("DE", "Munich", "48.14", "11.58");
        let paris = place("FR", "Paris", "48.86", "2.35");
        let clicks: [(&str, &Place, usize); 5] =
            [("a", &berlin, 3), ("a", &paris, 1), ("b", &munich, 2), ("c", &berlin, 1), ("c", &paris, 2)];
        for (slug, headers, times) in clicks {
            for _ in 0..times {
                app.click(&format!("/l/ana-example/{slug}"), headers).await;
            }
        }
        // Bots and HEAD requests are never counted.
        app.visit_link(Method::GET, "/l/ana-example/a", BOT_UA, &berlin).await;
        app.visit_link(Method::HEAD, "/l/ana-example/a", "Mozilla/5.0", &berlin).await;
        app.state.writer.flush().await;

        let reply = client.get(&format!("/api/link-analytics?siteId={site}")).await;
        let body = reply.expect(200);
        assert_eq!(body["total"], 9);
        assert_eq!(body["clicks"].as_array().unwrap().len(), 9);
        let click = &body["clicks"][0];
        for key in [
            "id",
            "tracker_vid",
            "slug",
            "campaign",
            "source",
            "country",
            "city",
            "lat",
            "lon",
            "device_type",
            "browser",
            "created_at",
        ] {
            assert!(click.get(key).is_some(), "click lacks {key}: {click}");
        }
        assert!(click["id"].is_string());
        assert_eq!(click["tracker_vid"], "", "a string, empty until the tracker ties the click to a visitor");
        assert_eq!(body["byCountry"], json!([{ "country": "DE", "clicks": 6 }, { "country": "FR", "clicks": 3 }]));
        assert_eq!(
            body["byCity"],
            json!([
                { "city": "Berlin", "country": "DE", "clicks": 4, "lat": 52.52, "lon": 13.40 },
                { "city": "Paris", "country": "FR", "clicks": 3, "lat": 48.86, "lon": 2.35 },
                { "city": "Munich", "country": "DE", "clicks": 2, "lat": 48.14, "lon": 11.58 }
            ])
        );
        assert_eq!(
            body["byCampaign"],
            json!([{ "campaign": "spring", "clicks": 6 }, { "campaign": "fall", "clicks": 3 }])
        );
        assert_eq!(
            body["bySource"],
            json!([{ "source": "twitter", "clicks": 5 }, { "source": "newsletter", "clicks": 4 }])
        );
        let days = body["byDay"].as_array().unwrap();
        assert_eq!(days.len(), 7, "every day of the 7-day range");
        assert_eq!(days[6], json!({ "date": leadtrail::time::date(now_ms()), "clicks": 9 }));
        assert!(days[..6].iter().all(|day| day["clicks"] == 0));

        let filtered = client.get(&format!("/api/link-analytics?siteId={site}&source=twitter&campaign=spring")).await;
        assert_eq!(filtered.expect(200)["total"], 2);
        let by_slug = client.get(&format!("/api/link-analytics?siteId={site}&slug=c")).await;
        assert_eq!(
            by_slug.expect(200)["byCountry"],
            json!([{ "country": "FR", "clicks": 2 }, { "country": "DE", "clicks": 1 }])
        );

        let list = client.get(&format!("/api/links?siteId={site}")).await;
        assert_eq!(
            list.body["stats"],
            json!({ "totalLinks": 3, "totalClicks": 9, "clicksToday": 9, "topSource": "twitter" })
        );
        let a = list.body["links"].as_array().unwrap().iter().find(|l| l["slug"] == "a").unwrap().clone();
        assert_eq!((a["total_clicks"].clone(), a["clicks_today"].clone()), (json!(4), json!(4)));
        assert!(a["last_clicked_at"].is_string());
    }
}

#[tokio::test]
async fn ranges_count_calendar_days() {
    for app in apps_with(|config| config.trust_proxy = TrustProxy::Cloudflare).await {
        let (client, site) = app.user_with_site("Bo", "bo.example").await;
        client.create_link(json!({ "siteId": site, "slug": "r", "destinationUrl": "https://bo.example/" })).await;
        app.click("/l/bo-example/r", &[]).await;
        // Three older clicks, 10, 40 and 100 days back, through the writer as
        // the redirect stores them (the rollups are kept with the clicks).
        let link = Arc::new(
            link::Entity::find().filter(link::Column::SiteId.eq(site)).one(&app.state.db).await.unwrap().unwrap(),
        );
        for days in [10, 40, 100] {
            let click = click_command(&link, common::unique("aged"), now_ms() - days * DAY_MS);
            assert!(app.state.writer.record_click(click, Duration::from_secs(10)).await, "stored");
        }
        app.state.writer.flush().await;
        let total = |range: &'static str| {
            let client = client.clone();
            async move {
                client.get(&format!("/api/link-analytics?siteId={site}&range={range}")).await.expect(200)["total"]
                    .clone()
            }
        };
        assert_eq!(total("7d").await, 1);
        assert_eq!(total("30d").await, 2);
        assert_eq!(total("90d").await, 3);
        assert_eq!(total("all").await, 4);
        let thirty = client.get(&format!("/api/link-analytics?siteId={site}&range=30d")).await;
        assert_eq!(thirty.body["byDay"].as_array().unwrap().len(), 30);
        let all = client.get(&format!("/api/link-analytics?siteId={site}&range=all")).await;
        assert_eq!(all.body["byDay"].as_array().unwrap().len(), 4, "only days with clicks for all time");
        client.get(&format!("/api/link-analytics?siteId={site}&range=1y")).await.expect_error(400, "VALIDATION_ERROR");
        let default_site = client.get("/api/link-analytics").await;
        assert_eq!(default_site.expect(200)["total"], 1, "7d on the first site by default");
    }
}

/// Every figure of `/api/link-analytics`, recounted naively from the raw clicks.
fn recount(clicks: &[link_click::Model], range_start: Option<i64>, filter: &[(&str, &str)]) -> Value {
    let label = |click: &link_click::Model, name: &str| match name {
        "slug" => click.slug.clone(),
        "campaign" => click.campaign.clone(),
        _ => click.source.clone(),
    };
    let counted: Vec<&link_click::Model> = clicks
        .iter()
        .filter(|c| !c.is_bot && range_start.is_none_or(|start| c.created_at >= start))
        .filter(|c| filter.iter().all(|(name, value)| label(c, name) == *value))
        .collect();
    let mut by_country: BTreeMap<String, i64> = BTreeMap::new();
    let mut by_city: BTreeMap<String, (i64, Option<f64>, Option<f64>)> = BTreeMap::new();
    let mut by_campaign: BTreeMap<String, i64> = BTreeMap::new();
    let mut by_source: BTreeMap<String, i64> = BTreeMap::new();
    let mut by_day: BTreeMap<String, i64> = BTreeMap::new();
    let larger = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    for c in &counted {
        *by_country.entry(format!("{:?}", c.country)).or_default() += 1;
        let city = by_city.entry(format!("{:?}/{:?}", c.city, c.country)).or_default();
        *city = (city.0 + 1, larger(city.1, c.lat), larger(city.2, c.lon));
        *by_campaign.entry(c.campaign.clone()).or_default() += 1;
        *by_source.entry(c.source.clone()).or_default() += 1;
        *by_day.entry(date(c.created_at)).or_default() += 1;
    }
    json!({
        "total": counted.len(),
        "byCountry": by_country,
        "byCity": by_city,
        "byCampaign": by_campaign,
        "bySource": by_source,
        "byDay": by_day,
    })
}

/// The endpoint's answer in `recount`'s shape: groups keyed, empty days left out.
fn keyed(body: &Value) -> Value {
    let rows = |name: &str| body[name].as_array().unwrap().clone();
    let text = |value: &Value| format!("{:?}", value.as_str().map(str::to_owned));
    let by_country: BTreeMap<String, i64> =
        rows("byCountry").iter().map(|r| (text(&r["country"]), r["clicks"].as_i64().unwrap())).collect();
    let by_city: BTreeMap<String, (i64, Option<f64>, Option<f64>)> = rows("byCity")
        .iter()
        .map(|r| {
            let key = format!("{}/{}", text(&r["city"]), text(&r["country"]));
            (key, (r["clicks"].as_i64().unwrap(), r["lat"].as_f64(), r["lon"].as_f64()))
        })
        .collect();
    let label = |name: &str, key: &str| -> BTreeMap<String, i64> {
        rows(name).iter().map(|r| (r[key].as_str().unwrap().to_owned(), r["clicks"].as_i64().unwrap())).collect()
    };
    let by_day: BTreeMap<String, i64> = rows("byDay")
        .iter()
        .filter(|r| r["clicks"].as_i64() != Some(0))
        .map(|r| (r["date"].as_str().unwrap().to_owned(), r["clicks"].as_i64().unwrap()))
        .collect();
    json!({
        "total": body["total"],
        "byCountry": by_country,
        "byCity": by_city,
        "byCampaign": label("byCampaign", "campaign"),
        "bySource": label("bySource", "source"),
        "byDay": by_day,
    })
}

#[tokio::test]
async fn every_figure_equals_a_recount_of_the_raw_clicks() {
    for app in apps_with(|config| config.trust_proxy = TrustProxy::Cloudflare).await {
        let (client, site) = app.user_with_site("Rex", "rex.example").await;
        // A hundred days of seeded clicks on three links, through the writer.
        let options = SeedOptions { site_id: site, visitors: 400, days: 100, seed: 11 };
        seed::run(&app.state.db, options, |_| {}).await.unwrap();
        // Today's clicks through the redirect, with places and without, and bots.
        client
            .create_link(json!({ "siteId": site, "slug": "geo", "destinationUrl": "https://rex.example/", "campaign": "weekly", "source": "mail" }))
            .await;
        let lyon = place("FR", "Lyon", "45.76", "4.84");
        let lyon_east = place("FR", "Lyon", "45.77", "4.90");
        for headers in [&lyon[..], &lyon_east[..], &lyon[..], &[][..], &place("XX", "", "", "")[..]] {
            app.click("/l/rex-example/geo", headers).await;
        }
        app.visit_link(Method::GET, "/l/rex-example/geo", BOT_UA, &lyon).await;
        app.visit_link(Method::GET, "/l/rex-example/seed-ad", BOT_UA, &lyon).await;
        let clicks = app.clicks().await;
        assert!(clicks.len() > 50, "enough clicks to group: {}", clicks.len());

        let today = now_ms().div_euclid(DAY_MS) * DAY_MS;
        let ranges = [("7d", Some(7)), ("30d", Some(30)), ("90d", Some(90)), ("all", None)];
        let filters: [&[(&str, &str)]; 6] = [
            &[],
            &[("slug", "seed-ad")],
            &[("slug", "geo")],
            &[("campaign", "weekly")],
            &[("source", "instagram")],
            &[("campaign", "weekly"), ("source", "newsletter")],
        ];
        for (range, days) in ranges {
            for filter in filters {
                let query: String = filter.iter().map(|(name, value)| format!("&{name}={value}")).collect();
                let reply = client.get(&format!("/api/link-analytics?siteId={site}&range={range}{query}")).await;
                let expected = recount(&clicks, days.map(|d: i64| today - (d - 1) * DAY_MS), filter);
                assert_eq!(keyed(reply.expect(200)), expected, "{range}{query}");
            }
        }
    }
}
