//! Timestamps are UTC epoch milliseconds inside; ISO 8601 with milliseconds outside.

use chrono::{DateTime, SecondsFormat, Utc};

pub const MINUTE_MS: i64 = 60_000;
pub const HOUR_MS: i64 = 60 * MINUTE_MS;
pub const DAY_MS: i64 = 24 * HOUR_MS;

/// The start of the UTC day that holds `ms` (the daily rollups' key).
pub fn start_of_day(ms: i64) -> i64 {
    ms.div_euclid(DAY_MS) * DAY_MS
}

pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// The alert schedule's clock: the system clock moved by an offset that tests
/// set, so a day of retries takes no day to test. Always zero in production.
#[derive(Clone, Default)]
pub struct Clock(std::sync::Arc<std::sync::atomic::AtomicI64>);

impl Clock {
    pub fn now(&self) -> i64 {
        now_ms() + self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Moves this clock, and every copy of it, `ms` ahead.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, std::sync::atomic::Ordering::Relaxed);
    }
}

/// `2026-11-21T09:30:00.000Z`, the spec's timestamp shape.
pub fn iso(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// RFC 3339, or a date-time without zone, or a bare date; the last two read as UTC.
pub fn parse_iso(value: &str) -> Option<i64> {
    let value = value.trim();
    if let Ok(instant) = DateTime::parse_from_rfc3339(value) {
        return Some(instant.timestamp_millis());
    }
    if let Ok(naive) = chrono::NaiveDateTime::parse_from_str(value, "%Y-%m-%dT%H:%M:%S%.f") {
        return Some(naive.and_utc().timestamp_millis());
    }
    chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .ok()
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|midnight| midnight.and_utc().timestamp_millis())
}

/// A span split for daily rows: its whole UTC days `[first, last)`,
/// if any, and the hour ranges before and after them (all of it without a
/// whole day). Both are half-open and together cover the span once.
pub fn day_split(from: i64, to: i64) -> DaySplit {
    let first = from + (DAY_MS - from.rem_euclid(DAY_MS)) % DAY_MS;
    let last = to - to.rem_euclid(DAY_MS);
    if first >= last {
        return DaySplit { days: None, edges: vec![(from, to)] };
    }
    let edges = [(from, first), (last, to)].into_iter().filter(|(start, end)| start < end).collect();
    DaySplit { days: Some((first, last)), edges }
}

/// Half-open `[from, to)` in epoch milliseconds.
pub type Millis = (i64, i64);

/// A span as `day_split` cuts it.
#[derive(Debug, PartialEq, Eq)]
pub struct DaySplit {
    /// Its whole UTC days.
    pub days: Option<Millis>,
    /// The hours before and after them.
    pub edges: Vec<Millis>,
}

/// `YYYY-MM-DD` of the UTC day containing `ms`.
pub fn date(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default().format("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    use super::{DaySplit, day_split};

    const H: i64 = 3_600_000;
    const D: i64 = 24 * H;

    #[test]
    fn a_span_splits_into_whole_utc_days_and_the_hours_at_its_edges() {
        type Case = (&'static str, (i64, i64), Option<(i64, i64)>, Vec<(i64, i64)>);
        let cases: Vec<Case> = vec![
            ("whole days", (10 * D, 40 * D), Some((10 * D, 40 * D)), vec![]),
            (
                "hours on both sides",
                (10 * D - 5 * H, 40 * D + 3 * H),
                Some((10 * D, 40 * D)),
                vec![(10 * D - 5 * H, 10 * D), (40 * D, 40 * D + 3 * H)],
            ),
            (
                "a start on a day, an end inside one",
                (10 * D, 12 * D + H),
                Some((10 * D, 12 * D)),
                vec![(12 * D, 12 * D + H)],
            ),
            ("less than a day", (10 * D + H, 10 * D + 5 * H), None, vec![(10 * D + H, 10 * D + 5 * H)]),
            ("a day's width across midnight", (10 * D + H, 11 * D + H), None, vec![(10 * D + H, 11 * D + H)]),
            ("exactly one day", (10 * D, 11 * D), Some((10 * D, 11 * D)), vec![]),
            ("New York's day (UTC-5)", (10 * D + 5 * H, 11 * D + 5 * H), None, vec![(10 * D + 5 * H, 11 * D + 5 * H)]),
            (
                "New York's month",
                (10 * D + 5 * H, 40 * D + 4 * H),
                Some((11 * D, 40 * D)),
                vec![(10 * D + 5 * H, 11 * D), (40 * D, 40 * D + 4 * H)],
            ),
        ];
        for (name, (from, to), days, edges) in cases {
            assert_eq!(day_split(from, to), DaySplit { days, edges }, "{name}");
        }
    }
}
