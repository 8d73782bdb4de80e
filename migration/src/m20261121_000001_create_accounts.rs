use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("users")
                    .col(big_pk_auto("id"))
                    .col(text("name"))
                    .col(text_uniq("email"))
                    .col(text("password_hash"))
                    .col(big_integer("created_at"))
                    .col(big_integer("updated_at"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("auth_sessions")
                    .col(big_pk_auto("id"))
                    .col(big_integer("user_id"))
                    .col(text_uniq("token_hash"))
                    .col(big_integer("created_at"))
                    .col(big_integer("expires_at"))
                    // Remember-me sessions last 7 days and slide; others last a day.
                    .col(boolean("persistent"))
                    .col(text_null("ip"))
                    .col(text_null("user_agent"))
                    .foreign_key(&mut cascade(("auth_sessions", "user_id"), "users"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("orgs")
                    .col(big_pk_auto("id"))
                    .col(text("name"))
                    .col(text_uniq("slug"))
                    .col(text("signing_secret"))
                    .col(big_integer("created_at"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("members")
                    .col(big_pk_auto("id"))
                    .col(big_integer("org_id"))
                    .col(big_integer("user_id"))
                    .col(text("role"))
                    .col(big_integer("created_at"))
                    .foreign_key(&mut cascade(("members", "org_id"), "orgs"))
                    .foreign_key(&mut cascade(("members", "user_id"), "users"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("api_keys")
                    .col(big_pk_auto("id"))
                    .col(big_integer("org_id"))
                    .col(text("name"))
                    .col(text("prefix"))
                    .col(text_uniq("key_hash"))
                    .col(big_integer_null("created_by"))
                    .col(big_integer("created_at"))
                    .col(big_integer_null("last_used_at"))
                    .col(big_integer_null("revoked_at"))
                    .foreign_key(&mut cascade(("api_keys", "org_id"), "orgs"))
                    .to_owned(),
            )
            .await?;
        create_indexes(
            manager,
            vec![
                index("auth_sessions", &["user_id"]),
                unique_index("members", &["org_id", "user_id"]),
                index("members", &["user_id"]),
                index("api_keys", &["org_id"]),
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_tables(manager, &["api_keys", "members", "orgs", "auth_sessions", "users"]).await
    }
}
