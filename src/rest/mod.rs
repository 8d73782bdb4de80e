//! The `/api` routes: each is a static GraphQL document run through the bridge.

pub mod account;
pub mod analytics;
pub mod auth;
pub mod bridge;
pub mod extract;
pub mod identify;
pub mod links;
pub mod webhooks;

use axum::{
    Router,
    routing::{get, post, put},
};

use crate::{
    RouterState,
    error::{AppError, AppResult},
};

pub fn routes() -> Router<RouterState> {
    Router::new()
        .route("/api/auth/sign-up/email", post(auth::sign_up))
        .route("/api/auth/sign-in/email", post(auth::sign_in))
        .route("/api/auth/sign-out", post(auth::sign_out))
        .route("/api/auth/get-session", get(auth::get_session))
        .route("/api/auth/update-user", post(auth::update_user))
        .route("/api/auth/change-email", post(auth::change_email))
        .route("/api/auth/change-password", post(auth::change_password))
        .route("/api/auth/delete-user", post(auth::delete_user))
        .route("/api/identify", get(identify::identity).post(identify::identify))
        .route("/api/links", get(links::list).post(links::create))
        .route("/api/links/check-slug", get(links::check_slug))
        .route("/api/links/{id}", put(links::update).delete(links::delete))
        .route("/api/link-analytics", get(links::analytics))
        .route("/api/profile", get(account::profile))
        .route("/api/visitors", get(analytics::live))
        .route("/api/visitor", get(analytics::list))
        .route("/api/visitor/{id}", get(analytics::profile))
        .route("/api/stats", get(analytics::stats))
        .route("/api/webhook", get(webhooks::info).post(webhooks::send))
        .route("/api/session/{id}", get(analytics::session))
        .route("/api/sites", get(account::list_sites).post(account::create_site))
        .route("/api/sites/{id}", put(account::update_site).delete(account::delete_site))
}

/// A numeric query parameter given as text, when present.
pub fn optional_number(field: &str, raw: Option<&str>) -> AppResult<Option<i64>> {
    match raw.map(str::trim).filter(|value| !value.is_empty()) {
        None => Ok(None),
        Some(value) => value.parse().map(Some).map_err(|_| AppError::validation(field, "must be a number")),
    }
}
