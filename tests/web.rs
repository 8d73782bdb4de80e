//! The web app over HTTP: every page signed out, for its owner, for another
//! tenant, with unknown ids and bad query values; the account forms; the
//! site switcher; the visitor page's forms; headers and assets. The browser
//! side (scripts, accessibility, screenshots) is in `web_browser.rs`.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    TestApp, apps, apps_with, scenario,
    traffic::pageview,
    web::{expect_page, location, post_form},
};
use leadtrail::config::TrustProxy;
use serde_json::json;

fn cloudflare(config: &mut leadtrail::config::Config) {
    config.trust_proxy = TrustProxy::Cloudflare;
}

/// Every page, as `(path, what it must show)`, for the scenario's site.
fn pages(site: i64, session: i64) -> Vec<(String, &'static str)> {
    vec![
        ("/".to_owned(), "Hottest leads"),
        ("/?range=24h".to_owned(), "Last 24 hours"),
        ("/?range=30d".to_owned(), "Visitors and pageviews"),
        ("/live".to_owned(), "Activity"),
        ("/leads".to_owned(), "Alice@Example.com"),
        ("/leads?range=all&hot=1&bots=0&page=1".to_owned(), "Leads"),
        ("/leads?bots=1".to_owned(), "Anonymous crawler"),
        (format!("/visitor/alice?site={site}"), "Score"),
        ("/visitor/alice".to_owned(), "Attribution"),
        (format!("/session/{session}?site={site}"), "Timeline"),
        (format!("/talk/incoming?visitor=alice&site={site}"), "Reach them"),
        ("/talk/incoming?visitor=alice".to_owned(), "mailto:Alice@Example.com"),
        ("/links".to_owned(), ">promo</a>"),
        ("/links?q=promo&active=on".to_owned(), "1 of 1 link"),
        ("/settings".to_owned(), "Tracking snippet"),
        ("/settings/team".to_owned(), "Members of"),
        ("/settings/webhooks".to_owned(), "Signing secret"),
        ("/settings/account".to_owned(), "Delete the account"),
    ]
}

async fn session_of(app: &TestApp, site: i64, vid: &str) -> i64 {
    let visitor = app.visitor(site, vid).await;
    app.sessions_of(visitor.id).await[0].id
}

#[tokio::test]
async fn signed_out_every_page_is_a_detour_through_sign_in() {
    for app in apps().await {
        let client = app.client();
        for (path, _) in pages(1, 1) {
            let reply = client.get(&path).await;
            let next = url::form_urlencoded::byte_serialize(path.as_bytes()).collect::<String>();
            let expected = format!("/login?next={next}");
            assert_eq!(location(&reply), expected, "{path}");
        }
        // A bad cookie is no cookie.
        assert_eq!(
            location(&client.clone().with_session("forged".to_owned()).get("/leads").await),
            "/login?next=%2Fleads"
        );
        for path in ["/site", "/visitor/alice?site=1"] {
            let reply = post_form(&client, path, &[("site", "1"), ("action", "identify")], &[]).await;
            assert!(location(&reply).starts_with("/login"), "{path}");
        }
        let login = client.get("/login?next=%2Fleads").await;
        let html = expect_page(&login, 200);
        assert!(html.contains(r#"name="next" value="/leads""#), "{html}");
        assert!(html.contains(r#"action="/login""#));
    }
}

#[tokio::test]
async fn every_page_shows_its_owner_the_site() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        let session = session_of(&app, s.site, "alice").await;
        for (path, shows) in pages(s.site, session) {
            let reply = s.client.get(&path).await;
            let html = expect_page(&reply, 200);
            assert!(html.contains(shows), "{path} shows {shows}: {html}");
            assert!(html.contains(r##"<a class="skip-link" href="#main">"##), "{path}");
            assert!(html.contains(r#"<main id="main""#), "{path}");
            assert_eq!(reply.headers["cache-control"], "no-store", "{path}");
            let policy = reply.headers["content-security-policy"].to_str().unwrap();
            let socket = app.base.replace("http://", "ws://");
            assert_eq!(
                policy,
                format!(
                    "default-src 'self'; img-src 'self' data: https://www.gravatar.com; connect-src 'self' {socket}; \
                     frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
                ),
            );
            assert_eq!(reply.headers["x-content-type-options"], "nosniff");
            assert!(!html.contains(" style="), "{path} has no inline style attribute");
            assert!(!html.contains("<script>"), "{path} has no inline script");
        }
    }
}

#[tokio::test]
async fn another_tenants_site_visitor_and_session_are_404_pages() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        let session = session_of(&app, s.site, "alice").await;
        let (stranger, own_site) = app.user_with_site("Mallory", "mallory.example").await;
        let site = s.site;
        for path in [
            format!("/?site={site}"),
            format!("/live?site={site}"),
            format!("/leads?site={site}"),
            format!("/visitor/alice?site={site}"),
            "/visitor/alice".to_owned(),
            format!("/session/{session}?site={site}"),
            format!("/session/{session}?site={own_site}"),
            format!("/session/{session}"),
            format!("/talk/incoming?visitor=alice&site={site}"),
            "/talk/incoming?visitor=alice".to_owned(),
        ] {
            let html = expect_page(&stranger.get(&path).await, 404);
            assert!(html.contains("Not found"), "{path}");
            assert!(!html.contains("Alice"), "{path} reveals nothing");
        }
        let switch = post_form(&stranger, "/site", &[("site", &site.to_string()), ("next", "/")], &[]).await;
        expect_page(&switch, 404);
        let action = post_form(
            &stranger,
            &format!("/visitor/alice?site={site}"),
            &[("action", "identify"), ("email", "x@example.com")],
            &[],
        )
        .await;
        expect_page(&action, 404);
        // The owner's visitor is untouched.
        assert_eq!(app.visitor(site, "alice").await.email.as_deref(), Some("Alice@Example.com"));
    }
}

#[tokio::test]
async fn unknown_ids_are_404_pages_and_bad_values_400_pages() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Ann", "ann.example").await;
        app.collect(pageview(site, "v1", "https://ann.example/")).await.expect(202);
        for path in [
            "/visitor/nobody".to_owned(),
            format!("/visitor/nobody?site={site}"),
            format!("/session/999999?site={site}"),
            format!("/session/not-a-number?site={site}"),
            format!("/talk/incoming?visitor=nobody&site={site}"),
            "/?site=999999".to_owned(),
            "/assets/nothing.css".to_owned(),
        ] {
            expect_page(&client.get(&path).await, 404);
        }
        for path in ["/?site=abc", "/live?site=1.5", "/talk/incoming", "/talk/incoming?visitor="] {
            let html = expect_page(&client.get(path).await, 400);
            assert!(html.contains("That request did not make sense"), "{path}: {html}");
        }
        // The explorer's range: the refusal beside the picker, the page without it.
        for path in ["/?range=1y", "/?range=custom&from=2026-02-30&to=2026-03-01", "/?filters=%5B%5B%22is%22%5D%5D"] {
            let html = expect_page(&client.get(path).await, 400);
            assert!(
                html.contains("Visitors and pageviews"),
                "{path}: the page without the refused value: {}",
                &html[html.find("<main").unwrap_or(0)..]
            );
            assert!(html.contains(r#"class="field-error" role="alert""#), "{path}: {html}");
        }
        // The leads page's filters: the refusal beside the filter, the list without it.
        for (path, id, label) in [
            ("/leads?range=forever", "f-range-error", "Seen in: "),
            ("/leads?hot=maybe", "f-hot-error", "Hot leads only: "),
            ("/leads?bots=2", "f-bots-error", "Bot traffic instead: "),
        ] {
            let html = expect_page(&client.get(path).await, 400);
            assert!(html.contains(&format!("id=\"{id}\">{label}")), "{path}: {html}");
        }
        for path in ["/leads?page=0", "/leads?page=two", "/leads?page=99999999999999999999"] {
            let html = expect_page(&client.get(path).await, 400);
            assert!(html.contains("role=\"alert\">Page: must be a page number"), "{path}: {html}");
        }
        let action = post_form(&client, &format!("/visitor/v1?site={site}"), &[("action", "delete")], &[]).await;
        expect_page(&action, 400);
        // Unknown paths outside the web app keep the API's JSON answers.
        for path in ["/api/nothing", "/nothing"] {
            let reply = client.get(path).await;
            reply.expect_error(404, "NOT_FOUND");
        }
    }
}

#[tokio::test]
async fn a_new_user_without_a_site_is_welcomed() {
    for app in apps().await {
        let (client, _) = app.user("Newbie").await;
        for path in ["/", "/live", "/leads"] {
            let html = expect_page(&client.get(path).await, 200);
            assert!(html.contains("Add your first site"), "{path}");
        }
        expect_page(&client.get("/session/1").await, 404);
    }
}

#[tokio::test]
async fn the_sign_in_form_signs_in_and_goes_back() {
    for app in apps().await {
        let (_, email) = app.user("Ann").await;
        let client = app.client();
        let ok = post_form(
            &client,
            "/login",
            &[("email", &email), ("password", "correct horse"), ("next", "/leads?range=24h")],
            &[("origin", &app.base)],
        )
        .await;
        assert_eq!(location(&ok), "/leads?range=24h");
        let token = ok.session_cookie_value().expect("session cookie set");
        let signed_in = client.clone().with_session(token.clone());
        expect_page(&signed_in.get("/leads?range=24h").await, 200);
        // Signed in, the form steps aside.
        assert_eq!(location(&signed_in.get("/login?next=%2Flive").await), "/live");

        let wrong =
            post_form(&client, "/login", &[("email", &email), ("password", "wrong horse"), ("next", "/")], &[]).await;
        let html = expect_page(&wrong, 401);
        assert!(html.contains(r#"<p class="field-error" id="password-error">Invalid email or password</p>"#), "{html}");
        assert!(html.contains(&format!(r#"value="{email}""#)), "the email is kept");
        assert!(wrong.session_cookie_value().is_none());

        for next in ["//evil.example", "/\\evil.example", "https://evil.example/", "javascript:alert(1)"] {
            let reply =
                post_form(&client, "/login", &[("email", &email), ("password", "correct horse"), ("next", next)], &[])
                    .await;
            assert_eq!(location(&reply), "/", "{next}");
        }
        for headers in [[("origin", "https://evil.example")], [("sec-fetch-site", "cross-site")], [("origin", "null")]]
        {
            let reply =
                post_form(&client, "/login", &[("email", &email), ("password", "correct horse")], &headers).await;
            let html = expect_page(&reply, 403);
            assert!(html.contains("sent from another site"), "{html}");
            assert!(reply.session_cookie_value().is_none());
        }
        // Sign-out ends the session on the server and clears the cookie.
        let out = post_form(&signed_in, "/logout", &[], &[("origin", &app.base)]).await;
        assert_eq!(location(&out), "/login");
        assert!(
            out.set_cookies().iter().any(|c| c.starts_with("session=;") && c.contains("Max-Age=0")),
            "{:?}",
            out.set_cookies()
        );
        assert!(location(&signed_in.get("/").await).starts_with("/login"));
    }
}

#[tokio::test]
async fn the_sign_up_form_follows_the_api_rules() {
    for app in apps().await {
        let client = app.client();
        let email = format!("{}@example.com", common::unique("form"));
        let cases: [(&str, &str, &str, u16, &str); 4] = [
            ("Ann", "not-an-email", "correct horse", 400, r#"id="email-error">Email: must be a valid email address"#),
            ("Ann", &email, "short", 400, r#"id="password-error">Password: must be at least 8 characters"#),
            ("  ", &email, "correct horse", 400, r#"id="name-error">Name: must not be empty"#),
            ("Ann", &email, "correct horse", 303, ""),
        ];
        for (name, address, password, status, shows) in cases {
            let fields = [("name", name), ("email", address), ("password", password), ("next", "/live")];
            let reply = post_form(&client, "/signup", &fields, &[]).await;
            if status == 303 {
                assert_eq!(location(&reply), "/live");
                assert!(reply.session_cookie_value().is_some());
            } else {
                let html = expect_page(&reply, status);
                assert!(html.contains(shows), "{address}/{password}: {html}");
            }
        }
        let again =
            post_form(&client, "/signup", &[("name", "Ann"), ("email", &email), ("password", "correct horse")], &[])
                .await;
        assert!(
            expect_page(&again, 409).contains(r#"id="email-error">Email: an account with this email already exists"#)
        );
    }
}

#[tokio::test]
async fn the_credential_limit_answers_a_429_page() {
    for app in apps_with(|config| config.auth_rate_limit_per_minute = 1).await {
        let client = app.client();
        let fields = [("email", "nobody@example.com"), ("password", "wrong horse")];
        expect_page(&post_form(&client, "/login", &fields, &[]).await, 401);
        let limited = post_form(&client, "/login", &fields, &[]).await;
        assert!(expect_page(&limited, 429).contains("Too many attempts"));
        assert!(limited.headers.contains_key("retry-after"));
    }
}

#[tokio::test]
async fn the_switcher_remembers_the_site_and_get_only_looks() {
    for app in apps().await {
        let (client, first) = app.user_with_site("Ann", "one.example").await;
        let second = client.post("/api/sites", json!({ "domain": "two.example" })).await.expect(200)["site"]["siteId"]
            .as_i64()
            .unwrap();
        let selected = |id: i64| format!(r#"<option value="{id}" selected>"#);
        assert!(expect_page(&client.get("/").await, 200).contains(&selected(first)));
        let switch = post_form(&client, "/site", &[("site", &second.to_string()), ("next", "/leads")], &[]).await;
        assert_eq!(location(&switch), "/leads");
        assert!(expect_page(&client.get("/live").await, 200).contains(&selected(second)));
        // ?site= shows another site for this view only.
        let look = client.get(&format!("/?site={first}")).await;
        assert!(expect_page(&look, 200).contains(&selected(first)));
        assert!(expect_page(&client.get("/").await, 200).contains(&selected(second)));
        let bad = post_form(&client, "/site", &[("site", "abc"), ("next", "//evil.example")], &[]).await;
        expect_page(&bad, 400);
        let foreign =
            post_form(&client, "/site", &[("site", &first.to_string())], &[("origin", "https://evil.example")]).await;
        expect_page(&foreign, 403);
    }
}

#[tokio::test]
async fn webhook_links_open_the_most_recently_active_site_with_that_visitor() {
    for app in apps().await {
        let (client, first) = app.user_with_site("Ann", "one.example").await;
        let second = client.post("/api/sites", json!({ "domain": "two.example" })).await.expect(200)["site"]["siteId"]
            .as_i64()
            .unwrap();
        let now = leadtrail::time::now_ms();
        app.collect(common::traffic::at(pageview(second, "pat", "https://two.example/"), now - 60_000))
            .await
            .expect(202);
        app.collect(pageview(first, "pat", "https://one.example/pricing")).await.expect(202);
        let dry = client
            .post("/api/webhook", json!({ "siteId": second, "tracker_vid": "pat", "webhook_url": "https://hooks.example.com/x", "dry_run": true }))
            .await;
        let links = dry.expect(200)["payload"]["links"].clone();
        for (link, shows) in [(&links["profile"], "Push to a webhook"), (&links["connect"], "Reach them")] {
            let path = link.as_str().unwrap().strip_prefix(&app.base).unwrap().to_owned();
            let html = expect_page(&client.get(&path).await, 200);
            assert!(html.contains(shows), "{path}");
            // pat was seen last on the first site.
            assert!(html.contains(&format!("/visitor/pat?site={first}")), "{path}: {html}");
        }
    }
}

#[tokio::test]
async fn the_visitor_forms_preview_send_and_identify() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Ann", "ann.example").await;
        let mut event = pageview(site, "pat", "https://ann.example/pricing");
        event["title"] = json!("Pricing <b>now</b>");
        app.collect(event).await.expect(202);
        let page = format!("/visitor/pat?site={site}");
        let origin = [("origin", app.base.as_str())];
        let preview = [
            ("action", "webhook"),
            ("intent", "preview"),
            ("url", "https://hooks.example.com/in"),
            ("type", "custom"),
            ("journey", "1"),
        ];
        let html = expect_page(&post_form(&client, &page, &preview, &origin).await, 200);
        assert!(html.contains("Request preview"), "{html}");
        assert!(html.contains("&#34;tracker_vid&#34;: &#34;pat&#34;"), "the payload is shown escaped");
        assert!(html.contains("webhook-signature"), "the signed headers are shown");
        assert!(
            !html.contains(r#"id="webhook-events" name="events" value="1" checked"#),
            "unticked boxes stay unticked"
        );

        let refused =
            [("action", "webhook"), ("intent", "send"), ("url", "http://127.0.0.1:9/hook"), ("type", "custom")];
        let html = expect_page(&post_form(&client, &page, &refused, &origin).await, 400);
        assert!(html.contains(r#"aria-invalid="true" aria-describedby="webhook-url-error""#), "{html}");

        let identify =
            [("action", "identify"), ("email", "pat@example.com"), ("name", "Pat <Admin>"), ("phone", "+1 555 0100")];
        let html = expect_page(&post_form(&client, &page, &identify, &origin).await, 200);
        assert!(html.contains("Identified as pat@example.com."), "{html}");
        assert!(html.contains("Pat &#60;Admin&#62;"));
        assert!(html.contains(r#"href="tel:+15550100""#));
        let nothing = [("action", "identify"), ("company", "Acme")];
        let html = expect_page(&post_form(&client, &page, &nothing, &origin).await, 400);
        assert!(html.contains(r#"class="form-error" role="alert""#) || html.contains("field-error"), "{html}");
        // A member's form from another origin never runs.
        let foreign = post_form(&client, &page, &identify, &[("origin", "https://evil.example")]).await;
        expect_page(&foreign, 403);
    }
}

#[tokio::test]
async fn hostile_collected_data_is_escaped_and_never_a_script_link() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Ann", "ann.example").await;
        let script = "<script>window.__pwned=1</script>";
        let image = "<img src=x onerror=window.__pwned=1>";
        let mut event = pageview(site, "evil<script>", "https://ann.example/<script>window.__pwned=1</script>");
        event["title"] = json!(script);
        event["referrer"] = json!("javascript:window.__pwned=1");
        let mut custom = event.clone();
        custom["type"] = json!("custom_event");
        custom["event_name"] = json!(image);
        custom["props"] = json!({ image: script, "href": "javascript:window.__pwned=1" });
        app.collect(json!({ "events": [event, custom] })).await.expect(202);
        client
            .identify(json!({ "siteId": site, "tracker_vid": "evil<script>", "user_id": image, "name": script, "company": image, "phone": "javascript:1", "traits": { "x": script } }))
            .await
            .expect(200);
        let visitor = app.visitor(site, "evil<script>").await;
        let session = app.sessions_of(visitor.id).await[0].id;
        for path in [
            "/".to_owned(),
            "/live".to_owned(),
            "/leads".to_owned(),
            format!("/visitor/evil%3Cscript%3E?site={site}"),
            format!("/session/{session}?site={site}"),
            format!("/talk/incoming?visitor=evil%3Cscript%3E&site={site}"),
        ] {
            let html = expect_page(&client.get(&path).await, 200);
            for raw in ["<script>window", "<img src=x", "href=\"javascript:", "<script>\n"] {
                assert!(!html.contains(raw), "{path} holds {raw}");
            }
            assert!(html.contains("&#60;"), "{path} shows the markup as text");
        }
    }
}

#[tokio::test]
async fn assets_are_versioned_and_cached_for_a_year() {
    for app in apps().await {
        let html = expect_page(&app.client().get("/login").await, 200);
        for name in ["app.css", "app.js"] {
            let start = html.find(&format!("/assets/{name}?v=")).expect("versioned asset URL");
            let url = &html[start..start + html[start..].find('"').unwrap()];
            let reply = app.client().get(url).await;
            assert_eq!(reply.status.as_u16(), 200, "{url}");
            assert_eq!(reply.headers["cache-control"], "public, max-age=31536000, immutable");
            assert!(reply.headers["content-type"].to_str().unwrap().starts_with(if name.ends_with("css") {
                "text/css"
            } else {
                "text/javascript"
            }));
        }
    }
}

#[tokio::test]
async fn the_overview_traffic_equals_the_stats_and_its_buckets_add_up() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        for range in ["24h", "7d", "30d"] {
            let query = "query($s: Int!, $r: String) { \
                stats(siteId: $s, timeRange: $r) { \
                  overview { uniqueVisitors sessions pageviews identifiedVisitors hotLeads } \
                  topPages { page views } countries { country visitors } } \
                traffic(siteId: $s, timeRange: $r) { \
                  uniqueVisitors sessions pageviews identifiedVisitors hotLeads \
                  topPages { page views } countries { country visitors } sources { channel sessions } \
                  bucketSeconds buckets { pageviews visitors sessions } } }";
            let data = s.client.graphql(query, json!({ "s": s.site, "r": range })).await;
            let (stats, traffic) = (&data["data"]["stats"], &data["data"]["traffic"]);
            for figure in ["uniqueVisitors", "sessions", "pageviews", "identifiedVisitors", "hotLeads"] {
                assert_eq!(traffic[figure], stats["overview"][figure], "{range} {figure}");
            }
            assert_eq!(traffic["topPages"], stats["topPages"], "{range}");
            assert_eq!(traffic["countries"], stats["countries"], "{range}");
            let buckets = traffic["buckets"].as_array().unwrap();
            let sum = |key: &str| buckets.iter().map(|b| b[key].as_i64().unwrap()).sum::<i64>();
            assert_eq!(sum("pageviews"), traffic["pageviews"].as_i64().unwrap(), "{range}");
            assert_eq!(sum("visitors"), traffic["uniqueVisitors"].as_i64().unwrap(), "{range}");
            assert_eq!(sum("sessions"), traffic["sessions"].as_i64().unwrap(), "{range}");
            let sources = traffic["sources"].as_array().unwrap();
            assert_eq!(
                sources.iter().map(|r| r["sessions"].as_i64().unwrap()).sum::<i64>(),
                sum("sessions"),
                "{range}"
            );
            assert!((25..=31).contains(&buckets.len()), "{range}: {}", buckets.len());
        }
        let seven = s
            .client
            .graphql(
                "query($s: Int!) { traffic(siteId: $s) { timeRange uniqueVisitors sources { channel sessions } } }",
                json!({ "s": s.site }),
            )
            .await;
        assert_eq!(seven["data"]["traffic"]["timeRange"], "7d");
        // alice (two sessions: Google, then a newsletter) and bob (a paid click) in the week.
        let channels: Vec<&str> = seven["data"]["traffic"]["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["channel"].as_str().unwrap())
            .collect();
        assert_eq!(channels.len(), 3, "{channels:?}");
        let refused = s
            .client
            .graphql(
                "query($s: Int!) { traffic(siteId: $s, timeRange: \"all\") { pageviews } }",
                json!({ "s": s.site }),
            )
            .await;
        assert_eq!(common::gql_error_code(&refused), "VALIDATION_ERROR");
        let hot = s.client.graphql("query($s: Int!) { all: visitors(siteId: $s, timeRange: \"all\") { nodes { hot } } hot: visitors(siteId: $s, timeRange: \"all\", hot: true) { total nodes { hot } } }", json!({ "s": s.site })).await;
        let expected = hot["data"]["all"]["nodes"].as_array().unwrap().iter().filter(|n| n["hot"] == true).count();
        assert_eq!(hot["data"]["hot"]["total"].as_u64().unwrap() as usize, expected);
        assert!(hot["data"]["hot"]["nodes"].as_array().unwrap().iter().all(|n| n["hot"] == true));
    }
}

/// Every page links an icon, and `/favicon.ico` answers with it rather than
/// the 404 page browsers otherwise log on every visit.
#[tokio::test]
async fn pages_have_an_icon_and_counts_read_as_english() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        let html = expect_page(&s.client.get("/leads").await, 200);
        let href = html.split(r#"<link rel="icon" href=""#).nth(1).and_then(|rest| rest.split('"').next()).unwrap();
        let icon = app.client().get(href).await;
        assert_eq!(icon.status.as_u16(), 200, "{href}");
        assert_eq!(icon.headers["content-type"], "image/svg+xml");
        assert!(icon.text.starts_with("<svg"), "{}", icon.text);
        let fallback = app.client().get("/favicon.ico").await;
        assert_eq!((fallback.status.as_u16(), fallback.text.as_str()), (200, icon.text.as_str()));

        let one = expect_page(&s.client.get("/leads?range=all&bots=1").await, 200);
        assert!(one.contains(">1 visitor<") || one.contains(">1 visitor,"), "one bot is 1 visitor");
        let two = expect_page(&s.client.get("/leads").await, 200);
        assert!(two.contains("2 visitors"), "the week has two people");
    }
}
