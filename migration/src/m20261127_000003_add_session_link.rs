use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The tracking link whose click started a visit (Explore's `visit:link`,
/// design §17). Kept from now on; older visits have none.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table("tracked_sessions").add_column(big_integer_null("link_id")).to_owned())
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table("tracked_sessions").drop_column("link_id").to_owned()).await
    }
}
