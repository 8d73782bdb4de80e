//! Non-ASCII places from a trusted proxy: Cloudflare sends `São Paulo` as raw
//! UTF-8 header bytes, Vercel percent-encodes its city. Either way the visitor's
//! profile (REST and GraphQL), the CRM payloads of a webhook dry run and the
//! click record say `São Paulo`, never null or an empty string.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    Client, TestApp, apps_with,
    traffic::{DESKTOP_UA, pageview},
};
use leadtrail::config::{Config, TrustProxy};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

const SAO_PAULO: &str = "São Paulo";

/// Headers sent as the proxy sends them: byte for byte, no encoding on the way.
fn raw_headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
    pairs
        .iter()
        .map(|(name, value)| {
            (HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_bytes(value).unwrap())
        })
        .collect()
}

fn trusting(proxy: TrustProxy) -> impl Fn(&mut Config) {
    move |config| {
        config.trust_proxy = proxy;
        // The dry runs below name a loopback target; nothing is sent to it.
        config.webhook_unsafe_allow_any_target = true;
    }
}

async fn collect(app: &TestApp, site: i64, vid: &str, headers: HeaderMap) {
    let response = reqwest::Client::new()
        .post(format!("{}/api/collect", app.base))
        .header("content-type", "text/plain")
        .header("user-agent", DESKTOP_UA)
        .headers(headers)
        .body(pageview(site, vid, "https://geo.example/").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    app.state.writer.flush().await;
}

/// (country, city, region) as the REST profile and GraphQL report them; they must agree.
async fn place(client: &Client, site: i64, vid: &str) -> (Value, Value, Value) {
    let rest = client.get(&format!("/api/visitor/{vid}?siteId={site}")).await;
    let rest = rest.expect(200);
    let graphql = client
        .graphql(
            "query($site: Int!, $id: ID!) { visitor(siteId: $site, id: $id) { country city region } }",
            json!({ "site": site, "id": vid }),
        )
        .await;
    let gql = &graphql["data"]["visitor"];
    assert_eq!((&gql["country"], &gql["city"], &gql["region"]), (&rest["country"], &rest["city"], &rest["region"]));
    (rest["country"].clone(), rest["city"].clone(), rest["region"].clone())
}

/// The payload a webhook of `kind` would carry for `vid`, shown by a dry run.
async fn dry_run(client: &Client, site: i64, vid: &str, kind: &str) -> Value {
    let body = json!({
        "tracker_vid": vid, "webhook_url": "http://127.0.0.1:9/hook", "webhook_type": kind,
        "siteId": site, "dry_run": true,
    });
    let reply = client.post("/api/webhook", body).await;
    assert_eq!(reply.expect(200)["dry_run"], true);
    reply.body["payload"].clone()
}

async fn assert_crm_payloads_name(client: &Client, site: i64, vid: &str, city: &str) {
    assert_eq!(dry_run(client, site, vid, "crm_two").await["City"], city);
    assert_eq!(dry_run(client, site, vid, "crm_one").await["properties"]["city"], city);
    assert_eq!(dry_run(client, site, vid, "custom").await["location"]["city"], city);
}

#[tokio::test]
async fn cloudflare_utf8_places_are_kept() {
    for app in apps_with(trusting(TrustProxy::Cloudflare)).await {
        let (client, site) = app.user_with_site("Rui", "geo.example").await;
        let headers = raw_headers(&[
            ("CF-IPCountry", b"BR"),
            ("cf-ipcity", SAO_PAULO.as_bytes()),
            ("cf-region", SAO_PAULO.as_bytes()),
        ]);
        collect(&app, site, "sp", headers.clone()).await;
        assert_eq!(place(&client, site, "sp").await, (json!("BR"), json!(SAO_PAULO), json!(SAO_PAULO)));
        assert_crm_payloads_name(&client, site, "sp", SAO_PAULO).await;

        client.create_link(json!({ "siteId": site, "slug": "promo", "destinationUrl": "https://geo.example/" })).await;
        let sent = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let response = sent
            .get(format!("{}/l/geo-example/promo", app.base))
            .header("user-agent", DESKTOP_UA)
            .headers(headers)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 302);
        let clicks = app.clicks().await;
        assert_eq!(
            (clicks[0].country.as_deref(), clicks[0].city.as_deref(), clicks[0].region.as_deref()),
            (Some("BR"), Some(SAO_PAULO), Some(SAO_PAULO))
        );
    }
}

#[tokio::test]
async fn vercel_percent_encoded_city_is_decoded() {
    for app in apps_with(trusting(TrustProxy::Vercel)).await {
        let (client, site) = app.user_with_site("Ana", "geo.example").await;
        let headers = raw_headers(&[
            ("x-vercel-ip-country", b"BR"),
            ("x-vercel-ip-city", b"S%C3%A3o%20Paulo"),
            ("x-vercel-ip-country-region", b"SP"),
        ]);
        collect(&app, site, "sp", headers).await;
        assert_eq!(place(&client, site, "sp").await, (json!("BR"), json!(SAO_PAULO), json!("SP")));
        assert_crm_payloads_name(&client, site, "sp", SAO_PAULO).await;

        // Sent unencoded, the city is kept as it came.
        let unencoded = raw_headers(&[("x-vercel-ip-country", b"BR"), ("x-vercel-ip-city", SAO_PAULO.as_bytes())]);
        collect(&app, site, "raw", unencoded).await;
        assert_eq!(place(&client, site, "raw").await.1, json!(SAO_PAULO));
    }
}
