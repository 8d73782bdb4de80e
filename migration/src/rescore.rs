//! Puts every visitor's stored score on the service's current formula. Each
//! migration that changes the formula calls it; the formula is the service's
//! own file, so what this writes is exactly what the batch writer would store.

use sea_orm_migration::{
    prelude::*,
    sea_orm::{ConnectionTrait, Statement},
};

#[path = "../../src/service/scoring/formula.rs"]
// Only the stored part is needed here.
#[allow(dead_code)]
mod formula;

/// Visitors read and rewritten per statement.
const CHUNK: i64 = 2_000;

/// Recomputes the stored part of every visitor's score (`visitors.score`,
/// all factors but recency) from its stored counts, in id order, a chunk at
/// a time; rows whose points do not change are left.
pub async fn rescore_visitors(db: &impl ConnectionTrait) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let mut after = 0_i64;
    loop {
        let rows = db
            .query_all_raw(Statement::from_string(
                backend,
                format!(
                    "SELECT id, score, total_pageviews, total_sessions, total_time_seconds, high_value_views, \
                     form_submits, clicks, status FROM visitors WHERE id > {after} ORDER BY id LIMIT {CHUNK}"
                ),
            ))
            .await?;
        let Some(last) = rows.last() else { break };
        after = last.try_get::<i64>("", "id")?;
        let mut cases = String::new();
        let mut ids = Vec::new();
        for row in &rows {
            let counts = formula::Counts {
                pageviews: row.try_get::<i32>("", "total_pageviews")?.into(),
                sessions: row.try_get::<i32>("", "total_sessions")?.into(),
                engaged_seconds: row.try_get::<i64>("", "total_time_seconds")?,
                high_value_views: row.try_get::<i32>("", "high_value_views")?.into(),
                form_submits: row.try_get::<i32>("", "form_submits")?.into(),
                clicks: row.try_get::<i32>("", "clicks")?.into(),
                identified: row.try_get::<String>("", "status")? == "identified",
            };
            let score = counts.stored_points();
            if score != row.try_get::<i32>("", "score")? {
                let id = row.try_get::<i64>("", "id")?;
                cases.push_str(&format!(" WHEN {id} THEN {score}"));
                ids.push(id.to_string());
            }
        }
        if !ids.is_empty() {
            let sql = format!("UPDATE visitors SET score = CASE id{cases} END WHERE id IN ({})", ids.join(","));
            db.execute_unprepared(&sql).await?;
        }
    }
    Ok(())
}
