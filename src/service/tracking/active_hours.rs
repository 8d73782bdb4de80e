//! Each visitor's active hours (`visitor_active_hours`: the UTC hours in
//! which they have a human event) and those rows counted by their hour and
//! the visitor's previous active hour (`active_hour_visitors`), kept with the
//! batch (design §17).
//!
//! A visitor has an event in a range `[from, to)` of whole hours exactly when
//! one of their active hours in it follows an active hour before `from` (or
//! none): their first active hour in the range. So the range's visitors are
//! `SUM(visitors)` over the count rows of its hours whose previous hour lies
//! before `from`, a few rows per hour however many visitors there are; and
//! the visitors of each time bucket of a range are those whose previous hour
//! lies in an earlier bucket. Unlike the latest-hour rows of
//! `visitor_values`, this holds for a range that ends in the past (the
//! previous period, a day of a year's series).
//!
//! A new active hour counts with the visitor's stored hour before it; one
//! that lands between two stored hours (an event out of order) also moves
//! the later hour's row to its new previous hour. The batch reads the stored
//! hours of the visitors whose new hours it writes (they are locked by
//! `load`, so no other write changes them meanwhile).

use std::collections::{BTreeMap, BTreeSet};

use sea_orm::{
    ActiveValue::{NotSet, Set},
    ConnectionTrait, DbErr, Statement,
};

use entity::{active_hour_visitor, visitor_active_hour};

use super::{
    EventKind, json_rows,
    rollup::{Deltas, hour_of},
    rollup_store::upsert_adding,
    sessionize::Batch,
    visit_hours::NO_PREVIOUS,
    visitor_values::{VisitorCount, Written, WrittenValues},
    writes::Writes,
};

/// A count row: the visitors active in `hour` whose previous active hour
/// was `previous` (`NO_PREVIOUS` for none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ReturnKey {
    pub site_id: i64,
    pub hour: i64,
    pub previous: i64,
}

/// How adding `new` hours to a visitor's `stored` active hours moves the
/// count rows, and which of them are new. Each active hour is counted with
/// the one before it, so a new hour between two stored ones moves the later
/// one's count.
pub(crate) fn add_hours(
    site_id: i64,
    stored: &BTreeSet<i64>,
    new: &BTreeSet<i64>,
    deltas: &mut Deltas<ReturnKey, VisitorCount>,
) -> Vec<i64> {
    let added: Vec<i64> = new.difference(stored).copied().collect();
    if added.is_empty() {
        return added;
    }
    let all: BTreeSet<i64> = stored.union(new).copied().collect();
    let key = |hour: i64, previous: Option<&i64>| ReturnKey {
        site_id,
        hour,
        previous: previous.map_or(NO_PREVIOUS, |at| *at),
    };
    let one = VisitorCount(1);
    let mut followers = BTreeSet::new();
    for &hour in &added {
        deltas.moved(None, Some((key(hour, all.range(..hour).next_back()), one)));
        followers.extend(stored.range(hour + 1..).next().copied());
    }
    // A stored hour after a new one may now follow it.
    for next in followers {
        let before = key(next, stored.range(..next).next_back());
        let after = key(next, all.range(..next).next_back());
        if before != after {
            deltas.moved(Some((before, one)), Some((after, one)));
        }
    }
    added
}

/// The count rows a visitor's active hours are counted in, which leave
/// with them (erasure).
pub(crate) fn counted(site_id: i64, hours: &BTreeSet<i64>) -> Vec<(ReturnKey, VisitorCount)> {
    let mut previous = NO_PREVIOUS;
    hours
        .iter()
        .map(|&hour| {
            let key = ReturnKey { site_id, hour, previous };
            previous = hour;
            (key, VisitorCount(1))
        })
        .collect()
}

/// Per visitor: the site and the hours of the batch's human events whose
/// visit this instance has not written for that hour (for a remembered one
/// the visitor's hour is stored already).
fn batch_hours(batch: &Batch<'_>, known: &WrittenValues) -> BTreeMap<i64, (i64, BTreeSet<i64>)> {
    let mut hours: BTreeMap<i64, (i64, BTreeSet<i64>)> = BTreeMap::new();
    for pending in batch.events.iter().filter(|pending| pending.event.kind != EventKind::Ping) {
        let e = pending.event;
        let visit = &batch.sessions[pending.session].model;
        let hour = hour_of(e.timestamp);
        if e.is_bot() || known.knows(&Written::Visit { session_id: visit.id, hour }) {
            continue;
        }
        let visitor_id = batch.visitors[pending.visitor].model.id;
        hours.entry(visitor_id).or_insert_with(|| (e.site_id, BTreeSet::new())).1.insert(hour);
    }
    hours
}

/// One visitor's hours: those of the batch, and those stored before it.
struct VisitorHours {
    site_id: i64,
    batch: BTreeSet<i64>,
    stored: BTreeSet<i64>,
}

/// The batch's visitors with hours to add, by visitor id.
pub(super) struct ActiveHours {
    visitors: BTreeMap<i64, VisitorHours>,
}

/// Reads the stored active hours of the visitors the batch may add hours
/// to (their ids travel as one JSON parameter, as the writer's inserts do).
pub(super) async fn stored(
    db: &impl ConnectionTrait,
    batch: &Batch<'_>,
    known: &WrittenValues,
) -> Result<ActiveHours, DbErr> {
    let mut visitors: BTreeMap<i64, VisitorHours> = batch_hours(batch, known)
        .into_iter()
        .map(|(visitor_id, (site_id, batch))| (visitor_id, VisitorHours { site_id, batch, stored: BTreeSet::new() }))
        .collect();
    if visitors.is_empty() {
        return Ok(ActiveHours { visitors });
    }
    let backend = db.get_database_backend();
    let ids: Vec<(i64,)> = visitors.keys().map(|id| (*id,)).collect();
    let ids = serde_json::to_string(&ids).map_err(|err| DbErr::Custom(err.to_string()))?;
    let sql = format!(
        "SELECT a.visitor_id, a.hour FROM {} k JOIN visitor_active_hours a ON a.visitor_id = {}",
        json_rows::rows(backend),
        json_rows::element(backend, 0, "bigint", "k.value"),
    );
    for row in db.query_all_raw(Statement::from_sql_and_values(backend, sql, [ids.into()])).await? {
        if let Some(visitor) = visitors.get_mut(&row.try_get::<i64>("", "visitor_id")?) {
            visitor.stored.insert(row.try_get("", "hour")?);
        }
    }
    Ok(ActiveHours { visitors })
}

/// Writes the batch's new active hours and moves their counts.
pub(super) fn add(writes: &mut Writes, active: &ActiveHours) {
    let mut deltas = Deltas::new();
    let mut rows: Vec<visitor_active_hour::ActiveModel> = Vec::new();
    for (&visitor_id, VisitorHours { site_id, batch, stored }) in &active.visitors {
        for hour in add_hours(*site_id, stored, batch, &mut deltas) {
            rows.push(visitor_active_hour::ActiveModel {
                visitor_id: Set(visitor_id),
                hour: Set(hour),
                site_id: Set(*site_id),
            });
        }
    }
    writes.add_models(rows, "ON CONFLICT (visitor_id, hour) DO NOTHING");
    add_count_moves(writes, deltas);
}

/// Adds moves to the count rows (the writer's, an erasure's).
pub(crate) fn add_count_moves(writes: &mut Writes, deltas: Deltas<ReturnKey, VisitorCount>) {
    let rows: Vec<active_hour_visitor::ActiveModel> = deltas
        .into_rows()
        .map(|(key, count)| active_hour_visitor::ActiveModel {
            id: NotSet,
            site_id: Set(key.site_id),
            hour: Set(key.hour),
            previous_hour: Set(key.previous),
            visitors: Set(count.0),
        })
        .collect();
    use active_hour_visitor::Column as C;
    upsert_adding::<active_hour_visitor::Entity>(writes, rows, &[C::SiteId, C::Hour, C::PreviousHour], &[C::Visitors]);
}

/// Takes a visitor's active hours out, with their counts (erasure; the
/// visitor is locked).
pub(crate) async fn erase(db: &impl ConnectionTrait, site_id: i64, visitor_id: i64) -> Result<(), DbErr> {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let rows = visitor_active_hour::Entity::delete_many()
        .filter(visitor_active_hour::Column::VisitorId.eq(visitor_id))
        .exec_with_returning(db)
        .await?;
    let hours: BTreeSet<i64> = rows.into_iter().map(|row| row.hour).collect();
    let mut writes = Writes::new(db.get_database_backend());
    add_count_moves(&mut writes, Deltas::removed(counted(site_id, &hours)));
    writes.send(db).await
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600_000;

    fn set(hours: &[i64]) -> BTreeSet<i64> {
        hours.iter().map(|hour| hour * H).collect()
    }

    /// The count rows after adding, as (hour, previous, visitors) in hours.
    fn after(stored: &[i64], new: &[i64]) -> (Vec<i64>, Vec<(i64, i64, i64)>) {
        let mut deltas = Deltas::new();
        // The stored hours' own counts, as the writer left them.
        counted(1, &set(stored)).into_iter().for_each(|entry| deltas.moved(None, Some(entry)));
        let added = add_hours(1, &set(stored), &set(new), &mut deltas);
        let rows = deltas.into_rows().map(|(key, count)| (key.hour / H, key.previous / H, count.0)).collect();
        (added.into_iter().map(|hour| hour / H).collect(), rows)
    }

    /// (name, stored, new, added, rows after: hour, previous, visitors)
    type Case = (&'static str, &'static [i64], &'static [i64], &'static [i64], &'static [(i64, i64, i64)]);

    #[test]
    fn each_active_hour_counts_once_with_the_one_before_it() {
        let cases: [Case; 7] = [
            ("first hour", &[], &[5], &[5], &[(5, 0, 1)]),
            ("two new hours", &[], &[5, 7], &[5, 7], &[(5, 0, 1), (7, 5, 1)]),
            ("a later hour", &[5], &[9], &[9], &[(5, 0, 1), (9, 5, 1)]),
            ("a stored hour again", &[5, 9], &[9], &[], &[(5, 0, 1), (9, 5, 1)]),
            ("between two stored hours", &[5, 9], &[7], &[7], &[(5, 0, 1), (7, 5, 1), (9, 7, 1)]),
            ("before every stored hour", &[5, 9], &[2], &[2], &[(2, 0, 1), (5, 2, 1), (9, 5, 1)]),
            (
                "two between and one after",
                &[5, 9],
                &[6, 8, 12, 9],
                &[6, 8, 12],
                &[(5, 0, 1), (6, 5, 1), (8, 6, 1), (9, 8, 1), (12, 9, 1)],
            ),
        ];
        for (name, stored, new, added, rows) in cases {
            let (got_added, got_rows) = after(stored, new);
            assert_eq!(got_added, added, "{name}: added");
            assert_eq!(got_rows, rows, "{name}: rows");
            // The rows are those of the merged hours counted from scratch.
            let all: BTreeSet<i64> = set(stored).union(&set(new)).copied().collect();
            let fresh: Vec<(i64, i64, i64)> =
                counted(1, &all).into_iter().map(|(key, count)| (key.hour / H, key.previous / H, count.0)).collect();
            assert_eq!(got_rows, fresh, "{name}: as counted from scratch");
        }
    }
}
