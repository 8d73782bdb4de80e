//! Email in GraphQL (design §21): the account flows in Better Auth's shapes
//! (password reset, verification), and the org's email log for admins.

use async_graphql::{Context, ID, Object, SimpleObject};

use entity::email_outbox;

use super::{
    account::{StatusPayload, User},
    context::ContextExt,
    types::{Timestamp, parse_id},
};
use crate::{
    auth::rate_limit::CredentialAction,
    error::AppResult,
    service::{email, sites},
};

#[derive(Default)]
pub struct EmailQuery;

#[Object]
impl EmailQuery {
    /// Whether this server sends email (`SMTP_URL` is set). Pages hide
    /// everything email-related when it does not.
    async fn email_enabled(&self, ctx: &Context<'_>) -> bool {
        ctx.app().delivery.mailer.is_some()
    }

    /// Whether a password reset token can still be used (it is not used by
    /// asking). A wrong, used or expired token is 400 on `token`.
    async fn reset_token_valid(&self, ctx: &Context<'_>, token: String) -> AppResult<bool> {
        ctx.limit_credentials(CredentialAction::UseToken)?;
        let now = ctx.app().delivery.clock.now();
        email::tokens::check(&*ctx.db().await?, email::RESET_PASSWORD, &token, now).await?;
        Ok(true)
    }

    /// The signed-in person's digest choice for every site they can read.
    async fn digests(&self, ctx: &Context<'_>) -> AppResult<Vec<DigestChoice>> {
        let choices = email::digest::choices(&*ctx.db().await?, ctx.viewer()?).await?;
        Ok(choices.into_iter().map(DigestChoice).collect())
    }

    /// The org's emails (invitations, digests, alerts), newest first, with
    /// how sending went. Admins only.
    async fn email_log(&self, ctx: &Context<'_>, org_id: ID) -> AppResult<Vec<EmailMessage>> {
        org_email_log(ctx, org_id).await
    }
}

#[derive(Default)]
pub struct EmailMutation;

#[Object]
impl EmailMutation {
    /// Sends a reset link to the address if it has an account. The answer is
    /// the same either way. `redirectTo` is the page the link opens (a path
    /// on this site); by default `/reset-password`.
    async fn request_password_reset(
        &self,
        ctx: &Context<'_>,
        email: String,
        redirect_to: Option<String>,
    ) -> AppResult<StatusMessagePayload> {
        ctx.limit_credentials(CredentialAction::RequestEmail)?;
        let app = ctx.app();
        app.email_request_limiter.check(email.trim().to_lowercase())?;
        let db = &*ctx.db().await?;
        email::account::request_password_reset(db, &app.delivery, &email, redirect_to.as_deref(), &app.base_origin)
            .await?;
        Ok(StatusMessagePayload {
            status: true,
            message: "If this email exists in our system, check your email for the reset link".to_owned(),
        })
    }

    /// Sets a new password with the token from a reset email. The token works
    /// once, for an hour; every session of the account ends.
    async fn reset_password(&self, ctx: &Context<'_>, new_password: String, token: String) -> AppResult<StatusPayload> {
        ctx.limit_credentials(CredentialAction::UseToken)?;
        let app = ctx.app();
        let db = &*ctx.db().await?;
        email::account::reset_password(db, &app.cluster, &app.delivery, &token, new_password).await?;
        Ok(StatusPayload { status: true })
    }

    /// Sends a new verification link to the address if it has an unverified
    /// account. The answer is the same either way.
    async fn send_verification_email(
        &self,
        ctx: &Context<'_>,
        email: String,
        #[graphql(name = "callbackURL")] callback_url: Option<String>,
    ) -> AppResult<StatusPayload> {
        ctx.limit_credentials(CredentialAction::RequestEmail)?;
        let app = ctx.app();
        app.email_request_limiter.check(email.trim().to_lowercase())?;
        let db = &*ctx.db().await?;
        email::account::send_verification(db, &app.delivery, &email, callback_url.as_deref(), &app.base_origin).await?;
        Ok(StatusPayload { status: true })
    }

    /// Chooses the signed-in person's digest of a site: `none`, `daily` or
    /// `weekly`, sent at 8:00 in the site's time zone.
    async fn set_digest(&self, ctx: &Context<'_>, site_id: i64, frequency: String) -> AppResult<DigestChoice> {
        let app = ctx.app();
        let choice =
            email::digest::choose(&*ctx.db().await?, &app.delivery, ctx.viewer()?, site_id, &frequency).await?;
        Ok(DigestChoice(choice))
    }

    /// Ends the digest an unsubscribe link names; no session needed (the
    /// link is the proof, RFC 8058). Answers the site's name.
    async fn unsubscribe_digest(&self, ctx: &Context<'_>, token: String) -> AppResult<String> {
        ctx.limit_credentials(CredentialAction::UseToken)?;
        email::digest::unsubscribe(&*ctx.db().await?, &token).await
    }

    /// Marks the address as verified with the token from a verification email.
    async fn verify_email(&self, ctx: &Context<'_>, token: String) -> AppResult<VerifyEmailPayload> {
        ctx.limit_credentials(CredentialAction::UseToken)?;
        let app = ctx.app();
        let user = email::account::verify_email(&*ctx.db().await?, &app.delivery, &token).await?;
        Ok(VerifyEmailPayload { status: true, user: User(user) })
    }
}

/// The read above as a function, which `workspace` also calls with its org.
pub(crate) async fn org_email_log(ctx: &Context<'_>, org_id: ID) -> AppResult<Vec<EmailMessage>> {
    let org_id = parse_id(&org_id, "org")?;
    let log = email::log(&*ctx.db().await?, ctx.viewer()?, org_id).await?;
    Ok(log.into_iter().map(EmailMessage).collect())
}

/// Better Auth's answer to request-password-reset.
#[derive(SimpleObject)]
pub struct StatusMessagePayload {
    pub status: bool,
    pub message: String,
}

#[derive(SimpleObject)]
pub struct VerifyEmailPayload {
    pub status: bool,
    pub user: User,
}

/// One email in the org's log.
pub struct EmailMessage(pub email_outbox::Model);

#[Object]
impl EmailMessage {
    async fn id(&self) -> ID {
        ID(self.0.id.to_string())
    }
    /// `invitation`, `digest` or `alert`.
    async fn kind(&self) -> &str {
        &self.0.kind
    }
    async fn recipient(&self) -> &str {
        &self.0.recipient
    }
    async fn subject(&self) -> &str {
        &self.0.subject
    }
    /// `pending`, `sent` or `failed`.
    async fn status(&self) -> &str {
        &self.0.status
    }
    async fn attempts(&self) -> i32 {
        self.0.attempts
    }
    /// What the SMTP server said on the last failed attempt.
    async fn last_error(&self) -> Option<&str> {
        self.0.last_error.as_deref()
    }
    /// When a pending message is tried next.
    async fn next_attempt_at(&self) -> Option<Timestamp> {
        self.0.next_attempt_at.filter(|_| self.0.status == email::outbox::PENDING).map(Timestamp)
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.created_at)
    }
    async fn sent_at(&self) -> Option<Timestamp> {
        self.0.sent_at.map(Timestamp)
    }
}

/// A site and the signed-in person's digest of it.
pub struct DigestChoice(pub email::digest::Choice);

#[Object]
impl DigestChoice {
    async fn site_id(&self) -> i64 {
        self.0.site.id
    }
    async fn site_name(&self) -> &str {
        sites::shown_name(&self.0.site)
    }
    /// `none`, `daily` or `weekly`.
    async fn frequency(&self) -> &str {
        self.0.frequency.map_or("none", |frequency| frequency.as_str())
    }
}
