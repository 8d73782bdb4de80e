//! The offline GraphQL explorer served at GET /graphql.

use axum::{
    http::{HeaderMap, HeaderName, HeaderValue, header},
    response::IntoResponse,
};

pub const PAGE: &str = include_str!("explorer.html");
pub const SCRIPT: &str = include_str!("explorer.js");

/// Only this origin's script runs on the page.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub fn security_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(HeaderName::from_static("x-frame-options"), HeaderValue::from_static("DENY"));
    headers
}

pub async fn script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8"), (header::CACHE_CONTROL, "public, max-age=3600")],
        SCRIPT,
    )
}
