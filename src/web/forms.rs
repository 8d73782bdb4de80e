//! Every form of the web app as rows of tables, like the pages: each row
//! names the `action` value that picks it, the GraphQL mutation it runs
//! through the one executor (so the API's role checks and error codes apply
//! unchanged), how the form's fields become the mutation's variables, the
//! inputs a refusal can be about, with their labels, and what follows
//! success. A page's rows are its `forms`; the site switcher, on every
//! page, is `SWITCH_SITE`.
//!
//! Success answers 303 back to a page with `done=<key>`, so a reload does not
//! send the form again; the key picks a fixed sentence, so nothing from the
//! address is shown. A secret (a new API key, a new signing secret) cannot
//! travel in an address, so those forms show the page at once, with the
//! secret, instead; so do forms whose answer the page shows (a webhook's
//! dry run). A refused form shows the page again with what was typed and
//! the refusal beside the input it concerns, under that input's label:
//! the error names the variable the input filled (`AppError::field`).

use std::collections::HashMap;

use serde_json::Value;

use super::{error::WebResult, nav};
use crate::error::{AppError, AppResult, ErrorCode};

/// What the mutation's variables are made from.
pub struct FormInput<'a> {
    pub fields: &'a HashMap<String, String>,
    /// The page's site; `None` only on a page that works without one.
    pub site_id: Option<i64>,
    /// The page's object id (a link's), when it has one.
    pub id: Option<&'a str>,
    /// Whether the address chose the site (`?site=N`), to keep it.
    pub site_chosen: bool,
}

/// Form bodies are a few fields; anything larger is refused.
pub const FORM_LIMIT: usize = 64 * 1024;

/// An urlencoded form body as its fields (the last of a repeated name wins).
pub async fn read_form(body: axum::body::Body) -> WebResult<HashMap<String, String>> {
    let bytes = axum::body::to_bytes(body, FORM_LIMIT)
        .await
        .map_err(|_| AppError::new(ErrorCode::PayloadTooLarge, "the form is too large"))?;
    Ok(url::form_urlencoded::parse(&bytes).into_owned().collect())
}

/// A checkbox: absent, empty, `0` or `false` is off; `1`, `on` or `true` is on.
pub fn flag(name: &str, raw: Option<&str>) -> AppResult<bool> {
    match raw.map(str::trim) {
        None | Some("" | "0" | "false") => Ok(false),
        Some("1" | "on" | "true") => Ok(true),
        Some(_) => Err(AppError::validation(name, "must be 1 or 0")),
    }
}

impl FormInput<'_> {
    /// The page's site; NOT_FOUND on a page that works without one and has none.
    pub fn site(&self) -> AppResult<i64> {
        self.site_id.ok_or_else(|| AppError::not_found("site"))
    }

    /// A field, trimmed; empty when absent.
    pub fn text(&self, name: &str) -> String {
        self.fields.get(name).map(|value| value.trim().to_owned()).unwrap_or_default()
    }

    /// A field, or null when empty.
    pub fn optional(&self, name: &str) -> Value {
        let value = self.text(name);
        if value.is_empty() { Value::Null } else { Value::String(value) }
    }

    /// A checkbox.
    pub fn flag(&self, name: &str) -> AppResult<bool> {
        flag(name, self.fields.get(name).map(String::as_str))
    }

    /// The page's object id; forms on pages without one do not ask.
    pub fn id(&self) -> AppResult<&str> {
        self.id.ok_or_else(|| AppError::not_found("page"))
    }

    /// A confirmation checkbox that must be ticked.
    pub fn confirmed(&self) -> AppResult<()> {
        if self.flag("confirm")? { Ok(()) } else { Err(AppError::validation("confirm", "tick the box to confirm")) }
    }
}

/// What follows a form that worked.
pub enum Done {
    /// 303 to the address made from the form and the mutation's answer.
    Redirect(fn(&FormInput, &Value) -> String),
    /// The page again, showing once the secret read from the answer.
    ShowSecret(fn(&Value) -> Option<String>),
    /// The page again, which shows the mutation's answer (`FormState::answer`).
    Show,
}

/// An input of a form that a refusal can be about.
pub struct Input {
    /// The form field's name.
    pub name: &'static str,
    /// Its label on the page: a refusal is shown under it, in its words.
    pub label: &'static str,
    /// The variable it fills, or `variable.field` inside an input object.
    pub variable: &'static str,
}

pub const fn input(name: &'static str, label: &'static str, variable: &'static str) -> Input {
    Input { name, label, variable }
}

pub struct Form {
    /// The form's `action` field.
    pub action: &'static str,
    pub document: &'static str,
    pub variables: fn(&FormInput) -> AppResult<Value>,
    /// The inputs a refusal can name; a refusal about none of them is shown
    /// above the form.
    pub inputs: &'static [Input],
    pub done: Done,
}

/// Where a refusal goes and what it says: beside its input, as
/// "<label>: <problem>", or above the form (empty name).
pub fn placed(err: &AppError, inputs: &[Input]) -> (&'static str, String) {
    let concerned = err
        .field
        .as_deref()
        .and_then(|field| inputs.iter().find(|input| input.variable == field || input.name == field));
    match concerned {
        Some(input) => (input.name, format!("{}: {}", input.label, err.problem())),
        None => ("", sentence(err.problem())),
    }
}

/// `text` starting with a capital letter.
pub fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// What a form just did, for the page it comes back to.
#[derive(Default)]
pub struct FormState {
    /// The `action` of the form that was sent.
    pub action: String,
    /// What was typed, to fill the form again.
    pub values: HashMap<String, String>,
    /// The input the error concerns; empty when it is about the whole form.
    pub field: String,
    pub error: Option<String>,
    /// Shown once: a new API key or signing secret.
    pub secret: Option<String>,
    /// The answer of a `Done::Show` form.
    pub answer: Option<Value>,
}

impl FormState {
    /// What was typed into `name` of form `action`, when that form was sent.
    pub fn value(&self, action: &str, name: &str) -> String {
        if self.action == action { self.values.get(name).cloned().unwrap_or_default() } else { String::new() }
    }

    /// Whether form `action` came back with values (to prefer them over stored ones).
    pub fn sent(&self, action: &str) -> bool {
        self.action == action
    }

    /// The error beside input `field` of form `action`.
    pub fn error_at(&self, action: &str, field: &str) -> Option<&str> {
        (self.action == action && self.field == field).then_some(self.error.as_deref()).flatten()
    }

    /// The error about form `action` as a whole.
    pub fn form_error(&self, action: &str) -> Option<&str> {
        self.error_at(action, "")
    }
}

/// The fixed sentences `done=<key>` may show.
const NOTICES: [(&str, &str); 34] = [
    ("account-saved", "The account was saved."),
    ("network-linked", "The network's visitors now count in this account."),
    ("link-created", "The link was created."),
    ("link-saved", "The link was saved."),
    ("link-off", "The link is turned off: its short URL answers 410 Gone."),
    ("link-on", "The link is turned on again."),
    ("link-deleted", "The link and its clicks were deleted."),
    ("site-created", "The site was created. Add the snippet below to its pages."),
    ("site-saved", "The site settings were saved."),
    ("site-deleted", "The site and all its data were deleted."),
    ("member-invited", "The invitation was sent. They join when they accept it, under Settings, Account."),
    ("invitation-canceled", "The invitation was withdrawn."),
    ("invitation-accepted", "You joined the organisation. Its sites are in the site switcher."),
    ("invitation-declined", "The invitation was declined."),
    ("role-changed", "The role was changed."),
    ("member-removed", "The member was removed."),
    ("key-revoked", "The API key was revoked. Calls with it now answer 401."),
    ("name-saved", "Your name was saved."),
    (
        "digest-saved",
        "Your digest choice was saved: the latest digest is on its way, the next goes out at 8:00 in the site's time zone.",
    ),
    ("email-saved", "Your sign-in email was changed."),
    ("password-saved", "Your password was changed."),
    ("secret-rotated", "The signing secret was replaced."),
    ("delivery-retried", "The delivery was sent again; its outcome is below."),
    ("alert-created", "The destination was added. It fires for what happens from now on."),
    ("alert-saved", "The destination was saved."),
    ("alert-deleted", "The destination and its deliveries were deleted."),
    ("goal-created", "The goal was added. Explore counts it over all stored traffic."),
    ("goal-saved", "The goal was saved."),
    ("goal-deleted", "The goal was deleted; the events that reached it stay."),
    ("funnel-created", "The funnel was saved."),
    ("funnel-deleted", "The funnel was deleted."),
    ("alert-tested", "A sample alert was delivered."),
    ("alert-test-failed", "The sample alert was not delivered; the webhook delivery log says why."),
    ("view-deleted", "The saved view was deleted."),
];

/// The sentence for `done=<key>`; unknown keys show nothing.
pub fn notice(key: Option<&str>) -> Option<&'static str> {
    let key = key?;
    NOTICES.iter().find(|(known, _)| *known == key).map(|(_, text)| *text)
}

/// `path` with `done=<key>`, and the site when the address chose it.
pub fn back_to(input: &FormInput, path: &str, key: &str) -> String {
    match input.site_id.filter(|_| input.site_chosen) {
        Some(site) => format!("{path}?site={site}&done={key}"),
        None => format!("{path}?done={key}"),
    }
}

/// Errors about the whole request, shown as an error page rather than beside
/// the form: the object is gone, the role does not allow it (the form is
/// not even shown to that role), too many requests, a fault.
pub fn is_page_error(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::NotFound
            | ErrorCode::Forbidden
            | ErrorCode::RateLimited
            | ErrorCode::InternalError
            | ErrorCode::Unavailable
    )
}

const SELECT_SITE: &str = include_str!("documents/select_site.graphql");

/// The site switcher on every page (`POST /site`): remembers the chosen site,
/// then goes back where the switcher was.
pub const SWITCH_SITE: Form = Form {
    action: "switch",
    document: SELECT_SITE,
    variables: |input| {
        let site = input.text("site").parse::<i64>().map_err(|_| AppError::validation("site", "choose a site"))?;
        Ok(serde_json::json!({ "siteId": site }))
    },
    inputs: &[],
    done: Done::Redirect(|input, _| nav::safe_next(input.fields.get("next").map(String::as_str))),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_take_checkbox_values_and_refuse_the_rest() {
        let cases = [
            (None, Ok(false)),
            (Some(""), Ok(false)),
            (Some("0"), Ok(false)),
            (Some("on"), Ok(true)),
            (Some("1"), Ok(true)),
            (Some("true"), Ok(true)),
            (Some("yes please"), Err(())),
        ];
        for (raw, expected) in cases {
            assert_eq!(flag("hot", raw).map_err(|_| ()), expected, "{raw:?}");
        }
    }
}
