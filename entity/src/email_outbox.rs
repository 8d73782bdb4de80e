use sea_orm::entity::prelude::*;

/// A message on its way out (design §21): written in the transaction that
/// caused it, sent by the email worker of any instance, retried with
/// back-off, and kept as the log admins read.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "email_outbox")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The org whose admins see it in their log; null for account mail.
    pub org_id: Option<i64>,
    pub user_id: Option<i64>,
    /// `reset_password`, `verify_email`, `invitation`, `digest` or `alert`.
    pub kind: String,
    pub recipient: String,
    pub subject: String,
    /// Emptied once sent, so a link in it does not outlive the message.
    pub text_body: String,
    pub html_body: String,
    /// The one-click unsubscribe URL (RFC 8058), for digests.
    pub list_unsubscribe: Option<String>,
    pub dedupe_key: Option<String>,
    /// `pending`, `sent` or `failed`.
    pub status: String,
    pub attempts: i32,
    pub next_attempt_at: Option<i64>,
    pub last_error: Option<String>,
    pub created_at: i64,
    pub sent_at: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
