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

/// `YYYY-MM-DD` of the UTC day containing `ms`.
pub fn date(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default().format("%Y-%m-%d").to_string()
}
