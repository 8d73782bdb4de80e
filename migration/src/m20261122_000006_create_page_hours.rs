use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Human pageviews and events per site, hour and page, so statistics over a
/// month read a few thousand rollup rows instead of a million events.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("page_hours")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    // Epoch milliseconds of the hour's start (UTC).
                    .col(big_integer("hour"))
                    .col(text("page"))
                    .col(big_integer("pageviews").default(0))
                    .col(big_integer("events").default(0))
                    .foreign_key(&mut cascade(("page_hours", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        create_indexes(
            manager,
            vec![
                unique_index("page_hours", &["site_id", "hour", "page"]),
                // Covering indexes for windowed counts: a window's visitors are
                // those last seen in it, its sessions those that ended in it.
                index("visitors", &["site_id", "is_bot", "last_seen", "score", "status", "country"]),
                index("tracked_sessions", &["site_id", "is_bot", "ended_at", "duration_seconds"]),
            ],
        )
        .await?;
        // Earlier versions stored engagement pings as event rows; they only
        // ever extended their session, which keeps that effect.
        manager.get_connection().execute_unprepared("DELETE FROM events WHERE event_type = 'ping'").await?;
        // Events stored before this migration get their rollups too.
        manager
            .get_connection()
            .execute_unprepared(
                "INSERT INTO page_hours (site_id, hour, page, pageviews, events) \
                 SELECT site_id, (timestamp / 3600000) * 3600000, page, \
                 SUM(CASE WHEN event_type = 'pageview' THEN 1 ELSE 0 END), COUNT(*) \
                 FROM events WHERE is_bot = false AND event_type <> 'ping' \
                 GROUP BY site_id, (timestamp / 3600000) * 3600000, page",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, table) in [
            ("idx_visitors_site_id_is_bot_last_seen_score_status_country", "visitors"),
            ("idx_tracked_sessions_site_id_is_bot_ended_at_duration_seconds", "tracked_sessions"),
        ] {
            manager.drop_index(Index::drop().name(name).table(table).to_owned()).await?;
        }
        drop_tables(manager, &["page_hours"]).await
    }
}
