//! `/settings/alerts`: the site's alert destinations (design §15), for the
//! org's admins: add one, edit it, turn it on or off, send a test, delete it,
//! and see its latest deliveries, retrying a failed one.

use askama::Template;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{page::PageInput, parts};
use crate::{
    auth::Role,
    error::{AppError, AppResult},
    web::{
        bridge, format,
        forms::{self, Done, Form, FormInput, FormState, Input, input},
        layout::Layout,
    },
};

const CREATE: &str = include_str!("../documents/create_destination.graphql");
const UPDATE: &str = include_str!("../documents/update_destination.graphql");
const DELETE: &str = include_str!("../documents/delete_destination.graphql");
const TEST: &str = include_str!("../documents/test_destination.graphql");
const RETRY: &str = include_str!("../documents/retry_delivery.graphql");

const PATH: &str = "/settings/alerts";

/// The destination form's inputs, each filling a field of `$input`.
const INPUTS: [Input; 4] = [
    input("name", "Name", "input.name"),
    input("url", "Target URL", "input.url"),
    input("webhook_type", "Payload", "input.webhookType"),
    input("trigger", "Fires when", "input.trigger"),
];

/// The choices of the type and trigger menus: (value, label).
pub const TYPES: [(&str, &str); 5] = [
    ("custom", "Generic JSON"),
    ("crm_one", "HubSpot-style CRM"),
    ("crm_two", "Salesforce-style CRM"),
    ("chat_one", "Slack"),
    ("chat_two", "Microsoft Teams"),
];
/// The email type, offered when the server sends email.
pub const EMAIL_TYPE: (&str, &str) = ("email", "Email");
pub const TRIGGERS: [(&str, &str); 5] = [
    ("BECAME_HOT", "The visitor becomes hot"),
    ("IDENTIFIED", "The visitor is identified"),
    ("FORM_SUBMITTED", "The visitor submits a form"),
    ("ACCOUNT_BECAME_HOT", "The visitor's account becomes hot"),
    ("CONVERTED", "A conversion is recorded for the visitor"),
];

fn destination_input(input: &FormInput) -> AppResult<Value> {
    let trigger = input.text("trigger");
    if !TRIGGERS.iter().any(|(value, _)| *value == trigger) {
        return Err(AppError::validation("trigger", "choose what fires the alert"));
    }
    Ok(json!({
        "name": input.text("name"),
        "url": input.text("url"),
        "webhookType": input.text("webhook_type"),
        "trigger": trigger,
        "includeJourney": input.flag("include_journey")?,
        "includeEvents": input.flag("include_events")?,
        "enabled": input.flag("enabled")?,
    }))
}

pub const FORMS: [Form; 5] = [
    Form {
        action: "create",
        document: CREATE,
        variables: |input| Ok(json!({ "siteId": input.site()?, "input": destination_input(input)? })),
        inputs: &INPUTS,
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "alert-created")),
    },
    Form {
        action: "save",
        document: UPDATE,
        variables: |input| Ok(json!({ "id": input.text("destination"), "input": destination_input(input)? })),
        inputs: &INPUTS,
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "alert-saved")),
    },
    Form {
        action: "test",
        document: TEST,
        variables: |input| Ok(json!({ "id": input.text("destination") })),
        inputs: &[],
        done: Done::Redirect(|input, answer| {
            let delivered = answer["testDestination"]["success"].as_bool().unwrap_or(false);
            forms::back_to(input, PATH, if delivered { "alert-tested" } else { "alert-test-failed" })
        }),
    },
    Form {
        action: "delete",
        document: DELETE,
        variables: |input| {
            input.confirmed()?;
            Ok(json!({ "id": input.text("destination") }))
        },
        inputs: &[input("confirm", "Confirmation", "confirm")],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "alert-deleted")),
    },
    Form {
        action: "retry",
        document: RETRY,
        variables: |input| Ok(json!({ "id": input.text("delivery") })),
        inputs: &[],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "delivery-retried")),
    },
];

/// The page's reads, under the `workspace` that scopes them.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    workspace: Scoped,
    email_enabled: bool,
}

#[derive(Deserialize)]
struct Scoped {
    #[serde(default)]
    destinations: Option<Vec<Destination>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Destination {
    id: String,
    name: String,
    url: String,
    webhook_type: String,
    trigger: String,
    include_journey: bool,
    include_events: bool,
    enabled: bool,
    disabled_reason: Option<String>,
    failing_since: Option<String>,
    deliveries: Vec<Delivery>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Delivery {
    id: String,
    trigger: String,
    tracker_vid: String,
    person: parts::Person,
    status: String,
    attempts: i64,
    next_attempt_at: Option<String>,
    last_status_code: Option<i64>,
    last_error: Option<String>,
    created_at: String,
}

/// One destination as its form shows it: stored values, or what was just
/// typed into it when its form came back with an error.
pub struct DestinationView {
    pub id: String,
    pub name: String,
    pub url: String,
    pub webhook_type: String,
    pub trigger: String,
    pub trigger_label: &'static str,
    pub type_label: &'static str,
    pub include_journey: bool,
    pub include_events: bool,
    pub enabled: bool,
    pub state: String,
    pub broken: bool,
    /// The save form came back with an error for this destination.
    pub reopened: bool,
    pub deliveries: Vec<DeliveryRow>,
}

pub struct DeliveryRow {
    pub id: String,
    pub at: String,
    pub visitor_href: String,
    pub visitor: String,
    pub trigger: &'static str,
    pub outcome: String,
    pub failed: bool,
}

fn label(choices: &[(&str, &'static str)], value: &str) -> &'static str {
    choices.iter().find(|(known, _)| known.eq_ignore_ascii_case(value)).map_or("", |(_, label)| *label)
}

fn outcome(delivery: &Delivery, now: i64) -> String {
    let last = match (delivery.last_status_code, &delivery.last_error) {
        (Some(code), Some(error)) => format!(" Last answer {code}: {error}"),
        (Some(code), None) => format!(" Last answer {code}."),
        (None, Some(error)) => format!(" Last error: {error}"),
        (None, None) => String::new(),
    };
    let tries = format::count(delivery.attempts, "attempt", "attempts");
    match delivery.status.as_str() {
        "DELIVERED" => format!("Delivered after {tries}."),
        "FAILED" => format!("Failed after {tries}.{last}"),
        _ => match &delivery.next_attempt_at {
            Some(at) if delivery.attempts > 0 => format!("Retrying {} ({tries} so far).{last}", format::ago(at, now)),
            _ => "Waiting to be sent.".to_owned(),
        },
    }
}

fn view(destination: Destination, site: i64, input: &PageInput) -> DestinationView {
    let state = &input.form;
    let reopened = state.sent("save") && state.value("save", "destination") == destination.id;
    let typed = |name: &str, stored: String| if reopened { state.value("save", name) } else { stored };
    let ticked = |name: &str, stored: bool| if reopened { !state.value("save", name).is_empty() } else { stored };
    let status = match (&destination.disabled_reason, destination.enabled, &destination.failing_since) {
        (Some(reason), _, _) => format!("Turned off by Leadtrail: {reason}. Save it to turn it on again."),
        (None, false, _) => "Off: it fires nothing.".to_owned(),
        (None, true, Some(since)) => format!("On, failing since {}.", format::when(since)),
        (None, true, None) => "On.".to_owned(),
    };
    DestinationView {
        trigger_label: label(&TRIGGERS, &destination.trigger),
        type_label: label(&[TYPES.as_slice(), &[EMAIL_TYPE]].concat(), &destination.webhook_type),
        name: typed("name", destination.name),
        url: typed("url", destination.url),
        webhook_type: typed("webhook_type", destination.webhook_type),
        trigger: typed("trigger", destination.trigger),
        include_journey: ticked("include_journey", destination.include_journey),
        include_events: ticked("include_events", destination.include_events),
        enabled: ticked("enabled", destination.enabled),
        broken: destination.disabled_reason.is_some() || destination.failing_since.is_some(),
        state: status,
        reopened,
        deliveries: destination
            .deliveries
            .iter()
            .map(|delivery| DeliveryRow {
                id: delivery.id.clone(),
                at: format::ago(&delivery.created_at, input.now),
                visitor_href: parts::visitor_href(site, &delivery.tracker_vid),
                visitor: delivery.person.with_company(),
                trigger: label(&TRIGGERS, &delivery.trigger),
                outcome: outcome(delivery, input.now),
                failed: delivery.status == "FAILED",
            })
            .collect(),
        id: destination.id,
    }
}

#[derive(Template)]
#[template(path = "alerts.html")]
struct AlertsPage<'a> {
    layout: Layout,
    tabs: Vec<parts::Tab>,
    notice: Option<&'static str>,
    action_path: String,
    is_admin: bool,
    destinations: Vec<DestinationView>,
    types: Vec<(&'static str, &'static str)>,
    triggers: &'static [(&'static str, &'static str)],
    state: &'a FormState,
}

impl AlertsPage<'_> {
    /// The new-destination form's checkbox: ticked unless it came back unticked.
    fn create_ticked(&self, name: &str) -> bool {
        !self.state.sent("create") || !self.state.value("create", name).is_empty()
    }
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let answer = bridge::decode::<Answer>(data)?;
    let email_enabled = answer.email_enabled;
    let answer = answer.workspace;
    let destinations = answer.destinations.unwrap_or_default().into_iter().map(|d| view(d, site, input)).collect();
    let mut types = TYPES.to_vec();
    if email_enabled {
        types.push(EMAIL_TYPE);
    }
    layout.title = "Alerts".to_owned();
    let page = AlertsPage {
        layout,
        tabs: parts::settings_tabs(input, PATH),
        notice: forms::notice(input.param("done")),
        action_path: input.with_site(PATH),
        is_admin: input.role() >= Role::Admin,
        destinations,
        types,
        triggers: &TRIGGERS,
        state: &input.form,
    };
    page.render().map_err(AppError::internal)
}
