//! Errors as pages: the same codes and statuses as the API, shown as a small
//! HTML page in the app's layout. Another org's visitor, session or site is a
//! 404 page, exactly as the API answers 404.

use askama::Template;
use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{Html, IntoResponse, Redirect, Response},
};

use super::{layout::Layout, nav};
use crate::error::{AppError, ErrorCode};

/// Why a page could not be shown.
pub enum WebError {
    /// Nobody is signed in: off to the sign-in form, then back to this path and query.
    SignIn(String),
    App(AppError),
}

pub type WebResult<T> = Result<T, WebError>;

/// Refusals no form can place beside a field (too many attempts, a failure
/// of ours): the error page shows them instead.
pub fn unplaceable(err: &AppError) -> bool {
    matches!(err.code, ErrorCode::RateLimited | ErrorCode::InternalError | ErrorCode::Unavailable)
}

/// A form page with its status; a template that fails to render is the 500 page.
pub fn form_page(status: StatusCode, page: &impl Template) -> Response {
    match page.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(cause) => self::page(&AppError::internal(cause), None),
    }
}

impl From<AppError> for WebError {
    fn from(err: AppError) -> Self {
        WebError::App(err)
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        match self {
            WebError::SignIn(path) => Redirect::to(&nav::login_redirect(&path)).into_response(),
            WebError::App(err) => page(&err, None),
        }
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage {
    layout: Layout,
    status: u16,
    heading: &'static str,
    message: String,
}

fn heading(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "That request did not make sense",
        401 => "Please sign in",
        403 => "Not allowed",
        404 => "Not found",
        409 => "Conflict",
        413 => "Too large",
        429 => "Too many attempts",
        502 => "The target did not accept it",
        503 => "Unavailable for a moment",
        _ => "Something went wrong",
    }
}

/// The error's page, with its status and `Retry-After`.
pub fn page(err: &AppError, layout: Option<Layout>) -> Response {
    let status = err.status();
    let heading = heading(status);
    let message = match err.code {
        ErrorCode::InternalError => "The server failed to answer. It has been logged; please try again.".to_owned(),
        ErrorCode::InvalidOrigin => "This form was sent from another site, so it was refused.".to_owned(),
        ErrorCode::RateLimited => "Too many attempts from your address. Wait a minute and try again.".to_owned(),
        _ => capitalize(&err.message),
    };
    let template = ErrorPage {
        layout: layout.unwrap_or_else(|| Layout::bare(heading)),
        status: status.as_u16(),
        heading,
        message,
    };
    let mut response = match template.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(cause) => {
            tracing::error!(error = %cause, "error page did not render");
            (status, "error").into_response()
        }
    };
    if let Some(secs) = err.retry_after {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
