use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// How many events have been stored for each site and UTC day of their
/// time, counted by the writer in the transaction that stores them and
/// never taken out. On PostgreSQL the print of an Explore copy's tail sums
/// these (two rows) where it counted the tail's events (65k at 1M events,
/// 7 ms a query): it reads only their difference between two snapshots,
/// so the table starts empty and an erasure leaves it be (it moves the
/// copy's generation instead).
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("stored_event_days")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(big_integer("day"))
                    .col(big_integer("events"))
                    .foreign_key(&mut cascade(("stored_event_days", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        manager.create_index(unique_index("stored_event_days", &["site_id", "day"])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::drop_tables(manager, &["stored_event_days"]).await
    }
}
