//! `/forgot-password`, `/reset-password`, `/verify-email` and `/unsubscribe`:
//! the pages the emails lead to, over the same GraphQL mutations as the API
//! (`requestPasswordReset`, `resetPassword`, `verifyEmail`, `unsubscribeDigest`), so the token
//! rules, error codes and rate limits are the API's own. Without email set
//! up, the forms are not offered.

use askama::Template;
use axum::{
    extract::{Request, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
};
use serde_json::json;

use super::{
    bridge, error,
    error::{WebError, WebResult},
    forms::{self, Input, input, read_form},
    frame,
    layout::Layout,
    nav,
};
use crate::{
    error::{AppError, AppResult},
    server::RouterState,
};

const EMAIL_ENABLED: &str = include_str!("documents/email_enabled.graphql");
const REQUEST_RESET: &str = include_str!("documents/request_password_reset.graphql");
const CHECK_RESET: &str = include_str!("documents/check_reset_token.graphql");
const RESET: &str = include_str!("documents/reset_password.graphql");
const VERIFY: &str = include_str!("documents/verify_email.graphql");
const UNSUBSCRIBE: &str = include_str!("documents/unsubscribe_digest.graphql");

#[derive(Default)]
pub(super) struct Errors {
    pub form: Option<String>,
    pub email: Option<String>,
    pub password: Option<String>,
}

#[derive(Template)]
#[template(path = "recovery.html")]
struct RecoveryPage {
    layout: Layout,
    /// `forgot`, `reset` or `done`.
    mode: &'static str,
    heading: &'static str,
    notice: Option<String>,
    email: String,
    token: String,
    errors: Errors,
}

fn page(mode: &'static str, heading: &'static str) -> RecoveryPage {
    RecoveryPage {
        layout: Layout::bare(heading),
        mode,
        heading,
        notice: None,
        email: String::new(),
        token: String::new(),
        errors: Errors::default(),
    }
}

fn render(status: StatusCode, page: RecoveryPage) -> Response {
    error::form_page(status, &page)
}

const INPUTS: [Input; 3] = [
    input("email", "Email", "email"),
    input("password", "New password", "newPassword"),
    input("token", "Link", "token"),
];

fn place(err: &AppError, errors: &mut Errors) {
    let (field, message) = forms::placed(err, &INPUTS);
    match field {
        "email" => errors.email = Some(message),
        "password" => errors.password = Some(message),
        _ => errors.form = Some(message),
    }
}

/// Whether this server sends email; the pages 404 when it does not.
async fn email_enabled(parts: &mut axum::http::request::Parts, state: &RouterState) -> AppResult<bool> {
    let answer = bridge::run(parts, state, EMAIL_ENABLED, json!({})).await?;
    Ok(answer.data["emailEnabled"].as_bool().unwrap_or(false))
}

fn token_of(parts: &axum::http::request::Parts) -> String {
    frame::query_map(parts).get("token").cloned().unwrap_or_default()
}

/// GET /forgot-password
pub async fn forgot_form(State(state): State<RouterState>, request: Request) -> Response {
    let (mut parts, _) = request.into_parts();
    match email_enabled(&mut parts, &state).await {
        Ok(true) => render(StatusCode::OK, page("forgot", "Reset your password")),
        Ok(false) => error::page(&AppError::not_found("page"), None),
        Err(err) => error::page(&err, None),
    }
}

/// POST /forgot-password: the same answer whether or not the address has an account.
pub async fn forgot(State(state): State<RouterState>, request: Request) -> Response {
    forgot_submit(state, request).await.unwrap_or_else(IntoResponse::into_response)
}

async fn forgot_submit(state: RouterState, request: Request) -> WebResult<Response> {
    let (mut parts, body) = request.into_parts();
    let form = read_form(body).await?;
    let email = form.get("email").cloned().unwrap_or_default();
    let mut shown = page("forgot", "Reset your password");
    match bridge::run(&mut parts, &state, REQUEST_RESET, json!({ "email": email })).await {
        Ok(_) => {
            shown.mode = "done";
            shown.heading = "Check your email";
            shown.notice = Some(format!(
                "If {email} has an account, a link to choose a new password is on its way. It works once, for one hour."
            ));
            Ok(render(StatusCode::OK, shown))
        }
        Err(err) if error::unplaceable(&err) => Err(WebError::App(err)),
        Err(err) => {
            shown.email = email;
            place(&err, &mut shown.errors);
            Ok(render(err.status(), shown))
        }
    }
}

/// GET /reset-password?token=...: the new-password form, or a clear page
/// when the link is wrong, used or expired.
pub async fn reset_form(State(state): State<RouterState>, request: Request) -> Response {
    let (mut parts, _) = request.into_parts();
    let token = token_of(&parts);
    match bridge::run(&mut parts, &state, CHECK_RESET, json!({ "token": token })).await {
        Ok(_) => {
            let mut shown = page("reset", "Choose a new password");
            shown.token = token;
            render(StatusCode::OK, shown)
        }
        Err(err) if error::unplaceable(&err) => error::page(&err, None),
        Err(err) => link_refused(&err),
    }
}

/// A token the API refused, as a page that says why and what to do.
fn link_refused(err: &AppError) -> Response {
    let mut shown = page("done", "This link cannot be used");
    shown.errors.form = Some(forms::sentence(err.problem()));
    render(err.status(), shown)
}

/// POST /reset-password
pub async fn reset(State(state): State<RouterState>, request: Request) -> Response {
    reset_submit(state, request).await.unwrap_or_else(IntoResponse::into_response)
}

async fn reset_submit(state: RouterState, request: Request) -> WebResult<Response> {
    let (mut parts, body) = request.into_parts();
    let form = read_form(body).await?;
    let token = form.get("token").cloned().unwrap_or_default();
    let password = form.get("password").cloned().unwrap_or_default();
    let variables = json!({ "token": token, "newPassword": password });
    match bridge::run(&mut parts, &state, RESET, variables).await {
        Ok(_) => Ok(Redirect::to("/login?reset=1").into_response()),
        Err(err) if error::unplaceable(&err) => Err(WebError::App(err)),
        Err(err) if err.field.as_deref() == Some("token") => Ok(link_refused(&err)),
        Err(err) => {
            let mut shown = page("reset", "Choose a new password");
            shown.token = token;
            place(&err, &mut shown.errors);
            Ok(render(err.status(), shown))
        }
    }
}

/// GET /verify-email?token=...
pub async fn verify(State(state): State<RouterState>, request: Request) -> Response {
    let (mut parts, _) = request.into_parts();
    let token = token_of(&parts);
    // A path on this site the verification was asked to lead back to.
    let callback = frame::query_map(&parts).get("callbackURL").map(|next| nav::safe_next(Some(next)));
    match bridge::run(&mut parts, &state, VERIFY, json!({ "token": token })).await {
        Ok(answer) => match callback.filter(|next| next != "/") {
            Some(next) => Redirect::to(&next).into_response(),
            None => {
                let mut shown = page("done", "Email confirmed");
                let email = answer.data["verifyEmail"]["user"]["email"].as_str().unwrap_or_default().to_owned();
                shown.notice = Some(format!("{email} is confirmed as your address. Thank you."));
                render(StatusCode::OK, shown)
            }
        },
        Err(err) if error::unplaceable(&err) => error::page(&err, None),
        Err(err) => link_refused(&err),
    }
}

/// GET /unsubscribe?token=...: a button, not the deed, so a mail scanner
/// following links cannot end a digest.
pub async fn unsubscribe_form(request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let mut shown = page("unsubscribe", "Unsubscribe from this digest");
    shown.token = token_of(&parts);
    shown.notice =
        Some("Press the button to stop getting this digest. You can choose it again on your account page.".to_owned());
    render(StatusCode::OK, shown)
}

/// POST /unsubscribe: the page's button (token in the form) or a mail
/// client's one-click request (RFC 8058: token in the address, body
/// `List-Unsubscribe=One-Click`).
pub async fn unsubscribe(State(state): State<RouterState>, request: Request) -> Response {
    unsubscribe_submit(state, request).await.unwrap_or_else(IntoResponse::into_response)
}

async fn unsubscribe_submit(state: RouterState, request: Request) -> WebResult<Response> {
    let (mut parts, body) = request.into_parts();
    let form = read_form(body).await?;
    let token = form.get("token").cloned().unwrap_or_else(|| token_of(&parts));
    match bridge::run(&mut parts, &state, UNSUBSCRIBE, json!({ "token": token })).await {
        Ok(answer) => {
            let site = answer.data["unsubscribeDigest"].as_str().unwrap_or_default().to_owned();
            let mut shown = page("done", "Unsubscribed");
            shown.notice = Some(format!("You will get no more digests of {site}."));
            Ok(render(StatusCode::OK, shown))
        }
        Err(err) if error::unplaceable(&err) => Err(WebError::App(err)),
        Err(err) => Ok(link_refused(&err)),
    }
}
