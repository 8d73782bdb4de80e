use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Funnels (design §20): a named list of 2 to 8 goal steps, done in order
/// within one visit (`window_days` null) or within that many days.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("funnels")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(text("name"))
                    // The goals' ids, in order, as a JSON array.
                    .col(text("steps"))
                    .col(integer_null("window_days"))
                    .col(big_integer("created_at"))
                    .col(big_integer("updated_at"))
                    .foreign_key(&mut cascade(("funnels", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        create_indexes(manager, vec![index("funnels", &["site_id"])]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_tables(manager, &["funnels"]).await
    }
}
