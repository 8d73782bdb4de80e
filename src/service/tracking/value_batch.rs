//! What a write batch adds to Explore's per-value rollups (design §17):
//! its visits' and events' moves between hourly value rows
//! (`value_rollups`) and its visitors' latest hours with their counts
//! (`visitor_values`), worked out from the batch.

use std::collections::{BTreeMap, HashSet};

use sea_orm::{ConnectionTrait, DbErr, Statement};

use entity::tracked_session;

use super::{
    EventKind, active_hours, json_rows,
    rollup::{Deltas, hour_of},
    sessionize::Batch,
    slots::VisitorIx,
    value_rollups::{
        RolledDimension, ValueKey, ValueTally, add_value_moves, event_name, name_by_entries, name_by_values,
        name_entry, visit_entries, visitor_values_of,
    },
    visit_page_values::{self, OtherVisit, PageMove},
    visitor_dimensions::{self, VisitorChange},
    visitor_values::{
        StoredHours, VisitorCount, VisitorValueKey, Written, WrittenValues, add_count_moves, add_row_deletes,
        add_row_writes, count_key,
    },
    writes::Writes,
};

/// How the batch moves its visits and adds its events between rows: the
/// visits it changes, and every visit of a visitor whose status or account
/// it changes (those it did not load are `unloaded`).
fn value_moves(batch: &Batch<'_>, stored: &Stored) -> Deltas<ValueKey, ValueTally> {
    let mut deltas = Deltas::new();
    let changed: HashSet<VisitorIx> = stored.visitor_changes.iter().map(|change| change.slot).collect();
    for slot in batch.sessions.iter().filter(|slot| slot.dirty || changed.contains(&slot.visitor)) {
        slot.values_counted.iter().for_each(|entry| deltas.moved(Some(entry.clone()), None));
        let visitor = visitor_values_of(&batch.visitors[slot.visitor].model);
        visit_entries(&slot.model, &visitor).into_iter().for_each(|entry| deltas.moved(None, Some(entry)));
    }
    visitor_dimensions::add_visit_moves(&mut deltas, &stored.visitor_changes, &stored.unloaded_visits);
    for pending in batch.events.iter().filter(|pending| pending.event.kind != EventKind::Ping) {
        let e = pending.event;
        if !e.is_bot() {
            deltas.moved(None, Some(name_entry(e.site_id, e.kind, &e.event_name, e.timestamp)));
            let visit = &batch.sessions[pending.session].model;
            for entry in name_by_entries(e.site_id, e.kind, &e.event_name, e.timestamp, visit) {
                deltas.moved(None, Some(entry));
            }
        }
    }
    deltas
}

/// What the batch reads before it writes its rollups: the stored hour of
/// each `visitor_values` row it may move on, the stored visits that recount
/// an entry or exit page a visit leaves, the visits it did not load of the
/// visitors whose status or account it changes, and the stored active hours
/// of each visitor it may add an hour to.
pub(super) struct Stored {
    pub values: StoredHours,
    pub page_moves: Vec<PageMove>,
    pub other_visits: Vec<OtherVisit>,
    pub visitor_changes: Vec<VisitorChange>,
    pub unloaded_visits: Vec<tracked_session::Model>,
    pub active: active_hours::ActiveHours,
}

/// Reads what the batch's visitor rows need (see `Stored`).
pub(super) async fn stored(
    db: &impl ConnectionTrait,
    batch: &Batch<'_>,
    known: &WrittenValues,
) -> Result<Stored, DbErr> {
    let page_moves = visit_page_values::moves(batch);
    let visitor_changes = visitor_dimensions::changes(batch);
    let mut wanted: Vec<VisitorValueKey> = batch_values(batch, known).0.into_keys().collect();
    wanted.extend(visit_page_values::keys(&page_moves).into_keys());
    wanted.extend(visitor_dimensions::keys(&visitor_changes));
    Ok(Stored {
        values: stored_hours(db, &wanted).await?,
        other_visits: visit_page_values::other_visits(db, batch, &page_moves).await?,
        page_moves,
        unloaded_visits: visitor_dimensions::unloaded_visits(db, batch, &visitor_changes).await?,
        visitor_changes,
        active: active_hours::stored(db, batch, known).await?,
    })
}

/// Writes the batch's moves between hourly value rows, then its visitors'
/// latest hours (`visitor_values`) and active hours.
pub(super) fn add(writes: &mut Writes, batch: &Batch<'_>, known: &WrittenValues, stored: &Stored) {
    add_value_moves(writes, value_moves(batch, stored));
    let mut counts = Deltas::new();
    add_visitor_values(writes, batch, known, stored, &mut counts);
    visit_page_values::add(writes, &stored.page_moves, &stored.values, &stored.other_visits, &mut counts);
    // One statement moves every count row, in key order as an erasure does:
    // two in turn could each hold a row the other waits for on PostgreSQL.
    add_count_moves(writes, counts);
    active_hours::add(writes, &stored.active);
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
                .filter(|dimension| dimension.has_visitor_rows() && !dimension.moves_on_visit())
                .filter_map(|&dimension| Some((dimension, dimension.of_visit(visit)?.to_owned())));
            let of_visitor = visitor_values_of(&batch.visitors[pending.visitor].model);
            for (dimension, value) in values.chain(of_visitor) {
                add(VisitorValueKey { visitor_id, dimension, value }, e.site_id, hour);
            }
            written.push(this_visit);
        }
        let event_values = [
            (RolledDimension::Page, e.page.clone()),
            (RolledDimension::Name, event_name(e.kind, &e.event_name).to_owned()),
        ];
        for (dimension, value) in event_values.into_iter().chain(name_by_values(e.kind, &e.event_name, visit)) {
            let this_value = Written::Value { visitor_id, dimension, value: value.clone(), hour };
            if !known.knows(&this_value) {
                add(VisitorValueKey { visitor_id, dimension, value }, e.site_id, hour);
                written.push(this_value);
            }
        }
    }
    (latest, written)
}

/// Reads the stored hour of each visitor row the batch would write, by its
/// key (the rows travel as one JSON parameter, as the writer's inserts do).
async fn stored_hours(db: &impl ConnectionTrait, wanted: &[VisitorValueKey]) -> Result<StoredHours, DbErr> {
    let mut stored = StoredHours::new();
    if wanted.is_empty() {
        return Ok(stored);
    }
    let backend = db.get_database_backend();
    let keys: Vec<(i64, i16, &str)> =
        wanted.iter().map(|key| (key.visitor_id, key.dimension.code(), key.value.as_str())).collect();
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

/// Writes the visitor rows whose hour the batch moves on, and moves their
/// counts (in `counts`) from the stored hour to the new one; a visitor's row of a status
/// or account they left goes, its hour carried to the new value's row.
fn add_visitor_values(
    writes: &mut Writes,
    batch: &Batch<'_>,
    known: &WrittenValues,
    stored: &Stored,
    counts: &mut Deltas<ValueKey, VisitorCount>,
) {
    let one = VisitorCount(1);
    let mut latest = batch_values(batch, known).0;
    let mut gone = Vec::new();
    for moved in visitor_dimensions::row_moves(&stored.visitor_changes, &stored.values) {
        let to = latest.entry(moved.to).or_insert((moved.site_id, moved.hour));
        to.1 = to.1.max(moved.hour);
        counts.moved(Some((count_key(moved.site_id, moved.from.dimension, &moved.from.value, moved.hour), one)), None);
        gone.push(moved.from);
    }
    let mut rows = Vec::new();
    for (key, (site_id, hour)) in latest {
        let before = stored.values.get(&key).copied();
        if before.is_some_and(|before| before >= hour) {
            continue;
        }
        counts.moved(
            before.map(|before| (count_key(site_id, key.dimension, &key.value, before), one)),
            Some((count_key(site_id, key.dimension, &key.value, hour), one)),
        );
        rows.push((key, site_id, hour));
    }
    add_row_deletes(writes, &gone);
    add_row_writes(writes, rows);
}

/// Remembers, once the batch has committed, the visitor rows it wrote.
pub(super) fn remember(known: &WrittenValues, batch: &Batch<'_>) {
    known.remember(batch_values(batch, known).1);
}
