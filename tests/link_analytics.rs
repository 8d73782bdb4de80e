//! GET /api/link-analytics: clicks through the real redirect, grouped exactly.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps_with, traffic::BOT_UA};
use leadtrail::{
    config::TrustProxy,
    time::{DAY_MS, now_ms},
};
use reqwest::Method;
use sea_orm::{ConnectionTrait, Statement};
use serde_json::json;

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
        for _ in 0..4 {
            app.click("/l/bo-example/r", &[]).await;
        }
        app.state.writer.flush().await;
        // Age three of the clicks: 10, 40 and 100 days back.
        let backend = app.state.db.get_database_backend();
        let ids: Vec<i64> = app.clicks().await.iter().map(|c| c.id).collect();
        for (id, days) in ids.iter().zip([10, 40, 100]) {
            let at = now_ms() - days * DAY_MS;
            app.state
                .db
                .execute_raw(Statement::from_string(
                    backend,
                    format!("UPDATE link_clicks SET created_at = {at} WHERE id = {id}"),
                ))
                .await
                .unwrap();
        }
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
