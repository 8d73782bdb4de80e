//! GET /script.js: the tracker, cacheable and revalidated by ETag.

use std::sync::OnceLock;

use axum::{
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use sha2::{Digest, Sha256};

pub const TRACKER: &str = include_str!("tracker.js");

fn etag() -> &'static HeaderValue {
    static ETAG: OnceLock<HeaderValue> = OnceLock::new();
    ETAG.get_or_init(|| {
        let digest = hex::encode(Sha256::digest(TRACKER.as_bytes()));
        HeaderValue::try_from(format!("\"{}\"", &digest[..16])).unwrap_or(HeaderValue::from_static("\"tracker\""))
    })
}

pub async fn script(headers: HeaderMap) -> Response {
    let tag = etag();
    let cache = [
        (header::ETAG, tag.clone()),
        // An hour fresh, then revalidated cheaply with If-None-Match.
        (header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600")),
        (header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*")),
    ];
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.split(',').any(|candidate| candidate.trim() == tag.to_str().unwrap_or_default()));
    if matches {
        return (StatusCode::NOT_MODIFIED, cache).into_response();
    }
    let content_type = [(header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8"))];
    (content_type, cache, TRACKER).into_response()
}
