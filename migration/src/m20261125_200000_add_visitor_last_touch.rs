use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The lead desk's columns (design §19) kept on the visitor, as its other
/// aggregates are: the channel and campaign of the latest visit (last
/// touch) and the latest page viewed, so the list shows and filters them
/// without reading sessions. Existing visitors take them from their last
/// session.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        for column in ["last_channel", "last_campaign", "last_page"] {
            manager.alter_table(Table::alter().table("visitors").add_column(string_null(column)).to_owned()).await?;
        }
        manager
            .get_connection()
            .execute_unprepared(
                "UPDATE visitors SET \
                 last_channel = (SELECT s.channel FROM tracked_sessions s WHERE s.id = visitors.last_session_id), \
                 last_campaign = (SELECT s.utm_campaign FROM tracked_sessions s WHERE s.id = visitors.last_session_id), \
                 last_page = (SELECT s.exit_page FROM tracked_sessions s WHERE s.id = visitors.last_session_id) \
                 WHERE last_session_id IS NOT NULL",
            )
            .await?;
        crate::create_indexes(
            manager,
            vec![
                crate::index("visitors", &["site_id", "is_bot", "last_channel", "last_seen"]),
                crate::index("visitors", &["site_id", "is_bot", "last_campaign", "last_seen"]),
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for name in [
            "idx_visitors_site_id_is_bot_last_channel_last_seen",
            "idx_visitors_site_id_is_bot_last_campaign_last_seen",
        ] {
            manager.drop_index(Index::drop().name(name).table("visitors").to_owned()).await?;
        }
        for column in ["last_channel", "last_campaign", "last_page"] {
            manager.alter_table(Table::alter().table("visitors").drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
