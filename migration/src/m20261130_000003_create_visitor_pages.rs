use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, index, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The pages each visitor viewed, with their latest view (design §19): the
/// lead desk's `visited` filter reads a page's visitors here, a row each,
/// where the events hold a row per view. Existing pageviews fill it.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("visitor_pages")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(big_integer("visitor_id"))
                    .col(text("page"))
                    .col(big_integer("last_viewed"))
                    .foreign_key(&mut cascade(("visitor_pages", "site_id"), "sites"))
                    .foreign_key(&mut cascade(("visitor_pages", "visitor_id"), "visitors"))
                    .to_owned(),
            )
            .await?;
        manager
            .get_connection()
            .execute_unprepared(
                "INSERT INTO visitor_pages (site_id, visitor_id, page, last_viewed) \
                 SELECT site_id, visitor_id, page, MAX(timestamp) FROM events \
                 WHERE event_type = 'pageview' GROUP BY site_id, visitor_id, page",
            )
            .await?;
        create_indexes(
            manager,
            vec![
                unique_index("visitor_pages", &["visitor_id", "page"]),
                // A page's visitors since a time, read from the index alone.
                index("visitor_pages", &["site_id", "page", "last_viewed", "visitor_id"]),
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::drop_tables(manager, &["visitor_pages"]).await
    }
}
