//! `/visitor/<tracker_vid>`: one visitor's profile, with two forms that post
//! back to the page (push to a webhook target, with a dry-run preview, and
//! identify); the page shows what they answered.

use askama::Template;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{page::PageInput, parts};
use crate::{
    error::{AppError, AppResult},
    web::{
        bridge,
        forms::{Done, Form, input},
        layout::Layout,
    },
};

use super::visitor_view as view;

pub use view::Outcome;

const SEND_WEBHOOK: &str = include_str!("../documents/send_webhook.graphql");
const IDENTIFY: &str = include_str!("../documents/identify.graphql");

pub const FORMS: [Form; 2] = [
    Form {
        action: "webhook",
        document: SEND_WEBHOOK,
        variables: |input| {
            Ok(json!({
                "siteId": input.site()?,
                "id": input.id()?,
                "url": input.text("url"),
                "type": input.optional("type"),
                "journey": input.flag("journey")?,
                "events": input.flag("events")?,
                "dryRun": input.text("intent") != "send",
            }))
        },
        inputs: &[input("url", "Target URL", "url"), input("type", "Format", "type")],
        done: Done::Show,
    },
    Form {
        action: "identify",
        document: IDENTIFY,
        variables: |input| {
            Ok(json!({
                "siteId": input.site()?,
                "id": input.id()?,
                "email": input.optional("email"),
                "userId": input.optional("user_id"),
                "name": input.optional("name"),
                "company": input.optional("company"),
                "phone": input.optional("phone"),
            }))
        },
        inputs: &[
            input("email", "Email", "email"),
            input("user_id", "User id", "userId"),
            input("name", "Name", "name"),
            input("company", "Company", "company"),
            input("phone", "Phone", "phone"),
        ],
        done: Done::Show,
    },
];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    workspace: Scoped,
    webhook_info: WebhookInfo,
}

#[derive(Deserialize)]
struct Scoped {
    site: SiteSettings,
    visitor: view::Profile,
}

#[derive(Deserialize)]
struct SiteSettings {
    gravatar: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WebhookInfo {
    supported_types: Vec<String>,
}

/// One input of the identify form.
pub struct Input {
    pub key: &'static str,
    pub label: &'static str,
    pub kind: &'static str,
    pub value: String,
    pub error: Option<String>,
}

pub struct TypeOption {
    pub value: String,
    pub selected: bool,
}

#[derive(Template)]
#[template(path = "visitor.html")]
struct VisitorPage {
    layout: Layout,
    action: String,
    talk_href: String,
    p: view::ProfileView,
    types: Vec<TypeOption>,
    outcome: Outcome,
    n: view::NoticeView,
    identify_inputs: Vec<Input>,
    /// Pushing and identifying are for members and up.
    can_act: bool,
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let answer: Answer = bridge::decode(data)?;
    let profile = view::ProfileView::new(answer.workspace.visitor, site, answer.workspace.site.gravatar, input);
    let (outcome, n) = Outcome::of(&input.form);
    let types = answer
        .webhook_info
        .supported_types
        .into_iter()
        .map(|value| TypeOption { selected: value == outcome.webhook.kind, value })
        .collect();
    let typed = &outcome.identify;
    let identify_inputs = [
        ("email", "Email", "email", &typed.email),
        ("user_id", "User id", "text", &typed.user_id),
        ("name", "Name", "text", &typed.name),
        ("company", "Company", "text", &typed.company),
        ("phone", "Phone", "tel", &typed.phone),
    ]
    .into_iter()
    .map(|(key, label, kind, value)| Input {
        key,
        label,
        kind,
        value: value.clone(),
        error: if n.identify_field == key { n.identify_error.clone() } else { None },
    })
    .collect();
    layout.title = profile.name.clone();
    let page = VisitorPage {
        can_act: input.role() >= crate::auth::Role::Member,
        layout,
        action: parts::visitor_href(site, &profile.tracker_vid),
        talk_href: parts::talk_href(site, &profile.tracker_vid),
        p: profile,
        types,
        n,
        identify_inputs,
        outcome,
    };
    page.render().map_err(AppError::internal)
}
