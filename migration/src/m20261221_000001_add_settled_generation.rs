use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// A second count beside each site's credit generation: it moves only with
/// a write that reaches before yesterday (UTC), which Explore's visit copies
/// hold (design §17). The generation itself moves with every write before
/// today, as each visit running past midnight does.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter().table("credit_generations").add_column(big_integer("settled").default(0)).to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table("credit_generations").drop_column("settled").to_owned()).await
    }
}
