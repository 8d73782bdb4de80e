//! The attribution tallies of closed UTC days, kept (design §20). A day's
//! tallies are those of the outcomes that happened in it; they change only
//! when something from that day or before is written or removed: a visit,
//! an identification, a revenue event, a conversion, an erasure, retention.
//! Each of those forgets the kept days from its own day on (`forget_from`)
//! in its own transaction and moves the site's generation; a report keeps
//! the days it had to compute only if the generation did not move while it
//! computed them, so nothing computed before a write outlives it.
//!
//! Only days that ended at least `CLOSED_AFTER` ago are kept, and a write
//! that touches nothing before today forgets nothing: the writer's hot path
//! stays a comparison, and instances whose clocks differ by less than the
//! margin still agree on which days are closed.

use std::collections::BTreeSet;

use sea_orm::{ConnectionTrait, DbErr, EntityTrait, Set, TransactionSession, TransactionTrait};

use entity::{credit_day, credit_day_fill};

use super::model::{Model, RawTally};
use crate::{
    error::AppResult,
    service::{explore::sql::Sql, visit_groups::VisitGroup as By},
    time::{DAY_MS, HOUR_MS, Millis, start_of_day},
};

/// How long after its end a day is kept.
pub const CLOSED_AFTER: i64 = HOUR_MS;

/// Rows per insert statement (12 values each, well under SQLite's limit).
const INSERT_CHUNK: usize = 1_000;

/// Where the days that may be kept end at `now`: every day before it ended
/// at least `CLOSED_AFTER` ago.
pub fn closed_until(now: i64) -> i64 {
    start_of_day(now - CLOSED_AFTER)
}

fn by_code(by: By) -> i16 {
    match by {
        By::Channel => 1,
        By::Source => 2,
        By::Campaign => 3,
        By::Link => 4,
    }
}

/// Forgets the site's kept days from the one holding `earliest` on, and
/// moves its generation, unless `earliest` is today (UTC): no day from
/// today on is kept. Call it in the transaction of the write.
pub async fn forget_from(db: &impl ConnectionTrait, site_id: i64, earliest: i64, now: i64) -> Result<(), DbErr> {
    if earliest >= start_of_day(now) {
        return Ok(());
    }
    let day = start_of_day(earliest);
    let backend = db.get_database_backend();
    // The generation first: its row lock makes a report keeping days wait
    // for this transaction (and then find the generation moved), and a
    // report that kept them first has committed before the deletes below
    // look, so they take its days too.
    // `settled` moves too when the write reaches before yesterday: the
    // visit copies (`explore::visit_copy`) hold only those days, and stay
    // while visits running past midnight move the generation.
    let settled = i64::from(earliest < start_of_day(now) - DAY_MS);
    let mut sql = Sql::new(backend);
    sql.push("INSERT INTO credit_generations (site_id, generation, settled) VALUES (")
        .bind(site_id)
        .push(", 1, ")
        .bind(settled)
        .push(
            ") ON CONFLICT (site_id) DO UPDATE SET generation = credit_generations.generation + 1, \
             settled = credit_generations.settled + excluded.settled",
        );
    db.execute_raw(sql.statement()).await?;
    for table in ["credit_day_fills", "credit_days"] {
        let mut sql = Sql::new(backend);
        sql.push(&format!("DELETE FROM {table} WHERE site_id = ")).bind(site_id).push(" AND day >= ").bind(day);
        db.execute_raw(sql.statement()).await?;
    }
    Ok(())
}

/// Forgets every kept day of the site (an erasure, retention).
pub async fn forget_all(db: &impl ConnectionTrait, site_id: i64, now: i64) -> Result<(), DbErr> {
    forget_from(db, site_id, i64::MIN / 2, now).await
}

async fn generation(db: &impl ConnectionTrait, site_id: i64) -> Result<Option<i64>, DbErr> {
    generation_column(db, site_id, "generation").await
}

/// How many writes reaching before yesterday (UTC) the site has had: what
/// a copy of its visits up to yesterday is valid for.
pub async fn settled_generation(db: &impl ConnectionTrait, site_id: i64) -> Result<i64, DbErr> {
    Ok(generation_column(db, site_id, "settled").await?.unwrap_or(0))
}

async fn generation_column(db: &impl ConnectionTrait, site_id: i64, column: &str) -> Result<Option<i64>, DbErr> {
    let mut sql = Sql::new(db.get_database_backend());
    sql.push(&format!("SELECT {column} AS counted FROM credit_generations WHERE site_id = ")).bind(site_id);
    match db.query_one_raw(sql.statement()).await? {
        Some(row) => Ok(Some(row.try_get("", "counted")?)),
        None => Ok(None),
    }
}

/// The kept days among `days` and their tallies, read in one statement so
/// a forgetting between two reads cannot split them. The fills and the
/// tallies are two range reads of their own indexes, not a join: with the
/// statistics of a table analysed while it was still empty, PostgreSQL
/// joined them by a nested loop that read every tally of the site once per
/// kept day (15 ms for 29 days at 1M events, against 0.4 ms).
async fn kept(
    db: &impl ConnectionTrait,
    site_id: i64,
    model: Model,
    by: By,
    days: Millis,
) -> Result<(BTreeSet<i64>, Vec<RawTally>), DbErr> {
    let mut sql = Sql::new(db.get_database_backend());
    let range = |sql: &mut Sql, table: &str| {
        sql.push(&format!(" FROM {table} WHERE site_id = "))
            .bind(site_id)
            .push(" AND model = ")
            .bind(model.code())
            .push(" AND grouping = ")
            .bind(by_code(by))
            .push(" AND day >= ")
            .bind(days.0)
            .push(" AND day < ")
            .bind(days.1);
    };
    // `fill` tells the rows apart: 1 for a kept day, 0 for one of its tallies.
    sql.push(
        "SELECT 1 AS fill, day, CAST(NULL AS BOOLEAN) AS lead, CAST(NULL AS TEXT) AS currency, \
         CAST(NULL AS TEXT) AS grp, CAST(NULL AS BIGINT) AS link_id, CAST(NULL AS BIGINT) AS parts, \
         CAST(NULL AS BIGINT) AS credits, CAST(NULL AS BIGINT) AS minor",
    );
    range(&mut sql, "credit_day_fills");
    sql.push(" UNION ALL SELECT 0 AS fill, day, lead, currency, grp, link_id, parts, credits, minor");
    range(&mut sql, "credit_days");
    let mut filled = BTreeSet::new();
    let mut tallies = Vec::new();
    for row in db.query_all_raw(sql.statement()).await? {
        let day: i64 = row.try_get("", "day")?;
        if row.try_get::<i32>("", "fill")? == 1 {
            filled.insert(day);
            continue;
        }
        tallies.push(RawTally {
            day,
            lead: row.try_get("", "lead")?,
            currency: row.try_get("", "currency")?,
            grp: row.try_get("", "grp")?,
            link: row.try_get("", "link_id")?,
            parts: row.try_get("", "parts")?,
            credits: row.try_get("", "credits")?,
            minor: row.try_get("", "minor")?,
        });
    }
    // Fills and tallies are written and forgotten together; a tally of a
    // day without its fill would not be whole, so it is never counted.
    tallies.retain(|tally| filled.contains(&tally.day));
    Ok((filled, tallies))
}

/// The days of `days` not in `filled`, as runs of consecutive days.
fn missing_runs(days: Millis, filled: &BTreeSet<i64>) -> Vec<Millis> {
    let mut runs: Vec<Millis> = Vec::new();
    let mut day = days.0;
    while day < days.1 {
        if !filled.contains(&day) {
            match runs.last_mut() {
                Some(run) if run.1 == day => run.1 = day + DAY_MS,
                _ => runs.push((day, day + DAY_MS)),
            }
        }
        day += DAY_MS;
    }
    runs
}

/// The tallies of the closed whole days `days`: kept ones read, the rest
/// computed by `compute` (over the ranges it is given) and kept for the
/// next report through `keeper` (reads may come from a read-only pool),
/// unless something was written meanwhile. Public so that a test can land
/// a write inside `compute`.
pub async fn tallies<F, Fut>(
    db: &impl ConnectionTrait,
    keeper: &impl TransactionTrait,
    site_id: i64,
    model: Model,
    by: By,
    days: Millis,
    compute: F,
) -> AppResult<Vec<RawTally>>
where
    F: FnOnce(Vec<Millis>) -> Fut,
    Fut: Future<Output = AppResult<Vec<RawTally>>>,
{
    // No row yet reads as 0; a forgetting meanwhile makes it 1 or more.
    let generation = generation(db, site_id).await?.unwrap_or(0);
    let (filled, mut tallies) = kept(db, site_id, model, by, days).await?;
    let runs = missing_runs(days, &filled);
    if runs.is_empty() {
        return Ok(tallies);
    }
    let computed = compute(runs.clone()).await?;
    if let Err(err) = keep(keeper, site_id, model, by, generation, &runs, &computed).await {
        // The answer stands; the next report computes these days again.
        tracing::warn!(error = %err, site_id, "attribution days could not be kept");
    }
    tallies.extend(computed);
    Ok(tallies)
}

/// Keeps the computed days, in one transaction that first takes the site's
/// generation row (made if the site has none) if it has not moved; it waits
/// for a writer holding the row, so a write committed since the computation
/// began keeps nothing. Days another report kept meanwhile are left as they are.
async fn keep(
    db: &impl TransactionTrait,
    site_id: i64,
    model: Model,
    by: By,
    generation: i64,
    runs: &[Millis],
    computed: &[RawTally],
) -> Result<(), DbErr> {
    let txn = db.begin().await?;
    let mut sql = Sql::new(txn.get_database_backend());
    sql.push("INSERT INTO credit_generations (site_id, generation) VALUES (")
        .bind(site_id)
        .push(", 0) ON CONFLICT (site_id) DO NOTHING");
    txn.execute_raw(sql.statement()).await?;
    let mut sql = Sql::new(txn.get_database_backend());
    sql.push("UPDATE credit_generations SET generation = generation WHERE site_id = ")
        .bind(site_id)
        .push(" AND generation = ")
        .bind(generation);
    if txn.execute_raw(sql.statement()).await?.rows_affected() != 1 {
        return txn.rollback().await;
    }
    let span = (runs.first().map_or(0, |run| run.0), runs.last().map_or(0, |run| run.1));
    let (already, _) = kept(&txn, site_id, model, by, span).await?;
    let new_days: Vec<i64> = runs
        .iter()
        .flat_map(|&(from, to)| (0..(to - from) / DAY_MS).map(move |n| from + n * DAY_MS))
        .filter(|day| !already.contains(day))
        .collect();
    let (model, grouping) = (model.code(), by_code(by));
    let fills: Vec<credit_day_fill::ActiveModel> = new_days
        .iter()
        .map(|&day| credit_day_fill::ActiveModel {
            site_id: Set(site_id),
            model: Set(model),
            grouping: Set(grouping),
            day: Set(day),
            ..Default::default()
        })
        .collect();
    let rows: Vec<credit_day::ActiveModel> = computed
        .iter()
        .filter(|tally| !already.contains(&tally.day))
        .map(|tally| credit_day::ActiveModel {
            site_id: Set(site_id),
            model: Set(model),
            grouping: Set(grouping),
            day: Set(tally.day),
            lead: Set(tally.lead),
            currency: Set(tally.currency.clone()),
            grp: Set(tally.grp.clone()),
            link_id: Set(tally.link),
            parts: Set(tally.parts),
            credits: Set(tally.credits),
            minor: Set(tally.minor),
            ..Default::default()
        })
        .collect();
    for chunk in fills.chunks(INSERT_CHUNK) {
        credit_day_fill::Entity::insert_many(chunk.to_vec()).exec_without_returning(&txn).await?;
    }
    for chunk in rows.chunks(INSERT_CHUNK) {
        credit_day::Entity::insert_many(chunk.to_vec()).exec_without_returning(&txn).await?;
    }
    txn.commit().await
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::missing_runs;
    use crate::time::DAY_MS;

    const D: i64 = DAY_MS;

    #[test]
    fn the_days_not_kept_come_as_runs() {
        type Case = (&'static str, (i64, i64), Vec<i64>, Vec<(i64, i64)>);
        let cases: Vec<Case> = vec![
            ("nothing kept", (10 * D, 13 * D), vec![], vec![(10 * D, 13 * D)]),
            ("all kept", (10 * D, 13 * D), vec![10 * D, 11 * D, 12 * D], vec![]),
            ("a hole in the middle", (10 * D, 14 * D), vec![10 * D, 13 * D], vec![(11 * D, 13 * D)]),
            ("the ends", (10 * D, 14 * D), vec![11 * D, 12 * D], vec![(10 * D, 11 * D), (13 * D, 14 * D)]),
            ("kept days outside count for nothing", (10 * D, 12 * D), vec![9 * D, 12 * D], vec![(10 * D, 12 * D)]),
            ("no days", (10 * D, 10 * D), vec![], vec![]),
        ];
        for (name, days, filled, runs) in cases {
            let filled: BTreeSet<i64> = filled.into_iter().collect();
            assert_eq!(missing_runs(days, &filled), runs, "{name}");
        }
    }
}
