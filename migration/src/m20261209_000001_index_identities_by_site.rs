use sea_orm_migration::prelude::*;

use crate::{create_indexes, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// A site's identifications by visitor and time: the attribution report finds
/// each visitor's first identification in one ordered pass over this index,
/// where the site's index by tracker id read every identity's row and sorted
/// them by visitor. Identifications are few beside events, so keeping it
/// costs the writer little.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_indexes(manager, vec![index("identities", &["site_id", "visitor_id", "identified_at"])]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop().name("idx_identities_site_id_visitor_id_identified_at").table("identities").to_owned(),
            )
            .await
    }
}
