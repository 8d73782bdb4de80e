//! `/login`, `/signup` and `/logout`: HTML forms over the same GraphQL
//! mutations as the API (`signIn`, `signUp`, `signOut`), so the account
//! rules, error codes and the credential rate limit are the API's own.

use askama::Template;
use axum::{
    extract::{Request, State},
    http::{StatusCode, header, request::Parts},
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
    auth::{RequestContext, cookie},
    error::{AppError, ErrorCode},
    server::RouterState,
};

const SIGN_IN: &str = include_str!("documents/sign_in.graphql");
const SIGN_UP: &str = include_str!("documents/sign_up.graphql");
const SIGN_OUT: &str = include_str!("documents/sign_out.graphql");
const EMAIL_ENABLED: &str = include_str!("documents/email_enabled.graphql");

#[derive(Default)]
struct Errors {
    form: Option<String>,
    name: Option<String>,
    email: Option<String>,
    password: Option<String>,
}

#[derive(Template)]
#[template(path = "account.html")]
struct AccountForm {
    layout: Layout,
    signup: bool,
    next: String,
    /// `?next=...` for the link to the other form; empty for `/`.
    next_query: String,
    name: String,
    email: String,
    errors: Errors,
    /// Email is set up, so a forgotten password can be reset.
    can_reset: bool,
    /// Said above the form (after a password reset).
    notice: Option<&'static str>,
}

fn signed_in(parts: &Parts) -> bool {
    parts.extensions.get::<RequestContext>().is_some_and(|ctx| ctx.viewer.is_some())
}

fn form_page(status: StatusCode, form: AccountForm) -> Response {
    error::form_page(status, &form)
}

fn blank(signup: bool, next: String) -> AccountForm {
    let title = if signup { "Create an account" } else { "Sign in" };
    let next_query = if next == "/" { String::new() } else { format!("?next={}", nav::encode(&next)) };
    AccountForm {
        layout: Layout::bare(title),
        signup,
        next,
        next_query,
        name: String::new(),
        email: String::new(),
        errors: Errors::default(),
        can_reset: false,
        notice: None,
    }
}

/// Whether the server sends email, for the "forgot your password" link.
async fn can_reset(parts: &mut Parts, state: &RouterState) -> bool {
    match bridge::run(parts, state, EMAIL_ENABLED, json!({})).await {
        Ok(answer) => answer.data["emailEnabled"].as_bool().unwrap_or(false),
        Err(_) => false,
    }
}

async fn show_form(signup: bool, state: RouterState, request: Request) -> Response {
    let (mut parts, _) = request.into_parts();
    let query = frame::query_map(&parts);
    let next = nav::safe_next(query.get("next").map(String::as_str));
    if signed_in(&parts) {
        return Redirect::to(&next).into_response();
    }
    let mut form = blank(signup, next);
    form.can_reset = !signup && can_reset(&mut parts, &state).await;
    if query.contains_key("reset") {
        form.notice = Some("Your password is changed and every device is signed out. Sign in with the new one.");
    }
    form_page(StatusCode::OK, form)
}

pub async fn login_form(State(state): State<RouterState>, request: Request) -> Response {
    show_form(false, state, request).await
}

pub async fn signup_form(State(state): State<RouterState>, request: Request) -> Response {
    show_form(true, state, request).await
}

/// The sign-in and sign-up forms' inputs, each filling the variable of its name.
const INPUTS: [Input; 3] =
    [input("name", "Name", "name"), input("email", "Email", "email"), input("password", "Password", "password")];

/// Puts the API's refusal beside the input it is about, under its label; a
/// wrong email or password, which must not say which, goes beside the password.
fn place_error(err: &AppError, errors: &mut Errors) {
    let (field, message) = forms::placed(err, &INPUTS);
    match (err.code, field) {
        (_, "email") => errors.email = Some(message),
        (_, "name") => errors.name = Some(message),
        (_, "password") | (ErrorCode::InvalidEmailOrPassword, _) => errors.password = Some(message),
        _ => errors.form = Some(message),
    }
}

async fn submit(signup: bool, state: RouterState, request: Request) -> WebResult<Response> {
    let (mut parts, body) = request.into_parts();
    let form = read_form(body).await?;
    let field = |name: &str| form.get(name).cloned().unwrap_or_default();
    let next = nav::safe_next(form.get("next").map(String::as_str));
    let (document, variables) = if signup {
        (SIGN_UP, json!({ "name": field("name"), "email": field("email"), "password": field("password") }))
    } else {
        (SIGN_IN, json!({ "email": field("email"), "password": field("password") }))
    };
    match bridge::run(&mut parts, &state, document, variables).await {
        Ok(answer) => Ok((answer.cookies, Redirect::to(&next)).into_response()),
        Err(err) if error::unplaceable(&err) => Err(WebError::App(err)),
        Err(err) => {
            let mut page = blank(signup, next);
            page.can_reset = !signup && can_reset(&mut parts, &state).await;
            page.name = field("name");
            page.email = field("email");
            place_error(&err, &mut page.errors);
            Ok(form_page(err.status(), page))
        }
    }
}

pub async fn login(State(state): State<RouterState>, request: Request) -> Response {
    submit(false, state, request).await.unwrap_or_else(IntoResponse::into_response)
}

pub async fn signup(State(state): State<RouterState>, request: Request) -> Response {
    submit(true, state, request).await.unwrap_or_else(IntoResponse::into_response)
}

/// Ends the session on the server, clears the cookie, back to the sign-in form.
pub async fn logout(State(state): State<RouterState>, request: Request) -> Response {
    let (mut parts, _) = request.into_parts();
    let mut response = Redirect::to("/login").into_response();
    if signed_in(&parts) {
        match bridge::run(&mut parts, &state, SIGN_OUT, json!({})).await {
            Ok(answer) => response.headers_mut().extend(answer.cookies),
            Err(err) => return error::page(&err, None),
        }
    }
    if !response.headers().contains_key(header::SET_COOKIE) {
        let clear = cookie::clear_session_cookie(state.app.config.secure_cookies());
        response.headers_mut().insert(header::SET_COOKIE, clear);
    }
    response
}
