use sea_orm_migration::prelude::*;

use crate::{create_indexes, drop_index, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

const BY_START: &[&str] = &["site_id", "started_at"];
const WITH_END: &[&str] = &["site_id", "started_at", "ended_at"];

/// A site's visits by start carry their end, so the visits a range's start
/// cuts (begun in the day before it, ended in it) are found in the index:
/// Explore's rollups read them for every range that starts inside the data,
/// and looked up each of that day's visits to test its end. It replaces the
/// narrower index it starts with.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_indexes(manager, vec![index("tracked_sessions", WITH_END)]).await?;
        drop_index(manager, "tracked_sessions", BY_START).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_indexes(manager, vec![index("tracked_sessions", BY_START)]).await?;
        drop_index(manager, "tracked_sessions", WITH_END).await
    }
}
