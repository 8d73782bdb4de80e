//! The web app (design.md section 13): server-rendered pages for the people
//! who work with Leadtrail's leads. Each page is a row of `pages::PAGES`: a
//! path, one GraphQL document run through the REST bridge with the
//! signed-in viewer (so a page sees exactly what the API would answer that
//! person), the query parameters it takes, and a render function filling
//! one askama template, checked at compile time and HTML-escaped by default.
//!
//! Collected data is attacker-controlled, so nothing from outside is ever
//! marked safe, only http(s) URLs become links, and the content security
//! policy allows no inline script or style. JavaScript only enhances: the
//! live stream, copy buttons and submit-on-change; every page works without it.

mod assets;
mod auth;
mod bridge;
pub mod chart;
mod error;
mod format;
mod forms;
mod frame;
mod join;
mod layout;
pub mod nav;
mod pages;
mod qr;
mod recovery;
mod security;
mod submit;

use axum::{
    Router,
    extract::Path,
    middleware,
    response::Response,
    routing::{get, post},
};

use crate::{request::middleware::authenticate, server::RouterState, state::AppState};

/// Every web route, with the caller resolved, cross-site posts refused and
/// the security headers set.
pub fn routes(state: AppState) -> Router<RouterState> {
    let pages = pages::PAGES.iter().fold(Router::new(), |router, page| {
        let route = frame::route(page);
        router
            .route(page.path, if page.forms.is_empty() { route } else { route.merge(submit::route(page, page.forms)) })
    });
    pages
        .route("/links/{id}/qr.svg", get(qr::serve))
        .route("/site", submit::route_alone(&forms::SWITCH_SITE))
        .route("/login", get(auth::login_form).post(auth::login))
        .route("/signup", get(auth::signup_form).post(auth::signup))
        .route("/logout", post(auth::logout))
        .route("/forgot-password", get(recovery::forgot_form).post(recovery::forgot))
        .route("/reset-password", get(recovery::reset_form).post(recovery::reset))
        .route("/verify-email", get(recovery::verify))
        .route("/unsubscribe", get(recovery::unsubscribe_form).post(recovery::unsubscribe))
        .route("/join", get(join::show).post(join::submit))
        .route("/assets/{name}", get(asset))
        // Browsers ask for it on every site whatever the page links to.
        .route("/favicon.ico", get(|| async { assets::serve("favicon.svg").unwrap_or_default() }))
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .layer(middleware::from_fn_with_state(state.clone(), security::check_origin))
        .layer(middleware::from_fn_with_state(state, security::headers))
}

/// The 404 page for an address nothing answers, when a browser asks for a
/// page: branded, with the pages' security headers.
pub fn not_found_page(app: &AppState) -> Response {
    let mut response = error::page(&crate::error::AppError::not_found("page"), None);
    security::apply(app, response.headers_mut());
    response
}

/// GET /assets/{name}; the `v` query only busts caches. An unknown asset is
/// the 404 page, like any other unknown address of the web app.
async fn asset(Path(name): Path<String>) -> Response {
    assets::serve(&name).unwrap_or_else(|| error::page(&crate::error::AppError::not_found("asset"), None))
}
