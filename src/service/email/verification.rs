//! The verification link sent at sign-up and at change-email, queued in the
//! transaction that created or changed the address. Apart from `account`
//! so that `users` can queue it without the two importing each other.

use sea_orm::ConnectionTrait;

use entity::user;

use super::{Email, VERIFY_EMAIL, outbox, tokens};
use crate::{
    email::templates::VerifyEmail,
    error::{AppError, AppResult},
    service::delivery::Delivery,
    time::DAY_MS,
};

/// A verification link works for a day.
pub const VERIFY_LIFETIME_MS: i64 = DAY_MS;

pub(super) fn rendering_failed(err: askama::Error) -> AppError {
    AppError::internal(format!("an email could not be rendered: {err}"))
}

/// `page?token=...` on this site, or on the caller's `redirectTo` (a path or
/// URL of BASE_URL's origin, as `callbackURL` is checked).
pub(super) fn link(sending: &Delivery, page: &str, redirect_to: Option<&str>, token: &str) -> String {
    let base = match redirect_to {
        Some(target) if target.starts_with('/') => format!("{}{target}", sending.base_url.trim_end_matches('/')),
        Some(target) => target.to_owned(),
        None => format!("{}{page}", sending.base_url.trim_end_matches('/')),
    };
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}token={token}")
}

/// Queues a verification link to the user's current address, in the
/// caller's transaction (sign-up, change-email). Nothing without SMTP.
pub async fn queue(
    db: &impl ConnectionTrait,
    sending: &Delivery,
    person: &user::Model,
    callback_url: Option<&str>,
) -> AppResult<bool> {
    if sending.mailer.is_none() || person.email_verified {
        return Ok(false);
    }
    let now = sending.clock.now();
    let token = tokens::issue(db, person.id, VERIFY_EMAIL, &person.email, VERIFY_LIFETIME_MS, now).await?;
    let mut link = link(sending, "/verify-email", None, &token);
    if let Some(callback) = callback_url {
        link.push_str("&callbackURL=");
        link.push_str(&url::form_urlencoded::byte_serialize(callback.as_bytes()).collect::<String>());
    }
    let rendered = VerifyEmail { name: &person.name, email: &person.email, link: &link }
        .render("Confirm your email for Leadtrail".to_owned())
        .map_err(rendering_failed)?;
    let message = Email {
        org_id: None,
        user_id: Some(person.id),
        kind: VERIFY_EMAIL,
        to: person.email.clone(),
        rendered,
        list_unsubscribe: None,
        dedupe_key: None,
    };
    Ok(outbox::enqueue(db, message, now).await?)
}
