//! Where a query's date range lies and how its `time` buckets fall, in the
//! site's time zone (design §17). Pure: given the zone and the clock, a
//! range is two instants and a bucket is an integer SQL can compute from a
//! timestamp, so days, weeks and months follow the zone's midnights, DST
//! changes included.

use chrono::{DateTime, Datelike, Days, Months, NaiveDate, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

use super::query::{Comparison, DateRange, Grain};
use crate::time::{DAY_MS, HOUR_MS, MINUTE_MS};

/// A range placed on the clock: `[from, to)` in epoch milliseconds, with
/// the local dates it spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub from: i64,
    pub to: i64,
    /// The local date of `from`, and of the last instant before `to`.
    pub first_day: NaiveDate,
    pub last_day: NaiveDate,
    /// Whether the range was given in whole days (dates, `7d`, `month`...),
    /// not instants (`24h`, datetimes).
    pub whole_days: bool,
}

/// The first instant of a local date: its midnight, or where the day
/// begins when midnight falls in a DST gap.
pub fn start_of_day(zone: Tz, date: NaiveDate) -> i64 {
    let midnight = date.and_hms_opt(0, 0, 0).unwrap_or_default();
    for minutes in 0..=(24 * 60) {
        let local = midnight + chrono::Duration::minutes(minutes);
        if let Some(instant) = zone.from_local_datetime(&local).earliest() {
            return instant.timestamp_millis();
        }
    }
    midnight.and_utc().timestamp_millis()
}

pub fn local(zone: Tz, ms: i64) -> NaiveDateTime {
    let utc = DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default();
    utc.with_timezone(&zone).naive_local()
}

fn days_span(zone: Tz, first: NaiveDate, last: NaiveDate) -> Span {
    let to = start_of_day(zone, last.checked_add_days(Days::new(1)).unwrap_or(last));
    Span { from: start_of_day(zone, first), to, first_day: first, last_day: last, whole_days: true }
}

fn instants_span(zone: Tz, from: i64, to: i64) -> Span {
    let last = local(zone, (to - 1).max(from)).date();
    Span { from, to, first_day: local(zone, from).date(), last_day: last, whole_days: false }
}

fn month_start(date: NaiveDate) -> NaiveDate {
    date.with_day(1).unwrap_or(date)
}

/// Places a range. `first_event` is the site's oldest stored event, for `all`.
pub fn resolve(range: &DateRange, zone: Tz, now: i64, first_event: Option<i64>) -> Span {
    let today = local(zone, now).date();
    match range {
        DateRange::Day => days_span(zone, today, today),
        DateRange::Hours24 => instants_span(zone, now - 24 * HOUR_MS, now),
        // The n days ending today, today included (what "last 7 days" shows a
        // person looking at today's traffic).
        DateRange::Days(n) => {
            let first = today.checked_sub_days(Days::new(u64::from(*n) - 1)).unwrap_or(today);
            days_span(zone, first, today)
        }
        // The n calendar months ending with this one.
        DateRange::Months(n) => {
            let this_month = month_start(today);
            let first = this_month.checked_sub_months(Months::new(*n - 1)).unwrap_or(this_month);
            let next = this_month.checked_add_months(Months::new(1)).unwrap_or(this_month);
            days_span(zone, first, next.pred_opt().unwrap_or(this_month))
        }
        DateRange::Month => {
            let first = month_start(today);
            let next = first.checked_add_months(Months::new(1)).unwrap_or(first);
            days_span(zone, first, next.pred_opt().unwrap_or(first))
        }
        DateRange::Year => {
            let first = NaiveDate::from_ymd_opt(today.year(), 1, 1).unwrap_or(today);
            days_span(zone, first, NaiveDate::from_ymd_opt(today.year(), 12, 31).unwrap_or(today))
        }
        DateRange::All => {
            let first = first_event.map(|ms| local(zone, ms).date()).unwrap_or(today).min(today);
            days_span(zone, first, today)
        }
        DateRange::Dates(first, last) => days_span(zone, *first, *last),
        DateRange::Instants(from, to) => instants_span(zone, from.timestamp_millis(), to.timestamp_millis() + 1),
    }
}

/// The span the comparison figures are measured over: the same length just
/// before (previous period), a year earlier, or the dates asked for.
pub fn comparison(span: Span, mode: &Comparison, zone: Tz) -> Span {
    match mode {
        Comparison::PreviousPeriod if span.whole_days => {
            let days = (span.last_day - span.first_day).num_days() + 1;
            let last = span.first_day.pred_opt().unwrap_or(span.first_day);
            let first = span.first_day.checked_sub_days(Days::new(days as u64)).unwrap_or(span.first_day);
            days_span(zone, first, last)
        }
        Comparison::PreviousPeriod => instants_span(zone, span.from - (span.to - span.from), span.from),
        Comparison::YearOverYear if span.whole_days => {
            let back = |date: NaiveDate| date.checked_sub_months(Months::new(12)).unwrap_or(date);
            days_span(zone, back(span.first_day), back(span.last_day))
        }
        Comparison::YearOverYear => instants_span(zone, span.from - 365 * DAY_MS, span.to - 365 * DAY_MS),
        Comparison::Custom(first, last) => days_span(zone, *first, *last),
    }
}

/// The grain of a bare `time` dimension, by the range's length (Plausible's
/// rule): hours up to 48 hours, days up to 40 days, weeks up to 52 weeks,
/// months beyond.
pub fn auto_grain(span: Span) -> Grain {
    let length = span.to - span.from;
    if length <= 48 * HOUR_MS {
        Grain::Hour
    } else if length <= 41 * DAY_MS {
        Grain::Day
    } else if length <= 53 * 7 * DAY_MS {
        Grain::Week
    } else {
        Grain::Month
    }
}

/// How a timestamp column becomes a bucket number, and a bucket number a
/// label, for one grain over one span.
#[derive(Debug, Clone)]
pub struct Buckets {
    pub grain: Grain,
    /// The zone's UTC offset in ms from each instant on: the first applies
    /// before the second's instant, and so on; the last applies after.
    offsets: Vec<(i64, i64)>,
    /// For months: the local day numbers (days since 1970-01-01) each
    /// month of the span starts on.
    month_days: Vec<i64>,
    first_day: NaiveDate,
}

fn offset_at(zone: Tz, ms: i64) -> i64 {
    use chrono::Offset;
    let utc = DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default();
    i64::from(zone.offset_from_utc_datetime(&utc.naive_utc()).fix().local_minus_utc()) * 1000
}

fn day_number(date: NaiveDate) -> i64 {
    (date - NaiveDate::default()).num_days()
}

fn date_of(day: i64) -> NaiveDate {
    NaiveDate::default().checked_add_signed(chrono::Duration::days(day)).unwrap_or_default()
}

impl Buckets {
    pub fn new(grain: Grain, span: Span, zone: Tz) -> Self {
        // Offsets change at most a few times a year, months apart; sampled
        // every six hours, each change is then found to the millisecond.
        let mut offsets = vec![(span.from, offset_at(zone, span.from))];
        let step = 6 * HOUR_MS;
        let mut at = span.from;
        while at < span.to {
            let next = (at + step).min(span.to);
            let before = offsets.last().map(|(_, offset)| *offset).unwrap_or_default();
            if offset_at(zone, next) != before {
                let (mut low, mut high) = (at, next);
                while high - low > 1 {
                    let middle = low + (high - low) / 2;
                    if offset_at(zone, middle) == before { low = middle } else { high = middle }
                }
                offsets.push((high, offset_at(zone, high)));
            }
            at = next;
        }
        let mut month_days = Vec::new();
        let mut month = month_start(span.first_day);
        while month <= span.last_day {
            month_days.push(day_number(month));
            month = month.checked_add_months(Months::new(1)).unwrap_or(NaiveDate::MAX);
        }
        Buckets { grain, offsets, month_days, first_day: span.first_day }
    }

    /// Whether every bucket edge is a UTC hour: the zone's offsets are whole
    /// hours and change on an hour (so hourly rollups hold each bucket).
    pub fn hour_aligned(&self) -> bool {
        let whole = |ms: i64| ms.rem_euclid(HOUR_MS) == 0;
        self.offsets.iter().all(|(_, offset)| whole(*offset))
            && self.offsets.iter().skip(1).all(|(instant, _)| whole(*instant))
    }

    /// The local time of `column` (epoch ms), as SQL.
    fn local_sql(&self, column: &str) -> String {
        match self.offsets.as_slice() {
            [(_, offset)] => format!("({column} + {offset})"),
            _ => {
                let mut sql = format!("({column} + CASE");
                for pair in self.offsets.windows(2) {
                    sql.push_str(&format!(" WHEN {column} < {} THEN {}", pair[1].0, pair[0].1));
                }
                let last = self.offsets.last().map(|(_, offset)| *offset).unwrap_or_default();
                sql.push_str(&format!(" ELSE {last} END)"));
                sql
            }
        }
    }

    /// The bucket number of `column` as SQL: integer arithmetic both
    /// databases share (timestamps are positive, so division truncates down).
    pub fn sql(&self, column: &str) -> String {
        let local = self.local_sql(column);
        let bucket = match self.grain {
            Grain::Hour => format!("({local} / {HOUR_MS})"),
            Grain::Day => format!("({local} / {DAY_MS})"),
            // 1970-01-01 was a Thursday: shifting by 3 days starts weeks on Monday.
            Grain::Week => format!("(({local} / {DAY_MS} + 3) / 7)"),
            // One month: every row is in the first bucket (a CASE needs a WHEN).
            Grain::Month if self.month_days.len() <= 1 => "0".to_owned(),
            Grain::Month => {
                let day = format!("({local} / {DAY_MS})");
                let mut sql = String::from("(CASE");
                for (index, start) in self.month_days.iter().enumerate().skip(1) {
                    sql.push_str(&format!(" WHEN {day} < {start} THEN {}", index - 1));
                }
                sql.push_str(&format!(" ELSE {} END)", self.month_days.len().saturating_sub(1)));
                sql
            }
        };
        // PostgreSQL types small literals as INTEGER; buckets are read as BIGINT.
        format!("CAST({bucket} AS BIGINT)")
    }

    /// The bucket number of one instant, as `sql` computes it.
    pub fn of(&self, ms: i64) -> i64 {
        let offset = self.offsets.iter().rev().find(|(from, _)| ms >= *from).or(self.offsets.first());
        let local = ms + offset.map(|(_, offset)| *offset).unwrap_or_default();
        match self.grain {
            Grain::Hour => local / HOUR_MS,
            Grain::Day => local / DAY_MS,
            Grain::Week => (local / DAY_MS + 3) / 7,
            Grain::Month => {
                let day = local / DAY_MS;
                self.month_days.iter().skip(1).position(|start| day < *start).unwrap_or(self.month_days.len() - 1)
                    as i64
            }
        }
    }

    /// What a bucket is called: `2024-01-01 05:00:00` for an hour, the date
    /// of a day, of a week's Monday (the range's first day for a partial
    /// first week) or of a month's first day.
    pub fn label(&self, bucket: i64) -> String {
        match self.grain {
            Grain::Hour => DateTime::<Utc>::from_timestamp_millis(bucket * HOUR_MS)
                .unwrap_or_default()
                .naive_utc()
                .format("%Y-%m-%d %H:%M:%S")
                .to_string(),
            Grain::Day => date_of(bucket).to_string(),
            Grain::Week => date_of(bucket * 7 - 3).max(self.first_day).to_string(),
            Grain::Month => {
                let start = usize::try_from(bucket).ok().and_then(|at| self.month_days.get(at)).copied();
                date_of(start.unwrap_or_default()).to_string()
            }
        }
    }

    /// About how many buckets the span holds (at least as many as `all`).
    pub fn count(&self, span: Span) -> i64 {
        let length = span.to - span.from;
        match self.grain {
            Grain::Hour => length / HOUR_MS + 2,
            Grain::Day => length / DAY_MS + 2,
            Grain::Week => length / (7 * DAY_MS) + 2,
            Grain::Month => self.month_days.len() as i64,
        }
    }

    /// Every bucket of the span, in order.
    pub fn all(&self, span: Span) -> Vec<i64> {
        if span.to <= span.from {
            return Vec::new();
        }
        if self.grain != Grain::Hour {
            return (self.of(span.from)..=self.of(span.to - 1)).collect();
        }
        // A local hour that a DST change skips has no instant, so no bucket:
        // walk real time (in quarter hours, for zones offset by 15 or 30
        // minutes) and keep each bucket once.
        let mut buckets: Vec<i64> = Vec::new();
        let mut at = span.from;
        while at < span.to {
            let bucket = self.of(at);
            if buckets.last() != Some(&bucket) {
                buckets.push(bucket);
            }
            at += 15 * MINUTE_MS;
        }
        let last = self.of(span.to - 1);
        if buckets.last() != Some(&last) {
            buckets.push(last);
        }
        buckets.dedup();
        buckets
    }

    /// Each bucket of a span whose bucket edges are UTC hours
    /// (`hour_aligned`, and `span.from` on an hour) with its own span:
    /// `(bucket, from, to)`, in order, together covering the span once.
    pub fn hour_spans(&self, span: Span) -> Vec<(i64, i64, i64)> {
        let mut spans: Vec<(i64, i64, i64)> = Vec::new();
        let mut at = span.from;
        while at < span.to {
            let bucket = self.of(at);
            match spans.last_mut() {
                Some(last) if last.0 == bucket => last.2 = (at + HOUR_MS).min(span.to),
                _ => spans.push((bucket, at, (at + HOUR_MS).min(span.to))),
            }
            at += HOUR_MS;
        }
        spans
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(text: &str) -> NaiveDate {
        text.parse().expect("date")
    }

    fn ms(text: &str) -> i64 {
        DateTime::parse_from_rfc3339(text).expect("instant").timestamp_millis()
    }

    #[test]
    fn named_ranges_follow_the_zone() {
        let berlin: Tz = "Europe/Berlin".parse().expect("zone");
        // 2021-05-05 10:00 in Berlin.
        let now = ms("2021-05-05T08:00:00Z");
        let cases: [(DateRange, &str, &str); 7] = [
            (DateRange::Day, "2021-05-05", "2021-05-05"),
            (DateRange::Days(7), "2021-04-29", "2021-05-05"),
            (DateRange::Days(30), "2021-04-06", "2021-05-05"),
            (DateRange::Months(6), "2020-12-01", "2021-05-31"),
            (DateRange::Month, "2021-05-01", "2021-05-31"),
            (DateRange::Year, "2021-01-01", "2021-12-31"),
            (DateRange::All, "2021-03-02", "2021-05-05"),
        ];
        for (range, first, last) in cases {
            let span = resolve(&range, berlin, now, Some(ms("2021-03-02T12:00:00Z")));
            assert_eq!((span.first_day, span.last_day), (date(first), date(last)), "{range:?}");
        }
        let day = resolve(&DateRange::Day, berlin, now, None);
        assert_eq!(day.from, ms("2021-05-04T22:00:00Z"));
        assert_eq!(day.to, ms("2021-05-05T22:00:00Z"));
        let hours = resolve(&DateRange::Hours24, berlin, now, None);
        assert_eq!((hours.from, hours.to), (now - 24 * HOUR_MS, now));
    }

    #[test]
    fn a_dst_day_has_23_hours_and_buckets_follow_midnights() {
        let berlin: Tz = "Europe/Berlin".parse().expect("zone");
        let span = days_span(berlin, date("2024-03-30"), date("2024-04-01"));
        assert_eq!(span.from, ms("2024-03-29T23:00:00Z"));
        assert_eq!(span.to, ms("2024-04-01T22:00:00Z"));
        let days = Buckets::new(Grain::Day, span, berlin);
        let cases = [
            ("2024-03-29T23:00:00Z", "2024-03-30"),
            ("2024-03-30T22:59:59Z", "2024-03-30"),
            ("2024-03-30T23:00:00Z", "2024-03-31"),
            ("2024-03-31T21:59:59Z", "2024-03-31"),
            ("2024-03-31T22:00:00Z", "2024-04-01"),
        ];
        for (instant, label) in cases {
            assert_eq!(days.label(days.of(ms(instant))), label, "{instant}");
        }
        assert_eq!(
            days.all(span).into_iter().map(|b| days.label(b)).collect::<Vec<_>>(),
            ["2024-03-30", "2024-03-31", "2024-04-01"]
        );
        let hours = Buckets::new(Grain::Hour, span, berlin);
        assert_eq!(hours.all(span).len(), 24 + 23 + 24);
        assert_eq!(hours.label(hours.of(ms("2024-03-31T01:30:00Z"))), "2024-03-31 03:00:00");
    }

    #[test]
    fn each_bucket_has_its_own_hours() {
        let berlin: Tz = "Europe/Berlin".parse().expect("zone");
        // Three Berlin days around the spring change (23 hours on the 31st),
        // and a span ending inside an hour.
        let span = days_span(berlin, date("2024-03-30"), date("2024-04-01"));
        let cut = Span { to: span.to - 30 * MINUTE_MS, ..span };
        let days = Buckets::new(Grain::Day, span, berlin);
        let weeks = Buckets::new(Grain::Week, span, berlin);
        type Case<'a> = (&'a str, &'a Buckets, Span, Vec<(&'a str, &'a str, &'a str)>);
        let cases: [Case<'_>; 3] = [
            (
                "days",
                &days,
                span,
                vec![
                    ("2024-03-30", "2024-03-29T23:00:00Z", "2024-03-30T23:00:00Z"),
                    ("2024-03-31", "2024-03-30T23:00:00Z", "2024-03-31T22:00:00Z"),
                    ("2024-04-01", "2024-03-31T22:00:00Z", "2024-04-01T22:00:00Z"),
                ],
            ),
            (
                "days, the last cut",
                &days,
                cut,
                vec![
                    ("2024-03-30", "2024-03-29T23:00:00Z", "2024-03-30T23:00:00Z"),
                    ("2024-03-31", "2024-03-30T23:00:00Z", "2024-03-31T22:00:00Z"),
                    ("2024-04-01", "2024-03-31T22:00:00Z", "2024-04-01T21:30:00Z"),
                ],
            ),
            (
                "weeks",
                &weeks,
                span,
                vec![
                    ("2024-03-30", "2024-03-29T23:00:00Z", "2024-03-31T22:00:00Z"),
                    ("2024-04-01", "2024-03-31T22:00:00Z", "2024-04-01T22:00:00Z"),
                ],
            ),
        ];
        for (name, buckets, span, expected) in cases {
            let spans: Vec<(String, i64, i64)> =
                buckets.hour_spans(span).into_iter().map(|(b, from, to)| (buckets.label(b), from, to)).collect();
            let expected: Vec<(String, i64, i64)> =
                expected.into_iter().map(|(label, from, to)| (label.to_owned(), ms(from), ms(to))).collect();
            assert_eq!(spans, expected, "{name}");
        }
    }

    #[test]
    fn weeks_start_on_monday_and_months_on_the_first() {
        let span = days_span(Tz::UTC, date("2020-12-20"), date("2021-01-07"));
        let weeks = Buckets::new(Grain::Week, span, Tz::UTC);
        let labels: Vec<String> = weeks.all(span).into_iter().map(|b| weeks.label(b)).collect();
        assert_eq!(labels, ["2020-12-20", "2020-12-21", "2020-12-28", "2021-01-04"]);
        let span = days_span(Tz::UTC, date("2020-11-15"), date("2021-02-03"));
        let months = Buckets::new(Grain::Month, span, Tz::UTC);
        let labels: Vec<String> = months.all(span).into_iter().map(|b| months.label(b)).collect();
        assert_eq!(labels, ["2020-11-01", "2020-12-01", "2021-01-01", "2021-02-01"]);
        assert_eq!(months.label(months.of(ms("2020-12-31T23:59:59Z"))), "2020-12-01");
    }

    #[test]
    fn comparisons_and_grains() {
        let span = days_span(Tz::UTC, date("2024-01-08"), date("2024-01-14"));
        let previous = comparison(span, &Comparison::PreviousPeriod, Tz::UTC);
        assert_eq!((previous.first_day, previous.last_day), (date("2024-01-01"), date("2024-01-07")));
        let yoy = comparison(span, &Comparison::YearOverYear, Tz::UTC);
        assert_eq!(yoy.first_day, date("2023-01-08"));
        assert_eq!(auto_grain(span), Grain::Day);
        assert_eq!(auto_grain(days_span(Tz::UTC, date("2024-01-08"), date("2024-01-08"))), Grain::Hour);
        assert_eq!(auto_grain(days_span(Tz::UTC, date("2024-01-01"), date("2024-03-31"))), Grain::Week);
        assert_eq!(auto_grain(days_span(Tz::UTC, date("2023-01-01"), date("2024-03-31"))), Grain::Month);
    }
}
