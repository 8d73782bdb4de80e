use sea_orm_migration::prelude::*;

use crate::replace_index;

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
        replace_index(manager, "tracked_sessions", BY_START, WITH_END).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        replace_index(manager, "tracked_sessions", WITH_END, BY_START).await
    }
}
