use sea_orm_migration::{
    prelude::*,
    schema::*,
    sea_orm::{ConnectionTrait, Statement},
};

use crate::{cascade, create_indexes, drop_tables, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

const KEY: &str = "uq_link_click_days_key";

/// Human clicks per link, UTC day, labels, country and city, kept by the batch
/// writer with the clicks, so link analytics over a range reads a few rows per
/// day instead of every click (design §16). Clicks stored before this
/// migration are rolled up here, in one statement per site.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("link_click_days")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(big_integer("link_id"))
                    // Epoch milliseconds of the day's start (UTC).
                    .col(big_integer("day"))
                    .col(text("slug"))
                    .col(text("campaign"))
                    .col(text("source"))
                    .col(text("country"))
                    .col(text("city"))
                    .col(big_integer("clicks").default(0))
                    .col(double_null("lat"))
                    .col(double_null("lon"))
                    .foreign_key(&mut cascade(("link_click_days", "site_id"), "sites"))
                    .foreign_key(&mut cascade(("link_click_days", "link_id"), "links"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name(KEY)
                    .table("link_click_days")
                    .col("link_id")
                    .col("day")
                    .col("slug")
                    .col("campaign")
                    .col("source")
                    .col("country")
                    .col("city")
                    .unique()
                    .to_owned(),
            )
            .await?;
        create_indexes(manager, vec![index("link_click_days", &["site_id", "day"])]).await?;
        let db = manager.get_connection();
        let sites = db.query_all_raw(Statement::from_string(db.get_database_backend(), "SELECT id FROM sites")).await?;
        for (done, row) in sites.iter().enumerate() {
            let site: i64 = row.try_get("", "id")?;
            db.execute_unprepared(&format!(
                "INSERT INTO link_click_days (site_id, link_id, day, slug, campaign, source, country, city, clicks, lat, lon) \
                 SELECT site_id, link_id, (created_at / 86400000) * 86400000, slug, campaign, source, \
                 COALESCE(country, ''), COALESCE(city, ''), COUNT(*), MAX(lat), MAX(lon) \
                 FROM link_clicks WHERE site_id = {site} AND is_bot = false \
                 GROUP BY site_id, link_id, (created_at / 86400000) * 86400000, slug, campaign, source, \
                 COALESCE(country, ''), COALESCE(city, '')"
            ))
            .await?;
            if sites.len() > 1 {
                println!("link click rollups: {} of {} sites", done + 1, sites.len());
            }
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_tables(manager, &["link_click_days"]).await
    }
}
