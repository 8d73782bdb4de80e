use sea_orm_migration::{prelude::*, schema::*};

use crate::{DAY_MS, cascade, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The page rollups by UTC day beside the hourly ones, as the value rollups
/// got theirs: a site with a thousand pages has 720 thousand hourly rows in
/// 30 days, where its whole days hold 30 thousand. Filled from the hours.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("page_days")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(big_integer("day"))
                    .col(text("page"))
                    .col(big_integer("pageviews"))
                    .col(big_integer("events"))
                    .foreign_key(&mut cascade(("page_days", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        let day = format!("(hour / {DAY_MS}) * {DAY_MS}");
        manager
            .get_connection()
            .execute_unprepared(&format!(
                "INSERT INTO page_days (site_id, day, page, pageviews, events) \
                 SELECT site_id, {day}, page, CAST(SUM(pageviews) AS BIGINT), CAST(SUM(events) AS BIGINT) \
                 FROM page_hours GROUP BY site_id, {day}, page"
            ))
            .await?;
        manager.create_index(unique_index("page_days", &["site_id", "day", "page"])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::drop_tables(manager, &["page_days"]).await
    }
}
