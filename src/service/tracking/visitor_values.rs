//! Each visitor's latest hour per dimension value (`visitor_values`), and
//! those rows counted by their hour (`value_visitor_hours`), kept with the
//! batch (design §17). A value's visitors since an hour are the sum of its
//! counted hours since then. Before writing a row the batch reads its stored
//! hour (the visitor is locked by `load`, so no other write moves it), so the
//! count moves from the old hour to the new one; a row whose hour does not
//! grow is not written. What this instance committed is remembered for the
//! hour (`WrittenValues`), so a visitor's later events of an hour read and
//! write no row again.

use std::{
    collections::{BTreeMap, HashMap},
    num::NonZeroUsize,
    sync::Mutex,
};

use lru::LruCache;
use sea_orm::{
    ActiveValue::{NotSet, Set},
    ConnectionTrait, DbErr, Statement,
};

use entity::{value_visitor_hour, visitor_value};

use super::{
    EventKind, json_rows,
    rollup::{Deltas, Tally, hour_of},
    rollup_store::upsert_adding,
    sessionize::Batch,
    value_rollups::{RolledDimension, ValueKey, event_name},
    writes::Writes,
};

/// The `visitor_values` row a visitor's value is kept in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct VisitorValueKey {
    pub visitor_id: i64,
    pub dimension: RolledDimension,
    pub value: String,
}

/// A visitor row this instance has brought up to an hour: every value of
/// a visit at once (they never change on it), or one page or event name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Written {
    Visit { session_id: i64, hour: i64 },
    Value { visitor_id: i64, dimension: RolledDimension, value: String, hour: i64 },
}

/// Visitor rows of the current hours this instance's writer has committed.
/// A visitor row's hour only grows, so one written for an hour needs no
/// write for a later event of that hour: a visitor's second and later
/// events of an hour write no visitor row for their visit's values, page or
/// name already written. Forgetting only costs a write again.
pub struct WrittenValues {
    recent: Mutex<LruCache<Written, ()>>,
}

const REMEMBERED: usize = 100_000;

impl Default for WrittenValues {
    fn default() -> Self {
        WrittenValues { recent: Mutex::new(LruCache::new(NonZeroUsize::new(REMEMBERED).unwrap_or(NonZeroUsize::MIN))) }
    }
}

impl WrittenValues {
    fn knows(&self, written: &Written) -> bool {
        self.recent.lock().map(|recent| recent.contains(written)).unwrap_or(false)
    }

    /// Remembers what a committed batch wrote.
    pub(super) fn remember(&self, batch: &Batch<'_>) {
        let written = batch_values(batch, self).1;
        if let Ok(mut recent) = self.recent.lock() {
            written.into_iter().for_each(|written| {
                recent.put(written, ());
            });
        }
    }
}

/// Each visitor value the batch's human events reach that this instance has
/// not written for that hour yet, with the site and the hour of the latest
/// such event, in key order; and what writing them brings up to date.
fn batch_values(batch: &Batch<'_>, known: &WrittenValues) -> (BTreeMap<VisitorValueKey, (i64, i64)>, Vec<Written>) {
    let mut latest: BTreeMap<VisitorValueKey, (i64, i64)> = BTreeMap::new();
    let mut written = Vec::new();
    let mut add = |key: VisitorValueKey, site_id: i64, hour: i64| {
        let seen = latest.entry(key).or_insert((site_id, hour));
        seen.1 = seen.1.max(hour);
    };
    for pending in batch.events.iter().filter(|pending| pending.event.kind != EventKind::Ping) {
        let e = pending.event;
        if e.is_bot() {
            continue;
        }
        let visitor_id = batch.visitors[pending.visitor].model.id;
        let visit = &batch.sessions[pending.session].model;
        let hour = hour_of(e.timestamp);
        let this_visit = Written::Visit { session_id: visit.id, hour };
        if !known.knows(&this_visit) {
            let values = RolledDimension::OF_VISIT
                .iter()
                .filter(|dimension| dimension.has_visitor_rows())
                .filter_map(|&dimension| Some((dimension, dimension.of_visit(visit)?)));
            for (dimension, value) in values {
                add(VisitorValueKey { visitor_id, dimension, value: value.to_owned() }, e.site_id, hour);
            }
            written.push(this_visit);
        }
        let event_values =
            [(RolledDimension::Page, e.page.as_str()), (RolledDimension::Name, event_name(e.kind, &e.event_name))];
        for (dimension, value) in event_values {
            let this_value = Written::Value { visitor_id, dimension, value: value.to_owned(), hour };
            if !known.knows(&this_value) {
                add(VisitorValueKey { visitor_id, dimension, value: value.to_owned() }, e.site_id, hour);
                written.push(this_value);
            }
        }
    }
    (latest, written)
}

/// The stored hours of the visitor rows a batch is about to write.
pub(super) type StoredHours = HashMap<VisitorValueKey, i64>;

/// Reads the stored hour of each visitor row the batch would write, by its
/// key (the rows travel as one JSON parameter, as the writer's inserts do).
pub(super) async fn stored_hours(
    db: &impl ConnectionTrait,
    batch: &Batch<'_>,
    known: &WrittenValues,
) -> Result<StoredHours, DbErr> {
    let wanted = batch_values(batch, known).0;
    let mut stored = StoredHours::new();
    if wanted.is_empty() {
        return Ok(stored);
    }
    let backend = db.get_database_backend();
    let keys: Vec<(i64, i16, &str)> =
        wanted.keys().map(|key| (key.visitor_id, key.dimension.code(), key.value.as_str())).collect();
    let keys = serde_json::to_string(&keys).map_err(|err| DbErr::Custom(err.to_string()))?;
    let at = |index, pg_type| json_rows::element(backend, index, pg_type, "k.value");
    let sql = format!(
        "SELECT v.visitor_id, v.dimension, v.value, v.last_hour FROM {} k JOIN visitor_values v \
         ON v.visitor_id = {} AND v.dimension = {} AND v.value = {}",
        json_rows::rows(backend),
        at(0, "bigint"),
        at(1, "smallint"),
        at(2, "text"),
    );
    let rows = db.query_all_raw(Statement::from_sql_and_values(backend, sql, [keys.into()])).await?;
    for row in rows {
        let Some(dimension) = RolledDimension::of_code(row.try_get("", "dimension")?) else { continue };
        let key =
            VisitorValueKey { visitor_id: row.try_get("", "visitor_id")?, dimension, value: row.try_get("", "value")? };
        stored.insert(key, row.try_get("", "last_hour")?);
    }
    Ok(stored)
}

/// Visitors a count row gains (or loses).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct VisitorCount(pub i64);

impl Tally for VisitorCount {
    fn add(&mut self, other: Self, sign: i64) {
        self.0 += sign * other.0;
    }
}

/// The count row of a visitor row at `hour`.
pub(crate) fn count_key(site_id: i64, dimension: RolledDimension, value: &str, hour: i64) -> ValueKey {
    ValueKey { site_id, dimension, hour, value: value.to_owned() }
}

/// Writes the visitor rows whose hour the batch moves on, and moves their
/// counts from the stored hour to the new one.
pub(super) fn add(writes: &mut Writes, batch: &Batch<'_>, known: &WrittenValues, stored: &StoredHours) {
    let mut counts = Deltas::new();
    let mut rows: Vec<visitor_value::ActiveModel> = Vec::new();
    for (key, (site_id, hour)) in batch_values(batch, known).0 {
        let before = stored.get(&key).copied();
        if before.is_some_and(|before| before >= hour) {
            continue;
        }
        let one = VisitorCount(1);
        counts.moved(
            before.map(|before| (count_key(site_id, key.dimension, &key.value, before), one)),
            Some((count_key(site_id, key.dimension, &key.value, hour), one)),
        );
        rows.push(visitor_value::ActiveModel {
            visitor_id: Set(key.visitor_id),
            dimension: Set(key.dimension.code()),
            value: Set(key.value),
            site_id: Set(site_id),
            last_hour: Set(hour),
        });
    }
    writes.add_models(rows, "ON CONFLICT (visitor_id, dimension, value) DO UPDATE SET last_hour = excluded.last_hour");
    add_count_moves(writes, counts);
}

/// Adds moves to the visitor count rows (the writer's, an erasure's).
pub(crate) fn add_count_moves(writes: &mut Writes, deltas: Deltas<ValueKey, VisitorCount>) {
    let rows: Vec<value_visitor_hour::ActiveModel> = deltas
        .into_rows()
        .map(|(key, count)| value_visitor_hour::ActiveModel {
            id: NotSet,
            site_id: Set(key.site_id),
            dimension: Set(key.dimension.code()),
            value: Set(key.value),
            hour: Set(key.hour),
            visitors: Set(count.0),
        })
        .collect();
    use value_visitor_hour::Column as C;
    upsert_adding::<value_visitor_hour::Entity>(
        writes,
        rows,
        &[C::SiteId, C::Dimension, C::Hour, C::Value],
        &[C::Visitors],
    );
}
