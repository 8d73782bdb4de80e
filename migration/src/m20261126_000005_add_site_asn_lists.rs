use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// A site's own additions to the shipped network lists (design §18): ASNs
/// whose traffic is bot traffic, and ASNs of ISPs that make no account.
/// JSON arrays, empty by default.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        for column in ["hosting_asns", "isp_asns"] {
            manager
                .alter_table(Table::alter().table("sites").add_column(text(column).default("[]")).to_owned())
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in ["hosting_asns", "isp_asns"] {
            manager.alter_table(Table::alter().table("sites").drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
