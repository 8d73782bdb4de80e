//! Request middleware: resolve the caller once, and refuse cross-site writes.

use axum::{
    body::HttpBody,
    extract::{Request, State},
    http::{HeaderMap, Method, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use super::{client_ip::client_ip, credential::Credential};
use crate::auth::{RequestContext, RequestMeta, cookie};
use crate::{
    error::{AppError, ErrorCode},
    state::AppState,
};

/// Puts a [`RequestContext`] into the request extensions. A bad or expired
/// credential is no credential; the routes that need one answer 401.
pub async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let meta = RequestMeta {
        client_ip: client_ip(&parts, &state.config),
        user_agent: parts.headers.get(header::USER_AGENT).and_then(|value| value.to_str().ok()).map(str::to_owned),
    };
    let credential = Credential::from_headers(&parts.headers);
    let resolved = match &credential {
        Some(credential) => match credential.resolve(&state.db).await {
            Ok(resolved) => resolved,
            Err(err) => return err.into_response(),
        },
        None => None,
    };
    let session_token = credential.as_ref().and_then(Credential::session_token).filter(|_| resolved.is_some());
    let refreshed_cookie =
        resolved.as_ref().and_then(|found| found.refreshed_expiry).zip(session_token).map(|(expires_at, token)| {
            let lifetime = expires_at - crate::time::now_ms();
            cookie::session_cookie(token, true, state.config.secure_cookies(), lifetime)
        });
    let session_token = session_token.map(str::to_owned);
    let viewer = resolved.map(|found| found.viewer);
    parts.extensions.insert(RequestContext { viewer, meta, session_token });
    let mut response = next.run(Request::from_parts(parts, body)).await;
    // A handler that set the cookie itself (sign-in, sign-out) has the last word.
    if let Some(cookie) = refreshed_cookie
        && !response.headers().contains_key(header::SET_COOKIE)
    {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}

/// CSRF defence for every unsafe request a browser could send on its own.
///
/// A foreign `Origin`, or `Sec-Fetch-Site: cross-site` from a browser that
/// sends fetch metadata, is refused: with the cookie that would be a forged
/// write, and on sign-in or sign-up it would be login CSRF (a foreign page
/// signing the browser in as the attacker). No `Origin` and no fetch metadata
/// is a non-browser client and passes. A bearer key is exempt: browsers never
/// attach one by themselves, and without CORS a foreign page cannot set it.
///
/// The account routes also take JSON only, so an HTML form or a `text/plain`
/// fetch (a "simple" request that skips the CORS preflight) cannot reach them
/// even from a browser that sends no Origin. The other API writes take such
/// a body with the cookie only when the request shows it came from this
/// site: a same-site Origin, or, from a browser that sends none, a same-site
/// Referer.
pub async fn check_origin(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let unsafe_method = !matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if !unsafe_method {
        return next.run(request).await;
    }
    let by_cookie = cookie::bearer_token(headers).is_none();
    if by_cookie && is_cross_site(headers, &state.base_origin) {
        return AppError::new(ErrorCode::InvalidOrigin, "request origin does not match this service").into_response();
    }
    if request.uri().path().starts_with(ACCOUNT_PREFIX) && !is_json_or_empty(&request) {
        return unsupported("the account API takes application/json bodies only");
    }
    if by_cookie
        && cookie::session_token(headers).is_some()
        && request.uri().path().starts_with(API_PREFIX)
        && !is_json_or_empty(&request)
        && !from_this_site(headers, &state.base_origin)
    {
        return unsupported("signed-in API writes take application/json bodies");
    }
    next.run(request).await
}

const API_PREFIX: &str = "/api/";

fn unsupported(message: &str) -> Response {
    let mut response = AppError::bad_request(message).into_response();
    *response.status_mut() = StatusCode::UNSUPPORTED_MEDIA_TYPE;
    response
}

/// The request names this site as where it came from: its Origin (checked
/// above to be this site's, when present) or, without one, its Referer.
fn from_this_site(headers: &HeaderMap, base_origin: &str) -> bool {
    if headers.contains_key(header::ORIGIN) {
        return true;
    }
    headers
        .get(header::REFERER)
        .and_then(|value| value.to_str().ok())
        .and_then(|referer| url::Url::parse(referer).ok())
        .is_some_and(|referer| referer.origin().ascii_serialization() == base_origin)
}

const ACCOUNT_PREFIX: &str = "/api/auth/";

/// A foreign `Origin`, or fetch metadata saying the request came from
/// another site; the web app's forms use the same rule.
pub fn is_cross_site(headers: &HeaderMap, base_origin: &str) -> bool {
    let foreign_origin = headers
        .get(header::ORIGIN)
        .is_some_and(|origin| origin.to_str().ok().map(|o| o.trim_end_matches('/')) != Some(base_origin));
    let cross_site_fetch = headers
        .get("sec-fetch-site")
        .is_some_and(|site| site.to_str().is_ok_and(|site| site.trim().eq_ignore_ascii_case("cross-site")));
    foreign_origin || cross_site_fetch
}

/// `application/json`, with or without parameters such as charset. A request
/// with no body and no Content-Type (sign-out, delete-user) passes too.
fn is_json_or_empty(request: &Request) -> bool {
    match request.headers().get(header::CONTENT_TYPE) {
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|value| value.split(';').next())
            .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json")),
        None => request.body().size_hint().exact() == Some(0),
    }
}
