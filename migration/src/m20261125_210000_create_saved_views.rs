use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Saved views of the lead desk (design §19): a named set of the leads
/// list's filters, sort and range, per site and so shared by everyone in its
/// org. `query` is the `/leads` query string that reproduces it.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("saved_views")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(text("name"))
                    .col(text("query"))
                    // Who saved it; null once their account is gone.
                    .col(big_integer_null("created_by"))
                    .col(big_integer("created_at"))
                    .col(big_integer("updated_at"))
                    .foreign_key(&mut cascade(("saved_views", "site_id"), "sites"))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_saved_views_created_by")
                            .from("saved_views", "created_by")
                            .to("users", "id")
                            .on_delete(ForeignKeyAction::SetNull),
                    )
                    .to_owned(),
            )
            .await?;
        create_indexes(manager, vec![index("saved_views", &["site_id"])]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_tables(manager, &["saved_views"]).await
    }
}
