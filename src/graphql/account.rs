//! Sign-up, sign-in, sessions and the signed-in account.

use async_graphql::{Context, Object, Result};

use super::{
    context::ContextExt,
    types::{AuthPayload, AuthSession, DeleteUserPayload, Profile, SessionInfo, StatusPayload, SuccessPayload, User},
};
use crate::{
    auth::rate_limit::CredentialAction,
    service::{accounts, profile, sessions},
};

#[derive(Default)]
pub struct AccountQuery;

#[Object]
impl AccountQuery {
    /// The signed-in user, or null.
    async fn viewer(&self, ctx: &Context<'_>) -> Result<Option<User>> {
        let Ok(user) = ctx.signed_in_user() else {
            return Ok(None);
        };
        Ok(Some(User(accounts::find(&ctx.app().db, user.user_id).await?)))
    }

    /// The current session with its user, or null when not signed in.
    async fn session(&self, ctx: &Context<'_>) -> Result<Option<SessionInfo>> {
        let Ok(user) = ctx.signed_in_user() else {
            return Ok(None);
        };
        let db = &ctx.app().db;
        let Some(session) = sessions::find(db, user.session_id).await? else {
            return Ok(None);
        };
        Ok(Some(SessionInfo { session: AuthSession(session), user: User(accounts::find(db, user.user_id).await?) }))
    }

    /// The signed-in user's account profile.
    async fn profile(&self, ctx: &Context<'_>) -> Result<Profile> {
        let user = ctx.signed_in_user()?;
        let app = ctx.app();
        let viewer = ctx.viewer()?;
        Ok(Profile(profile::get(&app.db, viewer, user.user_id, app.config.max_sites_per_account).await?))
    }
}

#[derive(Default)]
pub struct AccountMutation;

#[Object]
impl AccountMutation {
    /// Creates an account with a personal org, signs it in and sets the cookie.
    async fn sign_up(&self, ctx: &Context<'_>, name: String, email: String, password: String) -> Result<AuthPayload> {
        ctx.limit_credentials(CredentialAction::SignUp)?;
        let app = ctx.app();
        let meta = &ctx.request()?.meta;
        let signed_in =
            accounts::sign_up(&app.db, app.config.disable_registration, &name, &email, password, meta).await?;
        ctx.set_session_cookie(&signed_in.token, signed_in.persistent);
        Ok(AuthPayload { token: Some(signed_in.token), user: User(signed_in.user) })
    }

    /// Signs in and sets the cookie. Without `rememberMe` (default true) the
    /// session lasts a day and the cookie ends with the browser session.
    async fn sign_in(
        &self,
        ctx: &Context<'_>,
        email: String,
        password: String,
        #[graphql(default = true)] remember_me: bool,
    ) -> Result<AuthPayload> {
        ctx.limit_credentials(CredentialAction::SignIn)?;
        let meta = &ctx.request()?.meta;
        let signed_in = accounts::sign_in(&ctx.app().db, &email, password, remember_me, meta).await?;
        ctx.set_session_cookie(&signed_in.token, signed_in.persistent);
        Ok(AuthPayload { token: Some(signed_in.token), user: User(signed_in.user) })
    }

    /// Ends the current session on the server and clears the cookie.
    async fn sign_out(&self, ctx: &Context<'_>) -> Result<SuccessPayload> {
        let user = ctx.signed_in_user()?;
        sessions::delete(&ctx.app().db, user.session_id).await?;
        ctx.clear_session_cookie();
        Ok(SuccessPayload { success: true })
    }

    async fn update_user(&self, ctx: &Context<'_>, name: String) -> Result<User> {
        let user = ctx.signed_in_user()?;
        Ok(User(accounts::update_name(&ctx.app().db, user.user_id, &name).await?))
    }

    /// Changes the sign-in email at once.
    async fn change_email(&self, ctx: &Context<'_>, new_email: String) -> Result<StatusPayload> {
        ctx.limit_credentials(CredentialAction::ChangeEmail)?;
        let user = ctx.signed_in_user()?;
        accounts::change_email(&ctx.app().db, user.user_id, &new_email).await?;
        Ok(StatusPayload { status: true })
    }

    /// With `revokeOtherSessions`, every session ends and a new one is issued.
    async fn change_password(
        &self,
        ctx: &Context<'_>,
        current_password: String,
        new_password: String,
        #[graphql(default = false)] revoke_other_sessions: bool,
    ) -> Result<AuthPayload> {
        ctx.limit_credentials(CredentialAction::ChangePassword)?;
        let user = ctx.signed_in_user()?;
        let meta = &ctx.request()?.meta;
        let (token, user) = accounts::change_password(
            &ctx.app().db,
            user.user_id,
            current_password,
            new_password,
            revoke_other_sessions,
            meta,
        )
        .await?;
        if let Some(token) = &token {
            ctx.set_session_cookie(token, true);
        }
        Ok(AuthPayload { token, user: User(user) })
    }

    /// Deletes the account for good, with every org it solely owns. Without
    /// `password`, the session must be less than a day old.
    async fn delete_user(&self, ctx: &Context<'_>, password: Option<String>) -> Result<DeleteUserPayload> {
        ctx.limit_credentials(CredentialAction::DeleteUser)?;
        let user = ctx.signed_in_user()?;
        let app = ctx.app();
        accounts::delete(&app.db, user.user_id, user.session_created_at, password).await?;
        // The deleted orgs' sites and links must stop answering at once.
        app.sites.clear();
        app.links.clear();
        ctx.clear_session_cookie();
        Ok(DeleteUserPayload { success: true, message: "User deleted".to_owned() })
    }
}
