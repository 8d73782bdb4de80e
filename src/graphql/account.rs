//! Sign-up, sign-in, sessions and the signed-in account.

use async_graphql::{Context, ID, Object, SimpleObject};

use entity::{auth_session, user};

use super::{
    context::ContextExt,
    types::{SuccessPayload, Timestamp},
};
use crate::{
    auth::rate_limit::CredentialAction,
    error::AppResult,
    service::{
        profile, sessions,
        users::{self, NewAccount, SignedIn, UserChanges},
    },
};

/// Sets the cookie and answers a `callbackURL` (already checked) as Better Auth does.
pub(super) fn signed_in(ctx: &Context<'_>, signed_in: SignedIn, callback_url: Option<String>) -> SignInPayload {
    ctx.set_session_cookie(&signed_in.token, signed_in.persistent);
    SignInPayload {
        token: signed_in.token,
        user: User(signed_in.user),
        redirect: callback_url.is_some(),
        url: callback_url,
    }
}

fn checked_callback(ctx: &Context<'_>, callback_url: Option<String>) -> AppResult<Option<String>> {
    callback_url.map(|raw| users::callback_url(&raw, &ctx.app().base_origin)).transpose()
}

#[derive(Default)]
pub struct AccountQuery;

#[Object]
impl AccountQuery {
    /// The signed-in user, or null.
    async fn viewer(&self, ctx: &Context<'_>) -> AppResult<Option<User>> {
        let Ok(user) = ctx.signed_in_user() else {
            return Ok(None);
        };
        Ok(Some(User(users::find(&*ctx.db().await?, user.user_id).await?)))
    }

    /// The current session with its user, or null when not signed in.
    async fn session(&self, ctx: &Context<'_>) -> AppResult<Option<SessionInfo>> {
        let Ok(user) = ctx.signed_in_user() else {
            return Ok(None);
        };
        let lease = ctx.db().await?;
        let db = &*lease;
        let Some(session) = sessions::find(db, user.session_id).await? else {
            return Ok(None);
        };
        let token = ctx.request()?.session_token.clone();
        let user = User(users::find(db, user.user_id).await?);
        Ok(Some(SessionInfo { session: AuthSession(session, token), user }))
    }

    /// The signed-in user's account profile.
    async fn profile(&self, ctx: &Context<'_>) -> AppResult<Profile> {
        let user = ctx.signed_in_user()?;
        let app = ctx.app();
        let viewer = ctx.viewer()?;
        Ok(Profile(profile::get(&*ctx.db().await?, viewer, user.user_id, app.config.max_sites_per_account).await?))
    }
}

#[derive(Default)]
pub struct AccountMutation;

#[Object]
impl AccountMutation {
    /// Creates an account with a personal org, signs it in and sets the cookie.
    /// A duplicate email is 409 `EMAIL_IN_USE` (Better Auth answers 422).
    async fn sign_up(
        &self,
        ctx: &Context<'_>,
        name: String,
        email: String,
        password: String,
        image: Option<String>,
        #[graphql(name = "callbackURL")] callback_url: Option<String>,
    ) -> AppResult<SignInPayload> {
        ctx.limit_credentials(CredentialAction::SignUp)?;
        let callback_url = checked_callback(ctx, callback_url)?;
        let app = ctx.app();
        let meta = &ctx.request()?.meta;
        let disabled = app.config.disable_registration;
        let new = NewAccount { name: &name, email: &email, password, image: image.as_deref() };
        let account = users::sign_up(&*ctx.db().await?, Some(&app.delivery), disabled, new, meta).await?;
        Ok(signed_in(ctx, account, callback_url))
    }

    /// Signs in and sets the cookie. Without `rememberMe` (default true) the
    /// session lasts a day and the cookie ends with the browser session.
    async fn sign_in(
        &self,
        ctx: &Context<'_>,
        email: String,
        password: String,
        #[graphql(default = true)] remember_me: bool,
        #[graphql(name = "callbackURL")] callback_url: Option<String>,
    ) -> AppResult<SignInPayload> {
        ctx.limit_credentials(CredentialAction::SignIn)?;
        // Beside the per-address limit: many addresses guessing one account's
        // password share this one.
        ctx.app().sign_in_limiter.check(email.trim().to_lowercase())?;
        let callback_url = checked_callback(ctx, callback_url)?;
        let meta = &ctx.request()?.meta;
        let account = users::sign_in(&*ctx.db().await?, &email, password, remember_me, meta).await?;
        Ok(signed_in(ctx, account, callback_url))
    }

    /// Ends the current session on the server and clears the cookie.
    async fn sign_out(&self, ctx: &Context<'_>) -> AppResult<SuccessPayload> {
        let user = ctx.signed_in_user()?;
        sessions::delete(&*ctx.db().await?, &ctx.app().cluster, user.session_id).await?;
        ctx.clear_session_cookie();
        Ok(SuccessPayload { success: true })
    }

    /// Changes the fields given, at least one. An empty `image` removes it.
    async fn update_user(&self, ctx: &Context<'_>, name: Option<String>, image: Option<String>) -> AppResult<User> {
        let user = ctx.signed_in_user()?;
        Ok(User(users::update(&*ctx.db().await?, user.user_id, UserChanges { name, image }).await?))
    }

    /// Changes the sign-in email at once.
    async fn change_email(&self, ctx: &Context<'_>, new_email: String) -> AppResult<StatusPayload> {
        ctx.limit_credentials(CredentialAction::ChangeEmail)?;
        let user = ctx.signed_in_user()?;
        users::change_email(&*ctx.db().await?, &ctx.app().delivery, user.user_id, &new_email).await?;
        Ok(StatusPayload { status: true })
    }

    /// With `revokeOtherSessions`, every session ends and a new one is issued.
    async fn change_password(
        &self,
        ctx: &Context<'_>,
        current_password: String,
        new_password: String,
        #[graphql(default = false)] revoke_other_sessions: bool,
    ) -> AppResult<AuthPayload> {
        ctx.limit_credentials(CredentialAction::ChangePassword)?;
        let user = ctx.signed_in_user()?;
        let meta = &ctx.request()?.meta;
        let (token, user) = users::change_password(
            &*ctx.db().await?,
            &ctx.app().cluster,
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
    async fn delete_user(&self, ctx: &Context<'_>, password: Option<String>) -> AppResult<DeleteUserPayload> {
        ctx.limit_credentials(CredentialAction::DeleteUser)?;
        let user = ctx.signed_in_user()?;
        let app = ctx.app();
        users::delete(&*ctx.db().await?, &app.cluster, user.user_id, user.session_created_at, password).await?;
        ctx.clear_session_cookie();
        Ok(DeleteUserPayload { success: true, message: "User deleted".to_owned() })
    }
}

pub struct User(pub user::Model);

#[Object]
impl User {
    async fn id(&self) -> ID {
        ID(self.0.id.to_string())
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn email(&self) -> &str {
        &self.0.email
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.created_at)
    }
    async fn updated_at(&self) -> Timestamp {
        Timestamp(self.0.updated_at)
    }
    /// An avatar URL; null until the user sets one.
    async fn image(&self) -> Option<&str> {
        self.0.image.as_deref()
    }
    /// Whether the user followed the verification link sent to `email`.
    async fn email_verified(&self) -> bool {
        self.0.email_verified
    }
}

/// A sign-in session; `token` is the caller's own cookie value, shown only
/// to that caller.
pub struct AuthSession(pub auth_session::Model, pub Option<String>);

#[Object]
impl AuthSession {
    async fn id(&self) -> ID {
        ID(self.0.id.to_string())
    }
    async fn token(&self) -> Option<&str> {
        self.1.as_deref()
    }
    async fn user_id(&self) -> ID {
        ID(self.0.user_id.to_string())
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.created_at)
    }
    async fn updated_at(&self) -> Timestamp {
        Timestamp(self.0.updated_at)
    }
    async fn expires_at(&self) -> Timestamp {
        Timestamp(self.0.expires_at)
    }
    async fn ip_address(&self) -> Option<&str> {
        self.0.ip.as_deref()
    }
    async fn user_agent(&self) -> Option<&str> {
        self.0.user_agent.as_deref()
    }
}

/// The current session and its user (`get-session`).
#[derive(SimpleObject)]
pub struct SessionInfo {
    pub session: AuthSession,
    pub user: User,
}

#[derive(SimpleObject)]
pub struct AuthPayload {
    /// The session token; the same value is set as the `session` cookie.
    /// Null after a password change that kept the current session.
    pub token: Option<String>,
    pub user: User,
}

/// Sign-up and sign-in, in Better Auth's shape: `redirect` and `url` answer a
/// `callbackURL` on this site.
#[derive(SimpleObject)]
pub struct SignInPayload {
    /// The session token; the same value is set as the `session` cookie.
    pub token: String,
    pub user: User,
    /// Whether the client should go to `url`.
    pub redirect: bool,
    /// The `callbackURL` the request gave, when it was a path on this site.
    pub url: Option<String>,
}

#[derive(SimpleObject)]
pub struct StatusPayload {
    pub status: bool,
}

#[derive(SimpleObject)]
pub struct DeleteUserPayload {
    pub success: bool,
    pub message: String,
}

pub struct Profile(pub profile::Profile);

#[Object]
impl Profile {
    async fn id(&self) -> ID {
        ID(self.0.user.id.to_string())
    }
    async fn name(&self) -> &str {
        &self.0.user.name
    }
    async fn email(&self) -> &str {
        &self.0.user.email
    }
    /// Always `free` in a self-hosted install.
    async fn tier(&self) -> &str {
        self.0.tier
    }
    async fn max_sites(&self) -> u32 {
        self.0.max_sites
    }
    /// Sites the user can access, in every org.
    async fn site_count(&self) -> u64 {
        self.0.site_count
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.user.created_at)
    }
    /// The user's primary org: the first they joined.
    async fn org(&self) -> ProfileOrg<'_> {
        ProfileOrg(&self.0)
    }
}

pub struct ProfileOrg<'a>(&'a profile::Profile);

#[Object]
impl ProfileOrg<'_> {
    async fn id(&self) -> ID {
        ID(self.0.org.id.to_string())
    }
    async fn name(&self) -> &str {
        &self.0.org.name
    }
    async fn slug(&self) -> &str {
        &self.0.org.slug
    }
    /// `owner`, `admin`, `member` or `viewer`.
    async fn role(&self) -> &str {
        self.0.role.as_str()
    }
    async fn member_since(&self) -> Timestamp {
        Timestamp(self.0.member_since)
    }
}
