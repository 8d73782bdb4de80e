//! The writer's per-value and per-page rollups (`value_hours`,
//! `visitor_values`, `page_hours`, their daily sums, the active hours)
//! recounted by hand from the raw rows, and read back as stored, so a test
//! compares the two whole. The dimension codes are the stored contract
//! (design §17), written out here on purpose.

use std::collections::{BTreeMap, BTreeSet};

use entity::tracked_session;
use sea_orm::{ConnectionTrait, DbBackend, Statement};

use super::{TestApp, explore_recount::Rows};

const HOUR_MS: i64 = 3_600_000;
/// A `value_hours` row: (dimension code, value, hour).
pub type HourKey = (i16, String, i64);
/// Its visits, bounces, pageviews, events and seconds.
pub type HourTally = [i64; 5];
/// A `visitor_values` row: (visitor id, dimension code, value).
pub type VisitorKey = (i64, i16, String);

fn hour(ms: i64) -> i64 {
    ms.div_euclid(HOUR_MS) * HOUR_MS
}

/// The start of the UTC day of `ms`.
fn day(ms: i64) -> i64 {
    ms.div_euclid(24 * HOUR_MS) * 24 * HOUR_MS
}

/// A visit's value for each visit dimension code (0 is the whole site).
fn visit_values(s: &tracked_session::Model) -> Vec<(i16, String)> {
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    vec![
        (0, String::new()),
        (1, text(&s.source)),
        (2, text(&s.referrer)),
        (3, s.channel.clone()),
        (4, text(&s.utm_source)),
        (5, text(&s.utm_medium)),
        (6, text(&s.utm_campaign)),
        (7, text(&s.utm_content)),
        (8, text(&s.utm_term)),
        (9, text(&s.device_type)),
        (10, text(&s.browser)),
        (11, text(&s.os)),
        (12, text(&s.country)),
        (13, text(&s.region)),
        (14, text(&s.city)),
        (15, text(&s.entry_page)),
        (16, text(&s.exit_page)),
    ]
}

/// A visitor's value for each visitor dimension code: status (20) and
/// account (21, blank for none).
fn visitor_dimension_values(rows: &Rows, visitor_id: i64) -> Vec<(i16, String)> {
    let v = &rows.visitors[&visitor_id];
    vec![(20, v.status.clone()), (21, v.account_key.clone().unwrap_or_default())]
}

/// A custom event's name with its visit's value for each code that pairs
/// them (source, channel, UTM source, medium, campaign: 100 + the visit
/// dimension's code): the name's length in characters, `:`, the name, the
/// value. None for a pageview.
fn name_by_values(e: &entity::event::Model, s: &tracked_session::Model) -> Vec<(i16, String)> {
    if e.event_type != "custom_event" {
        return Vec::new();
    }
    let prefix = format!("{}:{}", e.event_name.chars().count(), e.event_name);
    visit_values(s)
        .into_iter()
        .filter(|(code, _)| [1, 3, 4, 5, 6].contains(code))
        .map(|(code, value)| (100 + code, format!("{prefix}{value}")))
        .collect()
}

/// `value_hours` as the rows say it should be: each visit with a human
/// event at the hour it began, per visit dimension and its visitor's
/// status and account (20, 21), and at each hour it has
/// a human event in (19); each human event at
/// its own hour by name (17, pages, is `page_hours`), and each custom event
/// by name with its visit's values.
pub fn hours_of(rows: &Rows) -> BTreeMap<HourKey, HourTally> {
    let mut hours: BTreeMap<HourKey, HourTally> = BTreeMap::new();
    for s in rows.sessions.values() {
        let human: Vec<_> = rows.events.iter().filter(|e| e.session_id == s.id && !e.is_bot).collect();
        if human.is_empty() {
            continue;
        }
        let pageviews = human.iter().filter(|e| e.event_type == "pageview").count() as i64;
        let tally = [1, i64::from(s.event_count <= 1), pageviews, human.len() as i64, s.duration_seconds];
        for (code, value) in visit_values(s).into_iter().chain(visitor_dimension_values(rows, s.visitor_id)) {
            let row = hours.entry((code, value, hour(s.started_at))).or_default();
            row.iter_mut().zip(tally).for_each(|(stored, added)| *stored += added);
        }
        // 19: the visit at each hour it has a human event in, by the one
        // before it (0 for none), with its visit, bounce and seconds.
        let active: BTreeSet<i64> = human.iter().map(|e| hour(e.timestamp)).collect();
        let mut previous = 0;
        for at in active {
            let row = hours.entry((19, previous.to_string(), at)).or_default();
            row.iter_mut().zip([tally[0], tally[1], 0, 0, tally[4]]).for_each(|(stored, added)| *stored += added);
            previous = at;
        }
    }
    for e in rows.events.iter().filter(|e| !e.is_bot) {
        let name = if e.event_type == "pageview" { "pageview".to_owned() } else { e.event_name.clone() };
        let row = hours.entry((18, name, hour(e.timestamp))).or_default();
        row[2] += i64::from(e.event_type == "pageview");
        row[3] += 1;
        for (code, value) in name_by_values(e, &rows.sessions[&e.session_id]) {
            hours.entry((code, value, hour(e.timestamp))).or_default()[3] += 1;
        }
    }
    hours
}

/// `visitor_values` as the rows say it should be: per visitor and value of
/// the visit dimensions (entry and exit pages as the visits hold them now),
/// the visitor's status and account as they are now (20, 21), pages (17)
/// and names (18), the hour of their latest human event with it.
pub fn visitor_values_of(rows: &Rows) -> BTreeMap<VisitorKey, i64> {
    let mut latest: BTreeMap<VisitorKey, i64> = BTreeMap::new();
    for e in rows.events.iter().filter(|e| !e.is_bot) {
        let s = &rows.sessions[&e.session_id];
        let name = if e.event_type == "pageview" { "pageview".to_owned() } else { e.event_name.clone() };
        let mut values: Vec<(i16, String)> = visit_values(s).into_iter().filter(|(code, _)| *code <= 16).collect();
        values.extend(visitor_dimension_values(rows, e.visitor_id));
        values.push((17, e.page.clone()));
        values.push((18, name));
        values.extend(name_by_values(e, s));
        for (code, value) in values {
            let at = latest.entry((e.visitor_id, code, value)).or_insert(i64::MIN);
            *at = (*at).max(hour(e.timestamp));
        }
    }
    latest
}

async fn query(app: &TestApp, sql: &str, site: i64) -> Vec<sea_orm::QueryResult> {
    let db = &app.state.db;
    let backend = db.get_database_backend();
    let sql = if backend == DbBackend::Postgres { sql.replace('?', "$1") } else { sql.to_owned() };
    db.query_all_raw(Statement::from_sql_and_values(backend, sql, [site.into()])).await.unwrap()
}

/// The site's `value_hours` rows as stored, without those that add nothing.
pub async fn stored_hours(app: &TestApp, site: i64) -> BTreeMap<HourKey, HourTally> {
    stored_tallies(app, site, "value_hours", "hour").await
}

/// A table of value tallies (`value_hours`, `value_days`) as stored, keyed
/// by `time` (its hour or day column), without rows that add nothing.
async fn stored_tallies(app: &TestApp, site: i64, table: &str, time: &str) -> BTreeMap<HourKey, HourTally> {
    let sql = format!(
        "SELECT dimension, value, {time} AS hour, visits, bounces, pageviews, events, seconds \
         FROM {table} WHERE site_id = ?"
    );
    let mut stored = BTreeMap::new();
    for row in query(app, &sql, site).await {
        let tally: HourTally = ["visits", "bounces", "pageviews", "events", "seconds"]
            .map(|column| row.try_get::<i64>("", column).unwrap());
        if tally != [0; 5] {
            let key = (
                row.try_get::<i16>("", "dimension").unwrap(),
                row.try_get("", "value").unwrap(),
                row.try_get("", "hour").unwrap(),
            );
            stored.insert(key, tally);
        }
    }
    stored
}

/// The site's `visitor_values` rows as stored.
pub async fn stored_visitor_values(app: &TestApp, site: i64) -> BTreeMap<VisitorKey, i64> {
    let sql = "SELECT visitor_id, dimension, value, last_hour FROM visitor_values WHERE site_id = ?";
    let mut stored = BTreeMap::new();
    for row in query(app, sql, site).await {
        let key = (
            row.try_get("", "visitor_id").unwrap(),
            row.try_get::<i16>("", "dimension").unwrap(),
            row.try_get("", "value").unwrap(),
        );
        stored.insert(key, row.try_get("", "last_hour").unwrap());
    }
    stored
}

/// The site's `value_visitor_hours` rows as stored, without empty ones.
pub async fn stored_visitor_counts(app: &TestApp, site: i64) -> BTreeMap<HourKey, i64> {
    stored_counts(app, site, "value_visitor_hours", "hour").await
}

/// A table of visitor counts (`value_visitor_hours`, `value_visitor_days`)
/// as stored, keyed by `time`, without empty rows.
async fn stored_counts(app: &TestApp, site: i64, table: &str, time: &str) -> BTreeMap<HourKey, i64> {
    let sql = format!("SELECT dimension, value, {time} AS hour, visitors FROM {table} WHERE site_id = ?");
    let mut stored = BTreeMap::new();
    for row in query(app, &sql, site).await {
        let visitors: i64 = row.try_get("", "visitors").unwrap();
        if visitors != 0 {
            let key = (
                row.try_get::<i16>("", "dimension").unwrap(),
                row.try_get("", "value").unwrap(),
                row.try_get("", "hour").unwrap(),
            );
            stored.insert(key, visitors);
        }
    }
    stored
}

/// `page_hours` and `page_days` as the rows say they should be: each human
/// event at its page, by `start` (its hour or its day): (pageviews, events).
fn pages_of(rows: &Rows, start: fn(i64) -> i64) -> BTreeMap<(String, i64), (i64, i64)> {
    let mut pages: BTreeMap<(String, i64), (i64, i64)> = BTreeMap::new();
    for e in rows.events.iter().filter(|e| !e.is_bot) {
        let row = pages.entry((e.page.clone(), start(e.timestamp))).or_default();
        row.0 += i64::from(e.event_type == "pageview");
        row.1 += 1;
    }
    pages
}

/// A page rollup table as stored: (page, hour or day) → (pageviews, events).
async fn stored_pages(app: &TestApp, site: i64, table: &str, time: &str) -> BTreeMap<(String, i64), (i64, i64)> {
    let sql = format!("SELECT page, {time} AS at, pageviews, events FROM {table} WHERE site_id = ?");
    let mut stored = BTreeMap::new();
    for row in query(app, &sql, site).await {
        let key = (row.try_get("", "page").unwrap(), row.try_get("", "at").unwrap());
        stored.insert(key, (row.try_get("", "pageviews").unwrap(), row.try_get("", "events").unwrap()));
    }
    stored
}

/// Asserts the rollups equal their recount from the rows.
pub async fn assert_rollups_match(app: &TestApp, site: i64, rows: &Rows, label: &str) {
    assert_eq!(stored_pages(app, site, "page_hours", "hour").await, pages_of(rows, hour), "{label}: page_hours");
    assert_eq!(stored_pages(app, site, "page_days", "day").await, pages_of(rows, day), "{label}: page_days");
    let (expected, stored) = (hours_of(rows), stored_hours(app, site).await);
    for (key, tally) in &expected {
        assert_eq!(stored.get(key), Some(tally), "{label}: value_hours {key:?}");
    }
    assert_eq!(stored.len(), expected.len(), "{label}: value_hours rows beyond the recount");
    let mut days: BTreeMap<HourKey, HourTally> = BTreeMap::new();
    for ((code, value, hour), tally) in &expected {
        let day = days.entry((*code, value.clone(), day(*hour))).or_default();
        (0..5).for_each(|column| day[column] += tally[column]);
    }
    days.retain(|_, tally| *tally != [0; 5]);
    assert_eq!(stored_tallies(app, site, "value_days", "day").await, days, "{label}: value_days");
    let (expected, stored) = (visitor_values_of(rows), stored_visitor_values(app, site).await);
    for (key, hour) in &expected {
        assert_eq!(stored.get(key), Some(hour), "{label}: visitor_values {key:?}");
    }
    assert_eq!(stored.len(), expected.len(), "{label}: visitor_values rows beyond the recount");
    let mut counts: BTreeMap<HourKey, i64> = BTreeMap::new();
    for ((_, code, value), hour) in expected {
        *counts.entry((code, value, hour)).or_default() += 1;
    }
    let mut days: BTreeMap<HourKey, i64> = BTreeMap::new();
    for ((code, value, hour), visitors) in &counts {
        *days.entry((*code, value.clone(), day(*hour))).or_default() += visitors;
    }
    assert_eq!(stored_counts(app, site, "value_visitor_days", "day").await, days, "{label}: value_visitor_days");
    assert_eq!(stored_visitor_counts(app, site).await, counts, "{label}: value_visitor_hours");
    let (expected, stored) = (active_hours_of(rows), stored_active_hours(app, site).await);
    assert_eq!(stored, expected, "{label}: visitor_active_hours");
    assert_eq!(stored_active_counts(app, site).await, active_counts_of(&expected), "{label}: active_hour_visitors");
}

/// `visitor_active_hours` as the rows say it should be: per visitor, the
/// hours of their human events.
pub fn active_hours_of(rows: &Rows) -> BTreeMap<i64, BTreeSet<i64>> {
    let mut hours: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
    for e in rows.events.iter().filter(|e| !e.is_bot) {
        hours.entry(e.visitor_id).or_default().insert(hour(e.timestamp));
    }
    hours
}

/// `active_hour_visitors` from the active hours: per (hour, previous active
/// hour, 0 for none), the visitors.
pub fn active_counts_of(hours: &BTreeMap<i64, BTreeSet<i64>>) -> BTreeMap<(i64, i64), i64> {
    let mut counts: BTreeMap<(i64, i64), i64> = BTreeMap::new();
    for visitor in hours.values() {
        let mut previous = 0;
        for &hour in visitor {
            *counts.entry((hour, previous)).or_default() += 1;
            previous = hour;
        }
    }
    counts
}

/// The site's `visitor_active_hours` rows as stored, per visitor.
pub async fn stored_active_hours(app: &TestApp, site: i64) -> BTreeMap<i64, BTreeSet<i64>> {
    let mut stored: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
    for row in query(app, "SELECT visitor_id, hour FROM visitor_active_hours WHERE site_id = ?", site).await {
        stored.entry(row.try_get("", "visitor_id").unwrap()).or_default().insert(row.try_get("", "hour").unwrap());
    }
    stored
}

/// The site's `active_hour_visitors` rows as stored, without empty ones.
pub async fn stored_active_counts(app: &TestApp, site: i64) -> BTreeMap<(i64, i64), i64> {
    let sql = "SELECT hour, previous_hour, visitors FROM active_hour_visitors WHERE site_id = ?";
    let mut stored = BTreeMap::new();
    for row in query(app, sql, site).await {
        let visitors: i64 = row.try_get("", "visitors").unwrap();
        if visitors != 0 {
            stored.insert((row.try_get("", "hour").unwrap(), row.try_get("", "previous_hour").unwrap()), visitors);
        }
    }
    stored
}
