//! Events stored by site and UTC day of their time (`stored_event_days`),
//! added by the writer in the transaction that stores them. An Explore
//! copy's tail print on PostgreSQL reads their difference between two
//! snapshots instead of counting the tail's events (`visit_copy::load`).

use std::collections::BTreeMap;

use sea_orm::ActiveValue::{NotSet, Set};

use entity::stored_event_day;

use super::{rollup_store, writes::Writes};
use crate::time::start_of_day;

/// How many of `timestamps` (with their site) fall in each (site, UTC day),
/// in key order, so concurrent writers lock the rows in the same order.
fn counted(events: impl IntoIterator<Item = (i64, i64)>) -> BTreeMap<(i64, i64), i64> {
    let mut counts = BTreeMap::new();
    for (site_id, timestamp) in events {
        *counts.entry((site_id, start_of_day(timestamp))).or_default() += 1;
    }
    counts
}

/// Adds the batch's stored events, given as (site, time), to their days.
pub(super) fn add(writes: &mut Writes, events: impl IntoIterator<Item = (i64, i64)>) {
    let rows: Vec<stored_event_day::ActiveModel> = counted(events)
        .into_iter()
        .map(|((site_id, day), events)| stored_event_day::ActiveModel {
            id: NotSet,
            site_id: Set(site_id),
            day: Set(day),
            events: Set(events),
        })
        .collect();
    use stored_event_day::Column as C;
    rollup_store::upsert_adding::<stored_event_day::Entity>(writes, rows, &[C::SiteId, C::Day], &[C::Events]);
}

#[cfg(test)]
mod tests {
    use super::counted;

    const DAY: i64 = 86_400_000;

    /// Events as (site, time), and the counts by (site, day) they give.
    type Case = (&'static [(i64, i64)], &'static [((i64, i64), i64)]);

    #[test]
    fn events_are_counted_by_site_and_utc_day() {
        let cases: [Case; 4] = [
            (&[], &[]),
            (&[(1, 5)], &[((1, 0), 1)]),
            // The day's last millisecond and the next day's first.
            (&[(1, DAY - 1), (1, DAY), (1, DAY + 7)], &[((1, 0), 1), ((1, DAY), 2)]),
            (&[(2, 3 * DAY + 1), (1, 3 * DAY), (2, 3 * DAY)], &[((1, 3 * DAY), 1), ((2, 3 * DAY), 2)]),
        ];
        for (events, expected) in cases {
            let counts: Vec<_> = counted(events.iter().copied()).into_iter().collect();
            assert_eq!(counts, expected, "{events:?}");
        }
    }
}
