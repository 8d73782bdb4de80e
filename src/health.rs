//! What operators poll: liveness, readiness, and the metrics (GET /metrics,
//! and the middleware that counts every request).

use std::time::Instant;

use axum::{
    Json,
    extract::{MatchedPath, Request, State},
    http::{HeaderMap, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use serde_json::json;

use crate::{
    error::{AppError, AppResult},
    metrics::{Format, RequestLabels, Route, RouteLabels, method_label},
    state::AppState,
};

pub async fn live() -> impl IntoResponse {
    Json(json!({ "status": "ok" }))
}

/// Ready when the database answered its latest background ping
/// (`db::readiness`), within the last two seconds.
pub async fn ready(State(state): State<AppState>) -> AppResult<impl IntoResponse> {
    if !state.readiness.is_ready() {
        return Err(AppError::unavailable("the database is unavailable", 5));
    }
    Ok(Json(json!({ "status": "ok" })))
}

/// Counts every request by method, route and status, and times it by route.
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route = Route(request.extensions().get::<MatchedPath>().cloned());
    let method = method_label(request.method());
    let started = Instant::now();
    let response = next.run(request).await;
    let labels = RequestLabels { method, route: route.clone(), status: response.status().as_u16() };
    state.metrics.requests.get_or_create(&labels).inc();
    state.metrics.latency.get_or_create(&RouteLabels { route }).observe(started.elapsed().as_secs_f64());
    response
}

/// GET /metrics; with METRICS_TOKEN set, only for `Authorization: Bearer <token>`.
pub async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(token) = state.config.metrics_token.as_deref().filter(|token| !token.is_empty()) {
        let given = crate::auth::cookie::bearer_token(&headers).unwrap_or_default();
        if !crate::auth::token::same_secret(&given, token) {
            return AppError::unauthorized().into_response();
        }
    }
    let format = Format::negotiate(headers.get_all(header::ACCEPT));
    match state.metrics.render(format) {
        Ok(text) => {
            // Caches between scraper and server must not hand one format to a client
            // that asked for the other.
            ([(header::CONTENT_TYPE, format.content_type()), (header::VARY, "accept")], text).into_response()
        }
        Err(err) => AppError::internal(err).into_response(),
    }
}
