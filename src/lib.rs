//! Leadtrail: self-hosted web-visitor analytics and lead intelligence.

pub mod auth;
pub mod config;
pub mod db;
pub mod error;
pub mod graphql;
pub mod health;
pub mod metrics;
pub mod rest;
pub mod service;
pub mod state;
pub mod time;

use axum::{
    Router,
    extract::{DefaultBodyLimit, FromRef},
    http::{HeaderName, HeaderValue, header},
    middleware,
    response::{IntoResponse, Response},
    routing::get,
};
use tower_http::{
    catch_panic::CatchPanicLayer, set_header::SetResponseHeaderLayer, trace::TraceLayer,
};

use crate::{error::AppError, graphql::AppSchema, state::AppState};

/// What route handlers can extract with `State`.
#[derive(Clone, FromRef)]
pub struct RouterState {
    pub app: AppState,
    pub schema: AppSchema,
}

/// Request bodies of the account API are small; larger ones are refused early.
const API_BODY_LIMIT: usize = 64 * 1024;
const GRAPHQL_BODY_LIMIT: usize = 256 * 1024;

pub fn app(state: AppState) -> Router {
    let schema = graphql::build_schema(state.clone());
    let router_state = RouterState {
        app: state.clone(),
        schema,
    };

    let graphql_routes = Router::new()
        .route(
            "/graphql",
            get(graphql::handler::get).post(graphql::handler::post),
        )
        .route("/graphql/ws", get(graphql::handler::ws))
        .layer(DefaultBodyLimit::max(GRAPHQL_BODY_LIMIT));
    let authenticated = rest::routes()
        .layer(DefaultBodyLimit::max(API_BODY_LIMIT))
        .merge(graphql_routes)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::middleware::authenticate,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::middleware::check_origin,
        ));

    Router::new()
        .merge(authenticated)
        .route("/graphql/explorer.js", get(graphql::explorer::script))
        .route("/health/live", get(health::live))
        .route("/health/ready", get(health::ready))
        .route("/metrics", get(metrics::render))
        .fallback(not_found)
        .with_state(router_state)
        .layer(middleware::from_fn_with_state(state, metrics::track))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            HeaderName::from_static("referrer-policy"),
            HeaderValue::from_static("strict-origin-when-cross-origin"),
        ))
        .layer(TraceLayer::new_for_http())
        .layer(CatchPanicLayer::custom(|_| {
            AppError::internal("a request handler panicked").into_response()
        }))
}

async fn not_found() -> Response {
    AppError::not_found("route").into_response()
}
