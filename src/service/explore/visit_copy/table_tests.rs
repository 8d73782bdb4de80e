use chrono::NaiveDate;
use serde_json::json;

use super::*;

fn none() -> (&'static [i64], &'static [i64]) {
    (&[], &[])
}
use crate::service::explore::query;

/// The filters of a query body's `filters`.
fn filters_of(filters: serde_json::Value) -> Vec<Filter> {
    let body = json!({"site_id": "x", "metrics": ["visitors"], "date_range": "7d", "filters": filters});
    query::parse(&body).expect("a valid query").filters
}

fn condition_of(filter: serde_json::Value) -> Condition {
    match filters_of(json!([filter])).into_iter().next() {
        Some(Filter::Condition(condition)) => condition,
        other => panic!("not a condition: {other:?}"),
    }
}

#[test]
fn a_stored_value_passes_as_the_visit_statement_compares_it() {
    // filter, stored value, lowering -> passes
    let table = [
        (json!(["is", "visit:source", ["Google"]]), Some("Google"), Lowering::Ascii, true),
        (json!(["is", "visit:source", ["google"]]), Some("Google"), Lowering::Ascii, false),
        (json!(["is", "visit:source", ["google"], {"case_sensitive": false}]), Some("Google"), Lowering::Ascii, true),
        // SQLite's LOWER leaves other letters as they are; PostgreSQL's folds them.
        (json!(["is", "visit:city", ["örebro"], {"case_sensitive": false}]), Some("Örebro"), Lowering::Ascii, false),
        (json!(["is", "visit:city", ["örebro"], {"case_sensitive": false}]), Some("Örebro"), Lowering::Unicode, true),
        // The blank's name matches a blank, stored as NULL or as ''.
        (json!(["is", "visit:source", ["Direct / None"]]), None, Lowering::Ascii, true),
        (json!(["is", "visit:source", ["Direct / None"]]), Some(""), Lowering::Ascii, true),
        (json!(["is_not", "visit:source", ["Direct / None"]]), None, Lowering::Ascii, false),
        (json!(["is_not", "visit:source", ["Google"]]), None, Lowering::Ascii, true),
        (json!(["contains", "visit:entry_page", ["/blog"]]), Some("/en/blog/post"), Lowering::Ascii, true),
        (json!(["contains", "visit:entry_page", ["/BLOG"]]), Some("/en/blog/post"), Lowering::Ascii, false),
        (json!(["contains_not", "visit:entry_page", ["/blog", "/docs"]]), Some("/docs/a"), Lowering::Ascii, false),
        (json!(["contains_not", "visit:entry_page", ["/blog"]]), None, Lowering::Ascii, true),
        (json!(["matches", "visit:entry_page", ["^/p[0-9]$"]]), Some("/p1"), Lowering::Ascii, true),
        (json!(["matches", "visit:entry_page", ["^/p[0-9]$"]]), Some("/p12"), Lowering::Ascii, false),
        (json!(["matches_not", "visit:entry_page", ["^/p"]]), Some("/p12"), Lowering::Ascii, false),
        // A country's name is its stored code as shown.
        (json!(["is", "visit:country_name", ["Germany"]]), Some("DE"), Lowering::Ascii, true),
        (json!(["is", "visit:country", ["DE"]]), Some("DE"), Lowering::Ascii, true),
        (json!(["is", "visit:country_name", ["DE"]]), Some("DE"), Lowering::Ascii, false),
    ];
    for (filter, stored, lowering, expected) in table {
        assert_eq!(passes(&condition_of(filter.clone()), stored, lowering), expected, "{filter} on {stored:?}");
    }
}

#[test]
fn only_stored_visit_properties_are_answered() {
    let dimension = |name: &str| Dimension::parse(name).expect("a dimension");
    // dimensions, filters -> answered
    let table = [
        (vec![], json!([]), true),
        (vec!["visit:source", "visit:country_name"], json!([["is", "visit:device", ["Desktop"]]]), true),
        (vec![], json!([["not", ["is", "visit:browser", ["Firefox"]]]]), true),
        (vec![], json!([["or", [["is", "visit:os", ["Linux"]], ["is", "visit:city", ["Paris"]]]]]), true),
        (vec!["visit:link"], json!([]), false),
        (vec!["time:day", "visit:source"], json!([]), true),
        (vec!["time:day", "time:hour"], json!([]), false),
        (vec!["event:page"], json!([]), false),
        (vec![], json!([["is", "visitor:status", ["identified"]]]), false),
        (vec![], json!([["is", "event:page", ["/"]]]), false),
        (vec![], json!([["has_done", ["is", "event:name", ["signup"]]]]), false),
    ];
    for (dimensions, filters, expected) in table {
        let dimensions: Vec<Dimension> = dimensions.into_iter().map(dimension).collect();
        assert_eq!(answers(&dimensions, &filters_of(filters.clone())), expected, "{dimensions:?} {filters}");
    }
}

/// A visit of visitor `visitor` from `started` to `ended` with `source`.
fn visit(id: i64, visitor: i64, (started, ended): (i64, i64), source: Option<&str>, events: i32) -> Visit {
    let mut values: [Option<String>; Column::COUNT] = Default::default();
    values[Column::Source as usize] = source.map(str::to_owned);
    values[Column::Channel as usize] = Some("Direct".to_owned());
    Visit {
        id,
        visitor,
        started,
        ended,
        human_events: events,
        human_pageviews: events,
        events,
        seconds: (ended - started) / 1_000,
        values,
    }
}

fn span(from: i64, to: i64) -> Span {
    let day = NaiveDate::from_ymd_opt(2026, 11, 2).expect("a date");
    Span { from, to, first_day: day, last_day: day, whole_days: false }
}

#[test]
fn a_span_counts_inside_visits_from_their_rows_and_cut_ones_from_their_events() {
    let (from, to) = (10 * SESSION_MAX_MS, 11 * SESSION_MAX_MS);
    let mut table = Table::new();
    let visits = [
        // Ends before the span: not read.
        visit(1, 100, (from - 5_000, from - 1), Some("google"), 2),
        // Cut by the start: its two events in the span, from `cut`.
        visit(2, 101, (from - 5_000, from + 5_000), Some("google"), 4),
        // Cut by the start with no event in the span: absent from `cut`.
        visit(3, 102, (from - 5_000, from + 1), Some("google"), 2),
        // Inside, a bounce.
        visit(4, 101, (from + 10, from + 10), Some("google"), 1),
        // Inside, another source.
        visit(5, 103, (from + 20, from + 4_020), None, 3),
        // Inside with no human event (a bot's visit): left out.
        visit(6, 104, (from + 30, from + 40), Some("google"), 0),
        // Cut by the end.
        visit(7, 105, (to - 1_000, to + 1_000), Some("google"), 5),
        // Begun after the span.
        visit(8, 106, (to, to + 10), Some("google"), 1),
    ];
    visits.into_iter().for_each(|visit| table.push(visit));
    table.seal();
    let mut cut_ids: Vec<i64> = table.cut(span(from, to), None).collect();
    cut_ids.sort_unstable();
    assert_eq!(cut_ids, vec![2, 3, 7]);
    let cut: Pieces = [(2, vec![(0, 2, 1)]), (7, vec![(0, 3, 3)])].into_iter().collect();
    let source = [Dimension::parse("visit:source").expect("a dimension")];
    let mut tallies = Tallies::default();
    tallies.add(&table, (span(from, to), None), (&source, &[]), &cut, Lowering::Ascii).expect("answered");
    let groups = tallies.groups(none());
    let google = &groups[&vec![Key::Text(Some("google".to_owned()))]];
    // Visits 2, 4 and 7; visitors 101 and 105; events 2 + 1 + 3.
    assert_eq!((google.visitors, google.visits, google.events, google.pageviews), (2, 3, 6, 5));
    assert_eq!(google.bounces, 1);
    // Ten seconds, none (a bounce) and two.
    assert_eq!(google.seconds, 12);
    let direct = &groups[&vec![Key::Text(None)]];
    assert_eq!((direct.visitors, direct.visits, direct.events, direct.bounces, direct.seconds), (1, 1, 3, 0, 4));
    assert_eq!(groups.len(), 2);

    // Filtered, and two tables merged: a visitor in both counts once.
    let mut tail = Table::new();
    tail.push(visit(9, 101, (from + 50_000, from + 50_000), Some("google"), 1));
    tail.seal();
    let filters = filters_of(json!([["is_not", "visit:source", ["Direct / None"]]]));
    let mut tallies = Tallies::default();
    for table in [&table, &tail] {
        tallies.add(table, (span(from, to), None), (&[], &filters), &cut, Lowering::Ascii).expect("answered");
    }
    assert_eq!(tallies.visitors(), vec![101, 105]);
    // Of the flagged (in order), those among the group's visitors count.
    let groups = tallies.groups((&[50, 101, 102], &[105, 200]));
    let whole = &groups[&Vec::new()];
    assert_eq!((whole.visitors, whole.visits, whole.events), (2, 4, 7));
    assert_eq!((whole.identified, whole.hot), (1, 1));

    // Nothing in the span: no group at all, as the statement's empty row.
    let mut tallies = Tallies::default();
    tallies.add(
        &table,
        (span(to + SESSION_MAX_MS * 3, to + SESSION_MAX_MS * 4), None),
        (&[], &[]),
        &cut,
        Lowering::Ascii,
    );
    assert!(tallies.groups(none()).is_empty());
}

#[test]
fn a_visit_across_a_bucket_edge_counts_in_each_bucket_it_has_events_in() {
    use crate::service::explore::query::Grain;
    let day = 24 * 3_600_000;
    let (from, to) = (20_000 * day, 20_002 * day);
    let whole = span(from, to);
    let buckets = Buckets::new(Grain::Day, whole, chrono_tz::Tz::UTC);
    let mut table = Table::new();
    // Inside the first day; across the midnight between the days; inside the second.
    table.push(visit(1, 100, (from + 10, from + 20), Some("a"), 2));
    table.push(visit(2, 101, (from + day - 10, from + day + 10), Some("a"), 3));
    table.push(visit(3, 102, (from + day + 50, from + day + 60), Some("a"), 1));
    table.seal();
    let cut: Vec<i64> = table.cut(whole, Some(&buckets)).collect();
    assert_eq!(cut, vec![2], "only the visit across midnight is read by its events");
    assert!(table.cut(whole, None).next().is_none(), "no edge of the span cuts a visit");
    let (first, second) = (buckets.of(from), buckets.of(from + day));
    let pieces: Pieces = [(2, vec![(first, 2, 2), (second, 1, 1)])].into_iter().collect();
    let time = [Dimension::parse("time:day").expect("a dimension")];
    let mut tallies = Tallies::default();
    tallies.add(&table, (whole, Some(&buckets)), (&time, &[]), &pieces, Lowering::Ascii).expect("answered");
    let groups = tallies.groups(none());
    let at = |bucket: i64| {
        let counts = &groups[&vec![Key::Bucket(bucket)]];
        (counts.visitors, counts.visits, counts.events, counts.pageviews)
    };
    // (visitors, visits, events, pageviews): the crossing visit is a visit of each day.
    assert_eq!(at(first), (2, 2, 4, 4));
    assert_eq!(at(second), (2, 2, 2, 2));
}
