//! When an alert is tried again (design §15): pure, so the schedule is tested
//! without a clock or a network.

use crate::time::{HOUR_MS, MINUTE_MS};

const SECOND_MS: i64 = 1_000;

/// The wait before each retry: the first retry comes 5 s after the first
/// attempt, the last 10 h after the one before it.
pub const BACKOFF_MS: [i64; 6] = [5 * SECOND_MS, 5 * MINUTE_MS, 30 * MINUTE_MS, 2 * HOUR_MS, 5 * HOUR_MS, 10 * HOUR_MS];
/// A `Retry-After` longer than the longest backoff is taken as the longest.
pub const MAX_RETRY_AFTER_MS: i64 = 10 * HOUR_MS;
/// A destination whose attempts have all failed for this long is turned off.
pub const DISABLE_AFTER_MS: i64 = 24 * HOUR_MS;
/// Two failures further apart than this are not one run: longer than the
/// longest wait between two attempts of one delivery (10 h and 20% jitter),
/// so a delivery retried on schedule keeps its destination's run going, while
/// a failure last week and one today do not make a day of failures.
pub const FAILURE_RUN_GAP_MS: i64 = 13 * HOUR_MS;

/// How one attempt went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Delivered,
    /// The receiver refused the request itself (4xx other than 408 and 429):
    /// sending the same request again cannot help.
    Refused,
    /// Anything else: no answer, a timeout, 408, 429, 5xx, a redirect.
    Failed,
}

pub fn classify(success: bool, status: Option<u16>) -> Class {
    match status {
        _ if success => Class::Delivered,
        Some(code) if (400..500).contains(&code) && code != 408 && code != 429 => Class::Refused,
        _ => Class::Failed,
    }
}

/// What follows an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Delivered,
    /// No more attempts: refused, or the retries are used up.
    GiveUp,
    RetryAt(i64),
}

/// `attempt` is the number of the attempt that just finished (1 for the
/// first). `jitter` in [0, 1) spreads retries of many deliveries over ±20%
/// of their backoff, so a receiver that comes back is not hit by all at once.
pub fn next(attempt: i32, class: Class, retry_after_ms: Option<i64>, jitter: f64, now: i64) -> Next {
    match class {
        Class::Delivered => Next::Delivered,
        Class::Refused => Next::GiveUp,
        Class::Failed => {
            let Some(&backoff) = usize::try_from(attempt - 1).ok().and_then(|index| BACKOFF_MS.get(index)) else {
                return Next::GiveUp;
            };
            let spread = (backoff as f64 * (0.8 + 0.4 * jitter.clamp(0.0, 1.0))) as i64;
            let asked = retry_after_ms.unwrap_or(0).clamp(0, MAX_RETRY_AFTER_MS);
            Next::RetryAt(now + spread.max(asked))
        }
    }
}

/// A `Retry-After` value: seconds, or an HTTP date in any of the three forms
/// RFC 9110 makes receivers accept, as milliseconds from `now`.
pub fn parse_retry_after(value: &str, now: i64) -> Option<i64> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<i64>() {
        return (seconds >= 0).then(|| seconds.saturating_mul(SECOND_MS));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    let at = chrono::DateTime::<chrono::Utc>::from(at).timestamp_millis();
    Some((at - now).max(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_answers() {
        let cases = [
            (true, Some(200), Class::Delivered),
            (true, Some(204), Class::Delivered),
            (false, Some(400), Class::Refused),
            (false, Some(404), Class::Refused),
            (false, Some(410), Class::Refused),
            (false, Some(408), Class::Failed),
            (false, Some(429), Class::Failed),
            (false, Some(500), Class::Failed),
            (false, Some(503), Class::Failed),
            (false, Some(302), Class::Failed),
            // Slack's 200 without "ok" is a failure worth retrying.
            (false, Some(200), Class::Failed),
            (false, None, Class::Failed),
        ];
        for (success, status, class) in cases {
            assert_eq!(classify(success, status), class, "{success} {status:?}");
        }
    }

    #[test]
    fn schedules_retries() {
        let now = 1_000_000;
        let cases = [
            // attempt, class, retry-after, jitter, next
            (1, Class::Delivered, None, 0.5, Next::Delivered),
            (1, Class::Refused, None, 0.5, Next::GiveUp),
            (1, Class::Failed, None, 0.5, Next::RetryAt(now + 5_000)),
            (1, Class::Failed, None, 0.0, Next::RetryAt(now + 4_000)),
            (1, Class::Failed, None, 1.0, Next::RetryAt(now + 6_000)),
            (2, Class::Failed, None, 0.5, Next::RetryAt(now + 5 * MINUTE_MS)),
            (3, Class::Failed, None, 0.5, Next::RetryAt(now + 30 * MINUTE_MS)),
            (4, Class::Failed, None, 0.5, Next::RetryAt(now + 2 * HOUR_MS)),
            (5, Class::Failed, None, 0.5, Next::RetryAt(now + 5 * HOUR_MS)),
            (6, Class::Failed, None, 0.5, Next::RetryAt(now + 10 * HOUR_MS)),
            (7, Class::Failed, None, 0.5, Next::GiveUp),
            // Retry-After is honoured when it asks for longer, capped at 10 h.
            (1, Class::Failed, Some(60_000), 0.5, Next::RetryAt(now + 60_000)),
            (1, Class::Failed, Some(1_000), 0.5, Next::RetryAt(now + 5_000)),
            (1, Class::Failed, Some(100 * HOUR_MS), 0.5, Next::RetryAt(now + 10 * HOUR_MS)),
            (1, Class::Failed, Some(-5), 0.5, Next::RetryAt(now + 5_000)),
            (0, Class::Failed, None, 0.5, Next::GiveUp),
        ];
        for (attempt, class, retry_after, jitter, expected) in cases {
            assert_eq!(next(attempt, class, retry_after, jitter, now), expected, "attempt {attempt} {class:?}");
        }
    }

    #[test]
    fn parses_retry_after() {
        let now = chrono::DateTime::parse_from_rfc2822("Mon, 23 Nov 2026 10:00:00 GMT").unwrap().timestamp_millis();
        let cases = [
            ("120", Some(120_000)),
            (" 0 ", Some(0)),
            ("-1", None),
            ("soon", None),
            ("", None),
            ("Mon, 23 Nov 2026 10:01:30 GMT", Some(90_000)),
            ("Mon, 23 Nov 2026 09:00:00 GMT", Some(0)),
            // RFC 850 and asctime, the obsolete forms a receiver must still accept.
            ("Monday, 23-Nov-26 10:02:00 GMT", Some(120_000)),
            ("Mon Nov 23 10:00:05 2026", Some(5_000)),
        ];
        for (value, expected) in cases {
            assert_eq!(parse_retry_after(value, now), expected, "{value:?}");
        }
    }
}
