use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Goals (design §20): per site, a pageview goal (`page_path`, a path
/// pattern with `*`) or a custom event goal (`event_name`, optionally with
/// one property's value). A goal's `name` is what Explore's `event:goal`
/// shows, so it is unique within its site.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("goals")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(text("name"))
                    .col(text_null("page_path"))
                    .col(text_null("event_name"))
                    .col(text_null("prop_name"))
                    .col(text_null("prop_value"))
                    .col(big_integer("created_at"))
                    .col(big_integer("updated_at"))
                    .foreign_key(&mut cascade(("goals", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        create_indexes(manager, vec![unique_index("goals", &["site_id", "name"])]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_tables(manager, &["goals"]).await
    }
}
