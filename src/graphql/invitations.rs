//! Invitations to orgs: sent by admins, answered by the invited person.

use async_graphql::{Context, ID, Object};

use super::{
    account::{SignInPayload, signed_in},
    context::ContextExt,
    orgs::Member,
    types::{Timestamp, parse_id},
};
use crate::{
    auth::rate_limit::CredentialAction,
    error::AppResult,
    service::{invitations, members},
};

/// An invitation to join an org.
pub struct Invitation(pub invitations::Invitation);

#[Object]
impl Invitation {
    async fn id(&self) -> ID {
        ID(self.0.invitation.id.to_string())
    }
    async fn org_id(&self) -> ID {
        ID(self.0.invitation.org_id.to_string())
    }
    async fn org_name(&self) -> &str {
        &self.0.org_name
    }
    /// The invited address, lower case.
    async fn email(&self) -> &str {
        &self.0.invitation.email
    }
    /// The role the person gets on accepting.
    async fn role(&self) -> &str {
        &self.0.invitation.role
    }
    /// `pending`, `accepted`, `declined` or `canceled`.
    async fn status(&self) -> &str {
        &self.0.invitation.status
    }
    /// The inviter's name; empty once their account is gone.
    async fn invited_by(&self) -> &str {
        self.0.invited_by.as_deref().unwrap_or_default()
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.invitation.created_at)
    }
    async fn expires_at(&self) -> Timestamp {
        Timestamp(self.0.invitation.expires_at)
    }
}

#[derive(Default)]
pub struct InvitationQuery;

#[Object]
impl InvitationQuery {
    /// The org's open invitations, newest first. Admins only.
    async fn invitations(&self, ctx: &Context<'_>, org_id: ID) -> AppResult<Vec<Invitation>> {
        org_invitations(ctx, org_id).await
    }

    /// The invitation an emailed link names, while it can be accepted: no
    /// session needed, the token is the proof. A wrong, answered or expired
    /// token is 400 on `token`.
    async fn invitation_by_token(&self, ctx: &Context<'_>, token: String) -> AppResult<Invitation> {
        ctx.limit_credentials(CredentialAction::UseToken)?;
        Ok(Invitation(invitations::by_token(&*ctx.db().await?, &token).await?))
    }

    /// The open invitations addressed to the signed-in person's email.
    async fn my_invitations(&self, ctx: &Context<'_>) -> AppResult<Vec<Invitation>> {
        let user = ctx.signed_in_user()?;
        let found = invitations::addressed_to(&*ctx.db().await?, user.user_id).await?;
        Ok(found.into_iter().map(Invitation).collect())
    }
}

#[derive(Default)]
pub struct InvitationMutation;

#[Object]
impl InvitationMutation {
    /// Invites an email address into the org. Admins only; owners to invite
    /// an owner. The answer is the same whether or not the address has an
    /// account; the person joins when they accept. Rate limited per inviter.
    async fn invite_member(
        &self,
        ctx: &Context<'_>,
        org_id: ID,
        email: String,
        #[graphql(default_with = "\"member\".to_owned()")] role: String,
    ) -> AppResult<Invitation> {
        let org_id = parse_id(&org_id, "organization")?;
        let role = members::parse_role(&role)?;
        let user = ctx.signed_in_user()?;
        ctx.app().invite_limiter.check(user.user_id)?;
        let sending = &ctx.app().delivery;
        let sent = invitations::invite(&*ctx.db().await?, sending, ctx.viewer()?, org_id, &email, role).await?;
        Ok(Invitation(sent))
    }

    /// Joins the org as invited; only the invited person can.
    async fn accept_invitation(&self, ctx: &Context<'_>, id: ID) -> AppResult<Member> {
        let user = ctx.signed_in_user()?;
        let id = parse_id(&id, "invitation")?;
        let (member, person) = invitations::accept(&*ctx.db().await?, user.user_id, id).await?;
        Ok(Member::new(member, &person))
    }

    /// Accepts an emailed invitation as the signed-in person, who must have
    /// the invited address.
    async fn accept_invitation_by_token(&self, ctx: &Context<'_>, token: String) -> AppResult<Member> {
        ctx.limit_credentials(CredentialAction::UseToken)?;
        let user = ctx.signed_in_user()?;
        let (member, person) = invitations::accept_by_token(&*ctx.db().await?, user.user_id, &token).await?;
        Ok(Member::new(member, &person))
    }

    /// Creates the invited person's account (with the invited address, now
    /// verified), joins the org with the invited role, signs in and sets the
    /// cookie. Works even with `DISABLE_REGISTRATION`.
    async fn sign_up_with_invitation(
        &self,
        ctx: &Context<'_>,
        token: String,
        name: String,
        password: String,
    ) -> AppResult<SignInPayload> {
        ctx.limit_credentials(CredentialAction::SignUp)?;
        let meta = &ctx.request()?.meta;
        let account = invitations::sign_up_by_token(&*ctx.db().await?, &token, &name, password, meta).await?;
        Ok(signed_in(ctx, account, None))
    }

    /// Declines an invitation addressed to the signed-in person.
    async fn decline_invitation(&self, ctx: &Context<'_>, id: ID) -> AppResult<bool> {
        let user = ctx.signed_in_user()?;
        let id = parse_id(&id, "invitation")?;
        invitations::decline(&*ctx.db().await?, user.user_id, id).await?;
        Ok(true)
    }

    /// Withdraws an open invitation. Admins only.
    async fn cancel_invitation(&self, ctx: &Context<'_>, id: ID) -> AppResult<bool> {
        let id = parse_id(&id, "invitation")?;
        invitations::cancel(&*ctx.db().await?, ctx.viewer()?, id).await?;
        Ok(true)
    }
}

// The reads above as functions, which `workspace` also calls with its site
// or org filled in.

pub(crate) async fn org_invitations(ctx: &Context<'_>, org_id: ID) -> AppResult<Vec<Invitation>> {
    let org_id = parse_id(&org_id, "organization")?;
    let found = invitations::list(&*ctx.db().await?, ctx.viewer()?, org_id).await?;
    Ok(found.into_iter().map(Invitation).collect())
}
