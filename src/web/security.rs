//! The web app's defences around every page: a strict content security
//! policy, no caching of pages that hold data, and cross-site form posts
//! refused before any handler runs.

use axum::{
    extract::{Request, State},
    http::{HeaderValue, Method, header},
    middleware::Next,
    response::Response,
};

use super::error;
use crate::{
    error::{AppError, ErrorCode},
    state::AppState,
};

/// The policy for every page. Scripts and styles come only from this
/// origin, with no inline script or style attribute; images also from
/// Gravatar (visitor avatars) and `data:`; the live page's websocket only to
/// this service's own ws(s) origin (named, because older browsers do not
/// count ws: as 'self'); no framing, no `<base>`, forms only to this origin.
pub fn content_security_policy(base_origin: &str) -> String {
    let socket = base_origin.replacen("https://", "wss://", 1).replacen("http://", "ws://", 1);
    format!(
        "default-src 'self'; img-src 'self' data: https://www.gravatar.com; connect-src 'self' {socket}; \
         frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    )
}

/// Adds the policy to every web response, and `Cache-Control: no-store` to
/// every one that did not set its own (pages hold tenant data).
pub async fn headers(State(app): State<AppState>, request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    apply(&app, response.headers_mut());
    response
}

/// The headers `headers` adds, on any response.
pub fn apply(app: &AppState, headers: &mut axum::http::HeaderMap) {
    if let Ok(policy) = HeaderValue::from_str(&content_security_policy(&app.base_origin)) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

/// CSRF defence for the forms: an unsafe request whose `Origin` is present
/// and not BASE_URL's origin, or that the browser marks as cross-site
/// (`Sec-Fetch-Site`), is refused with a 403 page. Unlike the API's check
/// this also covers requests without a session cookie, so nobody can sign a
/// visitor's browser into an account of theirs (login CSRF).
pub async fn check_origin(State(app): State<AppState>, request: Request, next: Next) -> Response {
    if !matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS) && is_cross_site(&request, &app) {
        let refused = AppError::new(ErrorCode::InvalidOrigin, "request origin does not match this service");
        return error::page(&refused, None);
    }
    next.run(request).await
}

fn is_cross_site(request: &Request, app: &AppState) -> bool {
    let headers = request.headers();
    let foreign_origin = headers
        .get(header::ORIGIN)
        .is_some_and(|origin| origin.to_str().ok().map(|o| o.trim_end_matches('/')) != Some(app.base_origin.as_str()));
    let cross_site = headers.get("sec-fetch-site").is_some_and(|site| site.as_bytes() == b"cross-site");
    foreign_origin || cross_site
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_allows_only_this_origin_and_its_websocket() {
        let cases = [
            ("http://localhost:8080", "connect-src 'self' ws://localhost:8080;"),
            ("https://leads.example.com", "connect-src 'self' wss://leads.example.com;"),
        ];
        for (origin, expected) in cases {
            let policy = content_security_policy(origin);
            assert!(policy.starts_with("default-src 'self'; "), "{policy}");
            assert!(policy.contains(expected), "{policy}");
            assert!(!policy.contains("unsafe-inline"), "{policy}");
        }
    }
}
