use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The visitors a tracking link brought, by link: a link's page credits
/// leads and money to the link through its own visitors' outcomes only,
/// where it ran the whole site's attribution report three times and kept
/// one row of each (251 ms for the page at 1M events). Only visits that a
/// link started are in it, so the writer keeps it at the cost of those.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(
                "CREATE INDEX idx_tracked_sessions_link \
                 ON tracked_sessions (link_id, visitor_id) WHERE link_id IS NOT NULL",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.get_connection().execute_unprepared("DROP INDEX idx_tracked_sessions_link").await?;
        Ok(())
    }
}
