use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Per-site privacy settings: how long visitor-level data is kept (null keeps
/// everything), and whether Do Not Track and Global Privacy Control opt a
/// browser out of tracking.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        manager
            .alter_table(Table::alter().table("sites").add_column(integer_null("retention_days")).to_owned())
            .await?;
        manager
            .alter_table(
                Table::alter().table("sites").add_column(boolean("respect_do_not_track").default(false)).to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in ["retention_days", "respect_do_not_track"] {
            manager.alter_table(Table::alter().table("sites").drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
