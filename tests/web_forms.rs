//! Every form that takes typed input shows a refusal beside the input it is
//! about, under that input's own label, in words for a person: never an API
//! field name (`maxClicks`, `input.url`, `hot_threshold`).
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    apps,
    traffic::pageview,
    web::{LINK_FIELDS, expect_page, link_id, org_of, post_form},
};

/// Names of the API's fields, which a person must never read in a refusal.
const API_NAMES: [&str; 16] = [
    "input.",
    "destinationUrl",
    "webhookUrl",
    "webhookType",
    "maxClicks",
    "max_clicks",
    "expiresAt",
    "hotThreshold",
    "hot_threshold",
    "trackingMode",
    "newEmail",
    "newPassword",
    "currentPassword",
    "userId",
    "user_id",
    "link_type",
];

/// A form to send: (path, fields, the id of the error element, the label the
/// error starts with).
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str, &'a str);

/// The text of the element with `id`, from a page.
fn element_text<'a>(html: &'a str, id: &str) -> Option<&'a str> {
    let start = html.find(&format!(r#"id="{id}">"#))? + id.len() + 6;
    let end = html[start..].find('<')?;
    Some(&html[start..start + end])
}

#[tokio::test]
async fn every_refusal_is_shown_beside_its_input_under_its_label() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Forms", "forms.example").await;
        app.collect(pageview(site, "form-visitor", "https://forms.example/")).await.expect(202);
        post_form(&client, "/links", &LINK_FIELDS, &[]).await;
        let link = link_id(&client, site, "spring").await;
        let link_path = format!("/links/{link}");
        let visitor_path = format!("/visitor/form-visitor?site={site}");
        let org = org_of(&client, site).await;
        let site_form = |field: &'static str, value: &'static str| {
            let mut fields = vec![
                ("action", "save"),
                ("name", "Forms"),
                ("domain", "forms.example"),
                ("tracking_mode", "cookie"),
                ("hot_threshold", "70"),
                ("high_value_patterns", "/pricing"),
            ];
            fields.retain(|(name, _)| *name != field);
            fields.push((field, value));
            fields
        };
        let mut link_update: Vec<(&str, &str)> =
            LINK_FIELDS.iter().filter(|(name, _)| !matches!(*name, "action" | "max_clicks")).copied().collect();
        link_update.extend([("action", "update"), ("max_clicks", "0")]);
        let alert = |field: &'static str, value: &'static str| {
            let mut fields = vec![
                ("action", "create"),
                ("name", "Sales"),
                ("url", "https://hooks.example.com/x"),
                ("webhook_type", "custom"),
                ("trigger", "IDENTIFIED"),
            ];
            fields.retain(|(name, _)| *name != field);
            fields.push((field, value));
            fields
        };
        let cases: Vec<Case> = vec![
            ("/settings/account", vec![("action", "name"), ("name", " ")], "account-name-error", "Your name: "),
            ("/settings/account", vec![("action", "email"), ("email", "nope")], "account-email-error", "Email: "),
            (
                "/settings/account",
                vec![("action", "password"), ("current_password", "not it at all"), ("new_password", "long enough")],
                "current-password-error",
                "Current password: ",
            ),
            (
                "/settings/account",
                vec![("action", "password"), ("current_password", "correct horse"), ("new_password", "short")],
                "new-password-error",
                "New password: ",
            ),
            (
                "/settings/account",
                vec![("action", "delete"), ("password", "not it at all"), ("confirm", "1")],
                "delete-password-error",
                "Password: ",
            ),
            ("/settings", site_form("hot_threshold", "hot"), "site-hot_threshold-error", "Hot threshold: "),
            ("/settings", site_form("domain", "not a host!"), "site-domain-error", "Domain: "),
            ("/settings", site_form("tracking_mode", "spy"), "site-tracking_mode-error", "Tracking mode: "),
            ("/settings", vec![("action", "create"), ("domain", "not a host!")], "new-domain-error", "Domain: "),
            (
                "/settings/team",
                vec![("action", "invite-member"), ("org", &org), ("email", "nope"), ("role", "member")],
                "member-email-error",
                "Email: ",
            ),
            (
                "/settings/team",
                vec![("action", "create-key"), ("org", &org), ("name", " ")],
                "key-name-error",
                "Name of the new key: ",
            ),
            ("/settings/alerts", alert("url", "ftp://files.example/"), "new-url-error", "Target URL: "),
            ("/settings/alerts", alert("name", " "), "new-name-error", "Name: "),
            (
                "/links",
                LINK_FIELDS
                    .iter()
                    .map(
                        |&(name, value)| {
                            if name == "destination" { (name, "ftp://files.example/") } else { (name, value) }
                        },
                    )
                    .collect(),
                "create-destination-error",
                "Destination URL: ",
            ),
            (&link_path, link_update.clone(), "update-max_clicks-error", "Most clicks: "),
            (
                &visitor_path,
                vec![("action", "webhook"), ("url", "ftp://files.example/"), ("type", "custom"), ("intent", "preview")],
                "webhook-url-error",
                "Target URL: ",
            ),
            (&visitor_path, vec![("action", "identify")], "identify-user_id-error", "User id: "),
        ];
        for (path, fields, id, label) in cases {
            let reply = post_form(&client, path, &fields, &[]).await;
            let status = reply.status.as_u16();
            assert!((400..500).contains(&status), "{path} {fields:?}: {status}");
            let html = expect_page(&reply, status);
            let shown = element_text(&html, id).unwrap_or_else(|| panic!("{path} {fields:?}: no #{id} in {html}"));
            assert!(shown.starts_with(label), "{path} {id}: {shown:?}");
            assert!(shown.len() > label.len() + 3, "{path} {id}: the problem is said: {shown:?}");
            for name in API_NAMES {
                assert!(!shown.contains(name), "{path} {id} names the API's {name}: {shown:?}");
            }
        }

        // The sign-up form, before any session.
        let anonymous = app.client();
        let fields = [("name", "New"), ("email", "not-an-email"), ("password", "correct horse")];
        let html = expect_page(&post_form(&anonymous, "/signup", &fields, &[]).await, 400);
        let shown = element_text(&html, "email-error").unwrap();
        assert!(shown.starts_with("Email: "), "{shown}");
    }
}
