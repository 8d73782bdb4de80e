//! `/settings/webhooks`: the org's Standard Webhooks signing secret (admins
//! read and rotate it) and the delivery log of its latest attempts.

use askama::Template;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{page::PageInput, parts};
use crate::{
    auth::Role,
    error::{AppError, AppResult},
    web::{
        bridge, format,
        forms::{self, Done, Form, FormState},
        layout::Layout,
    },
};

const ROTATE_SECRET: &str = include_str!("../documents/rotate_secret.graphql");

const PATH: &str = "/settings/webhooks";

pub const FORMS: [Form; 1] = [Form {
    action: "rotate",
    document: ROTATE_SECRET,
    variables: |input| {
        input.confirmed()?;
        Ok(json!({ "orgId": input.text("org") }))
    },
    inputs: &[],
    done: Done::Redirect(|input, _| forms::back_to(input, PATH, "secret-rotated")),
}];

/// The page's reads, under the `workspace` that scopes them.
#[derive(Deserialize)]
struct Answer {
    workspace: Scoped,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Scoped {
    #[serde(default)]
    webhook_signing_secret: Option<String>,
    #[serde(default)]
    webhook_deliveries: Option<Vec<Delivery>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Delivery {
    site_id: i64,
    tracker_vid: String,
    person: parts::Person,
    webhook_type: String,
    message_id: String,
    target_host: String,
    status_code: Option<i64>,
    success: bool,
    duration_ms: i64,
    error: Option<String>,
    created_at: String,
    /// Set for an alert's attempts.
    trigger: Option<String>,
    attempt: i64,
}

pub struct DeliveryRow {
    pub at: String,
    pub visitor_href: String,
    pub visitor: String,
    pub kind: String,
    pub target: String,
    pub outcome: String,
    pub success: bool,
    pub duration: String,
    pub message_id: String,
}

#[derive(Template)]
#[template(path = "hooks.html")]
struct HooksPage<'a> {
    layout: Layout,
    tabs: Vec<parts::Tab>,
    notice: Option<&'static str>,
    action_path: String,
    org_id: String,
    secret: Option<String>,
    can_read_log: bool,
    deliveries: Vec<DeliveryRow>,
    state: &'a FormState,
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let answer = bridge::decode::<Answer>(data)?.workspace;
    let deliveries = answer
        .webhook_deliveries
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|delivery| DeliveryRow {
            at: format::ago(&delivery.created_at, input.now),
            visitor_href: parts::visitor_href(delivery.site_id, &delivery.tracker_vid),
            visitor: delivery.person.with_company(),
            kind: match &delivery.trigger {
                Some(trigger) => format!("{} (alert: {trigger}, attempt {})", delivery.webhook_type, delivery.attempt),
                None => delivery.webhook_type.clone(),
            },
            target: delivery.target_host.clone(),
            outcome: match (delivery.success, delivery.status_code, &delivery.error) {
                (true, Some(code), _) => format!("Delivered ({code})"),
                (true, None, _) => "Delivered".to_owned(),
                (false, Some(code), Some(error)) => format!("Failed ({code}): {error}"),
                (false, Some(code), None) => format!("Failed ({code})"),
                (false, None, Some(error)) => format!("Failed: {error}"),
                (false, None, None) => "Failed".to_owned(),
            },
            success: delivery.success,
            duration: format!("{} ms", format::number(delivery.duration_ms)),
            message_id: delivery.message_id.clone(),
        })
        .collect();
    layout.title = "Webhooks".to_owned();
    let page = HooksPage {
        layout,
        tabs: parts::settings_tabs(input, PATH),
        notice: forms::notice(input.param("done")),
        action_path: input.with_site(PATH),
        org_id: input.access.as_ref().map(|access| access.org_id.clone()).unwrap_or_default(),
        secret: answer.webhook_signing_secret.filter(|_| input.role() >= Role::Admin),
        can_read_log: answer.webhook_deliveries.is_some(),
        deliveries,
        state: &input.form,
    };
    page.render().map_err(AppError::internal)
}
