use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("webhook_deliveries")
                    .col(big_pk_auto("id"))
                    .col(big_integer("org_id"))
                    .col(big_integer("site_id"))
                    .col(big_integer_null("user_id"))
                    .col(text("tracker_vid"))
                    .col(text("webhook_type"))
                    .col(text("message_id"))
                    .col(text("target_host"))
                    .col(integer_null("status_code"))
                    .col(boolean("success"))
                    .col(big_integer("duration_ms"))
                    .col(text_null("error"))
                    .col(big_integer("created_at"))
                    .foreign_key(&mut cascade(("webhook_deliveries", "org_id"), "orgs"))
                    .foreign_key(&mut cascade(("webhook_deliveries", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        create_indexes(manager, vec![index("webhook_deliveries", &["org_id", "created_at"])]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_tables(manager, &["webhook_deliveries"]).await
    }
}
