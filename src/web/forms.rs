//! The forms of the links and settings pages as one table, like the pages:
//! each row names the page it belongs to, the `action` value that picks it,
//! the GraphQL mutation it runs through the bridge (so the API's role checks
//! and error codes apply unchanged), how the form's fields become the
//! mutation's variables, and what follows success.
//!
//! Success answers 303 back to a page with `done=<key>`, so a reload does not
//! send the form again; the key picks a fixed sentence, so nothing from the
//! address is shown. A secret (a new API key, a new signing secret) cannot
//! travel in an address, so those forms show the page at once, with the
//! secret, instead. A refused form shows the page again with what was typed
//! and the API's message beside the field it concerns.

use std::collections::HashMap;

use axum::{
    extract::{Request, State},
    response::{IntoResponse, Redirect, Response},
};
use serde_json::Value;

use super::{
    auth::read_form,
    bridge,
    error::WebResult,
    frame,
    pages::{Page, SiteFrom},
};
use crate::{
    RouterState,
    error::{AppError, AppResult, ErrorCode},
};

/// What the mutation's variables are made from.
pub struct FormInput<'a> {
    pub fields: &'a HashMap<String, String>,
    /// The page's site.
    pub site_id: i64,
    /// The page's object id (a link's), when it has one.
    pub id: Option<&'a str>,
    /// Whether the address chose the site (`?site=N`), to keep it.
    pub site_chosen: bool,
}

impl FormInput<'_> {
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
        super::pages::flag(name, self.fields.get(name).map(String::as_str))
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
}

pub struct Form {
    /// The form's `action` field.
    pub action: &'static str,
    pub document: &'static str,
    pub variables: fn(&FormInput) -> AppResult<Value>,
    /// `(field named in the API's message, or its error code, the input it concerns)`.
    pub fields: &'static [(&'static str, &'static str)],
    pub done: Done,
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
const NOTICES: [(&str, &str); 25] = [
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
    ("email-saved", "Your sign-in email was changed."),
    ("password-saved", "Your password was changed."),
    ("secret-rotated", "The signing secret was replaced."),
    ("delivery-retried", "The delivery was sent again; its outcome is below."),
    ("alert-created", "The destination was added. It fires for what happens from now on."),
    ("alert-saved", "The destination was saved."),
    ("alert-deleted", "The destination and its deliveries were deleted."),
    ("alert-tested", "A sample alert was delivered."),
    ("alert-test-failed", "The sample alert was not delivered; the webhook delivery log says why."),
];

/// The sentence for `done=<key>`; unknown keys show nothing.
pub fn notice(key: Option<&str>) -> Option<&'static str> {
    let key = key?;
    NOTICES.iter().find(|(known, _)| *known == key).map(|(_, text)| *text)
}

/// `path` with `done=<key>`, and the site when the address chose it.
pub fn back_to(input: &FormInput, path: &str, key: &str) -> String {
    if input.site_chosen { format!("{path}?site={}&done={key}", input.site_id) } else { format!("{path}?done={key}") }
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

/// Which input an error message is about, from the field it starts with
/// (`field: problem`, or `field problem`).
pub fn field_of(message: &str, fields: &[(&str, &'static str)]) -> Option<&'static str> {
    let named = message.split([':', ' ']).next()?.trim();
    fields.iter().find(|(api, _)| *api == named).map(|(_, input)| *input)
}

/// The POST route of a page whose forms are rows of `forms`.
pub fn route(page: &'static Page, forms: &'static [Form]) -> axum::routing::MethodRouter<RouterState> {
    axum::routing::post(move |State(state): State<RouterState>, request: Request| async move {
        submit(page, forms, &state, request).await.unwrap_or_else(IntoResponse::into_response)
    })
}

async fn submit(
    page: &'static Page,
    forms: &'static [Form],
    state: &RouterState,
    request: Request,
) -> WebResult<Response> {
    let (mut parts, body) = request.into_parts();
    frame::require_signed_in(&parts)?;
    let fields = read_form(body).await?;
    let action = fields.get("action").map(String::as_str).unwrap_or_default();
    let form = forms.iter().find(|form| form.action == action).ok_or_else(|| {
        let names: Vec<&str> = forms.iter().map(|form| form.action).collect();
        AppError::validation("action", format!("must be one of {}", names.join(", ")))
    })?;
    let query = frame::query_map(&parts);
    let id = frame::object_id(page, &mut parts, state, &query).await?;
    let (site, site_query) = frame::resolve_site(page, &mut parts, state, &query, id.as_deref()).await?;
    // Creating a site needs no site; every other form acts on the page's.
    let site_id = match site {
        Some(site) => site,
        None if page.site == SiteFrom::CurrentOrNone => 0,
        None => return Err(AppError::not_found("site").into()),
    };
    let input = FormInput { fields: &fields, site_id, id: id.as_deref(), site_chosen: site_query.is_some() };
    let ran = match (form.variables)(&input) {
        Ok(variables) => bridge::run(&mut parts, state, form.document, variables).await,
        Err(err) => Err(err),
    };
    let mut shown = FormState { action: form.action.to_owned(), values: fields.clone(), ..FormState::default() };
    let status = match ran {
        Ok(answer) => match form.done {
            Done::Redirect(to) => {
                return Ok((answer.cookies, Redirect::to(&to(&input, &answer.data))).into_response());
            }
            Done::ShowSecret(read) => {
                shown.secret = read(&answer.data);
                shown.values.clear();
                axum::http::StatusCode::OK
            }
        },
        Err(err) => {
            // A code the form maps to an input (an unknown member's email is
            // NOT_FOUND) is shown beside it; other page-wide errors are pages.
            let by_code = form.fields.iter().find(|(name, _)| *name == err.code.as_str()).map(|(_, input)| *input);
            if by_code.is_none() && is_page_error(err.code) {
                return Err(err.into());
            }
            shown.field = by_code.or_else(|| field_of(&err.message, form.fields)).unwrap_or_default().to_owned();
            shown.error = Some(err.message.clone());
            err.status()
        }
    };
    let mut response = frame::show_with(page, state, &mut parts, None, shown).await?;
    *response.status_mut() = status;
    Ok(response)
}
