use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The lead desk's sorts and its form filter (design §19) read from
/// indexes: each sort key with the tie order (last visit, then row), so a
/// page of the list walks the index and stops, in either direction; and the
/// visitors who submitted a form, a partial index that only their updates
/// touch, so counting them reads only them.
const SORTS: [[&str; 5]; 3] = [
    ["site_id", "is_bot", "total_pageviews", "last_seen", "id"],
    ["site_id", "is_bot", "total_time_seconds", "last_seen", "id"],
    ["site_id", "is_bot", "total_sessions", "last_seen", "id"],
];
const SUBMITTERS: &str = "idx_visitors_form_submitters";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for columns in &SORTS {
            manager.create_index(crate::index("visitors", columns)).await?;
        }
        // Written as SQL: the schema builder has no partial index. Both
        // databases take this statement as it is.
        manager
            .get_connection()
            .execute_unprepared(&format!(
                "CREATE INDEX {SUBMITTERS} ON visitors (site_id, is_bot, last_seen) WHERE form_submits > 0"
            ))
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_index(Index::drop().name(SUBMITTERS).table("visitors").to_owned()).await?;
        for columns in SORTS {
            let name = format!("idx_visitors_{}", columns.join("_"));
            manager.drop_index(Index::drop().name(name).table("visitors").to_owned()).await?;
        }
        Ok(())
    }
}
