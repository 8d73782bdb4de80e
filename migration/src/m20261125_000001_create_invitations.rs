use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Invitations: a member is added only when the person accepts. An admin
/// invites an email address with a role; whoever signs in with that address
/// sees the invitation and accepts or declines it. `token_hash` is the hash
/// of a secret for a link that arrives by email; in-app acceptance needs none.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("invitations")
                    .col(big_pk_auto("id"))
                    .col(big_integer("org_id"))
                    // Lower case, as user emails are stored.
                    .col(text("email"))
                    .col(text("role"))
                    // Who invited; null once their account is gone.
                    .col(big_integer_null("invited_by"))
                    .col(text_null("token_hash"))
                    // pending, accepted, declined or canceled.
                    .col(text("status"))
                    .col(big_integer("created_at"))
                    .col(big_integer("expires_at"))
                    .col(big_integer_null("responded_at"))
                    .foreign_key(&mut cascade(("invitations", "org_id"), "orgs"))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_invitations_invited_by")
                            .from("invitations", "invited_by")
                            .to("users", "id")
                            .on_delete(ForeignKeyAction::SetNull),
                    )
                    .to_owned(),
            )
            .await?;
        create_indexes(manager, vec![index("invitations", &["org_id", "status"]), index("invitations", &["email"])])
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_tables(manager, &["invitations"]).await
    }
}
