use sea_orm_migration::{prelude::*, schema::*};

use crate::{create_indexes, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// `CONVERTED` alerts (design §20) fire once per conversion and
/// destination, so one visitor may fire a destination once per conversion:
/// the outbox row names its conversion, (destination, conversion) is
/// unique, and (destination, visitor) stays unique only for the rows that
/// name none. Both databases read the partial index the same way.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter().table("alert_deliveries").add_column(big_integer_null("conversion_id")).to_owned(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("uq_alert_deliveries_destination_id_visitor_id")
                    .table("alert_deliveries")
                    .to_owned(),
            )
            .await?;
        manager
            .get_connection()
            .execute_unprepared(
                "CREATE UNIQUE INDEX uq_alert_deliveries_destination_id_visitor_id \
                 ON alert_deliveries (destination_id, visitor_id) WHERE conversion_id IS NULL",
            )
            .await?;
        create_indexes(manager, vec![unique_index("alert_deliveries", &["destination_id", "conversion_id"])]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for name in
            ["uq_alert_deliveries_destination_id_conversion_id", "uq_alert_deliveries_destination_id_visitor_id"]
        {
            manager.drop_index(Index::drop().name(name).table("alert_deliveries").to_owned()).await?;
        }
        manager.alter_table(Table::alter().table("alert_deliveries").drop_column("conversion_id").to_owned()).await?;
        create_indexes(manager, vec![unique_index("alert_deliveries", &["destination_id", "visitor_id"])]).await
    }
}
