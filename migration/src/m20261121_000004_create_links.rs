use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("links")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(text("slug"))
                    .col(text("destination_url"))
                    .col(text("campaign").default(""))
                    .col(text("source").default(""))
                    .col(text("medium").default(""))
                    .col(text("content").default(""))
                    .col(text("notes").default(""))
                    .col(text("link_type").default("content"))
                    .col(boolean("is_active").default(true))
                    .col(big_integer_null("expires_at"))
                    .col(big_integer_null("max_clicks"))
                    // JSON array of strings.
                    .col(text("tags").default("[]"))
                    // Human clicks so far; the redirect compares it with max_clicks
                    // without counting rows.
                    .col(big_integer("human_clicks").default(0))
                    .col(big_integer("created_at"))
                    .col(big_integer("updated_at"))
                    .foreign_key(&mut cascade(("links", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("link_clicks")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(big_integer("link_id"))
                    // The `lt_click` value the tracker reports back on landing.
                    .col(text_uniq("click_key"))
                    .col(big_integer_null("visitor_id"))
                    .col(text_null("tracker_vid"))
                    .col(text("slug"))
                    .col(text("campaign"))
                    .col(text("source"))
                    .col(text("medium"))
                    .col(text("destination_url"))
                    .col(text("link_type"))
                    .col(text_null("country"))
                    .col(text_null("city"))
                    .col(text_null("region"))
                    .col(double_null("lat"))
                    .col(double_null("lon"))
                    .col(text_null("device_type"))
                    .col(text_null("browser"))
                    .col(text_null("os"))
                    .col(text_null("referrer"))
                    .col(boolean("is_bot").default(false))
                    .col(big_integer("created_at"))
                    .foreign_key(&mut cascade(("link_clicks", "site_id"), "sites"))
                    .foreign_key(&mut cascade(("link_clicks", "link_id"), "links"))
                    .to_owned(),
            )
            .await?;
        create_indexes(
            manager,
            vec![
                unique_index("links", &["site_id", "slug"]),
                index("link_clicks", &["site_id", "created_at"]),
                index("link_clicks", &["link_id", "created_at"]),
            ],
        )
        .await?;
        // Most clicks are never tied to a visitor; a partial index leaves
        // them out, so recording a click updates one index fewer.
        manager
            .get_connection()
            .execute_unprepared(
                "CREATE INDEX idx_link_clicks_visitor_id ON link_clicks (visitor_id) WHERE visitor_id IS NOT NULL",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_tables(manager, &["link_clicks", "links"]).await
    }
}
