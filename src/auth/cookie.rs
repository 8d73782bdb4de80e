//! The `session` cookie (the name is fixed by the spec).

use axum::http::{HeaderMap, HeaderValue, header};
use cookie::{Cookie, SameSite, time::Duration};

pub const SESSION_COOKIE: &str = "session";

/// `persistent` sets Max-Age; otherwise the browser drops it on close.
pub fn session_cookie(token: &str, persistent: bool, secure: bool, lifetime_ms: i64) -> HeaderValue {
    let mut cookie = Cookie::build((SESSION_COOKIE, token.to_owned()))
        .http_only(true)
        .same_site(SameSite::Lax)
        .path("/")
        .secure(secure);
    if persistent {
        cookie = cookie.max_age(Duration::milliseconds(lifetime_ms));
    }
    header_value(cookie.build())
}

pub fn clear_session_cookie(secure: bool) -> HeaderValue {
    let cookie = Cookie::build((SESSION_COOKIE, ""))
        .http_only(true)
        .same_site(SameSite::Lax)
        .path("/")
        .secure(secure)
        .max_age(Duration::ZERO)
        .build();
    header_value(cookie)
}

fn header_value(cookie: Cookie<'_>) -> HeaderValue {
    // Tokens are base64url, so the serialised cookie is always a valid header.
    HeaderValue::try_from(cookie.to_string()).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The session token from the request's Cookie headers, if any.
pub fn session_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|cookie| cookie.name() == SESSION_COOKIE && !cookie.value().is_empty())
        .map(|cookie| cookie.value().to_owned())
}

pub fn bearer_token(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned()).filter(|t| !t.is_empty())
}
