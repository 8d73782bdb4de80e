//! The `/api` routes: each is a static GraphQL document run through the bridge.

pub mod account;
pub mod analytics;
pub mod auth;
pub mod bridge;
pub mod extract;
pub mod identify;
pub mod links;
pub mod openapi;
pub mod webhooks;

use axum::{
    Router,
    routing::{MethodRouter, delete, get, post, put},
};

use crate::{
    RouterState,
    error::{AppError, AppResult},
};

/// The router and the list of its (method, path) pairs, built together so
/// the list cannot miss a route. Tests check the list against their tables.
struct Table {
    router: Router<RouterState>,
    entries: Vec<(&'static str, &'static str)>,
}

impl Table {
    fn add(mut self, method: &'static str, path: &'static str, route: MethodRouter<RouterState>) -> Self {
        self.router = self.router.route(path, route);
        self.entries.push((method, path));
        self
    }
}

fn table() -> Table {
    Table { router: Router::new(), entries: Vec::new() }
        .add("POST", "/api/auth/sign-up/email", post(auth::sign_up))
        .add("POST", "/api/auth/sign-in/email", post(auth::sign_in))
        .add("POST", "/api/auth/sign-out", post(auth::sign_out))
        .add("GET", "/api/auth/get-session", get(auth::get_session))
        .add("POST", "/api/auth/update-user", post(auth::update_user))
        .add("POST", "/api/auth/change-email", post(auth::change_email))
        .add("POST", "/api/auth/change-password", post(auth::change_password))
        .add("POST", "/api/auth/delete-user", post(auth::delete_user))
        .add("GET", "/api/identify", get(identify::identity))
        .add("POST", "/api/identify", post(identify::identify))
        .add("GET", "/api/links", get(links::list))
        .add("POST", "/api/links", post(links::create))
        .add("GET", "/api/links/check-slug", get(links::check_slug))
        .add("PUT", "/api/links/{id}", put(links::update))
        .add("DELETE", "/api/links/{id}", delete(links::delete))
        .add("GET", "/api/link-analytics", get(links::analytics))
        .add("GET", "/api/profile", get(account::profile))
        .add("GET", "/api/visitors", get(analytics::live))
        .add("GET", "/api/visitor", get(analytics::list))
        .add("GET", "/api/visitor/{id}", get(analytics::profile))
        .add("GET", "/api/stats", get(analytics::stats))
        .add("GET", "/api/session/{id}", get(analytics::session))
        .add("GET", "/api/webhook", get(webhooks::info))
        .add("POST", "/api/webhook", post(webhooks::send))
        .add("GET", "/api/sites", get(account::list_sites))
        .add("POST", "/api/sites", post(account::create_site))
        .add("PUT", "/api/sites/{id}", put(account::update_site))
        .add("DELETE", "/api/sites/{id}", delete(account::delete_site))
}

pub fn routes() -> Router<RouterState> {
    table().router
}

/// Every `/api` route as (method, path pattern).
pub fn route_list() -> Vec<(&'static str, &'static str)> {
    table().entries
}

/// A numeric query parameter given as text, when present.
pub fn optional_number(field: &str, raw: Option<&str>) -> AppResult<Option<i64>> {
    match raw.map(str::trim).filter(|value| !value.is_empty()) {
        None => Ok(None),
        Some(value) => value.parse().map(Some).map_err(|_| AppError::validation(field, "must be a number")),
    }
}
