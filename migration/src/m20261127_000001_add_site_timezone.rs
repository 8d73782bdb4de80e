use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// A site's time zone (design §17): an IANA name such as `Europe/Berlin`.
/// Explore's day, week and month boundaries follow it; UTC by default.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table("sites").add_column(text("timezone").default("UTC")).to_owned()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table("sites").drop_column("timezone").to_owned()).await
    }
}
