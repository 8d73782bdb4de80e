use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The `NAME_BY` codes of the writer's `RolledDimension`, with the visit
/// column each pairs a custom event's name with. Frozen here as the
/// migration ran.
const NAME_BY: [(i16, &str); 5] =
    [(101, "source"), (103, "channel"), (104, "utm_source"), (105, "utm_medium"), (106, "utm_campaign")];
const HOUR: i64 = 3_600_000;

/// Custom events counted by name with their visit's source, channel and UTM
/// source, medium and campaign (`value_hours`, `visitor_values` and their
/// counts), as the writer now keeps them: a goal's or an event name's
/// conversions by source read hours and visitor counts instead of looking
/// up the visit of every such event (0.66 s for 167k sign-ups at 10M
/// events). The value is the name's length in characters, `:`, the name,
/// then the visit's value; existing custom events and visits fill them.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let at = format!("((e.timestamp / {HOUR}) * {HOUR})");
        let codes = NAME_BY.map(|(code, _)| code.to_string()).join(", ");
        for (code, column) in NAME_BY {
            let value =
                format!("CAST(LENGTH(e.event_name) AS TEXT) || ':' || e.event_name || COALESCE(s.{column}, '')");
            let custom = "FROM events e JOIN tracked_sessions s ON s.id = e.session_id \
                          WHERE e.event_type = 'custom_event' AND e.is_bot = false";
            db.execute_unprepared(&format!(
                "INSERT INTO value_hours (site_id, dimension, value, hour, visits, bounces, pageviews, events, seconds) \
                 SELECT e.site_id, {code}, {value}, {at}, 0, 0, 0, COUNT(*), 0 {custom} \
                 GROUP BY e.site_id, {value}, {at}"
            ))
            .await?;
            db.execute_unprepared(&format!(
                "INSERT INTO visitor_values (visitor_id, dimension, value, site_id, last_hour) \
                 SELECT e.visitor_id, {code}, {value}, MIN(e.site_id), MAX({at}) {custom} \
                 GROUP BY e.visitor_id, {value}"
            ))
            .await?;
        }
        db.execute_unprepared(&format!(
            "INSERT INTO value_visitor_hours (site_id, dimension, value, hour, visitors) \
             SELECT site_id, dimension, value, last_hour, COUNT(*) FROM visitor_values \
             WHERE dimension IN ({codes}) GROUP BY site_id, dimension, value, last_hour"
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let codes = NAME_BY.map(|(code, _)| code.to_string()).join(", ");
        for table in ["value_visitor_hours", "visitor_values", "value_hours"] {
            db.execute_unprepared(&format!("DELETE FROM {table} WHERE dimension IN ({codes})")).await?;
        }
        Ok(())
    }
}
