//! Each visitor's latest hour per entry and exit page (`visitor_values`,
//! dimensions 15 and 16), kept with the batch (design §17), so Explore's
//! visitors by entry or exit page come from the rollups like the other
//! visit dimensions'.
//!
//! Unlike a visit's source or country, these move on a visit: its entry
//! page when an older event arrives, its exit page with each later
//! pageview. A page the visit reaches is written as the other values are
//! (the row's hour only grows); a page it leaves may still be held by the
//! visitor's other visits, so its row is recounted from them: the latest
//! hour of those still holding it, or no row when none does. The visitor is
//! locked by `load`, so no other write moves their visits meanwhile.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use sea_orm::{ConnectionTrait, DbErr, Statement};

use entity::tracked_session;

use super::{
    json_rows,
    rollup::Deltas,
    sessionize::Batch,
    value_rollups::{RolledDimension, ValueKey},
    visit_hours::latest_human_hour,
    visitor_values::{StoredHours, VisitorCount, VisitorValueKey, add_row_deletes, add_row_writes, count_key},
    writes::Writes,
};

/// The dimensions whose value a visit's events move.
pub(crate) const MOVING: [RolledDimension; 2] = [RolledDimension::EntryPage, RolledDimension::ExitPage];

/// A page a visit holds (in one moving dimension), and the hour of the
/// visit's latest human event.
type Held = (String, i64);

/// How the batch moves one visit in one moving dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PageMove {
    pub session_id: i64,
    pub visitor_id: i64,
    pub site_id: i64,
    pub dimension: RolledDimension,
    /// As stored (none without a human event).
    pub before: Option<Held>,
    /// As the batch leaves it.
    pub after: Option<Held>,
}

impl PageMove {
    fn key(&self, value: &str) -> VisitorValueKey {
        VisitorValueKey { visitor_id: self.visitor_id, dimension: self.dimension, value: value.to_owned() }
    }

    /// The row of the page the visit leaves, if it leaves one.
    fn left(&self) -> Option<VisitorValueKey> {
        let (before, _) = self.before.as_ref()?;
        let stays = self.after.as_ref().is_some_and(|(after, _)| after == before);
        (!stays).then(|| self.key(before))
    }
}

/// What a visit holds in `dimension`, from its row: none without a human event.
fn held(visit: &tracked_session::Model, dimension: RolledDimension) -> Option<Held> {
    if visit.human_event_count <= 0 {
        return None;
    }
    let hour = latest_human_hour(visit.human_hours, visit.started_at)?;
    Some((dimension.of_visit(visit)?.to_owned(), hour))
}

/// The batch's visits whose entry or exit page, or latest human hour, it moves.
pub(super) fn moves(batch: &Batch<'_>) -> Vec<PageMove> {
    let mut moves = Vec::new();
    for slot in batch.sessions.iter().filter(|slot| slot.dirty) {
        // As stored: the value rows it is counted in name its pages and hours.
        let counted = &slot.values_counted;
        let stored_latest = counted
            .iter()
            .filter(|(key, _)| key.dimension == RolledDimension::VisitHours)
            .map(|(key, _)| key.hour)
            .max();
        for dimension in MOVING {
            let stored_value = counted.iter().find(|(key, _)| key.dimension == dimension);
            let before = stored_value.zip(stored_latest).map(|((key, _), hour)| (key.value.clone(), hour));
            let after = held(&slot.model, dimension);
            if before != after {
                moves.push(PageMove {
                    session_id: slot.model.id,
                    visitor_id: batch.visitors[slot.visitor].model.id,
                    site_id: slot.model.site_id,
                    dimension,
                    before,
                    after,
                });
            }
        }
    }
    moves
}

/// Every row the moves may change, with its site: the pages left and reached.
pub(super) fn keys(moves: &[PageMove]) -> BTreeMap<VisitorValueKey, i64> {
    let mut keys = BTreeMap::new();
    for one in moves {
        let reached = one.after.as_ref().map(|(value, _)| one.key(value));
        for key in one.left().into_iter().chain(reached) {
            keys.insert(key, one.site_id);
        }
    }
    keys
}

/// A stored visit of a visitor that holds a page whose row the batch recounts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct OtherVisit {
    pub key: VisitorValueKey,
    pub session_id: i64,
    pub latest_hour: i64,
}

/// What each row the moves change becomes: its new hour, or none when no
/// visit holds the page any more. Rows that stay as stored are left out.
fn targets(
    moves: &[PageMove],
    stored: &StoredHours,
    others: &[OtherVisit],
) -> BTreeMap<VisitorValueKey, (i64, Option<i64>)> {
    let left: BTreeSet<VisitorValueKey> = moves.iter().filter_map(PageMove::left).collect();
    // The batch's moved visits are as it leaves them; their stored rows are not.
    let moved: BTreeSet<(i64, RolledDimension)> = moves.iter().map(|one| (one.session_id, one.dimension)).collect();
    let sites = keys(moves);
    // A page reached only grows its row; one left is recounted from scratch.
    let mut latest: BTreeMap<&VisitorValueKey, Option<i64>> =
        sites.keys().map(|key| (key, if left.contains(key) { None } else { stored.get(key).copied() })).collect();
    let mut raise = |key: &VisitorValueKey, hour: i64| {
        if let Some(at) = latest.get_mut(key) {
            *at = Some(at.map_or(hour, |at| at.max(hour)));
        }
    };
    for one in moves {
        if let Some((value, hour)) = &one.after {
            raise(&one.key(value), *hour);
        }
    }
    for other in others.iter().filter(|other| !moved.contains(&(other.session_id, other.key.dimension))) {
        raise(&other.key, other.latest_hour);
    }
    latest
        .into_iter()
        .filter(|(key, hour)| stored.get(*key) != hour.as_ref())
        .map(|(key, hour)| (key.clone(), (sites[key], hour)))
        .collect()
}

/// The stored visits that hold a page some moved visit leaves, for its
/// recount: each visitor's human visits with that entry or exit page. A
/// visitor whose every visit the batch holds (their count of visits, which
/// only grows, is no more than the batch's) needs no read: the batch loads
/// one stored visit of a visitor, the one that moved, so their others are
/// new in the batch, and a new visit is a move counted as it is left.
pub(super) async fn other_visits(
    db: &impl ConnectionTrait,
    batch: &Batch<'_>,
    moves: &[PageMove],
) -> Result<Vec<OtherVisit>, DbErr> {
    let mut held: HashMap<i64, (i64, i64)> = HashMap::new();
    for slot in batch.sessions.iter() {
        let visitor = &batch.visitors[slot.visitor].model;
        held.entry(visitor.id).or_insert((i64::from(visitor.total_sessions), 0)).1 += 1;
    }
    let whole = |visitor_id: i64| held.get(&visitor_id).is_some_and(|(total, in_batch)| total <= in_batch);
    let left: BTreeSet<VisitorValueKey> =
        moves.iter().filter_map(PageMove::left).filter(|key| !whole(key.visitor_id)).collect();
    if left.is_empty() {
        return Ok(Vec::new());
    }
    let backend = db.get_database_backend();
    let rows: Vec<(i64, i16, &str)> =
        left.iter().map(|key| (key.visitor_id, key.dimension.code(), key.value.as_str())).collect();
    let rows = serde_json::to_string(&rows).map_err(|err| DbErr::Custom(err.to_string()))?;
    let at = |index, pg_type| json_rows::element(backend, index, pg_type, "k.value");
    let (visitor, dimension, value) = (at(0, "bigint"), at(1, "bigint"), at(2, "text"));
    let entry = RolledDimension::EntryPage.code();
    let sql = format!(
        "SELECT s.id, s.started_at, s.human_hours, {visitor} AS visitor_id, {dimension} AS dimension, \
         {value} AS value FROM {} k JOIN tracked_sessions s ON s.visitor_id = {visitor} \
         WHERE s.human_event_count > 0 \
         AND COALESCE(CASE WHEN {dimension} = {entry} THEN s.entry_page ELSE s.exit_page END, '') = {value}",
        json_rows::rows(backend),
    );
    let found = db.query_all_raw(Statement::from_sql_and_values(backend, sql, [rows.into()])).await?;
    let mut others = Vec::with_capacity(found.len());
    for row in found {
        let code = i16::try_from(row.try_get::<i64>("", "dimension")?).ok();
        let Some(dimension) = code.and_then(RolledDimension::of_code) else { continue };
        let Some(latest_hour) = latest_human_hour(row.try_get("", "human_hours")?, row.try_get("", "started_at")?)
        else {
            continue;
        };
        let key =
            VisitorValueKey { visitor_id: row.try_get("", "visitor_id")?, dimension, value: row.try_get("", "value")? };
        others.push(OtherVisit { key, session_id: row.try_get("", "id")?, latest_hour });
    }
    Ok(others)
}

/// Writes the entry and exit page rows the moves change, and moves their
/// counts (in `counts`) from the stored hour to the new one (or away, for a
/// row no visit holds any more).
pub(super) fn add(
    writes: &mut Writes,
    moves: &[PageMove],
    stored: &StoredHours,
    others: &[OtherVisit],
    counts: &mut Deltas<ValueKey, VisitorCount>,
) {
    let mut rows = Vec::new();
    let mut gone: Vec<VisitorValueKey> = Vec::new();
    for (key, (site_id, hour)) in targets(moves, stored, others) {
        let one = VisitorCount(1);
        let before = stored.get(&key).map(|&before| (count_key(site_id, key.dimension, &key.value, before), one));
        counts.moved(before, hour.map(|hour| (count_key(site_id, key.dimension, &key.value, hour), one)));
        match hour {
            Some(hour) => rows.push((key, site_id, hour)),
            None => gone.push(key),
        }
    }
    add_row_writes(writes, rows);
    add_row_deletes(writes, &gone);
}

#[cfg(test)]
#[path = "visit_page_values_tests.rs"]
mod tests;
