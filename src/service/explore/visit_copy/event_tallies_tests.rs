use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::*;
use crate::service::explore::{
    counts::Key,
    query,
    visit_copy::{
        events::{StoredEvent, VisitEvents, tail_visitor_numbers},
        table::{Table, Visit},
    },
};
use crate::service::goals::{Goal, Target};

fn filters_of(filters: serde_json::Value) -> Vec<Filter> {
    let body = json!({"site_id": "x", "metrics": ["visitors"], "date_range": "7d", "filters": filters});
    query::parse(&body).expect("a valid query").filters
}

fn dimension(name: &str) -> Dimension {
    Dimension::parse(name).expect("a dimension")
}

fn span(from: i64, to: i64) -> Span {
    let day = chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
    Span { from, to, first_day: day, last_day: day, whole_days: false }
}

/// A visit: (id, visitor, start, source, country).
fn visits(rows: &[(i64, i64, i64, Option<&str>, &str)]) -> Table {
    let mut table = Table::new();
    for (id, visitor, started, source, country) in rows {
        let mut values: [Option<String>; Column::COUNT] = Default::default();
        values[Column::Source as usize] = source.map(str::to_owned);
        values[Column::Country as usize] = Some((*country).to_owned());
        table.push(Visit {
            id: *id,
            visitor: *visitor,
            started: *started,
            ended: started + 10,
            values,
            ..Visit::default()
        });
    }
    table.seal();
    table
}

/// An event: (at, visitor, visit, pageview?, page, name).
type Row = (i64, i64, i64, bool, &'static str, &'static str);

fn events(rows: &[Row]) -> EventTable {
    let mut table = EventTable::new();
    for (at, visitor, visit, pageview, page, name) in rows {
        let kind = if *pageview { Kind::Pageview } else { Kind::Custom };
        let name = if *pageview { "pageview" } else { name };
        table.push(StoredEvent {
            at: *at,
            visitor: *visitor,
            visit: *visit,
            kind,
            page: (*page).to_owned(),
            name: name.to_owned(),
        });
    }
    table.seal();
    table
}

const VISITS: [(i64, i64, i64, Option<&str>, &str); 5] = [
    (1, 10, 100, Some("Google"), "DE"),
    (2, 10, 200, None, "DE"),
    (3, 20, 210, Some("Google"), "FR"),
    (4, 30, 400, Some("Bing"), "US"),
    // Visitor 10 again, in the tail: one visitor in both tables.
    (5, 10, 500, Some("Google"), "DE"),
];
// Visit 1 goes back to `/`: its visit and visitor count once per page.
const COPIED: [Row; 7] = [
    (100, 10, 1, true, "/", ""),
    (101, 10, 1, true, "/pricing", ""),
    (102, 10, 1, false, "/pricing", "signup"),
    (103, 10, 1, true, "/", ""),
    (200, 10, 2, true, "/blog", ""),
    (210, 20, 3, true, "/", ""),
    (215, 20, 3, true, "/Pricing", ""),
];
const TAIL: [Row; 3] =
    [(400, 30, 4, true, "/pricing", ""), (405, 30, 4, false, "/", "signup"), (500, 10, 5, true, "/pricing", "")];

/// The copied and tail visits and events above, and the goals.
struct Held {
    visits: (Table, Table),
    events: (EventTable, EventTable),
    rows: Vec<u32>,
    by_visit: VisitEvents,
    tail_visitors: Vec<u32>,
    goals: Vec<Goal>,
}

impl Held {
    fn new() -> Held {
        let visits = (visits(&VISITS[..3]), visits(&VISITS[3..]));
        let events = (events(&COPIED), events(&TAIL));
        let rows = visit_rows(&events.0, &visits.0);
        let tail_visitors = tail_visitor_numbers(&events.0, &events.1);
        let by_visit = VisitEvents::of(&events.0);
        Held { visits, events, rows, by_visit, tail_visitors, goals: goals() }
    }

    fn tables(&self) -> Tables<'_> {
        Tables {
            events: [&self.events.0, &self.events.1],
            visits: [&self.visits.0, &self.visits.1],
            held_rows: &self.rows,
            visit_events: &self.by_visit,
            tail_visitors: &self.tail_visitors,
            goals: &self.goals,
        }
    }
}

/// The same counts by brute force over the rows: (group, (visitors, visits, pageviews, events)).
fn recount(
    from: i64,
    to: i64,
    group: impl Fn(&Row, &(i64, i64, i64, Option<&str>, &str)) -> Vec<Key>,
    keep: impl Fn(&Row, &(i64, i64, i64, Option<&str>, &str)) -> bool,
) -> BTreeMap<Vec<Key>, (i64, i64, i64, i64)> {
    type Sets = (BTreeSet<i64>, BTreeSet<i64>, i64, i64);
    let mut sets: BTreeMap<Vec<Key>, Sets> = BTreeMap::new();
    for event in COPIED.iter().chain(&TAIL).filter(|event| event.0 >= from && event.0 < to) {
        let visit = VISITS.iter().find(|visit| visit.0 == event.2).unwrap();
        if keep(event, visit) {
            let entry = sets.entry(group(event, visit)).or_default();
            entry.0.insert(event.1);
            entry.1.insert(event.2);
            entry.2 += i64::from(event.3);
            entry.3 += 1;
        }
    }
    sets.into_iter().map(|(key, (a, b, c, d))| (key, (a.len() as i64, b.len() as i64, c, d))).collect()
}

fn got(groups: Groups) -> BTreeMap<Vec<Key>, (i64, i64, i64, i64)> {
    groups.into_iter().map(|(key, c)| (key, (c.visitors, c.visits, c.pageviews, c.events))).collect()
}

fn text(value: &str) -> Key {
    Key::Text(Some(value.to_owned()))
}

type Grouping = fn(&Row, &(i64, i64, i64, Option<&str>, &str)) -> Vec<Key>;
type Keeping = fn(&Row, &(i64, i64, i64, Option<&str>, &str)) -> bool;

#[test]
fn event_groups_are_those_the_flat_statement_counts() {
    let held = Held::new();
    let tables = held.tables();
    // dimensions, filters, span, the recount's grouping and keeping
    type Case = (Vec<&'static str>, serde_json::Value, (i64, i64), Grouping, Keeping);
    let cases: Vec<Case> = vec![
        (vec!["event:page"], json!([]), (0, 1000), |e, _| vec![text(e.4)], |_, _| true),
        (
            vec!["event:page"],
            json!([["is", "visit:source", ["Google"]]]),
            (0, 1000),
            |e, _| vec![text(e.4)],
            |_, v| v.3 == Some("Google"),
        ),
        (
            vec!["visit:source"],
            json!([["contains", "event:page", ["pric"]]]),
            (0, 1000),
            |_, v| vec![Key::Text(v.3.map(str::to_owned))],
            |e, _| e.4.contains("pric"),
        ),
        (
            vec!["visit:country"],
            json!([["contains", "event:page", ["pric"], {"case_sensitive": false}]]),
            (101, 401),
            |_, v| vec![text(v.4)],
            |e, _| e.4.to_lowercase().contains("pric"),
        ),
        (
            vec!["event:name"],
            json!([["or", [["is", "visit:source", ["Direct / None"]], ["is", "event:name", ["signup"]]]]]),
            (0, 1000),
            |e, _| vec![text(if e.3 { "pageview" } else { e.5 })],
            |e, v| v.3.is_none() || (!e.3 && e.5 == "signup"),
        ),
        (
            vec![],
            json!([["not", ["is", "event:page", ["/"]]], ["is_not", "visit:country", ["FR"]]]),
            (0, 1000),
            |_, _| vec![],
            |e, v| e.4 != "/" && v.4 != "FR",
        ),
        // A visit's filters decided once for it, then the event's own.
        (
            vec!["event:page"],
            json!([["is", "visit:source", ["Google"]], ["contains", "event:page", ["pric"]]]),
            (101, 401),
            |e, _| vec![text(e.4)],
            |e, v| v.3 == Some("Google") && e.4.contains("pric"),
        ),
        (
            vec!["event:page"],
            json!([["is_not", "visit:country", ["FR"]], ["is", "event:goal", ["Pricing"]]]),
            (0, 1000),
            |e, _| vec![text(e.4)],
            |e, v| v.4 != "FR" && e.3 && e.4 == "/pricing",
        ),
        (
            vec!["visit:source"],
            json!([["not", ["or", [["is", "visit:country", ["FR"]], ["is", "visit:source", ["Google"]]]]]]),
            (0, 1000),
            |_, v| vec![Key::Text(v.3.map(str::to_owned))],
            |_, v| v.4 != "FR" && v.3 != Some("Google"),
        ),
        (
            vec!["event:page"],
            json!([["is", "event:page", ["/nowhere"]]]),
            (0, 1000),
            |e, _| vec![text(e.4)],
            |_, _| false,
        ),
        (
            vec!["visit:source"],
            json!([["is", "event:goal", ["Pricing"]]]),
            (0, 1000),
            |_, v| vec![Key::Text(v.3.map(str::to_owned))],
            |e, _| e.3 && e.4 == "/pricing",
        ),
        (
            vec![],
            json!([["is", "event:goal", ["Pricing", "Signup"]]]),
            (0, 1000),
            |_, _| vec![],
            |e, _| (e.3 && e.4 == "/pricing") || (!e.3 && e.5 == "signup"),
        ),
        (
            vec!["event:page"],
            json!([["is_not", "event:goal", ["Signup"]]]),
            (0, 1000),
            |e, _| vec![text(e.4)],
            |e, _| e.3 || e.5 != "signup",
        ),
        (
            vec!["visit:country"],
            json!([["contains", "event:goal", ["nothing"]]]),
            (0, 1000),
            |_, v| vec![text(v.4)],
            |_, _| false,
        ),
    ];
    for (dimensions, filters, (from, to), group, keep) in cases {
        let dimensions: Vec<Dimension> = dimensions.into_iter().map(dimension).collect();
        let filters_parsed = filters_of(filters.clone());
        let filtered = Events::Filtered(&filters_parsed);
        let found = groups(tables, (span(from, to), None), (&dimensions, filtered, Distinct::ALL), Lowering::Ascii)
            .expect("the copy answers");
        assert_eq!(got(found), recount(from, to, group, keep), "{dimensions:?} {filters}");
        // The same from the events the filters keep, found first (the explorer's panels).
        let kept = kept(tables, span(from, to), &filters_parsed, Lowering::Ascii).expect("the copy answers");
        let found =
            groups(tables, (span(from, to), None), (&dimensions, Events::Kept(&kept), Distinct::ALL), Lowering::Ascii)
                .expect("the copy answers");
        assert_eq!(got(found), recount(from, to, group, keep), "{dimensions:?} {filters} from the kept events");
        // And from the events its first filter keeps, narrowed by the rest (a goal's panel).
        if filters_parsed.len() > 1 {
            let first =
                super::kept(tables, span(from, to), &filters_parsed[..1], Lowering::Ascii).expect("the copy answers");
            let narrowed = refined(tables, &first, &filters_parsed[1..], Lowering::Ascii).expect("the copy answers");
            let found = groups(
                tables,
                (span(from, to), None),
                (&dimensions, Events::Kept(&narrowed), Distinct::ALL),
                Lowering::Ascii,
            )
            .expect("the copy answers");
            assert_eq!(got(found), recount(from, to, group, keep), "{dimensions:?} {filters} narrowed");
        }
    }
}

/// Pricing (a page), Signup (an event), Paid (an event with a property).
fn goals() -> Vec<Goal> {
    let page = crate::service::path_pattern::PathPattern::parse("pagePath", "/pricing".to_owned()).unwrap();
    vec![
        Goal { name: "Pricing".to_owned(), target: Target::Page(page) },
        Goal { name: "Signup".to_owned(), target: Target::Event { name: "signup".to_owned(), prop: None } },
        Goal {
            name: "Paid".to_owned(),
            target: Target::Event { name: "signup".to_owned(), prop: Some(("plan".to_owned(), "pro".to_owned())) },
        },
    ]
}

#[test]
fn distinct_pairs_are_counted_per_group() {
    // pairs, groups, items -> distinct items per group
    type Case = (&'static [(u32, u32)], usize, usize, &'static [i64]);
    let table: [Case; 4] = [
        (&[], 2, 3, &[0, 0]),
        (&[(0, 1), (0, 1), (1, 1), (0, 2)], 2, 3, &[2, 1]),
        (&[(1, 0), (0, 0), (1, 0), (1, 2), (0, 0)], 3, 3, &[1, 2, 0]),
        (&[(2, 4), (0, 4), (2, 0), (2, 4), (0, 3), (2, 4)], 3, 5, &[2, 0, 2]),
    ];
    for (pairs, groups, items, expected) in table {
        assert_eq!(
            crate::service::explore::visit_copy::numbers::distinct_per_group(pairs, groups, items),
            expected,
            "{pairs:?}"
        );
    }
}

#[test]
fn a_goal_on_a_property_is_left_to_the_rows() {
    let held = Held::new();
    let tables = held.tables();
    let paid = filters_of(json!([["is", "event:goal", ["Paid"]]]));
    assert!(
        groups(tables, (span(0, 1000), None), (&[], Events::Filtered(&paid), Distinct::ALL), Lowering::Ascii).is_none()
    );
    assert!(kept(tables, span(0, 1000), &paid, Lowering::Ascii).is_none());
    let signup = filters_of(json!([["is", "event:goal", ["Signup"]]]));
    assert!(
        groups(tables, (span(0, 1000), None), (&[], Events::Filtered(&signup), Distinct::ALL), Lowering::Ascii)
            .is_some()
    );
}

#[test]
fn an_event_whose_visit_is_not_held_is_left_to_the_rows() {
    let held = visits(&VISITS[..1]);
    let empty = visits(&[]);
    let copied = events(&COPIED);
    let tail = events(&[]);
    let held_rows = visit_rows(&copied, &held);
    let by_visit = VisitEvents::of(&copied);
    let tables = Tables {
        events: [&copied, &tail],
        visits: [&held, &empty],
        held_rows: &held_rows,
        visit_events: &by_visit,
        tail_visitors: &[],
        goals: &[],
    };
    // span -> answered: only the first event's visit is held
    for ((from, to), answered) in [((0, 1000), false), ((0, 150), true)] {
        let asked = (&[dimension("event:page")][..], Events::Filtered(&[]), Distinct::ALL);
        let found = groups(tables, (span(from, to), None), asked, Lowering::Ascii);
        assert_eq!(found.is_some(), answered, "{from}..{to}");
    }
}

#[test]
fn only_pages_names_stored_visit_properties_and_counts_are_answered() {
    // dimensions, filters, metrics -> answered
    let table = [
        (vec!["event:page"], json!([]), vec![Metric::Visitors, Metric::Pageviews], true),
        (vec!["visit:source"], json!([["contains", "event:page", ["/"]]]), vec![Metric::Events, Metric::Visits], true),
        (vec!["time:day", "event:name"], json!([]), vec![Metric::Percentage], true),
        (vec!["event:page"], json!([]), vec![Metric::BounceRate], false),
        (vec!["event:page"], json!([]), vec![Metric::VisitDuration], false),
        (vec!["event:page"], json!([]), vec![Metric::TotalRevenue], false),
        (vec!["visit:source"], json!([["is", "event:goal", ["Signup"]]]), vec![Metric::ConversionRate], true),
        (vec!["event:hostname"], json!([]), vec![Metric::Visitors], false),
        (vec!["event:goal"], json!([]), vec![Metric::Visitors], false),
        (vec!["visit:link"], json!([["is", "event:page", ["/"]]]), vec![Metric::Visitors], false),
        (vec!["event:page"], json!([["is", "visitor:status", ["identified"]]]), vec![Metric::Visitors], false),
        (vec!["time:day", "time:hour"], json!([["is", "event:page", ["/"]]]), vec![Metric::Visitors], false),
    ];
    for (dimensions, filters, metrics, expected) in table {
        let dimensions: Vec<Dimension> = dimensions.into_iter().map(dimension).collect();
        assert_eq!(answers(&dimensions, &filters_of(filters.clone()), &metrics), expected, "{dimensions:?} {filters}");
    }
}

#[test]
fn every_goal_at_once_counts_as_each_goal_alone() {
    let mut held = Held::new();
    let page = |pattern: &str| {
        let pattern = crate::service::path_pattern::PathPattern::parse("pagePath", pattern.to_owned()).unwrap();
        Target::Page(pattern)
    };
    // Two goals that one pageview of `/pricing` both reaches, an event's, one nothing reaches.
    held.goals = vec![
        Goal { name: "Pricing".to_owned(), target: page("/pricing") },
        Goal { name: "Signup".to_owned(), target: Target::Event { name: "signup".to_owned(), prop: None } },
        Goal { name: "Any page".to_owned(), target: page("/*") },
        Goal { name: "Nothing".to_owned(), target: page("/nowhere") },
    ];
    let tables = held.tables();
    // filters, span
    let cases = [
        (json!([]), (0, 1000)),
        (json!([["is", "visit:source", ["Google"]]]), (0, 1000)),
        (json!([["is_not", "visit:country", ["FR"]]]), (101, 401)),
        (json!([["contains", "event:page", ["pric"], {"case_sensitive": false}]]), (0, 1000)),
        (json!([["is", "event:goal", ["Signup"]]]), (0, 1000)),
        (json!([["is", "visit:source", ["Nowhere"]]]), (0, 1000)),
    ];
    for (filters, (from, to)) in cases {
        let filters = filters_of(filters);
        let alone: Vec<(i64, i64, i64, i64)> = held
            .goals
            .iter()
            .map(|goal| {
                let mut with_goal = filters.clone();
                with_goal.push(Filter::Condition(Condition::is(Dimension::Event(EventProperty::Goal), &goal.name)));
                let found = groups(
                    tables,
                    (span(from, to), None),
                    (&[], Events::Filtered(&with_goal), Distinct::ALL),
                    Lowering::Ascii,
                )
                .expect("the copy answers");
                got(found).remove(&Vec::new()).unwrap_or_default()
            })
            .collect();
        let counted = |events: Events<'_>| -> Vec<(i64, i64, i64, i64)> {
            let found = goal_groups(tables, span(from, to), events, Lowering::Ascii).expect("the copy answers");
            found.into_iter().map(|c| (c.visitors, c.visits, c.pageviews, c.events)).collect()
        };
        assert_eq!(counted(Events::Filtered(&filters)), alone, "{filters:?}");
        let kept = kept(tables, span(from, to), &filters, Lowering::Ascii).expect("the copy answers");
        assert_eq!(counted(Events::Kept(&kept)), alone, "{filters:?} from the kept events");
    }
    // Pricing: the pageviews of `/pricing` in visits 1, 4 and 5 (`/Pricing` is another page).
    let all = goal_groups(tables, span(0, 1000), Events::Filtered(&[]), Lowering::Ascii).expect("the copy answers");
    assert_eq!((all[0].visitors, all[0].visits, all[0].pageviews), (2, 3, 3));
}

#[test]
fn goals_at_once_leave_a_property_or_a_shared_name_to_the_rows() {
    let mut held = Held::new();
    let tables = held.tables();
    assert!(goal_groups(tables, span(0, 1000), Events::Filtered(&[]), Lowering::Ascii).is_none(), "a property");
    let signup = || Goal { name: "Signup".to_owned(), target: Target::Event { name: "signup".to_owned(), prop: None } };
    held.goals = vec![signup(), signup()];
    assert!(goal_groups(held.tables(), span(0, 1000), Events::Filtered(&[]), Lowering::Ascii).is_none(), "a name");
    held.goals = vec![signup()];
    assert!(goal_groups(held.tables(), span(0, 1000), Events::Filtered(&[]), Lowering::Ascii).is_some());
}

#[test]
fn only_the_distinct_counts_asked_are_counted() {
    // metrics -> the distinct counts they read
    let table = [
        (vec![Metric::Events], Distinct { visits: false, visitors: false }),
        (vec![Metric::Pageviews, Metric::Events], Distinct { visits: false, visitors: false }),
        (vec![Metric::Visitors], Distinct { visits: false, visitors: true }),
        (vec![Metric::Percentage], Distinct { visits: false, visitors: true }),
        (vec![Metric::ConversionRate], Distinct { visits: false, visitors: true }),
        (vec![Metric::Visits, Metric::Events], Distinct { visits: true, visitors: false }),
        (vec![Metric::Visitors, Metric::Visits], Distinct::ALL),
    ];
    for (metrics, expected) in table {
        assert_eq!(Distinct::of(&metrics), expected, "{metrics:?}");
    }
    let held = Held::new();
    let tables = held.tables();
    let page = [dimension("event:page")];
    let filters = filters_of(json!([["is", "visit:source", ["Google"]]]));
    let all =
        groups(tables, (span(0, 1000), None), (&page, Events::Filtered(&filters), Distinct::ALL), Lowering::Ascii)
            .expect("the copy answers");
    for distinct in [Distinct::default(), Distinct { visits: true, visitors: false }] {
        let some =
            groups(tables, (span(0, 1000), None), (&page, Events::Filtered(&filters), distinct), Lowering::Ascii)
                .expect("the copy answers");
        assert_eq!(some.len(), all.len());
        for (key, counts) in &all {
            let found = &some[key];
            assert_eq!((found.events, found.pageviews), (counts.events, counts.pageviews), "{key:?}");
            assert_eq!(found.visits, if distinct.visits { counts.visits } else { 0 }, "{key:?}");
            assert_eq!(found.visitors, 0, "{key:?}");
        }
    }
}
