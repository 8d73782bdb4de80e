use super::*;
use crate::time::HOUR_MS;

const H: i64 = HOUR_MS;
const EXIT: RolledDimension = RolledDimension::ExitPage;

fn key(value: &str) -> VisitorValueKey {
    VisitorValueKey { visitor_id: 7, dimension: EXIT, value: value.to_owned() }
}

/// Visit `session_id` of visitor 7 moved from `before` to `after` (page, hour).
fn moved(session_id: i64, before: Option<(&str, i64)>, after: Option<(&str, i64)>) -> PageMove {
    let held = |page: Option<(&str, i64)>| page.map(|(page, hour)| (page.to_owned(), hour * H));
    PageMove { session_id, visitor_id: 7, site_id: 3, dimension: EXIT, before: held(before), after: held(after) }
}

/// A stored visit of visitor 7 that holds `page` with its latest hour.
fn other(session_id: i64, page: &str, hour: i64) -> OtherVisit {
    OtherVisit { key: key(page), session_id, latest_hour: hour * H }
}

#[test]
fn a_page_a_visit_leaves_is_recounted_from_the_visitors_other_visits() {
    type Case<'a> = (&'a str, Vec<PageMove>, &'a [(&'a str, i64)], Vec<OtherVisit>, &'a [(&'a str, Option<i64>)]);
    // (name, moves, stored rows (page, hour), stored visits holding a left page, rows written (none: deleted))
    let cases: Vec<Case> = vec![
        (
            "the only visit with the page leaves it",
            vec![moved(1, Some(("/a", 10)), Some(("/b", 10)))],
            &[("/a", 10)],
            vec![other(1, "/a", 10)],
            &[("/a", None), ("/b", Some(10))],
        ),
        (
            "an older visit still holds the page",
            vec![moved(1, Some(("/a", 10)), Some(("/b", 11)))],
            &[("/a", 10), ("/b", 4)],
            vec![other(1, "/a", 10), other(2, "/a", 6)],
            &[("/a", Some(6)), ("/b", Some(11))],
        ),
        (
            "a later visit holds it: nothing moves but the page reached",
            vec![moved(1, Some(("/a", 10)), Some(("/b", 10)))],
            &[("/a", 12), ("/b", 10)],
            vec![other(2, "/a", 12)],
            &[],
        ),
        (
            "the same page, a later hour",
            vec![moved(1, Some(("/a", 10)), Some(("/a", 11)))],
            &[("/a", 10)],
            vec![],
            &[("/a", Some(11))],
        ),
        (
            "the same page, an hour another visit already passed",
            vec![moved(1, Some(("/a", 10)), Some(("/a", 11)))],
            &[("/a", 14)],
            vec![],
            &[],
        ),
        (
            "one visit of the batch leaves the page another reaches",
            vec![moved(1, Some(("/a", 10)), Some(("/b", 10))), moved(2, Some(("/c", 8)), Some(("/a", 9)))],
            &[("/a", 10), ("/c", 8)],
            vec![other(1, "/a", 10)],
            &[("/a", Some(9)), ("/b", Some(10)), ("/c", None)],
        ),
        ("a new visit's first page", vec![moved(1, None, Some(("/a", 10)))], &[], vec![], &[("/a", Some(10))]),
    ];
    for (name, moves, stored, others, expected) in cases {
        let stored: StoredHours = stored.iter().map(|(page, hour)| (key(page), hour * H)).collect();
        let got: Vec<(String, Option<i64>)> =
            targets(&moves, &stored, &others).into_iter().map(|(key, (_, hour))| (key.value, hour)).collect();
        let expected: Vec<(String, Option<i64>)> =
            expected.iter().map(|(page, hour)| (page.to_string(), hour.map(|hour| hour * H))).collect();
        assert_eq!(got, expected, "{name}");
    }
}

#[test]
fn the_rows_a_move_touches_are_the_pages_left_and_reached() {
    let moves = [moved(1, Some(("/a", 1)), Some(("/b", 1))), moved(2, Some(("/c", 1)), Some(("/c", 2)))];
    let keys: Vec<String> = keys(&moves).into_keys().map(|key| key.value).collect();
    assert_eq!(keys, ["/a", "/b", "/c"]);
    assert_eq!(moves[0].left(), Some(key("/a")));
    assert_eq!(moves[1].left(), None, "a visit that keeps its page leaves none");
}
