use sea_orm_migration::prelude::*;

use crate::{create_indexes, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

const OLD: &str = "idx_tracked_sessions_site_id_is_bot_ended_at_duration_seconds";

/// The sessions' window index gains `channel`, so the web app's overview
/// counts a window's sessions per bucket and per channel from the index
/// alone instead of visiting every session row. It replaces the narrower
/// index (a prefix of it) rather than adding one, so writes cost the same.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_index(Index::drop().name(OLD).table("tracked_sessions").to_owned()).await?;
        create_indexes(
            manager,
            vec![index("tracked_sessions", &["site_id", "is_bot", "ended_at", "duration_seconds", "channel"])],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("idx_tracked_sessions_site_id_is_bot_ended_at_duration_seconds_channel")
                    .table("tracked_sessions")
                    .to_owned(),
            )
            .await?;
        create_indexes(manager, vec![index("tracked_sessions", &["site_id", "is_bot", "ended_at", "duration_seconds"])])
            .await
    }
}
