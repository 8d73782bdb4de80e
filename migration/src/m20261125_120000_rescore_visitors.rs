use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The score that ranks (design §7): diminishing returns per factor, in
/// place of the linear formula.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::rescore::rescore_visitors(manager.get_connection()).await
    }

    /// The old formula's points are not kept; the batch writer rescored
    /// every visitor it touches anyway, so going back leaves them as they are.
    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Ok(())
    }
}
