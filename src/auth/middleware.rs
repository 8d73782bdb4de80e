//! Request middleware: resolve the caller once, and refuse cross-site writes.

use axum::{
    extract::{Request, State},
    http::{Method, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use super::{RequestContext, RequestMeta, client_ip::client_ip, cookie};
use crate::{
    error::{AppError, ErrorCode},
    service::{api_keys, sessions},
    state::AppState,
};

/// Puts a [`RequestContext`] into the request extensions. A bad or expired
/// credential is no credential; the routes that need one answer 401.
pub async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let meta = RequestMeta {
        client_ip: client_ip(&parts, state.config.trust_proxy),
        user_agent: parts.headers.get(header::USER_AGENT).and_then(|value| value.to_str().ok()).map(str::to_owned),
    };
    let mut refreshed_cookie = None;
    let viewer = if let Some(token) = cookie::bearer_token(&parts.headers) {
        match api_keys::authenticate(&state.db, &token).await {
            Ok(viewer) => viewer,
            Err(err) => return err.into_response(),
        }
    } else if let Some(token) = cookie::session_token(&parts.headers) {
        match sessions::resolve(&state.db, &token).await {
            Ok(Some(resolved)) => {
                if let Some(expires_at) = resolved.refreshed_expiry {
                    let lifetime = expires_at - crate::time::now_ms();
                    refreshed_cookie =
                        Some(cookie::session_cookie(&token, true, state.config.secure_cookies(), lifetime));
                }
                Some(resolved.viewer)
            }
            Ok(None) => None,
            Err(err) => return err.into_response(),
        }
    } else {
        None
    };
    parts.extensions.insert(RequestContext { viewer, meta });
    let mut response = next.run(Request::from_parts(parts, body)).await;
    // A handler that set the cookie itself (sign-in, sign-out) has the last word.
    if let Some(cookie) = refreshed_cookie
        && !response.headers().contains_key(header::SET_COOKIE)
    {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}

/// CSRF defence: a cookie-authenticated unsafe request whose Origin is present
/// and not BASE_URL's origin is refused.
pub async fn check_origin(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let unsafe_method = !matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if unsafe_method
        && cookie::session_token(request.headers()).is_some()
        && let Some(origin) = request.headers().get(header::ORIGIN)
        && origin.to_str().ok().map(|o| o.trim_end_matches('/')) != Some(state.base_origin.as_str())
    {
        return AppError::new(ErrorCode::InvalidOrigin, "request origin does not match this service").into_response();
    }
    next.run(request).await
}
