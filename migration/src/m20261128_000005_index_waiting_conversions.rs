use sea_orm_migration::prelude::*;

use crate::{create_indexes, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Every identify looks for the conversions waiting for that email or user
/// id (design §20); these keep that a lookup instead of a walk through all
/// of the site's conversions.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_indexes(
            manager,
            vec![index("conversions", &["site_id", "email"]), index("conversions", &["site_id", "user_id"])],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for name in ["idx_conversions_site_id_email", "idx_conversions_site_id_user_id"] {
            manager.drop_index(Index::drop().name(name).table("conversions").to_owned()).await?;
        }
        Ok(())
    }
}
