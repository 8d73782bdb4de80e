//! The settings pages over HTTP: sites, members, API keys, the signing
//! secret and the account, for the owner, with bad values, signed out, for
//! another tenant, and each role's exact rights through the forms (with the
//! links forms).
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    Client, TestApp, apps,
    web::{LINK_FIELDS, expect_page, join, link_id, location, org_of, post_form},
};
use serde_json::{Value, json};

#[tokio::test]
async fn settings_pages_change_the_site_members_keys_secret_and_account() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Owen", "shop.example").await;
        let org = org_of(&client, site).await;
        let page = expect_page(&client.get("/settings").await, 200);
        let snippet = format!(
            "&#60;script defer src=&#34;{}/script.js&#34; data-site-id=&#34;{site}&#34;&#62;&#60;/script&#62;",
            app.base
        );
        assert!(page.contains(&snippet), "{page}");

        // Site settings.
        let save = [
            ("action", "save"),
            ("name", "Shop"),
            ("domain", "shop.example"),
            ("tracking_mode", "cookieless"),
            ("first_party_domain", ""),
            ("hot_threshold", "70"),
            ("high_value_patterns", "/pricing\n/demo*\n"),
            ("retention_days", "30"),
            ("respect_dnt", "1"),
            ("timezone", "Asia/Tokyo"),
        ];
        assert_eq!(location(&post_form(&client, "/settings", &save, &[]).await), "/settings?done=site-saved");
        let stored = client
            .graphql(
                "query($s: Int!) { site(id: $s) { name trackingMode hotThreshold highValuePatterns retentionDays respectDoNotTrack timezone } }",
                json!({ "s": site }),
            )
            .await;
        assert_eq!(
            stored["data"]["site"],
            json!({ "name": "Shop", "trackingMode": "cookieless", "hotThreshold": 70,
                    "highValuePatterns": ["/pricing", "/demo*"], "retentionDays": 30, "respectDoNotTrack": true,
                    "timezone": "Asia/Tokyo" })
        );
        let page = expect_page(&client.get("/settings").await, 200);
        assert!(page.contains("<option selected>Asia/Tokyo</option>"), "the select shows the zone");
        let page = expect_page(&client.get("/settings?done=site-saved").await, 200);
        assert!(page.contains("data-mode=&#34;cookieless&#34; data-respect-dnt"), "{page}");
        assert!(page.contains("The site settings were saved."));
        for (field, value, shows) in [
            ("hot_threshold", "hot", r#"id="site-hot_threshold-error">Hot threshold: must be a whole number"#),
            ("tracking_mode", "sometimes", r#"id="site-tracking_mode-error">Tracking mode: "#),
            ("retention_days", "0", r#"id="site-retention_days-error">Keep visitor data for (days): "#),
            ("timezone", "Mars/Olympus", r#"id="site-timezone-error">Time zone: must be an IANA time zone name"#),
        ] {
            let mut fields: Vec<(&str, &str)> = save.iter().filter(|(name, _)| *name != field).copied().collect();
            fields.push((field, value));
            let html = expect_page(&post_form(&client, "/settings", &fields, &[]).await, 400);
            assert!(html.contains(shows), "{field}={value}: {html}");
        }

        // A second site, then deleting it (confirmation first).
        let created = post_form(&client, "/settings", &[("action", "create"), ("domain", "two.example")], &[]).await;
        let target = location(&created).to_owned();
        assert!(target.starts_with("/settings?site=") && target.ends_with("&done=site-created"), "{target}");
        let second: i64 = target["/settings?site=".len()..].split('&').next().unwrap().parse().unwrap();
        let path = format!("/settings?site={second}");
        expect_page(&post_form(&client, &path, &[("action", "delete")], &[]).await, 400);
        assert_eq!(
            location(&post_form(&client, &path, &[("action", "delete"), ("confirm", "1")], &[]).await),
            "/settings?done=site-deleted"
        );
        let gone = client.graphql("query($s: Int!) { site(id: $s) { id } }", json!({ "s": second })).await;
        assert_eq!(common::gql_error_code(&gone), "NOT_FOUND");

        // Members: invite a colleague, who accepts on their account page;
        // then change their role.
        let (colleague, email) = app.user("Cora").await;
        let malformed = post_form(
            &client,
            "/settings/team",
            &[("action", "invite-member"), ("org", &org), ("email", "not an address"), ("role", "member")],
            &[],
        )
        .await;
        assert!(expect_page(&malformed, 400).contains(r#"id="member-email-error">"#), "{}", malformed.text);
        for invited in ["nobody@example.com", email.as_str()] {
            let sent = post_form(
                &client,
                "/settings/team",
                &[("action", "invite-member"), ("org", &org), ("email", invited), ("role", "viewer")],
                &[],
            )
            .await;
            assert_eq!(location(&sent), "/settings/team?done=member-invited", "{invited}");
        }
        let team = expect_page(&client.get("/settings/team").await, 200);
        assert!(team.contains(&email) && team.contains("nobody@example.com"), "{team}");
        let own = expect_page(&colleague.get("/settings/account").await, 200);
        let marker = r#"name="invitation" value=""#;
        let start = own.find(marker).expect("the invitation is offered") + marker.len();
        let invitation = own[start..start + own[start..].find('"').unwrap()].to_owned();
        let joined = post_form(
            &colleague,
            "/settings/account",
            &[("action", "accept-invitation"), ("invitation", &invitation)],
            &[],
        )
        .await;
        assert_eq!(location(&joined), "/settings/account?done=invitation-accepted");
        let team = expect_page(&client.get("/settings/team").await, 200);
        assert!(!team.contains(&format!("Withdraw the invitation to {email}")), "answered, no longer pending");
        let user_id = colleague.graphql("{ viewer { id } }", json!({})).await["data"]["viewer"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let changed = post_form(
            &client,
            "/settings/team",
            &[("action", "change-role"), ("org", &org), ("user", &user_id), ("role", "admin")],
            &[],
        )
        .await;
        assert_eq!(location(&changed), "/settings/team?done=role-changed");
        let members = client.graphql("query($o: ID!) { members(orgId: $o) { email role } }", json!({ "o": org })).await;
        assert!(members["data"]["members"].as_array().unwrap().contains(&json!({ "email": email, "role": "admin" })));

        // API keys: shown once, usable, then revoked.
        let key_page =
            post_form(&client, "/settings/team", &[("action", "create-key"), ("org", &org), ("name", "CRM sync")], &[])
                .await;
        let html = expect_page(&key_page, 200);
        let start = html.find(r#"<code id="new-key">"#).expect("the key is shown") + r#"<code id="new-key">"#.len();
        let key = html[start..html[start..].find('<').unwrap() + start].to_owned();
        let by_key = app.client().with_bearer(&key);
        by_key.get("/api/sites").await.expect(200);
        assert!(!expect_page(&client.get("/settings/team").await, 200).contains(&key), "shown only once");
        let key_id = client.graphql("query($o: ID!) { apiKeys(orgId: $o) { id } }", json!({ "o": org })).await["data"]
            ["apiKeys"][0]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let revoked =
            post_form(&client, "/settings/team", &[("action", "revoke-key"), ("key", &key_id), ("confirm", "1")], &[])
                .await;
        assert_eq!(location(&revoked), "/settings/team?done=key-revoked");
        by_key.get("/api/sites").await.expect_error(401, "UNAUTHORIZED");

        // The signing secret, rotated after confirmation.
        let secret = |answer: Value| answer["data"]["webhookSigningSecret"].as_str().unwrap().to_owned();
        let before = secret(client.graphql("{ webhookSigningSecret }", json!({})).await);
        let hooks = expect_page(&client.get("/settings/webhooks").await, 200);
        assert!(hooks.contains(&before) && hooks.contains("Nothing sent yet"), "{hooks}");
        expect_page(&post_form(&client, "/settings/webhooks", &[("action", "rotate"), ("org", &org)], &[]).await, 400);
        let rotated =
            post_form(&client, "/settings/webhooks", &[("action", "rotate"), ("org", &org), ("confirm", "1")], &[])
                .await;
        assert_eq!(location(&rotated), "/settings/webhooks?done=secret-rotated");
        let after = secret(client.graphql("{ webhookSigningSecret }", json!({})).await);
        assert_ne!(before, after);
        assert!(expect_page(&client.get("/settings/webhooks").await, 200).contains(&after));

        // The account: name, email (taken and free), password, then deletion.
        let account = "/settings/account";
        assert_eq!(
            location(&post_form(&client, account, &[("action", "name"), ("name", "Owen O.")], &[]).await),
            "/settings/account?done=name-saved"
        );
        let taken = post_form(&client, account, &[("action", "email"), ("email", &email)], &[]).await;
        assert!(expect_page(&taken, 409).contains(r#"id="account-email-error">"#));
        let new_email = format!("{}@example.com", common::unique("owen"));
        assert_eq!(
            location(&post_form(&client, account, &[("action", "email"), ("email", &new_email)], &[]).await),
            "/settings/account?done=email-saved"
        );
        let wrong = post_form(
            &client,
            account,
            &[("action", "password"), ("current_password", "wrong horse"), ("new_password", "battery staple")],
            &[],
        )
        .await;
        assert!(expect_page(&wrong, 400).contains(r#"id="current-password-error">"#));
        let short = post_form(
            &client,
            account,
            &[("action", "password"), ("current_password", "correct horse"), ("new_password", "short")],
            &[],
        )
        .await;
        assert!(expect_page(&short, 400).contains(r#"id="new-password-error">"#));
        let changed = post_form(
            &client,
            account,
            &[("action", "password"), ("current_password", "correct horse"), ("new_password", "battery staple")],
            &[],
        )
        .await;
        assert_eq!(location(&changed), "/settings/account?done=password-saved");
        let profile = expect_page(&client.get(account).await, 200);
        assert!(profile.contains("value=\"Owen O.\"") && profile.contains(&new_email), "{profile}");
        let signed_in = app
            .client()
            .post("/api/auth/sign-in/email", json!({ "email": new_email, "password": "battery staple" }))
            .await;
        signed_in.expect(200);
        let deleted =
            post_form(&client, account, &[("action", "delete"), ("password", "battery staple"), ("confirm", "1")], &[])
                .await;
        assert_eq!(location(&deleted), "/login");
        app.client()
            .post("/api/auth/sign-in/email", json!({ "email": new_email, "password": "battery staple" }))
            .await
            .expect_error(401, "INVALID_EMAIL_OR_PASSWORD");
    }
}

#[tokio::test]
async fn a_user_without_a_site_adds_one_in_settings() {
    for app in apps().await {
        let (client, _) = app.user("Newbie").await;
        let page = expect_page(&client.get("/settings").await, 200);
        assert!(page.contains("Add a site") && !page.contains("Tracking snippet"), "{page}");
        let bad = post_form(&client, "/settings", &[("action", "create"), ("domain", "")], &[]).await;
        assert!(expect_page(&bad, 400).contains("new-domain-error"));
        let made = post_form(&client, "/settings", &[("action", "create"), ("domain", "first.example")], &[]).await;
        let target = location(&made).to_owned();
        let page = expect_page(&client.get(&target).await, 200);
        assert!(
            page.contains("Tracking snippet for first.example") && page.contains("The site was created."),
            "{page}"
        );
        for path in ["/settings/team", "/settings/webhooks", "/settings/account"] {
            expect_page(&client.get(path).await, 200);
        }
    }
}

#[tokio::test]
async fn settings_refuse_the_signed_out_and_strangers() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Owen", "shop.example").await;
        let org = org_of(&owner, site).await;
        let signed_out = app.client();
        for path in ["/settings", "/settings/team", "/settings/webhooks", "/settings/account"] {
            assert!(location(&signed_out.get(path).await).starts_with("/login?next="), "{path}");
            let post =
                post_form(&signed_out, path, &[("action", "rotate"), ("org", &org), ("confirm", "1")], &[]).await;
            assert!(location(&post).starts_with("/login"), "{path}");
        }
        let (stranger, _) = app.user_with_site("Mallory", "mallory.example").await;
        for path in [format!("/settings?site={site}"), format!("/settings/team?site={site}")] {
            expect_page(&stranger.get(&path).await, 404);
        }
        let secret_before = owner.graphql("{ webhookSigningSecret }", json!({})).await;
        for (path, fields) in [
            (format!("/settings?site={site}"), vec![("action", "delete"), ("confirm", "1")]),
            (
                "/settings/team".to_owned(),
                vec![("action", "invite-member"), ("org", &org), ("email", "m@example.com"), ("role", "owner")],
            ),
            ("/settings/team".to_owned(), vec![("action", "create-key"), ("org", &org), ("name", "stolen")]),
            ("/settings/webhooks".to_owned(), vec![("action", "rotate"), ("org", &org), ("confirm", "1")]),
        ] {
            let reply = post_form(&stranger, &path, &fields, &[]).await;
            assert!(matches!(reply.status.as_u16(), 403 | 404), "{path}: {}", reply.status);
        }
        assert_eq!(owner.graphql("{ webhookSigningSecret }", json!({})).await, secret_before);
        let still = owner.graphql("query($s: Int!) { site(id: $s) { id } }", json!({ "s": site })).await;
        assert_eq!(still["data"]["site"]["id"], site);
        let keys = owner.graphql("query($o: ID!) { apiKeys(orgId: $o) { id } }", json!({ "o": org })).await;
        assert_eq!(keys["data"]["apiKeys"], json!([]));
        // A cross-site form is refused before it runs.
        let forged = post_form(
            &owner,
            "/settings/webhooks",
            &[("action", "rotate"), ("org", &org), ("confirm", "1")],
            &[("origin", "https://evil.example")],
        )
        .await;
        expect_page(&forged, 403);
        assert_eq!(owner.graphql("{ webhookSigningSecret }", json!({})).await, secret_before);
    }
}

#[tokio::test]
async fn viewers_and_members_get_exactly_their_rights_through_the_forms() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Owen", "shop.example").await;
        let org = org_of(&owner, site).await;
        location(&post_form(&owner, "/links", &LINK_FIELDS, &[]).await);
        let link = link_id(&owner, site, "spring").await;
        let viewer = join(&app, &owner, &org, "Vera", "viewer").await;
        let member = join(&app, &owner, &org, "Max", "member").await;
        let admin = join(&app, &owner, &org, "Ada", "admin").await;
        for client in [&viewer, &member, &admin] {
            location(&post_form(client, "/site", &[("site", &site.to_string()), ("next", "/")], &[]).await);
        }
        let (_, outsider_email) = app.user("Otto").await;
        let leaver = join(&app, &owner, &org, "Zed", "viewer").await;
        let leaver_id = member_id(&app, &owner, &org, &admin_email(&leaver).await).await;
        let viewer_id = member_id(&app, &owner, &org, &admin_email(&viewer).await).await;

        // What each page offers.
        let offers = |html: &str, marker: &str| html.contains(marker);
        for (client, links_form, site_form, team_form, secret) in [
            (&viewer, false, false, false, false),
            (&member, true, false, false, false),
            (&admin, true, true, true, true),
        ] {
            assert_eq!(offers(&expect_page(&client.get("/links").await, 200), r#"value="create""#), links_form);
            assert_eq!(
                offers(&expect_page(&client.get(&format!("/links/{link}")).await, 200), r#"value="toggle""#),
                links_form
            );
            assert_eq!(offers(&expect_page(&client.get("/settings").await, 200), r#"value="save""#), site_form);
            assert_eq!(
                offers(&expect_page(&client.get("/settings/team").await, 200), r#"value="invite-member""#),
                team_form
            );
            assert_eq!(offers(&expect_page(&client.get("/settings/webhooks").await, 200), "Signing secret"), secret);
        }
        assert!(
            expect_page(&viewer.get("/settings/webhooks").await, 200).contains("Members and up read the delivery log")
        );
        // A visitor's push and identify forms are for members and up.
        app.collect(common::traffic::pageview(site, "v1", "https://shop.example/")).await.expect(202);
        for (client, offered) in [(&viewer, false), (&member, true)] {
            let html = expect_page(&client.get(&format!("/visitor/v1?site={site}")).await, 200);
            assert_eq!(html.contains(r#"value="identify""#), offered, "{html}");
        }
        // Anyone may leave; only the own row offers it to a viewer.
        let team = expect_page(&viewer.get("/settings/team").await, 200);
        assert_eq!(team.matches(r#"value="remove-member""#).count(), 1, "{team}");
        assert!(team.contains(">Leave</button>"), "{team}");

        // Deleting a link: refused to a viewer, allowed to a member.
        location(
            &post_form(
                &owner,
                "/links",
                &[("action", "create"), ("destination", "https://shop.example/"), ("slug", "bye"), ("active", "1")],
                &[],
            )
            .await,
        );
        let bye = format!("/links/{}", link_id(&owner, site, "bye").await);
        let delete = [("action", "delete"), ("confirm", "1")];
        assert!(expect_page(&post_form(&viewer, &bye, &delete, &[]).await, 403).contains("Not allowed"));
        assert_eq!(location(&post_form(&member, &bye, &delete, &[]).await), "/links?done=link-deleted");

        // What each form does for each role: (path, fields, the weakest role allowed).
        let toggle_path = format!("/links/{link}");
        let owner_key = owner
            .graphql(
                "mutation($o: ID!) { createApiKey(orgId: $o, name: \"ops\") { apiKey { id } } }",
                json!({ "o": org }),
            )
            .await["data"]["createApiKey"]["apiKey"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let attempts: Vec<Attempt> = vec![
            ("/links", vec![("action", "create"), ("destination", "https://shop.example/"), ("active", "1")], "member"),
            (&toggle_path, vec![("action", "toggle"), ("active", "1")], "member"),
            (
                &toggle_path,
                LINK_FIELDS.iter().map(|&(k, v)| if k == "action" { (k, "update") } else { (k, v) }).collect(),
                "member",
            ),
            (
                "/settings/team",
                vec![("action", "change-role"), ("org", &org), ("user", &viewer_id), ("role", "viewer")],
                "admin",
            ),
            (
                "/settings",
                vec![
                    ("action", "save"),
                    ("name", "Shop"),
                    ("domain", "shop.example"),
                    ("tracking_mode", "cookie"),
                    ("hot_threshold", "60"),
                ],
                "admin",
            ),
            ("/settings", vec![("action", "create"), ("domain", "another.example"), ("org", &org)], "admin"),
            (
                "/settings/team",
                vec![("action", "invite-member"), ("org", &org), ("email", &outsider_email), ("role", "viewer")],
                "admin",
            ),
            ("/settings/team", vec![("action", "create-key"), ("org", &org), ("name", "key")], "admin"),
            ("/settings/webhooks", vec![("action", "rotate"), ("org", &org), ("confirm", "1")], "admin"),
            ("/settings/team", vec![("action", "revoke-key"), ("key", &owner_key), ("confirm", "1")], "admin"),
            (
                "/settings/team",
                vec![("action", "remove-member"), ("org", &org), ("user", &leaver_id), ("confirm", "1")],
                "admin",
            ),
            ("/settings", vec![("action", "delete"), ("confirm", "1")], "admin"),
        ];
        for (name, client) in [("viewer", &viewer), ("member", &member), ("admin", &admin)] {
            for (path, fields, needed) in &attempts {
                let allowed = match *needed {
                    "member" => name != "viewer",
                    _ => name == "admin",
                };
                let reply = post_form(client, path, fields, &[]).await;
                let status = reply.status.as_u16();
                if allowed {
                    assert!(status == 303 || status == 200, "{name} may {path} {fields:?}: {status} {}", reply.text);
                } else {
                    assert_eq!(status, 403, "{name} may not {path} {fields:?}: {}", reply.text);
                    assert!(reply.text.contains("Not allowed"), "{name} {path}");
                }
            }
        }
        // An admin cannot make an owner; the owner can.
        let admin_id = member_id(&app, &owner, &org, &admin_email(&admin).await).await;
        let promote =
            [("action", "change-role"), ("org", org.as_str()), ("user", admin_id.as_str()), ("role", "owner")];
        expect_page(&post_form(&admin, "/settings/team", &promote, &[]).await, 403);
        location(&post_form(&owner, "/settings/team", &promote, &[]).await);
    }
}

/// A form post: the path, its fields, and the weakest role allowed to send it.
type Attempt<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);

async fn admin_email(client: &Client) -> String {
    client.graphql("{ viewer { email } }", json!({})).await["data"]["viewer"]["email"].as_str().unwrap().to_owned()
}

async fn member_id(_app: &TestApp, owner: &Client, org: &str, email: &str) -> String {
    let members = owner.graphql("query($o: ID!) { members(orgId: $o) { userId email } }", json!({ "o": org })).await;
    members["data"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == email)
        .map(|m| m["userId"].as_str().unwrap().to_owned())
        .unwrap_or_else(|| panic!("{email} in {members}"))
}
