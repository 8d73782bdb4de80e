use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The network (autonomous system number and holder) a visit and a click
/// came from (design §18), looked up in `ASN_DB_PATH` at collect and
/// redirect time; the address itself is still never stored.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        for table in ["visitors", "link_clicks"] {
            manager.alter_table(Table::alter().table(table).add_column(big_integer_null("asn")).to_owned()).await?;
            manager.alter_table(Table::alter().table(table).add_column(string_null("network")).to_owned()).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in ["visitors", "link_clicks"] {
            for column in ["asn", "network"] {
                manager.alter_table(Table::alter().table(table).drop_column(column).to_owned()).await?;
            }
        }
        Ok(())
    }
}
