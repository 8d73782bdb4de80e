use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The `Status` and `Account` codes of the writer's `RolledDimension`,
/// frozen here as the migration ran, with the visitor's value each reads
/// (blank for none), and the `Total` code whose visitor rows hold each
/// visitor's latest human hour.
const VISITOR_DIMENSIONS: [(i16, &str); 2] = [(20, "v.status"), (21, "COALESCE(v.account_key, '')")];
const TOTAL: i16 = 0;
const HOUR: i64 = 3_600_000;

/// The visits by their visitor's status and account (`value_hours`, at the
/// hour each began) and each visitor's latest human hour under them
/// (`visitor_values`, with `value_visitor_hours`), as the writer now keeps
/// them: Explore's `visitor:status` and `visitor:account` without a filter
/// come from these rows, where they read every visit of the range with its
/// visitor (16 s for 30 days at 10M events). Existing visits and the whole
/// site's visitor rows fill them.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for (code, value) in VISITOR_DIMENSIONS {
            db.execute_unprepared(&format!(
                "INSERT INTO value_hours (site_id, dimension, value, hour, visits, bounces, pageviews, events, seconds) \
                 SELECT s.site_id, {code}, {value}, (s.started_at / {HOUR}) * {HOUR}, COUNT(*), \
                 SUM(CASE WHEN s.event_count <= 1 THEN 1 ELSE 0 END), SUM(s.human_pageview_count), \
                 SUM(s.human_event_count), SUM(s.duration_seconds) \
                 FROM tracked_sessions s JOIN visitors v ON v.id = s.visitor_id WHERE s.human_event_count > 0 \
                 GROUP BY s.site_id, {value}, (s.started_at / {HOUR}) * {HOUR}"
            ))
            .await?;
            db.execute_unprepared(&format!(
                "INSERT INTO visitor_values (visitor_id, dimension, value, site_id, last_hour) \
                 SELECT t.visitor_id, {code}, {value}, t.site_id, t.last_hour \
                 FROM visitor_values t JOIN visitors v ON v.id = t.visitor_id WHERE t.dimension = {TOTAL}"
            ))
            .await?;
            crate::count_visitor_rows(db, code).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for (code, _) in VISITOR_DIMENSIONS {
            crate::delete_dimension(db, &["value_hours", "value_visitor_hours", "visitor_values"], code).await?;
        }
        Ok(())
    }
}
