use chrono::NaiveDate;
use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::service::{
    explore::{
        query::{self, Dimension},
        visit_copy::table::{Tallies, Visit},
    },
    tracking::sessionize::SESSION_MAX_MS,
};

const COLUMNS: [Column; 4] = [Column::Source, Column::Channel, Column::Country, Column::Device];
const DIMENSIONS: [&str; 4] = ["visit:source", "visit:channel", "visit:country", "visit:device"];

fn span(from: i64, to: i64) -> Span {
    let day = NaiveDate::from_ymd_opt(2026, 11, 2).expect("a date");
    Span { from, to, first_day: day, last_day: day, whole_days: false }
}

fn filters_of(filters: serde_json::Value) -> Vec<Filter> {
    let body = json!({"site_id": "x", "metrics": ["visitors"], "date_range": "7d", "filters": filters});
    query::parse(&body).expect("a valid query").filters
}

/// A visit: (visitor, start, length, values by `COLUMNS`, events).
type Drawn = (i64, i64, i64, [u8; 4], i32);

fn table_of(first_id: i64, mut drawn: Vec<Drawn>) -> Table {
    drawn.sort_by_key(|visit| visit.1);
    let mut table = Table::new();
    for (at, (visitor, started, length, values, events)) in drawn.into_iter().enumerate() {
        let mut stored: [Option<String>; Column::COUNT] = Default::default();
        for (column, value) in COLUMNS.iter().zip(values) {
            // Value 0 is blank: stored as NULL.
            stored[*column as usize] = (value > 0).then(|| format!("v{value}"));
        }
        table.push(Visit {
            id: first_id + at as i64,
            visitor,
            started,
            ended: started + length,
            human_events: events,
            human_pageviews: events / 2,
            events,
            seconds: length / 1_000,
            values: stored,
        });
    }
    table.seal();
    table
}

fn drawn() -> impl Strategy<Value = Drawn> {
    (1..40i64, 0..6 * SESSION_MAX_MS, 0..SESSION_MAX_MS, [0..4u8, 0..3u8, 0..5u8, 0..3u8], 0..4i32)
}

proptest! {
    #[test]
    fn one_pass_counts_every_panel_as_its_own_tallies_do(
        held in prop::collection::vec(drawn(), 0..120),
        tail in prop::collection::vec(drawn(), 0..20),
        filter in 0..4usize,
        cut_events in 0..3i64,
    ) {
        let (held, tail) = (table_of(1, held), table_of(1_000, tail));
        let span = span(2 * SESSION_MAX_MS, 4 * SESSION_MAX_MS);
        // Every cut visit has `cut_events` events in the span (none: it is left out).
        let pieces: Pieces = [&held, &tail]
            .iter()
            .flat_map(|table| table.cut(span, None).collect::<Vec<_>>())
            .filter(|_| cut_events > 0)
            .map(|id| (id, vec![(0, cut_events, cut_events - 1)]))
            .collect();
        let filters = filters_of(match filter {
            0 => json!([]),
            1 => json!([["is", "visit:source", ["v1", "v2"]]]),
            2 => json!([["is_not", "visit:country", ["Direct / None"]]]),
            _ => json!([["or", [["is", "visit:channel", ["v1"]], ["contains", "visit:device", ["2"]]]]]),
        });
        let found = panels([&held, &tail], span, (&COLUMNS, &filters), &pieces, Lowering::Ascii).expect("answered");

        let none: [i64; 0] = [];
        let tallied = |dimensions: &[Dimension]| {
            let mut tallies = Tallies::default();
            for table in [&held, &tail] {
                tallies.add(table, (span, None), (dimensions, &filters), &pieces, Lowering::Ascii).expect("answered");
            }
            tallies
        };
        let mut whole = tallied(&[]);
        prop_assert_eq!(&found.visitors, &whole.visitors());
        let whole = whole.groups((&none, &none)).into_values().next().unwrap_or_default();
        prop_assert_eq!(&found.whole, &whole);
        for (at, name) in DIMENSIONS.iter().enumerate() {
            let dimension = [Dimension::parse(name).expect("a dimension")];
            prop_assert_eq!(&found.groups[at], &tallied(&dimension).groups((&none, &none)), "{}", name);
        }
    }
}

#[test]
fn a_visitor_counts_once_per_group_and_once_in_each_group_it_visits() {
    let from = 2 * SESSION_MAX_MS;
    // Visitor 7 twice from v1 and once from v2; visitor 8 once from v1.
    let held = table_of(
        1,
        vec![
            (7, from + 10, 1_000, [1, 1, 1, 1], 2),
            (8, from + 20, 1_000, [1, 1, 1, 1], 1),
            (7, from + 30, 3_000, [2, 1, 1, 1], 3),
        ],
    );
    let tail = table_of(100, vec![(7, from + 40, 2_000, [1, 1, 1, 1], 1)]);
    let found = panels(
        [&held, &tail],
        span(from, from + SESSION_MAX_MS),
        (&[Column::Source], &[]),
        &Pieces::new(),
        Lowering::Ascii,
    )
    .expect("answered");
    let v1 = &found.groups[0][&vec![Key::Text(Some("v1".to_owned()))]];
    let v2 = &found.groups[0][&vec![Key::Text(Some("v2".to_owned()))]];
    // (visitors, visits, events, bounces, seconds)
    assert_eq!((v1.visitors, v1.visits, v1.events, v1.bounces, v1.seconds), (2, 3, 4, 2, 4));
    assert_eq!((v2.visitors, v2.visits, v2.events, v2.bounces, v2.seconds), (1, 1, 3, 0, 3));
    assert_eq!((found.whole.visitors, found.whole.visits), (2, 4));
    assert_eq!(found.visitors, vec![7, 8]);
}
