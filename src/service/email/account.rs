//! Account mail in Better Auth's shapes: a password reset by email, and the
//! verification of an address at sign-up and at change-email. The request
//! for a reset answers the same whether or not the address has an account.

use sea_orm::{ActiveModelTrait, ActiveValue::Set, DatabaseConnection, TransactionTrait};

use entity::user;

use super::{
    Email, RESET_PASSWORD, VERIFY_EMAIL, outbox, require, tokens,
    verification::{self, link, rendering_failed},
};
use crate::{
    auth::password,
    cluster::{AccessRevoked, Cluster},
    email::templates::ResetPassword,
    error::AppResult,
    service::{delivery::Delivery, sessions, users},
    time::HOUR_MS,
};

/// A reset link works for an hour.
pub const RESET_LIFETIME_MS: i64 = HOUR_MS;

/// Sends a reset link to `email` if it has an account. `redirectTo`, when
/// given, is where the link leads (checked like `callbackURL`).
pub async fn request_password_reset(
    db: &DatabaseConnection,
    sending: &Delivery,
    email: &str,
    redirect_to: Option<&str>,
    base_origin: &str,
) -> AppResult<()> {
    require(sending)?;
    let email = users::normalize_email("email", email)?;
    let redirect_to = redirect_to
        .map(|raw| users::callback_url(raw, base_origin).map_err(|err| err.renamed("redirectTo".to_owned())))
        .transpose()?;
    let Some(person) = users::by_email(db, &email).await? else {
        return Ok(());
    };
    let now = sending.clock.now();
    let txn = db.begin().await?;
    let token = tokens::issue(&txn, person.id, RESET_PASSWORD, &person.email, RESET_LIFETIME_MS, now).await?;
    let link = link(sending, "/reset-password", redirect_to.as_deref(), &token);
    let rendered = ResetPassword { name: &person.name, link: &link }
        .render("Reset your Leadtrail password".to_owned())
        .map_err(rendering_failed)?;
    let message = Email {
        org_id: None,
        user_id: Some(person.id),
        kind: RESET_PASSWORD,
        to: person.email.clone(),
        rendered,
        list_unsubscribe: None,
        dedupe_key: None,
    };
    outbox::enqueue(&txn, message, now).await?;
    txn.commit().await?;
    sending.email_due.notify_one();
    Ok(())
}

/// Sets a new password with a reset token, and ends every session of the
/// account on every instance. The address is verified on the way: the link
/// reached it.
pub async fn reset_password(
    db: &DatabaseConnection,
    cluster: &Cluster,
    sending: &Delivery,
    token: &str,
    new_password: String,
) -> AppResult<()> {
    password::validate("newPassword", &new_password)?;
    let password_hash = password::hash(new_password).await?;
    let txn = db.begin().await?;
    let used = tokens::consume(&txn, RESET_PASSWORD, token, sending.clock.now()).await?;
    let person = users::find(&txn, used.user_id).await?;
    let verified = person.email == used.email;
    let mut active: user::ActiveModel = person.into();
    active.password_hash = Set(password_hash);
    if verified {
        active.email_verified = Set(true);
    }
    active.updated_at = Set(sending.clock.now());
    active.update(&txn).await?;
    sessions::delete_all_of_user(&txn, used.user_id).await?;
    txn.commit().await?;
    cluster.access_revoked(AccessRevoked::User { user_id: used.user_id }).await;
    Ok(())
}

/// Sends a new verification link to `email` if it has an unverified
/// account; the answer is the same either way (Better Auth's
/// send-verification-email).
pub async fn send_verification(
    db: &DatabaseConnection,
    sending: &Delivery,
    email: &str,
    callback_url: Option<&str>,
    base_origin: &str,
) -> AppResult<()> {
    require(sending)?;
    let email = users::normalize_email("email", email)?;
    let callback_url = callback_url.map(|raw| users::callback_url(raw, base_origin)).transpose()?;
    let Some(person) = users::by_email(db, &email).await? else {
        return Ok(());
    };
    let txn = db.begin().await?;
    let queued = verification::queue(&txn, sending, &person, callback_url.as_deref()).await?;
    txn.commit().await?;
    if queued {
        sending.email_due.notify_one();
    }
    Ok(())
}

/// Marks the address the token was sent to as verified, if it is still the
/// account's address. Answers the user.
pub async fn verify_email(db: &DatabaseConnection, sending: &Delivery, token: &str) -> AppResult<user::Model> {
    let txn = db.begin().await?;
    let used = tokens::consume(&txn, VERIFY_EMAIL, token, sending.clock.now()).await?;
    let person = users::find(&txn, used.user_id).await?;
    if person.email != used.email {
        return Err(tokens::refused("this link was for an address the account no longer uses"));
    }
    let person = users::mark_verified(&txn, person.id).await?;
    txn.commit().await?;
    Ok(person)
}
