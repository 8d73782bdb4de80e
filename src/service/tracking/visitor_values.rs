//! Each visitor's latest hour per dimension value (`visitor_values`), and
//! those rows counted by their hour (`value_visitor_hours`), kept with the
//! batch (design §17). A value's visitors since an hour are the sum of its
//! counted hours since then. Before writing a row the batch reads its stored
//! hour (the visitor is locked by `load`, so no other write moves it), so the
//! count moves from the old hour to the new one; a row whose hour does not
//! grow is not written. What this instance committed is remembered for the
//! hour (`WrittenValues`), so a visitor's later events of an hour read and
//! write no row again.

use std::{collections::HashMap, num::NonZeroUsize, sync::Mutex};

use lru::LruCache;
use sea_orm::ActiveValue::{NotSet, Set};

use entity::{value_visitor_day, value_visitor_hour, visitor_value};

use super::{
    json_rows,
    rollup::{Deltas, Tally},
    rollup_store::upsert_adding,
    value_rollups::{RolledDimension, ValueKey, by_day},
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
pub(super) enum Written {
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
    pub(super) fn knows(&self, written: &Written) -> bool {
        self.recent.lock().map(|recent| recent.contains(written)).unwrap_or(false)
    }

    /// Remembers what a committed batch wrote.
    pub(super) fn remember(&self, written: Vec<Written>) {
        if let Ok(mut recent) = self.recent.lock() {
            written.into_iter().for_each(|written| {
                recent.put(written, ());
            });
        }
    }
}

/// The stored hours of the visitor rows a batch is about to write.
pub(super) type StoredHours = HashMap<VisitorValueKey, i64>;

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

/// Adds moves to the visitor count rows and their days (the writer's, an
/// erasure's).
pub(crate) fn add_count_moves(writes: &mut Writes, deltas: Deltas<ValueKey, VisitorCount>) {
    let hours: Vec<(ValueKey, VisitorCount)> = deltas.into_rows().collect();
    let days = by_day(&hours);
    let hours: Vec<value_visitor_hour::ActiveModel> = hours
        .into_iter()
        .map(|(key, count)| value_visitor_hour::ActiveModel {
            id: NotSet,
            site_id: Set(key.site_id),
            dimension: Set(key.dimension.code()),
            value: Set(key.value),
            hour: Set(key.hour),
            visitors: Set(count.0),
        })
        .collect();
    {
        use value_visitor_hour::Column as C;
        upsert_adding::<value_visitor_hour::Entity>(
            writes,
            hours,
            &[C::SiteId, C::Dimension, C::Hour, C::Value],
            &[C::Visitors],
        );
    }
    let days: Vec<value_visitor_day::ActiveModel> = days
        .into_iter()
        .map(|(key, count)| value_visitor_day::ActiveModel {
            id: NotSet,
            site_id: Set(key.site_id),
            dimension: Set(key.dimension.code()),
            value: Set(key.value),
            day: Set(key.hour),
            visitors: Set(count.0),
        })
        .collect();
    use value_visitor_day::Column as C;
    upsert_adding::<value_visitor_day::Entity>(
        writes,
        days,
        &[C::SiteId, C::Dimension, C::Day, C::Value],
        &[C::Visitors],
    );
}

/// Deletes visitor rows by key (their counts move apart, with the writer's).
pub(super) fn add_row_deletes(writes: &mut Writes, keys: &[VisitorValueKey]) {
    let rows: Vec<(i64, i16, &str)> =
        keys.iter().map(|key| (key.visitor_id, key.dimension.code(), key.value.as_str())).collect();
    let backend = writes.backend();
    let at = |index, pg_type| json_rows::element(backend, index, pg_type, "k.value");
    // Each key once, through the unique index. (A correlated `EXISTS` over
    // the keys read the rows parameter again for every stored row of the
    // batch's visitors, so a batch's cost grew with the square of its keys:
    // batched collect fell to 400 events/s.)
    let sql = format!(
        "DELETE FROM visitor_values WHERE (visitor_id, dimension, value) IN (SELECT {}, {}, {} FROM {} k)",
        at(0, "bigint"),
        at(1, "smallint"),
        at(2, "text"),
        json_rows::rows(backend),
    );
    writes.add_json_rows(sql, &rows);
}

/// Writes visitor rows (key, site, hour), replacing a stored row's hour.
pub(super) fn add_row_writes(writes: &mut Writes, rows: Vec<(VisitorValueKey, i64, i64)>) {
    let rows: Vec<visitor_value::ActiveModel> = rows
        .into_iter()
        .map(|(key, site_id, hour)| visitor_value::ActiveModel {
            visitor_id: Set(key.visitor_id),
            dimension: Set(key.dimension.code()),
            value: Set(key.value),
            site_id: Set(site_id),
            last_hour: Set(hour),
        })
        .collect();
    writes.add_models(rows, "ON CONFLICT (visitor_id, dimension, value) DO UPDATE SET last_hour = excluded.last_hour");
}
