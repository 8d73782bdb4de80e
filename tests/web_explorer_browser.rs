//! The explorer in headless Chromium, as a marketer uses it: click a
//! source row and a country row and see every panel narrow, open a custom
//! range, turn the comparison on, download a panel's CSV; screenshots at
//! 1400 and 390 px, axe-core on each state.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{
    apps_with,
    browser::{FLAGS, axe, browser_missing, screenshot, sign_in, start_browser, text, wait_for_path},
    traffic::{DESKTOP_UA, PHONE_UA, at, pageview},
};
use fantoccini::{Client, Locator};
use leadtrail::time::{DAY_MS, HOUR_MS, now_ms};
use serde_json::json;

fn cloudflare(config: &mut leadtrail::config::Config) {
    config.trust_proxy = leadtrail::config::TrustProxy::Cloudflare;
    config.collect_rate_limit_per_second = 1_000_000;
    config.collect_site_rate_limit_per_second = 1_000_000;
}

/// The labels of a panel's rows, by the panel's title.
async fn rows(browser: &Client, title: &str) -> Vec<String> {
    let script = r#"
        var found = [];
        document.querySelectorAll('section.panel[aria-label="' + arguments[0] + '"] tbody th a').forEach(function (a) { found.push(a.textContent.trim()); });
        return found;"#;
    let value = browser.execute(script, vec![json!(title)]).await.unwrap();
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
}

async fn click_row(browser: &Client, title: &str, label: &str) {
    let css = format!(r#"section.panel[aria-label="{title}"] a[title$=": {label}"]"#);
    browser.find(Locator::Css(&css)).await.unwrap_or_else(|_| panic!("{css}")).click().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[tokio::test]
async fn a_marketer_filters_by_clicking_rows_picks_a_range_and_downloads_csv() {
    if browser_missing() {
        return;
    }
    for app in apps_with(cloudflare).await {
        let shots = app.backend == "sqlite";
        let (client, email) = app.user("Mara").await;
        let site = client.post("/api/sites", json!({ "domain": "shop.example" })).await.expect(200)["site"]["siteId"]
            .as_i64()
            .unwrap();
        let now = now_ms();
        let visits = [
            ("n1", "DE", DESKTOP_UA, "/pricing?utm_source=newsletter&utm_campaign=winter"),
            ("n2", "FR", PHONE_UA, "/docs?utm_source=newsletter&utm_campaign=winter"),
            ("g1", "DE", DESKTOP_UA, "/?utm_source=google&utm_campaign=spring"),
            ("g2", "US", PHONE_UA, "/blog?utm_source=google&utm_campaign=spring"),
            ("d1", "US", DESKTOP_UA, "/"),
        ];
        for (n, (vid, country, ua, path)) in visits.iter().enumerate() {
            let event = at(
                pageview(site, vid, &format!("https://shop.example{path}")),
                now - (n as i64 + 1) * DAY_MS - HOUR_MS,
            );
            app.collect_with(json!({ "events": [event] }), ua, &[("cf-ipcountry", country)]).await.expect(202);
        }
        app.state.writer.flush().await;

        let (_driver, browser) = start_browser(&FLAGS).await;
        sign_in(&browser, &app.base, &email).await;
        for width in [1400, 390] {
            browser.set_window_size(width, 1800).await.unwrap();
            browser.goto(&format!("{}/?range=30d", app.base)).await.unwrap();
            assert_eq!(rows(&browser, "Sources").await.len(), 3, "newsletter, google, direct");
            assert_eq!(rows(&browser, "Countries").await.len(), 3);
            if shots {
                screenshot(&browser, &format!("explorer-{width}")).await;
            }
            axe(&browser, &format!("explorer at {width} px")).await;

            // A source row filters the whole page.
            click_row(&browser, "Sources", "newsletter").await;
            assert_eq!(rows(&browser, "Sources").await, ["newsletter"]);
            let mut countries = rows(&browser, "Countries").await;
            countries.sort();
            assert_eq!(countries, ["France", "Germany"], "the countries panel narrows too");
            assert_eq!(rows(&browser, "UTM campaigns").await, ["winter"]);
            assert!(text(&browser, ".chips").await.contains("Source is newsletter"));
            // Then a country row, on top of it.
            click_row(&browser, "Countries", "Germany").await;
            assert_eq!(rows(&browser, "Top pages").await, ["/pricing"]);
            assert_eq!(rows(&browser, "Devices").await.len(), 1);
            let chips = text(&browser, ".chips").await;
            assert!(chips.contains("Source is newsletter") && chips.contains("Country is Germany"), "{chips}");
            if shots {
                screenshot(&browser, &format!("explorer-filtered-{width}")).await;
            }
            axe(&browser, &format!("filtered explorer at {width} px")).await;
            // Removing a chip widens the page again.
            browser
                .find(Locator::Css(r#"a[aria-label="Remove filter: Country is Germany"]"#))
                .await
                .unwrap()
                .click()
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(300)).await;
            assert_eq!(rows(&browser, "Countries").await.len(), 2);

            // A custom range with the comparison off, then on.
            // From the day of the third visit (newsletter twice, then google): its
            // calendar day depends on the hour the test runs, so it is read off its time.
            let day_of = |ms: i64| chrono::DateTime::from_timestamp_millis(ms).unwrap().date_naive();
            let from = day_of(now - 3 * DAY_MS - HOUR_MS);
            let to = day_of(now);
            browser.goto(&format!("{}/?range=custom&from={from}&to={to}&compare=off", app.base)).await.unwrap();
            wait_for_path(&browser, "/").await;
            assert!(text(&browser, "#chart-title").await.contains(&format!("{from} to {to}")));
            assert_eq!(
                rows(&browser, "Sources").await.len(),
                2,
                "from the third visit's day on: newsletter and google"
            );
            let legend = text(&browser, ".legend").await;
            assert!(!legend.contains("previous period"), "{legend}");
            browser.find(Locator::Css("#compare")).await.unwrap().select_by_value("previous_period").await.unwrap();
            browser.find(Locator::Css(".range-picker button[type=submit]")).await.unwrap().click().await.unwrap();
            tokio::time::sleep(Duration::from_millis(300)).await;
            assert!(text(&browser, ".legend").await.contains("Visitors, previous period"));
            assert!(text(&browser, ".cards").await.contains('%'), "tiles carry their change");
            if shots {
                screenshot(&browser, &format!("explorer-custom-{width}")).await;
            }

            // A panel's CSV, fetched as the link downloads it.
            browser.goto(&format!("{}/?range=30d&panel=visit:source", app.base)).await.unwrap();
            let csv = browser
                .execute(
                    "var a = document.querySelector('a[download].button'); return fetch(a.href).then(function (r) { return r.text(); });",
                    vec![],
                )
                .await
                .unwrap();
            let csv = csv.as_str().unwrap().to_owned();
            assert!(csv.starts_with("visit:source,visitors,percentage\n"), "{csv}");
            assert!(csv.contains("newsletter,2,40.0"), "{csv}");
            axe(&browser, &format!("a panel in full at {width} px")).await;
        }
    }
}
