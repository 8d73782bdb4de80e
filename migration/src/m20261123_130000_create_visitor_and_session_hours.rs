use sea_orm_migration::{
    prelude::*,
    schema::*,
    sea_orm::{ConnectionTrait, Statement},
};

use crate::{cascade, create_indexes, drop_tables, index, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

const DAY_INDEX: &str = "idx_visitors_site_id_is_bot_last_seen_day_score";
/// Replaced by a covering index that starts with the same columns.
const EVENTS_BY_TIME: &str = "idx_events_site_id_timestamp";

/// Visitors by the hour they were last seen and sessions by the hour they
/// ended, kept by the batch writer with the rows they count, so a window's
/// statistics read a few rows per hour instead of every visitor and session
/// (design §16). Rows stored before this migration are rolled up here, one
/// statement per site and table, with a line of progress for each site.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("visitor_hours")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(boolean("is_bot"))
                    // Epoch milliseconds of the hour's start (UTC).
                    .col(big_integer("hour"))
                    .col(text("country"))
                    .col(big_integer("visitors").default(0))
                    .col(big_integer("identified").default(0))
                    .foreign_key(&mut cascade(("visitor_hours", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("session_hours")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(boolean("is_bot"))
                    .col(big_integer("hour"))
                    .col(text("channel"))
                    .col(big_integer("sessions").default(0))
                    .col(big_integer("seconds").default(0))
                    .foreign_key(&mut cascade(("session_hours", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        manager.drop_index(Index::drop().name(EVENTS_BY_TIME).table("events").to_owned()).await?;
        create_indexes(
            manager,
            vec![
                unique_index("visitor_hours", &["site_id", "is_bot", "hour", "country"]),
                unique_index("session_hours", &["site_id", "is_bot", "hour", "channel"]),
                // Hot leads and the scored list read visitors in stored-score
                // order: only those whose stored points could reach a score.
                index("visitors", &["site_id", "is_bot", "score", "last_seen", "id"]),
                // The window's first, partial hour is read from the events: a
                // covering index keeps that one hour's reads together instead
                // of scattered over the whole table.
                index("events", &["site_id", "timestamp", "is_bot", "event_type", "page"]),
            ],
        )
        .await?;
        let db = manager.get_connection();
        // Hot leads are counted per UTC day of last visit: a day's recency is
        // known, so each day needs only the visitors whose stored points reach
        // the threshold less that day's recency.
        db.execute_unprepared(&format!(
            "CREATE INDEX {DAY_INDEX} ON visitors (site_id, is_bot, (last_seen / 86400000), score, last_seen)"
        ))
        .await?;
        let sites = db.query_all_raw(Statement::from_string(db.get_database_backend(), "SELECT id FROM sites")).await?;
        for (done, row) in sites.iter().enumerate() {
            let site: i64 = row.try_get("", "id")?;
            db.execute_unprepared(&format!(
                "INSERT INTO visitor_hours (site_id, is_bot, hour, country, visitors, identified) \
                 SELECT site_id, is_bot, (last_seen / 3600000) * 3600000, COALESCE(country, ''), COUNT(*), \
                 SUM(CASE WHEN status = 'identified' THEN 1 ELSE 0 END) \
                 FROM visitors WHERE site_id = {site} \
                 GROUP BY site_id, is_bot, (last_seen / 3600000) * 3600000, COALESCE(country, '')"
            ))
            .await?;
            db.execute_unprepared(&format!(
                "INSERT INTO session_hours (site_id, is_bot, hour, channel, sessions, seconds) \
                 SELECT site_id, is_bot, (ended_at / 3600000) * 3600000, channel, COUNT(*), SUM(duration_seconds) \
                 FROM tracked_sessions WHERE site_id = {site} \
                 GROUP BY site_id, is_bot, (ended_at / 3600000) * 3600000, channel"
            ))
            .await?;
            println!("visitor and session rollups: {} of {} sites", done + 1, sites.len());
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_index(Index::drop().name(DAY_INDEX).table("visitors").to_owned()).await?;
        manager
            .drop_index(
                Index::drop().name("idx_events_site_id_timestamp_is_bot_event_type_page").table("events").to_owned(),
            )
            .await?;
        create_indexes(manager, vec![index("events", &["site_id", "timestamp"])]).await?;
        manager
            .drop_index(
                Index::drop().name("idx_visitors_site_id_is_bot_score_last_seen_id").table("visitors").to_owned(),
            )
            .await?;
        drop_tables(manager, &["visitor_hours", "session_hours"]).await
    }
}
