use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The events and pageviews of a visit that are not bot traffic, kept by the
/// writer beside `event_count` and `pageview_count` (which count every
/// event): Explore reads a visit that lies inside its range from these
/// instead of counting the visit's events again (design §17). Existing
/// visits are counted from their events.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in ["human_event_count", "human_pageview_count"] {
            manager
                .alter_table(Table::alter().table("tracked_sessions").add_column(integer(column).default(0)).to_owned())
                .await?;
        }
        manager
            .get_connection()
            .execute_unprepared(
                "UPDATE tracked_sessions SET \
                 human_event_count = (SELECT COUNT(*) FROM events e \
                   WHERE e.session_id = tracked_sessions.id AND e.is_bot = FALSE), \
                 human_pageview_count = (SELECT COUNT(*) FROM events e \
                   WHERE e.session_id = tracked_sessions.id AND e.is_bot = FALSE AND e.event_type = 'pageview')",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in ["human_event_count", "human_pageview_count"] {
            manager.alter_table(Table::alter().table("tracked_sessions").drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
