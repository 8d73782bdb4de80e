//! The routes that are not one GraphQL document.

use axum::{
    body::Body,
    extract::{RawPathParams, RawQuery},
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
    routing::{MethodRouter, get},
};
use futures_util::{StreamExt, future::BoxFuture};
use serde_json::{Map, Value, json};

use super::{bridge::Bridge, handler::with_parameters, operation::Operation};
use crate::{
    error::{AppError, AppResult},
    graphql::{cost, visitor_list::ListArgs},
    server::RouterState,
    service::{analytics::desk, explore::dashboard, privacy},
    time::now_ms,
};

/// `GET /api/visitor/{id}/export`: the visitor's stored facts as a JSON
/// download, streamed from the database a page at a time.
pub fn export_visitor(op: &'static Operation) -> MethodRouter<RouterState> {
    get(move |bridge: Bridge, path: RawPathParams, RawQuery(query): RawQuery| async move {
        let variables = with_parameters(op, Map::new(), &path, query.as_deref())?;
        let site_id = variables
            .get("siteId")
            .and_then(Value::as_i64)
            .ok_or_else(|| AppError::validation("siteId", "is required"))?;
        let tracker_vid = variables.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
        let stream = privacy::export_visitor(bridge.db().clone(), bridge.viewer()?, site_id, &tracker_vid).await?;
        // Past the first byte an error can only cut the download short; the
        // service has logged it, and the client sees invalid JSON, not a lie.
        let stream = stream.map(|chunk| chunk.map_err(|err| std::io::Error::other(err.message)));
        Ok::<Response, AppError>(download(&tracker_vid, Body::from_stream(stream)))
    })
}

fn download(tracker_vid: &str, body: Body) -> Response {
    // The id goes into a header: keep only characters that cannot break it.
    let name: String =
        tracker_vid.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_')).take(64).collect();
    let disposition = HeaderValue::try_from(format!("attachment; filename=\"visitor-{name}.json\""))
        .unwrap_or(HeaderValue::from_static("attachment"));
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("application/json")),
            (header::CONTENT_DISPOSITION, disposition),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body,
    )
        .into_response()
}

/// The export document's shape, for OpenAPI.
pub fn export_schema() -> Value {
    let rows = json!({ "type": "array", "items": { "type": "object" } });
    json!({
        "type": "object",
        "required": ["visitor", "identities", "sessions", "events", "clicks"],
        "properties": {
            "visitor": { "type": "object" },
            "identities": rows, "sessions": rows, "events": rows, "clicks": rows,
        },
    })
}

/// `GET /api/visitor?format=csv`: every visitor the list's parameters
/// select (not one page), as a CSV download streamed a chunk at a time.
pub fn visitors_csv(bridge: Bridge, variables: Map<String, Value>) -> BoxFuture<'static, AppResult<Response>> {
    Box::pin(async move {
        let args = ListArgs::from_variables(&variables)?;
        let range = args.time_range.clone();
        let site_id = args.site_id;
        let query = args.query()?;
        bridge.charge(cost::export(range.as_deref()))?;
        let now = now_ms();
        let stream = desk::export(bridge.reads().clone(), bridge.viewer()?, query, now, &bridge.base_url()).await?;
        let stream = stream.map(|chunk| chunk.map_err(|err| std::io::Error::other(err.message)));
        let date = crate::time::iso(now);
        let name = format!("leads-site-{site_id}-{}.csv", date.get(..10).unwrap_or("export"));
        let disposition = HeaderValue::try_from(format!("attachment; filename=\"{name}\""))
            .unwrap_or(HeaderValue::from_static("attachment"));
        Ok((
            [
                (header::CONTENT_TYPE, HeaderValue::from_static("text/csv; charset=utf-8")),
                (header::CONTENT_DISPOSITION, disposition),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            Body::from_stream(stream),
        )
            .into_response())
    })
}

/// `GET /api/explorer?panel=...&format=csv`: one panel of the explorer, every
/// row of its full view, as a CSV download.
pub fn explorer_csv(bridge: Bridge, variables: Map<String, Value>) -> BoxFuture<'static, AppResult<Response>> {
    Box::pin(async move {
        let text = |key: &str| variables.get(key).and_then(Value::as_str).map(str::to_owned);
        let site_id = variables
            .get("siteId")
            .and_then(Value::as_i64)
            .ok_or_else(|| AppError::validation("siteId", "is required"))?;
        let input = crate::graphql::explore::ExplorerInput {
            range: text("range"),
            from: text("from"),
            to: text("to"),
            compare: text("compare"),
            filters: text("filters"),
            panel: text("panel"),
        };
        if input.panel.is_none() {
            return Err(AppError::validation("panel", "a CSV download is of one panel: name it"));
        }
        bridge.charge(input.cost())?;
        let found = dashboard::dashboard(
            bridge.reads(),
            bridge.viewer()?,
            site_id,
            input.ask(),
            (now_ms(), Some(bridge.visit_copies())),
        )
        .await?;
        let (name, body) = dashboard::panel_csv(&found)?;
        let disposition = HeaderValue::try_from(format!("attachment; filename=\"{name}\""))
            .unwrap_or(HeaderValue::from_static("attachment"));
        Ok((
            [
                (header::CONTENT_TYPE, HeaderValue::from_static("text/csv; charset=utf-8")),
                (header::CONTENT_DISPOSITION, disposition),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            body,
        )
            .into_response())
    })
}
