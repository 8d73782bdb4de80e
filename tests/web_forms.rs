//! Every form that takes typed input shows a refusal beside the input it is
//! about, under that input's own label, in words for a person: never an API
//! field name (`maxClicks`, `input.url`, `hot_threshold`).
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    apps,
    web::{expect_page, post_form, refusals},
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
        for case in refusals(&app, &client, site).await {
            let (path, id, label) = (case.path.as_str(), case.error_id, case.label);
            let fields: Vec<(&str, &str)> = case.fields.iter().map(|(name, value)| (*name, value.as_str())).collect();
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
