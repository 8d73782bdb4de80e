//! When a digest is due (pure): a daily digest covers the previous local
//! day and goes out at 8:00 in the site's time zone; a weekly one covers
//! Monday to Sunday and goes out on Monday at 8:00. Only the latest period
//! whose time has come is due; a server that was down sends it late, once.

use chrono::{Datelike, Days, NaiveDate, TimeZone};
use chrono_tz::Tz;

/// The local hour digests go out.
pub const SEND_HOUR: u32 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frequency {
    Daily,
    Weekly,
}

impl Frequency {
    pub fn parse(value: &str) -> Option<Frequency> {
        match value {
            "daily" => Some(Frequency::Daily),
            "weekly" => Some(Frequency::Weekly),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Frequency::Daily => "daily",
            Frequency::Weekly => "weekly",
        }
    }

    fn days(self) -> u64 {
        match self {
            Frequency::Daily => 1,
            Frequency::Weekly => 7,
        }
    }
}

/// A period of whole local days, `start` included and `end` not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub start: NaiveDate,
    pub end: NaiveDate,
    /// When its digest goes out (UTC milliseconds): 8:00 local on `end`.
    pub send_at: i64,
}

impl Period {
    /// The period of the same length just before.
    pub fn previous(&self, zone: Tz) -> Period {
        let days = self.end.signed_duration_since(self.start).num_days().unsigned_abs();
        let start = self.start.checked_sub_days(Days::new(days)).unwrap_or(self.start);
        Period { start, end: self.start, send_at: send_at(zone, self.start) }
    }

    /// The last day included.
    pub fn last_day(&self) -> NaiveDate {
        self.end.pred_opt().unwrap_or(self.end)
    }
}

/// 8:00 on `day` in `zone`, in UTC milliseconds. Where a clock change skips
/// 8:00, the first moment after it.
pub fn send_at(zone: Tz, day: NaiveDate) -> i64 {
    (SEND_HOUR..24)
        .find_map(|hour| zone.from_local_datetime(&day.and_hms_opt(hour, 0, 0)?).earliest())
        .map_or(i64::MAX, |at| at.timestamp_millis())
}

/// The latest period whose digest time has come at `now`.
pub fn due(frequency: Frequency, zone: Tz, now: i64) -> Option<Period> {
    let today = chrono::DateTime::from_timestamp_millis(now)?.with_timezone(&zone).date_naive();
    let boundary = match frequency {
        Frequency::Daily => today,
        Frequency::Weekly => today.checked_sub_days(Days::new(u64::from(today.weekday().num_days_from_monday())))?,
    };
    let end = if now >= send_at(zone, boundary) {
        boundary
    } else {
        boundary.checked_sub_days(Days::new(frequency.days()))?
    };
    let start = end.checked_sub_days(Days::new(frequency.days()))?;
    Some(Period { start, end, send_at: send_at(zone, end) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(zone: Tz, text: &str) -> i64 {
        let local = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").expect("a local time");
        zone.from_local_datetime(&local).earliest().expect("exists").timestamp_millis()
    }

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").expect("a date")
    }

    #[test]
    fn the_latest_period_whose_local_eight_oclock_has_passed() {
        let utc = Tz::UTC;
        let new_york = Tz::America__New_York;
        let kolkata = Tz::Asia__Kolkata;
        // (frequency, zone, local now, period start, period end)
        let table = [
            (Frequency::Daily, utc, "2026-11-26 08:00", "2026-11-25", "2026-11-26"),
            (Frequency::Daily, utc, "2026-11-26 07:59", "2026-11-24", "2026-11-25"),
            (Frequency::Daily, utc, "2026-11-26 23:59", "2026-11-25", "2026-11-26"),
            (Frequency::Daily, new_york, "2026-11-26 08:30", "2026-11-25", "2026-11-26"),
            (Frequency::Daily, kolkata, "2026-01-01 09:00", "2025-12-31", "2026-01-01"),
            // 2026-11-26 is a Thursday: the week before Monday the 23rd.
            (Frequency::Weekly, utc, "2026-11-26 12:00", "2026-11-16", "2026-11-23"),
            (Frequency::Weekly, utc, "2026-11-23 08:00", "2026-11-16", "2026-11-23"),
            (Frequency::Weekly, utc, "2026-11-23 07:00", "2026-11-09", "2026-11-16"),
            (Frequency::Weekly, new_york, "2026-11-22 23:00", "2026-11-09", "2026-11-16"),
            // The day after clocks go back in New York (2026-11-01) is still 24 h of data.
            (Frequency::Daily, new_york, "2026-11-02 08:00", "2026-11-01", "2026-11-02"),
        ];
        for (frequency, zone, now, start, end) in table {
            let period = due(frequency, zone, at(zone, now)).expect("a period");
            assert_eq!((period.start, period.end), (day(start), day(end)), "{frequency:?} {zone} {now}");
            assert_eq!(period.send_at, at(zone, &format!("{end} 08:00")), "{frequency:?} {zone} {now}");
            assert!(period.send_at <= at(zone, now));
        }
    }

    #[test]
    fn the_previous_period_has_the_same_length() {
        let zone = Tz::Europe__Berlin;
        let weekly = due(Frequency::Weekly, zone, at(zone, "2026-11-26 12:00")).expect("a period");
        let before = weekly.previous(zone);
        assert_eq!((before.start, before.end), (day("2026-11-09"), day("2026-11-16")));
        let daily = due(Frequency::Daily, zone, at(zone, "2026-03-30 09:00")).expect("a period");
        assert_eq!(daily.previous(zone).start, day("2026-03-28"));
        assert_eq!(daily.last_day(), day("2026-03-29"));
    }
}
