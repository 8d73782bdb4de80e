//! The hours of a visit's human events, kept on its row as bits counted
//! from the hour it began (`tracked_sessions.human_hours`). A visit spans
//! under `SESSION_MAX_MS` (24 hours), so its hours are at most 24 after its
//! first: bits 0 to 24 of one integer. Explore counts a visit in every time
//! bucket it has a human event in, with its bounce and length (design §17);
//! the writer counts it at each of these hours (`value_rollups`).

use super::rollup::hour_of;
use crate::time::HOUR_MS;

/// The previous hour stored for a first active hour (a visitor's, a
/// visit's): before every hour.
pub const NO_PREVIOUS: i64 = 0;

/// The hours between the hours of two instants (whole hours, any order).
fn hours_between(earlier: i64, later: i64) -> i64 {
    (hour_of(later) - hour_of(earlier)) / HOUR_MS
}

/// `bits` (counted from the hour of `started_at`) as counted from the
/// visit's start once an event at `ts` joins it: any event before the start
/// (a person's, a bot's, a ping) moves the first hour, so the bits move up
/// with it. Outside the 64 bits (never, for a visit the writer keeps under
/// 24 hours) the bits are returned as they were.
pub(crate) fn with_event_at(bits: i64, started_at: i64, ts: i64) -> i64 {
    let shift = hours_between(ts, started_at).max(0);
    u32::try_from(shift).ok().and_then(|by| bits.checked_shl(by)).unwrap_or(bits)
}

/// `bits` (counted from the hour of `started_at`) with the hour of a human
/// event at `ts` added, moved first as `with_event_at` moves them.
pub(crate) fn with_human_hour(bits: i64, started_at: i64, ts: i64) -> i64 {
    let moved = with_event_at(bits, started_at, ts);
    let at = hours_between(started_at.min(ts), ts);
    match u32::try_from(at).ok().filter(|at| *at < 63) {
        Some(at) => moved | (1 << at),
        None => moved,
    }
}

/// Each hour of a visit's human events, from its bits, with the one before
/// it (`None` for the first).
pub(crate) fn human_hours(bits: i64, started_at: i64) -> impl Iterator<Item = (i64, Option<i64>)> {
    let first = hour_of(started_at);
    let mut previous = None;
    (0..63).filter(move |k| bits & (1 << k) != 0).map(move |k| {
        let hour = first + k * HOUR_MS;
        let before = previous.replace(hour);
        (hour, before)
    })
}

/// The hour of a visit's latest human event, from its bits; none without one.
pub(crate) fn latest_human_hour(bits: i64, started_at: i64) -> Option<i64> {
    human_hours(bits, started_at).last().map(|(hour, _)| hour)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = HOUR_MS;
    const M: i64 = 60_000;

    #[test]
    fn a_visit_keeps_the_hours_of_its_human_events_from_its_first() {
        // (name, start, events in arrival order, hours after the first start's hour)
        let cases: [(&str, i64, &[i64], &[i64]); 6] = [
            ("one event", 10 * H + 5 * M, &[10 * H + 5 * M], &[10]),
            ("same hour twice", 10 * H, &[10 * H + M, 10 * H + 59 * M], &[10]),
            ("across the hour", 10 * H + 50 * M, &[10 * H + 50 * M, 11 * H + 5 * M], &[10, 11]),
            ("a gap of hours", 10 * H, &[10 * H, 12 * H + M, 14 * H], &[10, 12, 14]),
            ("an earlier event moves the start", 10 * H + 5 * M, &[10 * H + 5 * M, 9 * H + 50 * M], &[9, 10]),
            ("24 hours on", 10 * H + 30 * M, &[10 * H + 30 * M, 34 * H + 29 * M], &[10, 34]),
        ];
        for (name, start, events, expected) in cases {
            let (mut bits, mut started_at) = (0, start);
            for &ts in events {
                bits = with_human_hour(bits, started_at, ts);
                started_at = started_at.min(ts);
            }
            let hours: Vec<(i64, Option<i64>)> = human_hours(bits, started_at).collect();
            let expected: Vec<(i64, Option<i64>)> = expected
                .iter()
                .enumerate()
                .map(|(n, hour)| (hour * H, n.checked_sub(1).map(|before| expected[before] * H)))
                .collect();
            assert_eq!(hours, expected, "{name}");
            let latest = expected.last().map(|(hour, _)| *hour);
            assert_eq!(latest_human_hour(bits, started_at), latest, "{name}: the latest hour");
        }
        assert_eq!(latest_human_hour(0, 10 * H), None, "no human event");
        // A bot's event or a ping before the start moves it, and the bits with it.
        let bits = with_human_hour(0, 10 * H + 5 * M, 10 * H + 5 * M);
        let bits = with_event_at(bits, 10 * H + 5 * M, 8 * H + 50 * M);
        let hours: Vec<i64> = human_hours(bits, 8 * H + 50 * M).map(|(hour, _)| hour).collect();
        assert_eq!(hours, [10 * H], "a person's hour stays where it was");
    }
}
