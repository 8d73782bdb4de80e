//! The top of the scored list without scoring every visitor. Recency only
//! ever adds to the stored points, and by at most `RECENCY_MAX`, so reading
//! visitors in stored-score order can stop once enough of them outrank every
//! visitor not read yet. The stop rule is pure and tested on its own.

use std::cmp::Ordering;

use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, sea_query::Expr,
};

use entity::visitor;

use super::window;
use crate::{error::AppResult, service::scoring, time::DAY_MS};

/// The most rows one read takes.
const MAX_CHUNK: usize = 20_000;

/// A visitor as the list orders it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Ranked {
    pub id: i64,
    pub stored: i32,
    pub last_seen: i64,
    /// The score with recency, as shown.
    pub score: i32,
}

impl Ranked {
    fn new(id: i64, stored: i32, last_seen: i64, now: i64) -> Self {
        Ranked { id, stored, last_seen, score: scoring::total(stored, last_seen, now) }
    }

    /// The list's order: highest score, then most recently seen, then newest row.
    pub fn cmp_rank(&self, other: &Self) -> Ordering {
        other
            .score
            .cmp(&self.score)
            .then_with(|| other.last_seen.cmp(&self.last_seen))
            .then_with(|| other.id.cmp(&self.id))
    }
}

/// Whether the rows read so far, in (stored, last_seen, id) descending order
/// with `last` read last, hold the list's first `take` rows. An unread row
/// either has the same stored points as `last` and is older (so it ranks
/// below `last`), or fewer stored points (so its score is at most
/// `last.stored - 1 + RECENCY_MAX`). A read row that ranks at or above `last`
/// and scores above that bound outranks every unread row.
pub(super) fn holds_top(read: &[Ranked], last: &Ranked, take: usize) -> bool {
    let bound = (last.stored - 1 + scoring::RECENCY_MAX).min(scoring::MAX_SCORE);
    read.iter().filter(|row| row.score > bound && row.cmp_rank(last) != Ordering::Greater).count() >= take
}

/// Which visitors to read: a site's humans or bots, seen since `start`, with
/// `min_score` only those whose score reaches it, and with `narrowed` only
/// those the desk's filters select.
pub(super) struct Scope {
    pub site_id: i64,
    pub is_bot: bool,
    pub start: Option<i64>,
    pub min_score: Option<i32>,
    pub narrowed: Option<Condition>,
    /// `narrowed` picks few rows by an index of its own (an account's
    /// visitors): read those and sort them, rather than walk the whole
    /// stored-score index in search of them.
    pub few: bool,
    /// `narrowed` is written for walking the stored-score index (no index of
    /// its own serves it): the range is kept out of index choice too, or
    /// SQLite reads the whole range by its last-visit index and sorts it.
    pub walk: bool,
}

/// The ids of the list's rows `offset..offset + limit`, in list order.
pub(super) async fn page(
    db: &impl ConnectionTrait,
    scope: &Scope,
    offset: u64,
    limit: u64,
    now: i64,
) -> AppResult<Vec<i64>> {
    let take = usize::try_from(offset.saturating_add(limit)).unwrap_or(usize::MAX);
    let offset = usize::try_from(offset).unwrap_or(usize::MAX);
    if scope.min_score.is_none_or(|min| min <= scoring::MAX_SCORE)
        && let Some(top) = capped_top(db, scope, take, now).await?
    {
        return Ok(top.into_iter().skip(offset).map(|row| row.id).collect());
    }
    // Small pages read little; each further read doubles, so a long scan
    // takes few statements.
    let mut chunk = take.saturating_mul(2).clamp(16, MAX_CHUNK) as u64;
    let mut read: Vec<Ranked> = Vec::new();
    let mut after: Option<Ranked> = None;
    loop {
        let mut query = visitor::Entity::find()
            .filter(visitor::Column::SiteId.eq(scope.site_id))
            .filter(visitor::Column::IsBot.eq(scope.is_bot));
        if let Some(start) = scope.start {
            query = query.filter(if scope.walk {
                Expr::cust(format!("+visitors.last_seen >= {start}"))
            } else {
                visitor::Column::LastSeen.gte(start)
            });
        }
        if let Some(min) = scope.min_score {
            query = query.filter(visitor::Column::Score.gte(min - scoring::RECENCY_MAX));
        }
        if let Some(narrowed) = &scope.narrowed {
            query = query.filter(narrowed.clone());
        }
        // A unary `+` keeps the score out of index choice: SQLite then reads
        // the few rows by their own index and sorts them.
        let score = if scope.few { "+visitors.score" } else { "visitors.score" };
        if let Some(last) = after {
            // Keyset: the rows after `last` in the index order. The values are
            // our own integers, not input.
            query = query.filter(Expr::cust(format!(
                "({score}, visitors.last_seen, visitors.id) < ({}, {}, {})",
                last.stored, last.last_seen, last.id
            )));
        }
        let rows: Vec<(i64, i32, i64)> = query
            .select_only()
            .column(visitor::Column::Id)
            .column(visitor::Column::Score)
            .column(visitor::Column::LastSeen)
            .order_by_desc(Expr::cust(score))
            .order_by_desc(visitor::Column::LastSeen)
            .order_by_desc(visitor::Column::Id)
            .limit(chunk)
            .into_tuple()
            .all(db)
            .await?;
        let complete = (rows.len() as u64) < chunk;
        for (id, stored, last_seen) in rows {
            let row = Ranked::new(id, stored, last_seen, now);
            after = Some(row);
            if scope.min_score.is_none_or(|min| row.score >= min) {
                read.push(row);
            }
        }
        match after {
            Some(last) if !complete && !holds_top(&read, &last, take) => chunk = (chunk * 2).min(MAX_CHUNK as u64),
            _ => break,
        }
    }
    read.sort_by(Ranked::cmp_rank);
    Ok(read.into_iter().skip(offset).take(take - offset.min(take)).map(|row| row.id).collect())
}

/// The list's first `take` rows when at least that many visitors score the
/// maximum. Such rows tie on score and rank by last visit, which stored-score
/// order cannot settle early; read by UTC day of last visit instead, newest
/// first, each day only the visitors whose stored points plus that day's
/// recency reach the cap, and stop after the day that fills the page.
/// `None` when fewer than `take` visitors score the maximum.
async fn capped_top(db: &impl ConnectionTrait, scope: &Scope, take: usize, now: i64) -> AppResult<Option<Vec<Ranked>>> {
    let seeks = window::hot_seeks(scoring::MAX_SCORE, scope.start, now);
    let candidates = |min_stored: i32| {
        let mut query = visitor::Entity::find()
            .filter(visitor::Column::SiteId.eq(scope.site_id))
            .filter(visitor::Column::IsBot.eq(scope.is_bot))
            .filter(visitor::Column::Score.gte(min_stored));
        if let Some(narrowed) = &scope.narrowed {
            query = query.filter(narrowed.clone());
        }
        if let Some(start) = scope.start {
            // `+` keeps SQLite on the day index rather than a last_seen one.
            query = query.filter(Expr::cust(format!("+visitors.last_seen >= {start}")));
        }
        query.select_only().column(visitor::Column::Id).column(visitor::Column::Score).column(visitor::Column::LastSeen)
    };
    let mut capped: Vec<Ranked> = Vec::new();
    for (day, min_stored) in seeks.days {
        let rows: Vec<(i64, i32, i64)> = candidates(min_stored)
            .filter(Expr::cust(format!("last_seen / {DAY_MS} = {day}")))
            .into_tuple()
            .all(db)
            .await?;
        let mut found: Vec<Ranked> = rows
            .into_iter()
            .map(|(id, stored, last_seen)| Ranked::new(id, stored, last_seen, now))
            .filter(|row| row.score == scoring::MAX_SCORE)
            .collect();
        found.sort_by(Ranked::cmp_rank);
        capped.extend(found);
        if capped.len() >= take {
            capped.truncate(take);
            return Ok(Some(capped));
        }
    }
    if let Some(faded) = seeks.faded_before {
        let rows: Vec<(i64, i32, i64)> = candidates(scoring::MAX_SCORE)
            .filter(Expr::cust(format!("+visitors.last_seen < {faded}")))
            // Unindexed order: the few visitors at the cap are found by the
            // score index and sorted. Able to serve the order, SQLite walked
            // the site's last-visit index from today back to `faded`, every
            // recent visitor first (a second at 10M events when a filter
            // keeps none at the cap).
            .order_by_desc(Expr::cust("+visitors.last_seen"))
            .order_by_desc(Expr::cust("+visitors.id"))
            .limit((take - capped.len()) as u64)
            .into_tuple()
            .all(db)
            .await?;
        capped.extend(rows.into_iter().map(|(id, stored, last_seen)| Ranked::new(id, stored, last_seen, now)));
    }
    Ok((capped.len() >= take).then_some(capped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::DAY_MS;

    const NOW: i64 = 1_800_000_000_000;

    fn row(id: i64, stored: i32, days_ago: i64) -> Ranked {
        Ranked::new(id, stored, NOW - days_ago * DAY_MS, NOW)
    }

    /// The list's first `take` rows by scoring everything, for comparison.
    fn naive(rows: &[Ranked], take: usize) -> Vec<i64> {
        let mut all = rows.to_vec();
        all.sort_by(Ranked::cmp_rank);
        all.into_iter().take(take).map(|row| row.id).collect()
    }

    /// What `page` does, over a slice in index order, reading `chunk` at a time.
    fn early_stop(rows: &[Ranked], take: usize, chunk: usize) -> (Vec<i64>, usize) {
        let mut index = rows.to_vec();
        index.sort_by_key(|row| std::cmp::Reverse((row.stored, row.last_seen, row.id)));
        let mut read = Vec::new();
        for part in index.chunks(chunk) {
            read.extend_from_slice(part);
            let last = part[part.len() - 1];
            if part.len() < chunk || holds_top(&read, &last, take) {
                break;
            }
        }
        let count = read.len();
        read.sort_by(Ranked::cmp_rank);
        (read.into_iter().take(take).map(|row| row.id).collect(), count)
    }

    #[test]
    fn stopping_early_gives_the_same_top_rows_as_scoring_everyone() {
        // (name, rows, take, chunk, most rows read)
        let mut cases: Vec<(&str, Vec<Ranked>, usize, usize, usize)> = vec![
            ("all equal stored points", (1..=100).map(|id| row(id, 0, id % 5)).collect(), 10, 10, 10),
            (
                "recency lifts a lower stored score",
                vec![row(1, 50, 9), row(2, 45, 0), row(3, 40, 0), row(4, 0, 0)],
                2,
                1,
                4,
            ),
            (
                "capped at the maximum: ties are not resolved early",
                vec![row(1, 100, 0), row(2, 95, 0), row(3, 90, 0), row(4, 10, 0)],
                2,
                1,
                4,
            ),
            ("fewer rows than asked", vec![row(1, 10, 1), row(2, 5, 2)], 5, 2, 2),
        ];
        // Spread stored points and ages: ties in score broken by recency and id.
        let spread: Vec<Ranked> = (1..=400).map(|id| row(id, (id * 37 % 90) as i32, id * 13 % 12)).collect();
        cases.push(("spread", spread, 50, 25, 400));
        for (name, rows, take, chunk, most_read) in cases {
            let (top, read) = early_stop(&rows, take, chunk);
            assert_eq!(top, naive(&rows, take), "{name}");
            assert!(read <= most_read, "{name}: read {read} rows, expected at most {most_read}");
        }
    }

    #[test]
    fn a_row_scores_its_stored_points_plus_recency() {
        assert_eq!(row(1, 50, 0).score, 65);
        assert_eq!(row(1, 50, 3).score, 57);
        assert_eq!(row(1, 95, 0).score, 100);
        assert_eq!(row(1, 5, 30).score, 5);
    }
}
