use sea_orm_migration::{prelude::*, schema::*};

use crate::{DAY_MS, cascade, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The per-value rollups by UTC day beside the hourly ones: a breakdown over
/// 30 days summed 720 rows per value (161 accounts at 10M events: 92k hourly
/// rows and 78k visitor counts, 152 ms), where a range's whole days need 30.
/// Both are filled from the hourly rows they sum.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("value_days")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(small_integer("dimension"))
                    .col(text("value"))
                    .col(big_integer("day"))
                    .col(big_integer("visits"))
                    .col(big_integer("bounces"))
                    .col(big_integer("pageviews"))
                    .col(big_integer("events"))
                    .col(big_integer("seconds"))
                    .foreign_key(&mut cascade(("value_days", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("value_visitor_days")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(small_integer("dimension"))
                    .col(text("value"))
                    .col(big_integer("day"))
                    .col(big_integer("visitors"))
                    .foreign_key(&mut cascade(("value_visitor_days", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        let db = manager.get_connection();
        let day = format!("(hour / {DAY_MS}) * {DAY_MS}");
        let sum = |column: &str| format!("CAST(SUM({column}) AS BIGINT)");
        db.execute_unprepared(&format!(
            "INSERT INTO value_days (site_id, dimension, value, day, visits, bounces, pageviews, events, seconds) \
             SELECT site_id, dimension, value, {day}, {}, {}, {}, {}, {} FROM value_hours \
             GROUP BY site_id, dimension, value, {day}",
            sum("visits"),
            sum("bounces"),
            sum("pageviews"),
            sum("events"),
            sum("seconds"),
        ))
        .await?;
        db.execute_unprepared(&format!(
            "INSERT INTO value_visitor_days (site_id, dimension, value, day, visitors) \
             SELECT site_id, dimension, value, {day}, {} FROM value_visitor_hours \
             GROUP BY site_id, dimension, value, {day}",
            sum("visitors"),
        ))
        .await?;
        manager.create_index(unique_index("value_days", &["site_id", "dimension", "day", "value"])).await?;
        manager.create_index(unique_index("value_visitor_days", &["site_id", "dimension", "day", "value"])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::drop_tables(manager, &["value_visitor_days", "value_days"]).await
    }
}
