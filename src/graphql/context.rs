//! What resolvers read from the GraphQL context.

use async_graphql::Context;
use axum::http::header::SET_COOKIE;

use super::gate::{Gate, Lease};
use crate::{
    auth::{
        RequestContext, Viewer, cookie,
        rate_limit::{CredentialAction, address_key},
    },
    error::{AppError, AppResult},
    service::sessions,
    state::AppState,
};

/// The signed-in person behind a request.
pub struct SignedInUser {
    pub user_id: i64,
    pub session_id: i64,
    pub session_created_at: i64,
}

pub trait ContextExt {
    fn app(&self) -> &AppState;
    fn request(&self) -> AppResult<&RequestContext>;
    /// The caller, or UNAUTHORIZED.
    fn viewer(&self) -> AppResult<&Viewer>;
    /// The database for one service call, in this operation's turn (`gate`).
    fn db(&self) -> impl Future<Output = AppResult<Lease<'_>>> + Send;
    /// The signed-in person; API keys act for an org, not a person.
    fn signed_in_user(&self) -> AppResult<SignedInUser>;
    fn limit_credentials(&self, action: CredentialAction) -> AppResult<()>;
    fn set_session_cookie(&self, token: &str, persistent: bool);
    fn clear_session_cookie(&self);
}

impl ContextExt for Context<'_> {
    fn app(&self) -> &AppState {
        self.data_unchecked::<AppState>()
    }

    fn request(&self) -> AppResult<&RequestContext> {
        self.data_opt::<RequestContext>().ok_or_else(|| AppError::internal("request context missing"))
    }

    fn viewer(&self) -> AppResult<&Viewer> {
        self.data_opt::<RequestContext>().and_then(|request| request.viewer.as_ref()).ok_or_else(AppError::unauthorized)
    }

    fn db(&self) -> impl Future<Output = AppResult<Lease<'_>>> + Send {
        let gate = self.data_opt::<Gate>();
        async move { gate.ok_or_else(|| AppError::internal("operation has no database gate"))?.lease().await }
    }

    fn signed_in_user(&self) -> AppResult<SignedInUser> {
        match self.viewer()? {
            Viewer::User { user_id, session_id, session_created_at } => {
                Ok(SignedInUser { user_id: *user_id, session_id: *session_id, session_created_at: *session_created_at })
            }
            Viewer::ApiKey { .. } => Err(AppError::forbidden("this needs a signed-in user, not an API key")),
        }
    }

    fn limit_credentials(&self, action: CredentialAction) -> AppResult<()> {
        self.app().credential_limiter.check((action, address_key(self.request()?.meta.client_ip)))
    }

    fn set_session_cookie(&self, token: &str, persistent: bool) {
        let secure = self.app().config.secure_cookies();
        let value = cookie::session_cookie(token, persistent, secure, sessions::lifetime_ms(persistent));
        self.append_http_header(SET_COOKIE, value);
    }

    fn clear_session_cookie(&self) {
        self.append_http_header(SET_COOKIE, cookie::clear_session_cookie(self.app().config.secure_cookies()));
    }
}
