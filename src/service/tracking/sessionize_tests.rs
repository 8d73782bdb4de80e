//! The session rules, table-driven: 30 minutes of inactivity, 24 hours at
//! most, a new campaign; and what an event does to a visitor's totals.

use std::sync::Arc;

use super::*;
use crate::{
    enrich::{ClientInfo, Geo, source::Utm},
    service::tracking::Client,
    time::{HOUR_MS, MINUTE_MS},
};

const T0: i64 = 1_800_000_000_000;

fn client() -> Arc<Client> {
    Arc::new(Client {
        info: Arc::new(ClientInfo {
            browser: Some("Firefox".to_owned()),
            os: Some("Linux".to_owned()),
            device_type: "desktop".to_owned(),
            is_bot: false,
        }),
        geo: Geo::default(),
        network: None,
    })
}

pub(in crate::service::tracking) fn event(kind: EventKind, ts: i64, campaign: Option<&str>) -> CollectedEvent {
    CollectedEvent {
        site_id: 1,
        tracker_vid: "vid-1".to_owned(),
        kind,
        event_name: String::new(),
        page: "/".to_owned(),
        hostname: None,
        revenue: None,
        page_title: None,
        referrer: None,
        external_referrer_host: None,
        utm: Utm {
            source: campaign.map(|_| "news".to_owned()),
            medium: campaign.map(|_| "email".to_owned()),
            campaign: campaign.map(str::to_owned),
            ..Utm::default()
        },
        click_key: None,
        props: "{}".to_owned(),
        engaged_ms: 0,
        high_value: false,
        timestamp: ts,
        client: client(),
        network: None,
    }
}

/// An identify of `tracker_vid` on site 1 through the API, naming a user id
/// or an email.
pub(in crate::service::tracking) fn identify_command(
    tracker_vid: &str,
    user_id: Option<&str>,
    email: Option<&str>,
    identified_at: i64,
) -> IdentifyCommand {
    IdentifyCommand {
        site_id: 1,
        tracker_vid: tracker_vid.to_owned(),
        user_id: user_id.map(str::to_owned),
        email: email.map(str::to_owned),
        name: None,
        company: None,
        phone: None,
        traits: "{}".to_owned(),
        source: "api".to_owned(),
        source_detail: None,
        identified_at,
    }
}

fn batch_with_visitor<'a>() -> Batch<'a> {
    let mut batch = Batch::new();
    let mut visitor = new_visitor(1, "vid-1", T0);
    visitor.id = 7;
    batch.add_visitor(visitor, None, false);
    batch
}

/// Feeds (offset from T0, campaign) pageviews and answers the session each lands in.
fn sessions_of(events: &[(i64, Option<&str>)]) -> (Vec<usize>, Batch<'static>) {
    let events: &'static [CollectedEvent] =
        Box::leak(events.iter().map(|(offset, campaign)| event(EventKind::Pageview, T0 + offset, *campaign)).collect());
    let mut batch = batch_with_visitor();
    for event in events {
        batch.record(event);
    }
    let landed = batch.events.iter().map(|pending| pending.session.get()).collect();
    (landed, batch)
}

/// (name, pageviews as (offset, campaign), the session each lands in).
type SessionCase<'a> = (&'a str, &'a [(i64, Option<&'a str>)], &'a [usize]);
/// (name, events as (kind, offset), sessions, engaged seconds).
type PingCase<'a> = (&'a str, &'a [(EventKind, i64)], usize, i64);

#[test]
fn session_rules() {
    let min = MINUTE_MS;
    let cases: &[SessionCase] = &[
        ("one event", &[(0, None)], &[0]),
        ("within 30 minutes", &[(0, None), (29 * min, None)], &[0, 0]),
        ("exactly 30 minutes continues", &[(0, None), (30 * min, None)], &[0, 0]),
        ("past 30 minutes starts anew", &[(0, None), (30 * min + 1, None)], &[0, 1]),
        ("a chain of short gaps stays one visit", &[(0, None), (20 * min, None), (40 * min, None)], &[0, 0, 0]),
        (
            "24 hours at most, however active",
            &(0..60).map(|i| (i * 29 * min, None)).collect::<Vec<_>>(),
            &(0..60).map(|i| usize::from(i * 29 * min >= 24 * HOUR_MS)).collect::<Vec<_>>(),
        ),
        (
            "24 hours at most when they arrive newest first",
            &(0..60).map(|i| (48 * HOUR_MS - i * 29 * min, None)).collect::<Vec<_>>(),
            &(0..60).map(|i| usize::from(i * 29 * min >= 24 * HOUR_MS)).collect::<Vec<_>>(),
        ),
        ("a new campaign starts anew", &[(0, Some("spring")), (min, Some("summer"))], &[0, 1]),
        ("the same campaign continues", &[(0, Some("spring")), (min, Some("spring"))], &[0, 0]),
        ("no campaign continues a campaign", &[(0, Some("spring")), (min, None)], &[0, 0]),
        ("a campaign after none starts anew", &[(0, None), (min, Some("spring"))], &[0, 1]),
        ("out of order within 30 minutes joins", &[(40 * min, None), (15 * min, None)], &[0, 0]),
        ("out of order past 30 minutes does not", &[(40 * min, None), (5 * min, None)], &[0, 1]),
    ];
    for (name, events, expected) in cases {
        let (landed, batch) = sessions_of(events);
        assert_eq!(&landed, expected, "{name}");
        let sessions = expected.iter().max().map_or(0, |last| last + 1);
        assert_eq!(batch.visitors[VisitorIx::new(0)].model.total_sessions as usize, sessions, "{name}");
    }
}

#[test]
fn a_ping_extends_an_open_session_but_never_opens_one() {
    let cases: &[PingCase] = &[
        ("ping alone", &[(EventKind::Ping, 0)], 0, 0),
        ("ping after a pageview", &[(EventKind::Pageview, 0), (EventKind::Ping, 90_000)], 1, 90),
        ("ping after the session ended", &[(EventKind::Pageview, 0), (EventKind::Ping, 31 * MINUTE_MS)], 1, 0),
    ];
    for (name, events, sessions, duration) in cases {
        let events: &'static [CollectedEvent] =
            Box::leak(events.iter().map(|(kind, offset)| event(*kind, T0 + offset, None)).collect());
        let mut batch = batch_with_visitor();
        events.iter().for_each(|e| batch.record(e));
        let visitor = &batch.visitors[VisitorIx::new(0)].model;
        assert_eq!(visitor.total_sessions as usize, *sessions, "{name}");
        assert_eq!(visitor.total_time_seconds, *duration, "{name}");
        assert_eq!(batch.events.iter().filter(|e| e.event.kind != EventKind::Ping).count(), *sessions, "{name}");
    }
}

#[test]
fn an_open_stored_session_is_continued_not_reopened() {
    let mut batch = Batch::new();
    let mut visitor = new_visitor(1, "vid-1", T0);
    visitor.id = 7;
    visitor.total_sessions = 1;
    let first = event(EventKind::Pageview, T0, None);
    let mut stored = new_session(7, &first, None);
    stored.id = 70;
    stored.pageview_count = 1;
    stored.event_count = 1;
    batch.add_visitor(visitor, Some(stored), false);
    let next: &'static CollectedEvent = Box::leak(Box::new(event(EventKind::Pageview, T0 + 10 * MINUTE_MS, None)));
    batch.record(next);
    batch.rescore();
    let session = &batch.sessions[SessionIx::new(0)];
    assert!(!session.is_new());
    assert_eq!((session.model.id, session.model.pageview_count, session.model.duration_seconds), (70, 2, 600));
    let visitor = &batch.visitors[VisitorIx::new(0)];
    assert_eq!((visitor.model.total_sessions, visitor.model.total_time_seconds), (1, 600));
    assert_eq!(visitor.model.score, scoring::stored_points(&visitor.model));
}

#[test]
fn identify_marks_the_visitor_and_keeps_history() {
    let command: &'static IdentifyCommand =
        Box::leak(Box::new(identify_command("vid-1", None, Some("Ada@Example.com"), T0)));
    let mut batch = batch_with_visitor();
    batch.identify(command);
    let visitor = &batch.visitors[VisitorIx::new(0)].model;
    assert_eq!(visitor.status, "identified");
    assert_eq!(visitor.identified_user_id.as_deref(), Some("Ada@Example.com"));
    assert_eq!(batch.identities.len(), 1);
}
