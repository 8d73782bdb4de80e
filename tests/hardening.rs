//! What an attacker with an ordinary account tried, and what holds now:
//! collect budgets that invalid events cannot drain, per-address limits that
//! an IPv6 host cannot multiply, a per-account sign-in budget, members only
//! by invitation, erased text gone from the SQLite files, cookie writes that
//! must show they came from this site, metrics behind a token or on their
//! own address, webhook refusals that map nothing, a framed-proof `/docs`,
//! and proxy headers believed only from trusted proxies.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    apps, apps_with, gql_error_code, invite_and_accept,
    traffic::{DESKTOP_UA, pageview},
};
use leadtrail::config::TrustProxy;
use serde_json::{Value, json};

fn from(address: &str) -> [(&str, &str); 1] {
    [("x-forwarded-for", address)]
}

#[tokio::test]
async fn invalid_events_from_many_addresses_do_not_use_up_a_sites_budget() {
    for app in apps_with(|config| {
        config.trust_proxy = TrustProxy::Xff;
        config.collect_rate_limit_per_second = 100;
        config.collect_site_rate_limit_per_second = 5;
    })
    .await
    {
        let (_, site) = app.user_with_site("Drain", "drain.example").await;
        let invalid = json!({ "site": site, "type": "pageview", "tracker_vid": "x", "url": "not-a-url" });
        for address in 0..16 {
            for _ in 0..5 {
                let reply =
                    app.collect_with(invalid.clone(), DESKTOP_UA, &from(&format!("198.51.100.{address}"))).await;
                reply.expect_error(400, "VALIDATION_ERROR");
            }
        }
        let real = pageview(site, "real-visitor", "https://drain.example/");
        app.collect_with(real, DESKTOP_UA, &from("203.0.113.50")).await.expect(202);
        // Valid events still spend it: the budget is real.
        let answers: Vec<u16> =
            futures_util::future::join_all((0..10).map(|i| {
                app.collect_with(pageview(site, &format!("v{i}"), "https://drain.example/"), DESKTOP_UA, &[])
            }))
            .await
            .iter()
            .map(|reply| reply.status.as_u16())
            .collect();
        assert!(answers.contains(&429), "{answers:?}");
    }
}

#[tokio::test]
async fn an_ipv6_host_shares_one_budget_for_its_slash_64() {
    for app in apps_with(|config| {
        config.trust_proxy = TrustProxy::Xff;
        config.collect_rate_limit_per_second = 3;
    })
    .await
    {
        let (_, site) = app.user_with_site("Six", "six.example").await;
        let mut answers = Vec::new();
        for host in 1..=6 {
            let address = format!("2001:db8:7:7::{host:x}");
            let reply =
                app.collect_with(pageview(site, "six", "https://six.example/"), DESKTOP_UA, &from(&address)).await;
            answers.push(reply.status.as_u16());
        }
        assert!(answers.iter().filter(|status| **status == 429).count() >= 2, "{answers:?}");
        // Another /64 has its own.
        let other =
            app.collect_with(pageview(site, "six", "https://six.example/"), DESKTOP_UA, &from("2001:db8:7:8::1")).await;
        other.expect(202);
    }
}

#[tokio::test]
async fn guessing_one_accounts_password_from_many_addresses_is_limited() {
    for app in apps_with(|config| {
        config.trust_proxy = TrustProxy::Xff;
        config.auth_rate_limit_per_minute = 100;
        config.auth_account_rate_limit_per_minute = 3;
    })
    .await
    {
        let (_, email) = app.user("Target").await;
        let (_, bystander) = app.user("Bystander").await;
        let guess = |address: String, email: String| {
            let base = app.base.clone();
            async move {
                reqwest::Client::new()
                    .post(format!("{base}/api/auth/sign-in/email"))
                    .header("x-forwarded-for", address)
                    .json(&json!({ "email": email, "password": "wrong guess" }))
                    .send()
                    .await
                    .unwrap()
            }
        };
        for attempt in 0..3 {
            let answer = guess(format!("192.0.2.{attempt}"), email.to_uppercase()).await;
            assert_eq!(answer.status().as_u16(), 401);
        }
        let limited = guess("192.0.2.99".to_owned(), email.clone()).await;
        assert_eq!(limited.status().as_u16(), 429);
        assert!(limited.headers().contains_key("retry-after"));
        let body: Value = limited.json().await.unwrap();
        assert_eq!(body["code"], "RATE_LIMITED");
        // Another account is not held up.
        assert_eq!(guess("192.0.2.99".to_owned(), bystander).await.status().as_u16(), 401);
    }
}

#[tokio::test]
async fn members_join_only_by_accepting_an_invitation() {
    for app in apps().await {
        let (owner, _) = app.user_with_site("Ines", "ines.example").await;
        let org =
            owner.graphql("{ orgs { id } }", json!({})).await["data"]["orgs"][0]["id"].as_str().unwrap().to_owned();
        let (invitee, email) = app.user("Ivan").await;
        let (bystander, _) = app.user("Bea").await;
        let invite = "mutation($o: ID!, $e: String!, $r: String!) { inviteMember(orgId: $o, email: $e, role: $r) { id email role status orgName } }";
        let sent = owner.graphql(invite, json!({ "o": org, "e": email.to_uppercase(), "r": "viewer" })).await;
        let invitation = sent["data"]["inviteMember"]["id"].as_str().unwrap().to_owned();
        assert_eq!(sent["data"]["inviteMember"]["email"], email, "stored lower case: {sent}");

        // Not a member yet: the org's sites stay closed to them.
        let members = owner.graphql("query($o: ID!) { members(orgId: $o) { email } }", json!({ "o": org })).await;
        assert!(!members.to_string().contains(&email), "{members}");
        assert_eq!(
            gql_error_code(&invitee.graphql("query($o: ID!) { org(id: $o) { id } }", json!({ "o": org })).await),
            "NOT_FOUND"
        );

        // Only the invited person sees and answers it.
        let theirs = invitee.graphql("{ myInvitations { id role orgName } }", json!({})).await;
        assert_eq!(theirs["data"]["myInvitations"][0]["id"], invitation.as_str(), "{theirs}");
        assert_eq!(bystander.graphql("{ myInvitations { id } }", json!({})).await["data"]["myInvitations"], json!([]));
        let accept = "mutation($id: ID!) { acceptInvitation(id: $id) { role } }";
        let stolen = bystander.graphql(accept, json!({ "id": invitation })).await;
        assert_eq!(gql_error_code(&stolen), "NOT_FOUND", "{stolen}");
        let joined = invitee.graphql(accept, json!({ "id": invitation })).await;
        assert_eq!(joined["data"]["acceptInvitation"]["role"], "viewer", "{joined}");
        assert_eq!(
            gql_error_code(&invitee.graphql(accept, json!({ "id": invitation })).await),
            "NOT_FOUND",
            "single use"
        );

        // Declined and withdrawn invitations add no one.
        let (decliner, decliner_email) = app.user("Dora").await;
        let sent = owner.graphql(invite, json!({ "o": org, "e": decliner_email, "r": "member" })).await;
        let id = sent["data"]["inviteMember"]["id"].clone();
        let declined = decliner.graphql("mutation($id: ID!) { declineInvitation(id: $id) }", json!({ "id": id })).await;
        assert_eq!(declined["data"]["declineInvitation"], true, "{declined}");
        assert_eq!(gql_error_code(&decliner.graphql(accept, json!({ "id": id })).await), "NOT_FOUND");
        let (late, late_email) = app.user("Lou").await;
        let sent = owner.graphql(invite, json!({ "o": org, "e": late_email, "r": "member" })).await;
        let id = sent["data"]["inviteMember"]["id"].clone();
        let open = owner.graphql("query($o: ID!) { invitations(orgId: $o) { email } }", json!({ "o": org })).await;
        assert!(open.to_string().contains(&late_email), "{open}");
        owner.graphql("mutation($id: ID!) { cancelInvitation(id: $id) }", json!({ "id": id })).await;
        assert_eq!(gql_error_code(&late.graphql(accept, json!({ "id": id })).await), "NOT_FOUND");

        // A viewer cannot invite; an expired invitation cannot be accepted.
        let refused = invitee.graphql(invite, json!({ "o": org, "e": "x@example.com", "r": "viewer" })).await;
        assert_eq!(gql_error_code(&refused), "FORBIDDEN", "{refused}");
        let (expired, expired_email) = app.user("Eve").await;
        let sent = owner.graphql(invite, json!({ "o": org, "e": expired_email, "r": "member" })).await;
        let id = sent["data"]["inviteMember"]["id"].as_str().unwrap().parse::<i64>().unwrap();
        use sea_orm::{ActiveModelTrait, ActiveValue::Set, EntityTrait};
        let row = entity::invitation::Entity::find_by_id(id).one(&app.state.db).await.unwrap().unwrap();
        let mut row: entity::invitation::ActiveModel = row.into();
        row.expires_at = Set(1);
        row.update(&app.state.db).await.unwrap();
        assert_eq!(gql_error_code(&expired.graphql(accept, json!({ "id": id.to_string() })).await), "NOT_FOUND");
    }
}

#[tokio::test]
async fn invitations_are_rate_limited() {
    for app in apps().await {
        let (owner, _) = app.user_with_site("Ray", "ray.example").await;
        let org =
            owner.graphql("{ orgs { id } }", json!({})).await["data"]["orgs"][0]["id"].as_str().unwrap().to_owned();
        let invite = "mutation($o: ID!, $e: String!) { inviteMember(orgId: $o, email: $e) { id } }";
        for n in 0..leadtrail::state::INVITATIONS_PER_HOUR {
            let sent = owner.graphql(invite, json!({ "o": org, "e": format!("p{n}@example.com") })).await;
            assert!(sent["data"]["inviteMember"]["id"].is_string(), "{n}: {sent}");
        }
        let limited = owner.graphql(invite, json!({ "o": org, "e": "one-more@example.com" })).await;
        assert_eq!(gql_error_code(&limited), "RATE_LIMITED", "{limited}");
        // The same through the invitation helper other tests use works for another inviter.
        let (other, _) = app.user_with_site("Rita", "rita.example").await;
        let other_org =
            other.graphql("{ orgs { id } }", json!({})).await["data"]["orgs"][0]["id"].as_str().unwrap().to_owned();
        let (joiner, email) = app.user("Joe").await;
        let joined = invite_and_accept(&other, &joiner, &other_org, &email, "member").await;
        assert_eq!(joined["data"]["acceptInvitation"]["role"], "member", "{joined}");
    }
}

/// The SQLite database file and its write-ahead log, as bytes.
fn sqlite_files(app: &common::TestApp) -> Vec<u8> {
    let url = &app.state.config.database_url;
    let path = url.trim_start_matches("sqlite://").split('?').next().unwrap();
    let mut bytes = std::fs::read(path).unwrap();
    bytes.extend(std::fs::read(format!("{path}-wal")).unwrap_or_default());
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle.as_bytes())
}

#[tokio::test]
async fn erased_text_is_gone_from_the_sqlite_files() {
    for app in apps().await {
        if app.backend != "sqlite" {
            continue;
        }
        let (client, site) = app.user_with_site("Erin", "erin.example").await;
        let (email, name, phone) = ("forget-me-7x31@erin.example", "Zebulon Quartermaine", "+44 7700 900417");
        app.collect(pageview(site, "erase-me", "https://erin.example/pricing")).await.expect(202);
        client
            .post(
                "/api/identify",
                json!({ "siteId": site, "tracker_vid": "erase-me", "email": email, "name": name, "phone": phone }),
            )
            .await
            .expect(200);
        // Each later event rewrites the visitor's row, which leaves the old
        // row's bytes behind in the page unless they are zeroed.
        for page in ["docs", "pricing", "contact"] {
            app.collect(pageview(site, "erase-me", &format!("https://erin.example/{page}"))).await.expect(202);
        }
        let before = sqlite_files(&app);
        for text in [email, name, phone] {
            assert!(contains(&before, text), "{text} is stored before the erasure");
        }
        client.delete(&format!("/api/visitor/erase-me?siteId={site}")).await.expect(200);
        let after = sqlite_files(&app);
        for text in [email, name, phone] {
            assert!(!contains(&after, text), "{text} is still in the database file or its log");
        }
    }
}

#[tokio::test]
async fn cookie_writes_must_show_they_come_from_this_site() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Cora", "cora.example").await;
        let body = json!({ "siteId": site, "destinationUrl": "https://cora.example/", "slug": "plain" }).to_string();
        let send = |content_type: &'static str, extra: Vec<(&'static str, String)>, auth: (&'static str, String)| {
            let mut request = reqwest::Client::new()
                .post(format!("{}/api/links", app.base))
                .header("content-type", content_type)
                .header(auth.0, auth.1)
                .body(body.clone());
            for (name, value) in extra {
                request = request.header(name, value);
            }
            async move { request.send().await.unwrap() }
        };
        let cookie = ("cookie", format!("session={}", client.session.as_deref().unwrap()));
        // A text/plain body with the cookie and nothing saying where it came from.
        let refused = send("text/plain", vec![], cookie.clone()).await;
        assert_eq!(refused.status().as_u16(), 415);
        // A same-site Referer (a browser that sends no Origin) passes.
        let referer = vec![("referer", format!("{}/links", app.base))];
        assert_eq!(send("text/plain", referer, cookie.clone()).await.status().as_u16(), 200);
        // A foreign Referer does not.
        let foreign = vec![("referer", "https://evil.example/".to_owned())];
        assert_eq!(send("text/plain", foreign, cookie.clone()).await.status().as_u16(), 415);
        // An API key is no browser's: its caller chooses the body's type.
        let created = client.graphql("mutation { createApiKey(name: \"k\") { key } }", json!({})).await;
        let key = created["data"]["createApiKey"]["key"].as_str().unwrap().to_owned();
        let body_with_other_slug = body.replace("plain", "keyed");
        let by_key = reqwest::Client::new()
            .post(format!("{}/api/links", app.base))
            .header("content-type", "text/plain")
            .bearer_auth(key)
            .body(body_with_other_slug)
            .send()
            .await
            .unwrap();
        assert_eq!(by_key.status().as_u16(), 200);
        // Collect stays open to text/plain from any page.
        app.collect(pageview(site, "plain", "https://cora.example/")).await.expect(202);
    }
}

#[tokio::test]
async fn metrics_can_require_a_token() {
    for app in apps_with(|config| config.metrics_token = Some("scrape-secret".to_owned())).await {
        let http = reqwest::Client::new();
        let url = format!("{}/metrics", app.base);
        assert_eq!(http.get(&url).send().await.unwrap().status().as_u16(), 401);
        assert_eq!(http.get(&url).bearer_auth("wrong").send().await.unwrap().status().as_u16(), 401);
        let scraped = http.get(&url).bearer_auth("scrape-secret").send().await.unwrap();
        assert_eq!(scraped.status().as_u16(), 200);
        assert!(scraped.text().await.unwrap().contains("leadtrail_"));
    }
}

#[tokio::test]
async fn metrics_can_live_on_their_own_address() {
    let free_address = || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    for app in apps_with(|config| config.metrics_addr = Some(free_address())).await {
        app.client().get("/metrics").await.expect_error(404, "NOT_FOUND");
        let own = app.state.config.metrics_addr.unwrap();
        let scraped = reqwest::get(format!("http://{own}/metrics")).await.unwrap();
        assert_eq!(scraped.status().as_u16(), 200);
        assert!(scraped.text().await.unwrap().contains("leadtrail_"));
    }
}

#[tokio::test]
async fn a_webhook_refusal_does_not_say_where_a_name_points() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Walt", "walt.example").await;
        app.collect(pageview(site, "hooked", "https://walt.example/")).await.expect(202);
        let refused = client
            .post(
                "/api/webhook",
                json!({ "siteId": site, "tracker_vid": "hooked", "webhook_url": "http://localhost:9/hook" }),
            )
            .await;
        refused.expect_error(400, "INVALID_WEBHOOK_URL");
        let message = refused.body["message"].as_str().unwrap();
        assert!(!message.contains("127.0.0.1") && !message.contains("::1"), "{message}");
    }
}

#[tokio::test]
async fn the_api_docs_cannot_be_framed() {
    for app in apps().await {
        let page = app.client().get("/docs/").await;
        page.expect(200);
        let csp = page.headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("frame-ancestors 'none'") && csp.contains("default-src 'self'"), "{csp}");
        assert_eq!(page.headers["x-frame-options"], "DENY");
    }
}

#[tokio::test]
async fn proxy_headers_count_only_from_trusted_proxies() {
    let untrusted = |config: &mut leadtrail::config::Config| {
        config.trust_proxy = TrustProxy::Cloudflare;
        config.trusted_proxies = vec!["10.0.0.0/8".parse().unwrap()];
        config.collect_rate_limit_per_second = 2;
    };
    for app in apps_with(untrusted).await {
        let (client, site) = app.user_with_site("Prox", "prox.example").await;
        // The test connects from 127.0.0.1, which is not a trusted proxy: its
        // CF-Connecting-IP is the client's own word, and so is its country.
        let mut answers = Vec::new();
        for n in 0..4 {
            let headers = [("cf-connecting-ip", format!("203.0.113.{n}")), ("cf-ipcountry", "NZ".to_owned())];
            let headers: Vec<(&str, &str)> = headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
            let reply =
                app.collect_with(pageview(site, &format!("p{n}"), "https://prox.example/"), DESKTOP_UA, &headers).await;
            answers.push(reply.status.as_u16());
        }
        assert!(answers.contains(&429), "one budget for the one real peer: {answers:?}");
        app.state.writer.flush().await;
        let visitor = client.get(&format!("/api/visitor/p0?siteId={site}")).await;
        assert_ne!(visitor.expect(200)["country"], "NZ", "{}", visitor.text);
    }
    let trusted = |config: &mut leadtrail::config::Config| {
        config.trust_proxy = TrustProxy::Cloudflare;
        config.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
        config.collect_rate_limit_per_second = 2;
    };
    for app in apps_with(trusted).await {
        let (client, site) = app.user_with_site("Trust", "trust.example").await;
        for n in 0..4 {
            let headers = [("cf-connecting-ip", format!("203.0.113.{n}")), ("cf-ipcountry", "NZ".to_owned())];
            let headers: Vec<(&str, &str)> = headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
            let reply = app
                .collect_with(pageview(site, &format!("t{n}"), "https://trust.example/"), DESKTOP_UA, &headers)
                .await;
            reply.expect(202);
        }
        app.state.writer.flush().await;
        let visitor = client.get(&format!("/api/visitor/t0?siteId={site}")).await;
        assert_eq!(visitor.expect(200)["country"], "NZ", "{}", visitor.text);
    }
}
