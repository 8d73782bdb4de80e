use super::*;
use crate::service::path_pattern::PathPattern;

fn page(name: &str, pattern: &str) -> Goal {
    Goal { name: name.to_owned(), target: Target::Page(PathPattern::parse("pagePath", pattern.to_owned()).unwrap()) }
}

fn custom(name: &str, event: &str) -> Goal {
    Goal { name: name.to_owned(), target: Target::Event { name: event.to_owned(), prop: None } }
}

/// (at, visitor, visit, type, page or name) per event.
fn table(events: &[(i64, i64, i64, &str, &str)]) -> EventTable {
    let mut table = EventTable::new();
    for (at, visitor, visit, kind, label) in events {
        let kind = Kind::of_code(match *kind {
            "pageview" => 0,
            "custom_event" => 1,
            _ => 2,
        });
        let (page, name) = match kind {
            Kind::Pageview => ((*label).to_owned(), "pageview".to_owned()),
            _ => ("/pricing".to_owned(), (*label).to_owned()),
        };
        table.push(StoredEvent { at: *at, visitor: *visitor, visit: *visit, kind, page, name });
    }
    table.seal();
    table
}

/// (visitor, visit, at, steps) of a step event.
type Flat = (i64, i64, i64, u8);

/// `found` in the order of its visitors' ids, once each visitor's events are
/// seen to be together: the order of the visitors is not promised.
fn flat(found: Vec<(i64, StepEvent)>) -> Vec<Flat> {
    let mut done = Vec::new();
    for pair in found.windows(2) {
        if pair[0].0 != pair[1].0 {
            assert!(!done.contains(&pair[1].0), "visitor {} comes back: {found:?}", pair[1].0);
            done.push(pair[0].0);
        }
    }
    let mut flat: Vec<Flat> =
        found.into_iter().map(|(visitor, event)| (visitor, event.session, event.at, event.steps)).collect();
    flat.sort_by_key(|(visitor, ..)| *visitor);
    flat
}

#[test]
fn step_events_are_those_the_statement_reads() {
    let copy = table(&[
        (10, 2, 20, "pageview", "/docs/a"),
        (11, 1, 10, "pageview", "/pricing"),
        (12, 1, 10, "custom_event", "form_submit"),
        (12, 2, 20, "pageview", "/Pricing"),
        (13, 1, 10, "click", "/pricing"),
        (14, 1, 10, "custom_event", "/pricing"),
        (15, 2, 20, "pageview", "/docs"),
    ]);
    let tail = table(&[
        (20, 3, 30, "pageview", "/pricing"),
        (20, 1, 11, "pageview", "/docs/b"),
        (21, 2, 20, "custom_event", "form_submit"),
        (22, 3, 30, "custom_event", "form_submit"),
    ]);
    let steps = [page("Docs", "/docs*"), page("Pricing", "/pricing"), custom("Form", "form_submit")];
    // span, expected (visitor, visit, at, steps)
    let cases: [((i64, i64), Vec<Flat>); 4] = [
        (
            (0, 100),
            vec![
                (1, 10, 11, 0b010),
                (1, 10, 12, 0b100),
                (1, 11, 20, 0b001),
                (2, 20, 10, 0b001),
                (2, 20, 15, 0b001),
                (2, 20, 21, 0b100),
                (3, 30, 20, 0b010),
                (3, 30, 22, 0b100),
            ],
        ),
        ((11, 15), vec![(1, 10, 11, 0b010), (1, 10, 12, 0b100)]),
        ((15, 21), vec![(1, 11, 20, 0b001), (2, 20, 15, 0b001), (3, 30, 20, 0b010)]),
        ((30, 40), vec![]),
    ];
    for (span, expected) in cases {
        let found = step_events([&copy, &tail], span, &steps).expect("no property");
        assert_eq!(flat(found), expected, "{span:?}");
    }
}

#[test]
fn an_event_reaching_two_steps_carries_both_bits() {
    let copy = table(&[(1, 1, 1, "pageview", "/docs/pricing"), (2, 1, 1, "pageview", "/docs")]);
    let steps = [page("Docs", "/docs*"), page("Any pricing", "*pricing")];
    let found = step_events([&copy, &EventTable::new()], (0, 10), &steps).unwrap();
    assert_eq!(flat(found), vec![(1, 1, 1, 0b11), (1, 1, 2, 0b01)]);
}

#[test]
fn a_step_on_a_property_is_left_to_the_rows() {
    let copy = table(&[(1, 1, 1, "custom_event", "signup")]);
    let steps = [
        custom("Signup", "signup"),
        Goal {
            name: "Paid".to_owned(),
            target: Target::Event { name: "signup".to_owned(), prop: Some(("plan".to_owned(), "pro".to_owned())) },
        },
    ];
    assert!(step_events([&copy, &EventTable::new()], (0, 10), &steps).is_none());
}

#[test]
fn a_tails_visitors_are_numbered_by_the_copys_codes_or_after_them() {
    // (the copy's visitors, the tail's visitors, in the order first met)
    let cases: [(&str, &[i64], &[i64]); 6] = [
        ("both empty", &[], &[]),
        ("no copy", &[], &[7, 3]),
        ("no tail", &[5, 1], &[]),
        ("all in the copy", &[9, 4, 6], &[6, 9]),
        ("none in the copy", &[2, 4], &[5, 1, 3]),
        ("some in the copy, ids interleaved", &[50, 10, 30, 20], &[25, 10, 60, 50, 5]),
    ];
    let of = |visitors: &[i64]| {
        let events: Vec<_> =
            visitors.iter().enumerate().map(|(at, visitor)| (at as i64, *visitor, *visitor, "pageview", "/")).collect();
        table(&events)
    };
    for (name, copy, tail) in cases {
        let (held, tail_table) = (of(copy), of(tail));
        // By the definition: the visitor's code in the copy, else the
        // copy's count plus its code in the tail.
        let expected: Vec<u32> = (0..tail.len())
            .map(|code| {
                let id = tail_table.visitor_id(code);
                let in_copy = (0..held.visitor_count()).find(|held_code| held.visitor_id(*held_code) == id);
                in_copy.unwrap_or(held.visitor_count() + code) as u32
            })
            .collect();
        assert_eq!(tail_visitor_numbers(&held, &tail_table), expected, "{name}");
    }
}

#[test]
fn each_visits_events_are_its_rows_in_time_order() {
    // (at, visitor, visit): visits interleaved in time, one with a single event.
    let events = [(1, 1, 10), (2, 2, 20), (3, 1, 10), (4, 3, 30), (5, 2, 20), (6, 1, 10)];
    let table = table(&events.map(|(at, visitor, visit)| (at, visitor, visit, "pageview", "/")));
    let by_visit = VisitEvents::of(&table);
    for code in 0..table.visit_count() {
        let visit = table.visit_id(code);
        let expected: Vec<u32> =
            events.iter().enumerate().filter(|(_, event)| event.2 == visit).map(|(row, _)| row as u32).collect();
        assert_eq!(by_visit.rows(code), &expected[..], "visit {visit}");
    }
    assert!(VisitEvents::of(&EventTable::new()).rows.is_empty());
}

#[test]
fn cut_pieces_count_each_visits_events_per_bucket_as_the_rows_do() {
    use crate::service::explore::{query::Grain, range};
    const H: i64 = 3_600_000;
    // (at, visitor, visit, type, page or name): the copy's, then the tail's (from 10 h on).
    let held = [
        (H / 2, 1, 10, "pageview", "/"),
        (H + 5, 1, 10, "custom_event", "signup"),
        (2 * H - 1, 1, 10, "pageview", "/b"),
        (3 * H, 2, 20, "pageview", "/"),
        (9 * H + 1, 3, 30, "pageview", "/"),
    ];
    let tail = [(10 * H, 3, 30, "pageview", "/c"), (10 * H + 2, 3, 30, "other", "x"), (11 * H, 4, 40, "pageview", "/")];
    let (held, tail) = (table(&held), table(&tail));
    let (held_rows, tail_rows) = (VisitEvents::of(&held), VisitEvents::of(&tail));
    let everything = [held.clone_rows(), tail.clone_rows()].concat();
    let span_of = |from: i64, to: i64| range::Span {
        from,
        to,
        first_day: chrono::NaiveDate::default(),
        last_day: chrono::NaiveDate::default(),
        whole_days: false,
    };
    // span, hourly buckets?, the visits asked for
    let cases = [
        ((0, 12 * H), true, vec![10, 20, 30, 40, 99]),
        ((H, 10 * H + 1), true, vec![10, 30]),
        ((H, 10 * H + 1), false, vec![10, 30, 40]),
        ((4 * H, 5 * H), true, vec![20]),
    ];
    for ((from, to), hourly, ids) in cases {
        let span = span_of(from, to);
        let buckets = hourly.then(|| range::Buckets::new(Grain::Hour, span, chrono_tz::Tz::UTC));
        let got = cut_pieces([(&held, &held_rows), (&tail, &tail_rows)], (span, buckets.as_ref()), &ids);
        // The statement's grouping: by visit and bucket, over the events in the span.
        let mut expected: std::collections::BTreeMap<(i64, i64), (i64, i64)> = Default::default();
        for (at, visit, kind) in
            everything.iter().filter(|(at, visit, _)| *at >= from && *at < to && ids.contains(visit))
        {
            let bucket = buckets.as_ref().map_or(0, |buckets| buckets.of(*at));
            let entry = expected.entry((*visit, bucket)).or_default();
            *entry = (entry.0 + 1, entry.1 + i64::from(*kind == Kind::Pageview));
        }
        let mut flat: Vec<((i64, i64), (i64, i64))> = got
            .iter()
            .flat_map(|(visit, pieces)| {
                pieces.iter().map(|(bucket, events, views)| ((*visit, *bucket), (*events, *views)))
            })
            .collect();
        flat.sort();
        assert_eq!(flat, expected.into_iter().collect::<Vec<_>>(), "{from}..{to} hourly {hourly}");
    }
}

impl EventTable {
    /// (at, visit id, kind) of every event, for a recount.
    fn clone_rows(&self) -> Vec<(i64, i64, Kind)> {
        (0..self.at.len()).map(|at| (self.at[at], self.visit_id(self.visit_code(at)), self.kind[at])).collect()
    }
}
