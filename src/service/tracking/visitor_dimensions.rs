//! The visitor dimensions (`visitor:status`, `visitor:account`) in the
//! per-value rollups (design §17). A visit is counted under its visitor's
//! current values, so when a batch changes them (an identify, a company's
//! network naming the account) every visit of the visitor moves from the
//! old value's hourly rows to the new one's: those the batch loaded with
//! the rest of its visits, the others read here. The visitor's row of the
//! old value goes, and its hour (their latest human event) is carried to
//! the new value's row. The visitor is locked by `load`, so no other write
//! moves their visits meanwhile.

use std::collections::BTreeSet;

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use entity::tracked_session;

use super::{
    rollup::Deltas,
    sessionize::Batch,
    slots::{SlotIndex, VisitorIx},
    value_rollups::{RolledDimension, ValueKey, ValueTally, visitor_entries, visitor_values_of},
    visitor_values::{StoredHours, VisitorValueKey},
};

/// A visitor whose values in the visitor dimensions the batch changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct VisitorChange {
    pub slot: VisitorIx,
    pub visitor_id: i64,
    pub site_id: i64,
    /// As stored, which their visits are counted under.
    pub before: Vec<(RolledDimension, String)>,
    /// As the batch leaves them.
    pub after: Vec<(RolledDimension, String)>,
}

impl VisitorChange {
    /// The visitor rows it moves: the old value's and the new one's, per
    /// dimension whose value changes.
    pub fn moved_rows(&self) -> impl Iterator<Item = (VisitorValueKey, VisitorValueKey)> + '_ {
        self.before.iter().zip(&self.after).filter(|(before, after)| before != after).map(|(before, after)| {
            let key = |(dimension, value): &(RolledDimension, String)| VisitorValueKey {
                visitor_id: self.visitor_id,
                dimension: *dimension,
                value: value.clone(),
            };
            (key(before), key(after))
        })
    }
}

/// The batch's visitors whose status or account it changes.
pub(super) fn changes(batch: &Batch<'_>) -> Vec<VisitorChange> {
    let mut changes = Vec::new();
    for index in 0..batch.visitors.len() {
        let slot = VisitorIx::new(index);
        let visitor = &batch.visitors[slot];
        let after = visitor_values_of(&visitor.model);
        if visitor.values_counted != after {
            changes.push(VisitorChange {
                slot,
                visitor_id: visitor.model.id,
                site_id: visitor.model.site_id,
                before: visitor.values_counted.clone(),
                after,
            });
        }
    }
    changes
}

/// The stored visitor rows the changes move (see `row_moves`).
pub(super) fn keys(changes: &[VisitorChange]) -> Vec<VisitorValueKey> {
    changes.iter().flat_map(VisitorChange::moved_rows).flat_map(|(before, after)| [before, after]).collect()
}

/// Reads the stored visits with a human event of the changed visitors that
/// the batch did not load (it moves those itself).
pub(super) async fn unloaded_visits(
    db: &impl ConnectionTrait,
    batch: &Batch<'_>,
    changes: &[VisitorChange],
) -> Result<Vec<tracked_session::Model>, DbErr> {
    if changes.is_empty() {
        return Ok(Vec::new());
    }
    let loaded: BTreeSet<i64> = batch.sessions.iter().map(|slot| slot.model.id).collect();
    let visitors = changes.iter().map(|change| change.visitor_id);
    let visits = tracked_session::Entity::find()
        .filter(tracked_session::Column::VisitorId.is_in(visitors))
        .filter(tracked_session::Column::HumanEventCount.gt(0))
        .all(db)
        .await?;
    Ok(visits.into_iter().filter(|visit| !loaded.contains(&visit.id)).collect())
}

/// Moves the unloaded visits of each changed visitor from the old values'
/// hourly rows to the new ones'.
pub(super) fn add_visit_moves(
    deltas: &mut Deltas<ValueKey, ValueTally>,
    changes: &[VisitorChange],
    unloaded: &[tracked_session::Model],
) {
    for change in changes {
        for visit in unloaded.iter().filter(|visit| visit.visitor_id == change.visitor_id) {
            visitor_entries(visit, &change.before).into_iter().for_each(|entry| deltas.moved(Some(entry), None));
            visitor_entries(visit, &change.after).into_iter().for_each(|entry| deltas.moved(None, Some(entry)));
        }
    }
}

/// A visitor row a change moves: the old value's row (`from`) goes, and its
/// hour is carried to the new value's (`to`, which keeps the later of it
/// and its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RowMove {
    pub site_id: i64,
    pub from: VisitorValueKey,
    pub to: VisitorValueKey,
    pub hour: i64,
}

/// How the changes move the visitor rows, from the stored hours: only a
/// stored old row moves (a visitor without a human event has none).
pub(super) fn row_moves(changes: &[VisitorChange], stored: &StoredHours) -> Vec<RowMove> {
    let mut moves = Vec::new();
    for change in changes {
        for (before, after) in change.moved_rows() {
            if let Some(&hour) = stored.get(&before) {
                moves.push(RowMove { site_id: change.site_id, from: before, to: after, hour });
            }
        }
    }
    moves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::HOUR_MS;

    fn values(status: &str, account: &str) -> Vec<(RolledDimension, String)> {
        vec![(RolledDimension::Status, status.to_owned()), (RolledDimension::Account, account.to_owned())]
    }

    fn key(dimension: RolledDimension, value: &str) -> VisitorValueKey {
        VisitorValueKey { visitor_id: 4, dimension, value: value.to_owned() }
    }

    #[test]
    fn a_changed_value_carries_the_visitors_row_to_the_new_value() {
        use RolledDimension::{Account, Status};
        let change = |before, after| VisitorChange {
            slot: VisitorIx::new(0),
            visitor_id: 4,
            site_id: 2,
            before: values("anonymous", before),
            after: values("identified", after),
        };
        let stored: StoredHours =
            [(key(Status, "anonymous"), 5 * HOUR_MS), (key(Account, "acme"), 5 * HOUR_MS)].into_iter().collect();
        // (name, change, rows moved: (old value gone, new value carried))
        let cases = [
            ("identified, account kept", change("acme", "acme"), vec![(Status, "anonymous", "identified")]),
            (
                "identified with a company",
                change("acme", "globex"),
                vec![(Status, "anonymous", "identified"), (Account, "acme", "globex")],
            ),
        ];
        for (name, change, expected) in cases {
            let expected: Vec<RowMove> = expected
                .into_iter()
                .map(|(dimension, before, after)| RowMove {
                    site_id: 2,
                    from: key(dimension, before),
                    to: key(dimension, after),
                    hour: 5 * HOUR_MS,
                })
                .collect();
            assert_eq!(row_moves(&[change], &stored), expected, "{name}");
        }
        let unseen = change("", "acme");
        assert_eq!(row_moves(&[unseen], &StoredHours::new()), [], "no stored row, nothing to move");
    }
}
