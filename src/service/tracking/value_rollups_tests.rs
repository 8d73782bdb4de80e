use super::*;
use crate::time::HOUR_MS;

/// A visit begun at `started_at` with `events` events (`human` of them a
/// person's, all pageviews) and `exit` as its last page.
fn visit(started_at: i64, events: i32, human: i32, exit: &str) -> tracked_session::Model {
    tracked_session::Model {
        id: 1,
        site_id: 1,
        visitor_id: 1,
        tracker_vid: "v".to_owned(),
        started_at,
        ended_at: started_at + 90_000,
        duration_seconds: 90,
        pageview_count: events,
        event_count: events,
        human_pageview_count: human,
        human_event_count: human,
        // Its human events all in the hour it began.
        human_hours: i64::from(human > 0),
        entry_page: Some("/".to_owned()),
        exit_page: Some(exit.to_owned()),
        referrer: None,
        channel: "Direct".to_owned(),
        utm_source: None,
        utm_medium: None,
        utm_campaign: None,
        utm_content: None,
        utm_term: None,
        is_bot: false,
        country: Some("DE".to_owned()),
        city: None,
        region: None,
        lat: None,
        lon: None,
        device_type: Some("Desktop".to_owned()),
        browser: None,
        os: None,
        source: None,
        link_id: None,
    }
}

fn key(dimension: RolledDimension, hour: i64, value: &str) -> ValueKey {
    ValueKey { site_id: 1, dimension, hour: hour * HOUR_MS, value: value.to_owned() }
}

fn tally(visits: i64, bounces: i64, pageviews: i64, seconds: i64) -> ValueTally {
    ValueTally { visits, bounces, pageviews, events: pageviews, seconds }
}

#[test]
fn a_visit_moves_between_value_rows_as_the_batch_changes_it() {
    use RolledDimension as D;
    let h = HOUR_MS;
    type Case = (&'static str, Option<tracked_session::Model>, tracked_session::Model, Vec<(ValueKey, ValueTally)>);
    let cases: Vec<Case> = vec![
        (
            "a new visit: counted at the hour it began, a bounce",
            None,
            visit(2 * h + 5, 1, 1, "/"),
            vec![
                (key(D::Total, 2, ""), tally(1, 1, 1, 90)),
                (key(D::ExitPage, 2, "/"), tally(1, 1, 1, 90)),
                (key(D::VisitHours, 2, "0"), tally(1, 1, 0, 90)),
            ],
        ),
        (
            "a second pageview: no longer a bounce, and a new exit page",
            Some(visit(2 * h + 5, 1, 1, "/")),
            visit(2 * h + 5, 2, 2, "/pricing"),
            vec![
                (key(D::Total, 2, ""), tally(0, -1, 1, 0)),
                (key(D::ExitPage, 2, "/"), tally(-1, -1, -1, -90)),
                (key(D::ExitPage, 2, "/pricing"), tally(1, 0, 2, 90)),
                (key(D::VisitHours, 2, "0"), tally(0, -1, 0, 0)),
            ],
        ),
        ("a bot's visit counts nowhere", None, visit(2 * h + 5, 2, 0, "/"), vec![]),
        (
            "a bot's event adds no pageview but ends the bounce",
            Some(visit(2 * h + 5, 1, 1, "/")),
            visit(2 * h + 5, 2, 1, "/"),
            vec![
                (key(D::Total, 2, ""), tally(0, -1, 0, 0)),
                (key(D::ExitPage, 2, "/"), tally(0, -1, 0, 0)),
                (key(D::VisitHours, 2, "0"), tally(0, -1, 0, 0)),
            ],
        ),
        (
            "an older event moves its start into the hour before",
            Some(visit(2 * h + 5, 2, 2, "/")),
            // Its events now in the hour it began and the one after.
            tracked_session::Model { human_hours: 0b11, ..visit(2 * h - 5, 2, 2, "/") },
            vec![
                (key(D::Total, 1, ""), tally(1, 0, 2, 90)),
                (key(D::Total, 2, ""), tally(-1, 0, -2, -90)),
                (key(D::ExitPage, 1, "/"), tally(1, 0, 2, 90)),
                (key(D::ExitPage, 2, "/"), tally(-1, 0, -2, -90)),
                (key(D::VisitHours, 1, "0"), tally(1, 0, 0, 90)),
                (key(D::VisitHours, 2, "0"), tally(-1, 0, 0, -90)),
                (key(D::VisitHours, 2, &HOUR_MS.to_string()), tally(1, 0, 0, 90)),
            ],
        ),
    ];
    // Every visit dimension moves as the whole does but the exit page; the
    // visit's hours move with its own.
    let shown = [D::Total, D::ExitPage, D::VisitHours];
    for (name, before, after, expected) in cases {
        let mut deltas = Deltas::new();
        before.iter().flat_map(|visit| visit_entries(visit, &[])).for_each(|entry| deltas.moved(Some(entry), None));
        let entries = visit_entries(&after, &[]);
        if after.human_event_count > 0 {
            let hours = after.human_hours.count_ones() as usize;
            assert_eq!(
                entries.len(),
                RolledDimension::OF_VISIT.len() + hours,
                "{name}: one row per dimension and hour"
            );
        }
        entries.into_iter().for_each(|entry| deltas.moved(None, Some(entry)));
        let rows: Vec<_> = deltas.into_rows().filter(|(key, _)| shown.contains(&key.dimension)).collect();
        assert_eq!(rows, expected, "{name}");
    }
}

#[test]
fn a_visit_is_counted_under_its_values_blank_or_not() {
    let entries = visit_entries(&visit(HOUR_MS, 1, 1, "/"), &[]);
    let value =
        |dimension| entries.iter().find(|(key, _)| key.dimension == dimension).map(|(key, _)| key.value.as_str());
    assert_eq!(value(RolledDimension::Country), Some("DE"));
    assert_eq!(value(RolledDimension::Device), Some("Desktop"));
    assert_eq!(value(RolledDimension::UtmSource), Some(""));
    assert_eq!(value(RolledDimension::Channel), Some("Direct"));
    assert_eq!(value(RolledDimension::Page), None, "pages are events'");
    assert_eq!(value(RolledDimension::Status), None, "no visitor's values given");
    let mut ada = crate::service::tracking::sessionize::new_visitor(1, "ada", HOUR_MS);
    ada.status = "identified".to_owned();
    let entries = visit_entries(&visit(HOUR_MS, 1, 1, "/"), &visitor_values_of(&ada));
    let value =
        |dimension| entries.iter().find(|(key, _)| key.dimension == dimension).map(|(key, _)| key.value.as_str());
    assert_eq!(value(RolledDimension::Status), Some("identified"));
    assert_eq!(value(RolledDimension::Account), Some(""), "no account is blank");
}

#[test]
fn every_stored_code_names_its_dimension() {
    for code in (0..=21).chain([101, 103, 104, 105, 106]) {
        assert_eq!(RolledDimension::of_code(code).map(RolledDimension::code), Some(code));
    }
    for code in [22, 100, 102, 107] {
        assert_eq!(RolledDimension::of_code(code), None);
    }
}

#[test]
fn a_names_values_with_a_visit_start_with_its_prefix_and_no_other_names() {
    // (name, visit value, stored)
    let cases = [
        ("signup", "Google", "6:signupGoogle"),
        ("signup", "", "6:signup"),
        ("", "Google", "0:Google"),
        ("ab", "c", "2:abc"),
        ("abc", "", "3:abc"),
        ("a:b", "2:x", "3:a:b2:x"),
        ("é", "x", "1:éx"),
    ];
    for (name, value, stored) in cases {
        assert_eq!(name_by_value(name, value), stored);
        assert!(stored.starts_with(&name_by_prefix(name)), "{stored}");
        for (other, _, _) in cases.iter().filter(|(other, _, _)| *other != name) {
            assert!(!stored.starts_with(&name_by_prefix(other)), "{stored} is not {other}'s");
        }
    }
}

#[test]
fn a_custom_event_counts_with_its_visits_source_channel_and_campaign() {
    use RolledDimension as D;
    let mut visit = visit(HOUR_MS, 2, 2, "/");
    visit.source = Some("Google".to_owned());
    visit.utm_campaign = Some("winter".to_owned());
    let entries = name_by_entries(1, EventKind::CustomEvent, "signup", 3 * HOUR_MS + 7, &visit);
    let found: Vec<(D, &str, i64)> =
        entries.iter().map(|(key, tally)| (key.dimension, key.value.as_str(), tally.events)).collect();
    assert_eq!(
        found,
        vec![
            (D::NameBySource, "6:signupGoogle", 1),
            (D::NameByChannel, "6:signupDirect", 1),
            (D::NameByUtmSource, "6:signup", 1),
            (D::NameByUtmMedium, "6:signup", 1),
            (D::NameByUtmCampaign, "6:signupwinter", 1),
        ]
    );
    assert!(entries.iter().all(|(key, _)| key.hour == 3 * HOUR_MS), "the event's own hour");
    assert!(name_by_entries(1, EventKind::Pageview, "", HOUR_MS, &visit).is_empty(), "pageviews have pages");
}

#[test]
fn an_event_counts_under_its_name_at_its_own_hour() {
    let cases = [
        (EventKind::Pageview, "", "pageview", 1),
        (EventKind::CustomEvent, "signup", "signup", 0),
        (EventKind::CustomEvent, "pageview", "pageview", 0),
    ];
    for (kind, name, shown, pageviews) in cases {
        let (key, tally) = name_entry(1, kind, name, 3 * HOUR_MS + 7);
        assert_eq!(
            key,
            ValueKey { site_id: 1, dimension: RolledDimension::Name, hour: 3 * HOUR_MS, value: shown.to_owned() }
        );
        assert_eq!(tally, ValueTally { pageviews, events: 1, ..ValueTally::default() }, "{name}");
    }
}
