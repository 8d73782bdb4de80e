use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Email (design §21): the outbox every message goes through, the single-use
/// tokens of password reset and verification (stored hashed), each member's
/// digest choices per site, and the verified flag on users.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("email_outbox")
                    .col(big_pk_auto("id"))
                    // The org an admin sees the message under; null for account mail.
                    .col(big_integer_null("org_id"))
                    .col(big_integer_null("user_id"))
                    // reset_password, verify_email, invitation, digest, alert.
                    .col(text("kind"))
                    .col(text("recipient"))
                    .col(text("subject"))
                    // Emptied once sent: a reset link does not outlive its message.
                    .col(text("text_body"))
                    .col(text("html_body"))
                    .col(text_null("list_unsubscribe"))
                    // Unique: a digest period is sent once however many instances run.
                    .col(text_null("dedupe_key"))
                    .col(text("status"))
                    .col(integer("attempts"))
                    .col(big_integer_null("next_attempt_at"))
                    .col(text_null("last_error"))
                    .col(big_integer("created_at"))
                    .col(big_integer_null("sent_at"))
                    .foreign_key(&mut cascade(("email_outbox", "org_id"), "orgs"))
                    .foreign_key(&mut cascade(("email_outbox", "user_id"), "users"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("auth_tokens")
                    .col(big_pk_auto("id"))
                    .col(big_integer("user_id"))
                    // reset_password or verify_email.
                    .col(text("purpose"))
                    .col(text("token_hash"))
                    // The address the token was sent to (the one verified).
                    .col(text("email"))
                    .col(big_integer("expires_at"))
                    .col(big_integer_null("used_at"))
                    .col(big_integer("created_at"))
                    .foreign_key(&mut cascade(("auth_tokens", "user_id"), "users"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("digest_subscriptions")
                    .col(big_pk_auto("id"))
                    .col(big_integer("user_id"))
                    .col(big_integer("site_id"))
                    // daily or weekly.
                    .col(text("frequency"))
                    // Only turns this digest off, and goes in every digest, so it is kept as is.
                    .col(text("unsubscribe_token"))
                    .col(big_integer("created_at"))
                    .col(big_integer("updated_at"))
                    .foreign_key(&mut cascade(("digest_subscriptions", "user_id"), "users"))
                    .foreign_key(&mut cascade(("digest_subscriptions", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(Table::alter().table("users").add_column(boolean("email_verified").default(false)).to_owned())
            .await?;
        create_indexes(
            manager,
            vec![
                index("email_outbox", &["status", "next_attempt_at"]),
                index("email_outbox", &["org_id", "id"]),
                index("email_outbox", &["user_id"]),
                unique_index("email_outbox", &["dedupe_key"]),
                unique_index("auth_tokens", &["token_hash"]),
                index("auth_tokens", &["user_id"]),
                unique_index("digest_subscriptions", &["user_id", "site_id"]),
                unique_index("digest_subscriptions", &["unsubscribe_token"]),
                index("digest_subscriptions", &["site_id"]),
                unique_index("invitations", &["token_hash"]),
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_index(Index::drop().name("uq_invitations_token_hash").table("invitations").to_owned()).await?;
        manager.alter_table(Table::alter().table("users").drop_column("email_verified").to_owned()).await?;
        drop_tables(manager, &["digest_subscriptions", "auth_tokens", "email_outbox"]).await
    }
}
