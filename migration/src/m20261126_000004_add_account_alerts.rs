use sea_orm_migration::{prelude::*, schema::*};

use crate::{create_indexes, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// `ACCOUNT_BECAME_HOT` alerts (design §18) fire once per account and
/// destination: the outbox row names its account, and a unique key keeps a
/// second one out, as (destination, visitor) does for a visitor's.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table("alert_deliveries").add_column(text_null("account_key")).to_owned())
            .await?;
        create_indexes(manager, vec![unique_index("alert_deliveries", &["destination_id", "account_key"])]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("uq_alert_deliveries_destination_id_account_key")
                    .table("alert_deliveries")
                    .to_owned(),
            )
            .await?;
        manager.alter_table(Table::alter().table("alert_deliveries").drop_column("account_key").to_owned()).await?;
        Ok(())
    }
}
