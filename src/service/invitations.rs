//! Invitations: nobody joins an org without saying yes. An admin invites an
//! email address with a role; the answer is the same whether or not anyone
//! has an account with that address, so inviting tells nothing about who is
//! registered. Whoever is signed in with the address sees the invitation and
//! accepts or declines it; admins see what is pending and can cancel it.

use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, TransactionTrait,
};

use entity::{invitation, member, org, user};

use super::{
    access,
    delivery::Delivery,
    email::{self, Email, outbox},
    members, parent_lock, users,
};
use crate::{
    auth::{
        RequestMeta, Role, Viewer,
        token::{hash_token, random_token},
    },
    email::templates,
    error::{AppError, AppResult, ErrorCode},
    time::{DAY_MS, now_ms},
};

/// How long an invitation can be accepted.
pub const LIFETIME_MS: i64 = 7 * DAY_MS;

pub const PENDING: &str = "pending";
const ACCEPTED: &str = "accepted";
const DECLINED: &str = "declined";
const CANCELED: &str = "canceled";

/// An invitation with what its reader needs to decide: the org's name and
/// who invited them.
pub struct Invitation {
    pub invitation: invitation::Model,
    pub org_name: String,
    pub invited_by: Option<String>,
}

/// Invites `email` into the org as `role`. Admins only; owners to invite an
/// owner. Inviting an address again renews its pending invitation. With
/// email set up, the invitation is mailed with a link that signs the person
/// up (or in) into the org; the message is queued in the same transaction.
pub async fn invite(
    db: &DatabaseConnection,
    sending: &Delivery,
    viewer: &Viewer,
    org_id: i64,
    email: &str,
    role: Role,
) -> AppResult<Invitation> {
    members::manager_role(db, viewer, org_id, role == Role::Owner).await?;
    let email = users::normalize_email("email", email)?;
    let already = member::Entity::find()
        .filter(member::Column::OrgId.eq(org_id))
        .inner_join(user::Entity)
        .filter(user::Column::Email.eq(email.as_str()))
        .one(db)
        .await?;
    if already.is_some() {
        return Err(AppError::invalid(ErrorCode::Conflict, "email", "that person is already a member"));
    }
    let now = now_ms();
    let token = sending.mailer.as_ref().map(|_| random_token());
    let txn = db.begin().await?;
    let pending = pending_for(&txn, org_id, &email).await?;
    let model = match pending {
        Some(found) => {
            let mut active: invitation::ActiveModel = found.into();
            active.role = Set(role.as_str().to_owned());
            active.invited_by = Set(viewer.user_id());
            active.expires_at = Set(now + LIFETIME_MS);
            if let Some(token) = &token {
                active.token_hash = Set(Some(hash_token(token)));
            }
            active.update(&txn).await?
        }
        None => {
            invitation::ActiveModel {
                org_id: Set(org_id),
                email: Set(email),
                role: Set(role.as_str().to_owned()),
                invited_by: Set(viewer.user_id()),
                token_hash: Set(token.as_deref().map(hash_token)),
                status: Set(PENDING.to_owned()),
                created_at: Set(now),
                expires_at: Set(now + LIFETIME_MS),
                responded_at: Set(None),
                ..Default::default()
            }
            .insert(&txn)
            .await?
        }
    };
    let described = described(&txn, model).await?;
    if let Some(token) = &token {
        outbox::enqueue(&txn, invitation_email(sending, &described, token)?, now).await?;
    }
    txn.commit().await?;
    if token.is_some() {
        sending.email_due.notify_one();
    }
    Ok(described)
}

/// The invitation's email, with the link that accepts it.
fn invitation_email(sending: &Delivery, described: &Invitation, token: &str) -> AppResult<Email> {
    let link = format!("{}/join?token={token}", sending.base_url.trim_end_matches('/'));
    let inviter = described.invited_by.as_deref().unwrap_or("A colleague");
    let expires_on = crate::time::date(described.invitation.expires_at);
    let rendered = templates::Invitation {
        org_name: &described.org_name,
        inviter,
        role: &described.invitation.role,
        link: &link,
        expires_on: &expires_on,
    }
    .render(format!("{inviter} invites you to {} on Leadtrail", described.org_name))
    .map_err(|err| AppError::internal(format!("an invitation email could not be rendered: {err}")))?;
    Ok(Email {
        org_id: Some(described.invitation.org_id),
        user_id: None,
        kind: email::INVITATION,
        to: described.invitation.email.clone(),
        rendered,
        list_unsubscribe: None,
        dedupe_key: None,
    })
}

/// The invitation an emailed link names, while it can be accepted; a wrong,
/// answered, canceled or expired one is a 400 on `token` that says which.
pub async fn by_token(db: &impl ConnectionTrait, token: &str) -> AppResult<Invitation> {
    let refused = |reason: &str| AppError::validation("token", reason);
    let found = invitation::Entity::find()
        .filter(invitation::Column::TokenHash.eq(hash_token(token.trim())))
        .one(db)
        .await?
        .ok_or_else(|| refused("this invitation link is not valid"))?;
    match found.status.as_str() {
        PENDING if found.expires_at > now_ms() => described(db, found).await,
        PENDING => Err(refused("this invitation has expired; ask for a new one")),
        ACCEPTED => Err(refused("this invitation was already accepted")),
        CANCELED => Err(refused("this invitation was withdrawn")),
        _ => Err(refused("this invitation was declined")),
    }
}

/// Accepts an emailed invitation as the signed-in person, who must be the
/// person it was sent to (the same address).
pub async fn accept_by_token(
    db: &DatabaseConnection,
    user_id: i64,
    token: &str,
) -> AppResult<(member::Model, user::Model)> {
    let found = by_token(db, token).await?;
    let person = users::find(db, user_id).await?;
    if person.email != found.invitation.email {
        return Err(AppError::validation(
            "token",
            format!("this invitation is for {}; sign in with that address to accept it", found.invitation.email),
        ));
    }
    accept(db, user_id, found.invitation.id).await
}

/// Creates the account of the invited address and accepts the invitation
/// with it; the address counts as verified, since the link reached it.
/// An invited person may join even where open sign-up is turned off
/// (`DISABLE_REGISTRATION`): the invitation is the admin's say-so.
pub async fn sign_up_by_token(
    db: &DatabaseConnection,
    token: &str,
    name: &str,
    password: String,
    meta: &RequestMeta,
) -> AppResult<users::SignedIn> {
    let found = by_token(db, token).await?;
    let new = users::NewAccount { name, email: &found.invitation.email, password, image: None };
    let signed_in = users::sign_up(db, None, false, new, meta).await?;
    let person = users::mark_verified(db, signed_in.user.id).await?;
    accept(db, person.id, found.invitation.id).await?;
    Ok(users::SignedIn { user: person, ..signed_in })
}

/// The org's open invitations, newest first. Admins only.
pub async fn list(db: &impl ConnectionTrait, viewer: &Viewer, org_id: i64) -> AppResult<Vec<Invitation>> {
    access::find_org(db, viewer, org_id, Role::Admin).await?;
    let found = invitation::Entity::find()
        .filter(invitation::Column::OrgId.eq(org_id))
        .filter(invitation::Column::Status.eq(PENDING))
        .filter(invitation::Column::ExpiresAt.gt(now_ms()))
        .order_by_desc(invitation::Column::Id)
        .all(db)
        .await?;
    describe_all(db, found).await
}

/// The open invitations addressed to the signed-in person's email.
pub async fn addressed_to(db: &impl ConnectionTrait, user_id: i64) -> AppResult<Vec<Invitation>> {
    let person = users::find(db, user_id).await?;
    let found = invitation::Entity::find()
        .filter(invitation::Column::Email.eq(person.email.to_lowercase()))
        .filter(invitation::Column::Status.eq(PENDING))
        .filter(invitation::Column::ExpiresAt.gt(now_ms()))
        .order_by_desc(invitation::Column::Id)
        .all(db)
        .await?;
    describe_all(db, found).await
}

/// Joins the org as invited. Only the person the invitation is addressed to
/// sees it; for anyone else, and once it is answered or expired, it is 404.
pub async fn accept(db: &DatabaseConnection, user_id: i64, id: i64) -> AppResult<(member::Model, user::Model)> {
    let person = users::find(db, user_id).await?;
    let found = open_invitation(db, &person, id).await?;
    // Under the org's lock, as every membership change is.
    let txn = parent_lock::begin::<org::Entity>(db, found.org_id).await?;
    let existing = member::Entity::find()
        .filter(member::Column::OrgId.eq(found.org_id))
        .filter(member::Column::UserId.eq(person.id))
        .one(&txn)
        .await?;
    let joined = match existing {
        Some(existing) => existing,
        None => {
            member::ActiveModel {
                org_id: Set(found.org_id),
                user_id: Set(person.id),
                role: Set(Role::parse(&found.role).as_str().to_owned()),
                created_at: Set(now_ms()),
                ..Default::default()
            }
            .insert(&txn)
            .await?
        }
    };
    answer(&txn, found, ACCEPTED).await?;
    txn.commit().await?;
    Ok((joined, person))
}

/// Says no to an invitation addressed to the signed-in person.
pub async fn decline(db: &impl ConnectionTrait, user_id: i64, id: i64) -> AppResult<()> {
    let person = users::find(db, user_id).await?;
    let found = open_invitation(db, &person, id).await?;
    answer(db, found, DECLINED).await
}

/// Withdraws an open invitation. Admins only; owners for an owner invitation.
pub async fn cancel(db: &impl ConnectionTrait, viewer: &Viewer, id: i64) -> AppResult<()> {
    let found = invitation::Entity::find_by_id(id)
        .filter(invitation::Column::Status.eq(PENDING))
        .one(db)
        .await?
        .ok_or_else(|| AppError::not_found("invitation"))?;
    members::manager_role(db, viewer, found.org_id, Role::parse(&found.role) == Role::Owner)
        .await
        .map_err(|err| if err.code == ErrorCode::NotFound { AppError::not_found("invitation") } else { err })?;
    answer(db, found, CANCELED).await
}

async fn pending_for(db: &impl ConnectionTrait, org_id: i64, email: &str) -> AppResult<Option<invitation::Model>> {
    Ok(invitation::Entity::find()
        .filter(invitation::Column::OrgId.eq(org_id))
        .filter(invitation::Column::Email.eq(email))
        .filter(invitation::Column::Status.eq(PENDING))
        .one(db)
        .await?)
}

/// A pending, unexpired invitation addressed to `person`.
async fn open_invitation(db: &impl ConnectionTrait, person: &user::Model, id: i64) -> AppResult<invitation::Model> {
    invitation::Entity::find_by_id(id)
        .filter(invitation::Column::Email.eq(person.email.to_lowercase()))
        .filter(invitation::Column::Status.eq(PENDING))
        .filter(invitation::Column::ExpiresAt.gt(now_ms()))
        .one(db)
        .await?
        .ok_or_else(|| AppError::not_found("invitation"))
}

async fn answer(db: &impl ConnectionTrait, found: invitation::Model, status: &str) -> AppResult<()> {
    let mut active: invitation::ActiveModel = found.into();
    active.status = Set(status.to_owned());
    active.responded_at = Set(Some(now_ms()));
    active.update(db).await?;
    Ok(())
}

async fn described(db: &impl ConnectionTrait, model: invitation::Model) -> AppResult<Invitation> {
    let mut all = describe_all(db, vec![model]).await?;
    all.pop().ok_or_else(|| AppError::internal("an invitation went missing while described"))
}

/// Adds the org names and inviters' names, in two queries for the whole list.
async fn describe_all(db: &impl ConnectionTrait, found: Vec<invitation::Model>) -> AppResult<Vec<Invitation>> {
    let org_ids: Vec<i64> = found.iter().map(|i| i.org_id).collect();
    let inviter_ids: Vec<i64> = found.iter().filter_map(|i| i.invited_by).collect();
    let orgs: std::collections::HashMap<i64, String> = org::Entity::find()
        .filter(org::Column::Id.is_in(org_ids))
        .all(db)
        .await?
        .into_iter()
        .map(|o| (o.id, o.name))
        .collect();
    let inviters: std::collections::HashMap<i64, String> = user::Entity::find()
        .filter(user::Column::Id.is_in(inviter_ids))
        .all(db)
        .await?
        .into_iter()
        .map(|u| (u.id, u.name))
        .collect();
    Ok(found
        .into_iter()
        .map(|invitation| Invitation {
            org_name: orgs.get(&invitation.org_id).cloned().unwrap_or_default(),
            invited_by: invitation.invited_by.and_then(|id| inviters.get(&id).cloned()),
            invitation,
        })
        .collect())
}
