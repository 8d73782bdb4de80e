use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The `VisitHours` code of the writer's `RolledDimension`, frozen here as
/// the migration ran.
const VISIT_HOURS: i16 = 19;
const HOUR: i64 = 3_600_000;

/// The hours of each visit's human events, kept on its row as bits counted
/// from the hour it began (`human_hours`), and the whole site's visits
/// counted at each such hour with the visit's previous one as the value
/// (`value_hours`, dimension 19), as the writer now keeps them: Explore's
/// visits, bounce rate and visit length per day or hour are then a few
/// rows per hour, where they read every visit of the range and the events
/// of each one that crosses a bucket's edge (14.6 s for 30 days at 10M
/// events). Existing visits and events fill both.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter().table("tracked_sessions").add_column(big_integer("human_hours").default(0)).to_owned(),
            )
            .await?;
        fill(manager.get_connection()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared(&format!("DELETE FROM value_hours WHERE dimension = {VISIT_HOURS}")).await?;
        manager.alter_table(Table::alter().table("tracked_sessions").drop_column("human_hours").to_owned()).await?;
        Ok(())
    }
}

/// Fills each visit's hours from its events' (`human_hours`), and the whole
/// site's visits at each such hour (`value_hours`, dimension 19) from them.
pub(crate) async fn fill(db: &SchemaManagerConnection<'_>) -> Result<(), DbErr> {
    // A sum of distinct powers of two is their bitwise or.
    db.execute_unprepared(&format!(
        "UPDATE tracked_sessions SET human_hours = COALESCE((SELECT CAST(SUM(DISTINCT \
           CAST(1 AS BIGINT) << CAST(e.timestamp / {HOUR} - tracked_sessions.started_at / {HOUR} AS INTEGER)) \
           AS BIGINT) FROM events e WHERE e.session_id = tracked_sessions.id AND e.is_bot = FALSE), 0) \
         WHERE human_event_count > 0"
    ))
    .await?;
    db.execute_unprepared(&format!(
        "WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k < 24), \
         hours AS (SELECT s.id, s.site_id, (s.started_at / {HOUR} + n.k) * {HOUR} AS hour, \
           CASE WHEN s.event_count <= 1 THEN 1 ELSE 0 END AS bounce, s.duration_seconds AS seconds \
           FROM tracked_sessions s JOIN n ON (s.human_hours >> n.k) & 1 = 1 WHERE s.human_event_count > 0), \
         counted AS (SELECT site_id, hour, bounce, seconds, \
           COALESCE(LAG(hour) OVER (PARTITION BY id ORDER BY hour), 0) AS previous FROM hours) \
         INSERT INTO value_hours (site_id, dimension, value, hour, visits, bounces, pageviews, events, seconds) \
         SELECT site_id, {VISIT_HOURS}, CAST(previous AS TEXT), hour, COUNT(*), SUM(bounce), 0, 0, SUM(seconds) \
         FROM counted GROUP BY site_id, hour, previous"
    ))
    .await?;
    Ok(())
}
