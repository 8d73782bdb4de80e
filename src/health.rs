//! Liveness and readiness probes.

use axum::{Json, extract::State, response::IntoResponse};
use serde_json::json;

use crate::{
    error::{AppError, AppResult},
    state::AppState,
};

pub async fn live() -> impl IntoResponse {
    Json(json!({ "status": "ok" }))
}

/// Ready when the database answers.
pub async fn ready(State(state): State<AppState>) -> AppResult<impl IntoResponse> {
    state.db.ping().await.map_err(|err| {
        tracing::warn!(error = %err, "readiness check failed");
        AppError::unavailable("the database is unavailable", 5)
    })?;
    Ok(Json(json!({ "status": "ok" })))
}
