//! Leadtrail: self-hosted web-visitor analytics and lead intelligence.

// The GraphQL schema's merged resolvers nest deep futures whose `Send`
// check outgrows the default limit of 128.
#![recursion_limit = "256"]

pub mod auth;
pub mod cluster;
pub mod config;
pub mod db;
pub mod email;
pub mod enrich;
pub mod error;
pub mod graphql;
pub mod health;
pub mod ingest;
pub mod metrics;
pub mod request;
pub mod rest;
pub mod seed;
pub mod server;
pub mod service;
pub mod state;
pub mod time;
pub mod web;
pub mod webhook;

use axum::{
    Router,
    extract::DefaultBodyLimit,
    http::{HeaderName, HeaderValue, Method, header},
    middleware,
    response::{IntoResponse, Response},
    routing::{get, post},
};
use tower_http::{
    catch_panic::CatchPanicLayer,
    cors::{Any, CorsLayer},
    set_header::SetResponseHeaderLayer,
    trace::TraceLayer,
};

use crate::{error::AppError, server::RouterState, state::AppState};

/// Swagger UI's page loads its own scripts and styles from `/docs`; its
/// inline styles and the schema's data-URI images need the two allowances.
/// No page may frame it.
const DOCS_CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; \
    frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

/// Request bodies of the account API are small; larger ones are refused early.
const API_BODY_LIMIT: usize = 64 * 1024;
const GRAPHQL_BODY_LIMIT: usize = 256 * 1024;
/// A full batch of 100 events with every field at its limit fits.
const COLLECT_BODY_LIMIT: usize = 1024 * 1024;

pub fn app(state: AppState) -> Router {
    let schema = graphql::build_schema(state.clone());
    let router_state = RouterState { app: state.clone(), schema };

    let graphql_routes = Router::new()
        .route("/graphql", get(graphql::handler::get).post(graphql::handler::post))
        .route("/graphql/ws", get(graphql::handler::ws))
        .layer(DefaultBodyLimit::max(GRAPHQL_BODY_LIMIT))
        .layer(middleware::from_fn(declared_body_limit(GRAPHQL_BODY_LIMIT)));
    let authenticated = rest::routes()
        .layer(DefaultBodyLimit::max(API_BODY_LIMIT))
        .layer(middleware::from_fn(declared_body_limit(API_BODY_LIMIT)))
        .merge(graphql_routes)
        .layer(middleware::from_fn_with_state(state.clone(), request::middleware::authenticate))
        .layer(middleware::from_fn_with_state(state.clone(), request::middleware::check_origin))
        // Per-request spans for the API; the public hot paths below skip
        // them (they cost a tenth of redirect throughput) and rely on metrics.
        .layer(TraceLayer::new_for_http());

    // Collection is public and called from every customer's pages.
    let collect_cors = CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::POST, Method::OPTIONS])
        .allow_headers([header::CONTENT_TYPE])
        .max_age(std::time::Duration::from_secs(86_400));
    let public = Router::new()
        // OPTIONS is routed so the CORS layer, not the 405 fallback, answers preflights.
        .route("/api/collect", post(ingest::collect::collect).options(|| async { axum::http::StatusCode::NO_CONTENT }))
        .layer(DefaultBodyLimit::max(COLLECT_BODY_LIMIT))
        .layer(middleware::from_fn(declared_body_limit(COLLECT_BODY_LIMIT)))
        .layer(collect_cors)
        .route("/script.js", get(ingest::script::script))
        .route("/l/{site}/{link}", get(ingest::redirect::redirect))
        .route("/l/{site}/{link}/qr.svg", get(ingest::redirect::qr_code));

    let metrics_here = state.config.metrics_addr.is_none();
    let router = Router::new()
        .merge(authenticated)
        .merge(public)
        .merge(web::routes(state.clone()))
        .route("/graphql/explorer.js", get(graphql::explorer::script))
        .route("/api/openapi.json", get(rest::openapi::serve))
        // Swagger UI with its assets compiled in: works with no network.
        .merge(
            Router::from(
                utoipa_swagger_ui::SwaggerUi::new("/docs").config(utoipa_swagger_ui::Config::from("/api/openapi.json")),
            )
            .layer(SetResponseHeaderLayer::overriding(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(DOCS_CSP),
            ))
            .layer(SetResponseHeaderLayer::overriding(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"))),
        )
        .route("/health/live", get(health::live))
        .route("/health/ready", get(health::ready));
    // With METRICS_ADDR, the metrics are on that address only (`serve`).
    let router = if metrics_here { router.route("/metrics", get(health::metrics)) } else { router };
    router
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(router_state)
        // One layer, not four: `Router::layer` boxes every route's service
        // and future once per layer, and on the redirect those moves and
        // allocations cost more than the four layers' own work.
        .layer(
            tower::ServiceBuilder::new()
                .layer(CatchPanicLayer::custom(|_| AppError::internal("a request handler panicked").into_response()))
                .layer(SetResponseHeaderLayer::if_not_present(
                    HeaderName::from_static("referrer-policy"),
                    HeaderValue::from_static("strict-origin-when-cross-origin"),
                ))
                .layer(SetResponseHeaderLayer::if_not_present(
                    header::X_CONTENT_TYPE_OPTIONS,
                    HeaderValue::from_static("nosniff"),
                ))
                .layer(middleware::from_fn_with_state(state, health::track)),
        )
}

/// The error body with 405; the vocabulary's closest code is BAD_REQUEST.
async fn method_not_allowed() -> Response {
    let mut response = AppError::bad_request("this method is not allowed on this path").into_response();
    *response.status_mut() = axum::http::StatusCode::METHOD_NOT_ALLOWED;
    response
}

/// Refuses a declared body over `limit` on every route of a group, including
/// routes that never read their body; extractors enforce it for chunked bodies.
fn declared_body_limit(
    limit: usize,
) -> impl Fn(axum::extract::Request, middleware::Next) -> std::pin::Pin<Box<dyn Future<Output = Response> + Send>> + Clone
{
    move |request: axum::extract::Request, next: middleware::Next| {
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<usize>().ok());
        Box::pin(async move {
            if declared.is_some_and(|length| length > limit) {
                return AppError::new(
                    error::ErrorCode::PayloadTooLarge,
                    format!("the request body is over {} KB", limit / 1024),
                )
                .into_response();
            }
            next.run(request).await
        })
    }
}

/// An address nothing answers: the branded 404 page for a browser asking
/// for a page, the JSON error body for everything else (the API's clients).
async fn not_found(
    axum::extract::State(state): axum::extract::State<RouterState>,
    request: axum::extract::Request,
) -> Response {
    let path = request.uri().path();
    let api = path.starts_with("/api/") || path.starts_with("/graphql") || path.starts_with("/health");
    let html = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|accept| accept.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    if html && !api { web::not_found_page(&state.app) } else { AppError::not_found("route").into_response() }
}

/// Serves until `shutdown` resolves, then lets open requests finish and
/// drains the write queue, so every event answered 2xx is stored.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = app(state.clone());
    if let Some(addr) = state.config.metrics_addr {
        let metrics_listener = tokio::net::TcpListener::bind(addr).await?;
        let metrics_router = Router::new().route("/metrics", get(health::metrics)).with_state(state.clone());
        tokio::spawn(async move { axum::serve(metrics_listener, metrics_router).await });
    }
    service::privacy::retention::spawn_job(state.db.clone());
    service::alerts::worker::spawn(state.db.clone(), state.delivery.clone(), state.metrics.alerts.clone());
    service::email::worker::spawn(state.db.clone(), state.delivery.clone(), state.metrics.emails.clone());
    service::email::digest::spawn(state.db.clone(), state.delivery.clone(), std::time::Duration::from_secs(60));
    let served = server::run(listener, router, server::Limits::of(&state.config), shutdown).await;
    state.writer.shutdown().await;
    served
}
