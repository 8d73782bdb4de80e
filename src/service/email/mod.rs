//! Email (design §21): every message goes through the outbox, written in the
//! transaction of what caused it and sent by the worker of any instance.
//! Account mail (password reset, verification), invitations, digests and
//! email alerts put their rendered messages here.

pub mod account;
pub mod digest;
pub mod outbox;
pub mod tokens;
pub mod verification;
pub mod worker;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use entity::email_outbox;

use super::{access, delivery::Delivery};
use crate::{
    auth::{Role, Viewer},
    email::templates::Rendered,
    error::{AppError, AppResult},
};

pub const RESET_PASSWORD: &str = "reset_password";
pub const VERIFY_EMAIL: &str = "verify_email";
pub const INVITATION: &str = "invitation";
pub const DIGEST: &str = "digest";
pub const ALERT: &str = "alert";

/// Messages an admin's log lists at most.
pub const LOG_LIMIT: u64 = 200;

/// A message to put in the outbox.
pub struct Email {
    /// The org whose admins see it in their log; none for account mail.
    pub org_id: Option<i64>,
    pub user_id: Option<i64>,
    pub kind: &'static str,
    pub to: String,
    pub rendered: Rendered,
    pub list_unsubscribe: Option<String>,
    /// A message with a key already in the outbox is not added again.
    pub dedupe_key: Option<String>,
}

/// The refusal for an email feature when `SMTP_URL` is unset.
pub fn not_configured() -> AppError {
    AppError::bad_request("email is not set up on this server (SMTP_URL)")
}

/// Fails unless this server sends email.
pub fn require(sending: &Delivery) -> AppResult<()> {
    if sending.mailer.is_some() { Ok(()) } else { Err(not_configured()) }
}

/// The org's messages, newest first: who got what, and how sending went.
/// Admins only. Account mail (password resets) belongs to no org and is not listed.
pub async fn log(db: &impl ConnectionTrait, viewer: &Viewer, org_id: i64) -> AppResult<Vec<email_outbox::Model>> {
    access::find_org(db, viewer, org_id, Role::Admin).await?;
    Ok(email_outbox::Entity::find()
        .filter(email_outbox::Column::OrgId.eq(org_id))
        .order_by_desc(email_outbox::Column::Id)
        .limit(LOG_LIMIT)
        .all(db)
        .await?)
}
