use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Page views and engaged time saturate more slowly, and a return visit
/// counts a little sooner (issue 34: the top of the list was tied), so every
/// stored score is recomputed with the formula as it now is.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::rescore::rescore_visitors(manager.get_connection()).await
    }

    /// The batch writer keeps scores on the current formula as it touches
    /// visitors; going back leaves them as they are.
    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Ok(())
    }
}
