//! What a caller presents: an API key (`Authorization: Bearer`) or a session
//! token (the `session` cookie), from HTTP headers or from a GraphQL socket's
//! `connectionParams`, and the caller it stands for now.

use axum::http::HeaderMap;
use cookie::Cookie;
use sea_orm::ConnectionTrait;
use serde_json::Value;

use crate::auth::{Viewer, cookie as session_cookie};
use crate::{
    error::AppResult,
    service::{api_keys, sessions},
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    ApiKey(String),
    Session(String),
}

/// The caller a credential stands for, and for a session whose expiry slid
/// forward, the new expiry (so the cookie is sent again).
pub struct Resolved {
    pub viewer: Viewer,
    pub refreshed_expiry: Option<i64>,
}

impl Credential {
    /// A bearer token wins over the cookie, as on every route.
    pub fn from_headers(headers: &HeaderMap) -> Option<Self> {
        session_cookie::bearer_token(headers)
            .map(Credential::ApiKey)
            .or_else(|| session_cookie::session_token(headers).map(Credential::Session))
    }

    /// From a socket's `connection_init` payload, in the shapes GraphQL
    /// clients send: `{authorization: "Bearer <key>"}` (any case, also under
    /// `headers`), `{cookie: "session=<token>"}`, or `{session: "<token>"}`.
    pub fn from_connection_params(params: &Value) -> Option<Self> {
        let Value::Object(params) = params else { return None };
        let headers = params.iter().find(|(name, _)| name.eq_ignore_ascii_case("headers")).map(|(_, value)| value);
        let scopes = std::iter::once(params).chain(headers.and_then(Value::as_object));
        for fields in scopes {
            if let Some(value) = field(fields, "authorization")
                && let Some((scheme, token)) = value.split_once(' ')
                && scheme.eq_ignore_ascii_case("bearer")
                && !token.trim().is_empty()
            {
                return Some(Credential::ApiKey(token.trim().to_owned()));
            }
            if let Some(cookies) = field(fields, "cookie")
                && let Some(token) = Cookie::split_parse(cookies)
                    .filter_map(Result::ok)
                    .find(|cookie| cookie.name() == session_cookie::SESSION_COOKIE && !cookie.value().is_empty())
            {
                return Some(Credential::Session(token.value().to_owned()));
            }
            if let Some(token) = field(fields, "session").filter(|token| !token.is_empty()) {
                return Some(Credential::Session(token.to_owned()));
            }
        }
        None
    }

    /// The caller this stands for now; `None` once it was revoked, signed
    /// out or expired.
    pub async fn resolve(&self, db: &impl ConnectionTrait) -> AppResult<Option<Resolved>> {
        Ok(match self {
            Credential::ApiKey(key) => {
                api_keys::authenticate(db, key).await?.map(|viewer| Resolved { viewer, refreshed_expiry: None })
            }
            Credential::Session(token) => sessions::resolve(db, token)
                .await?
                .map(|found| Resolved { viewer: found.viewer, refreshed_expiry: found.refreshed_expiry }),
        })
    }

    /// The session token, for get-session (Better Auth shows it).
    pub fn session_token(&self) -> Option<&str> {
        match self {
            Credential::Session(token) => Some(token),
            Credential::ApiKey(_) => None,
        }
    }
}

/// A text field by name, in any case.
fn field<'a>(fields: &'a serde_json::Map<String, Value>, wanted: &str) -> Option<&'a str> {
    fields.iter().find(|(name, _)| name.eq_ignore_ascii_case(wanted)).and_then(|(_, value)| value.as_str())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn connection_params_in_the_shapes_clients_send() {
        let key = || Some(Credential::ApiKey("lt_key".to_owned()));
        let session = || Some(Credential::Session("tok".to_owned()));
        for (params, expected) in [
            (json!({"authorization": "Bearer lt_key"}), key()),
            (json!({"Authorization": "bearer lt_key"}), key()),
            (json!({"headers": {"Authorization": "Bearer lt_key"}}), key()),
            (json!({"cookie": "theme=dark; session=tok"}), session()),
            (json!({"headers": {"Cookie": "session=tok"}}), session()),
            (json!({"session": "tok"}), session()),
            (json!({"authorization": "Basic abc"}), None),
            (json!({"authorization": "Bearer "}), None),
            (json!({"session": ""}), None),
            (json!({}), None),
            (json!(null), None),
            (json!("Bearer lt_key"), None),
        ] {
            assert_eq!(Credential::from_connection_params(&params), expected, "{params}");
        }
    }
}
