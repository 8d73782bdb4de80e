//! The per-value rollups Explore reads for a range that runs to now
//! (design §17), kept with each batch:
//!
//! - `value_hours`: per dimension value and UTC hour, the visits that began
//!   in the hour (visits, bounces, pageviews, events, seconds; a visit with
//!   no human event counts nowhere), and for `event:name` the human events of
//!   the hour. A visit moves between rows as the batch changes it (its
//!   counts, its exit page, an older event that moves its start), as the
//!   hourly rollups of `rollup` do.
//! - `visitor_values`: per visitor and value, the hour of their latest human
//!   event with it, for the values a visit never changes and for pages and
//!   event names. A range that starts on an hour and runs past every event
//!   holds a value's visitor exactly when that hour is in it.
//!
//! The entry and exit pages can change on a visit (an older event, a later
//! pageview), so a visitor's latest hour with one of them cannot only grow:
//! they have hourly rows but no visitor rows.

use sea_orm::ActiveValue::{NotSet, Set};

use entity::{tracked_session, value_hour};

use super::{
    EventKind,
    rollup::{Deltas, Tally, hour_of},
    rollup_store::upsert_adding,
    writes::Writes,
};

/// An Explore dimension the rollups keep, with its stored code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum RolledDimension {
    /// The whole site (no dimension).
    Total = 0,
    Source = 1,
    Referrer = 2,
    Channel = 3,
    UtmSource = 4,
    UtmMedium = 5,
    UtmCampaign = 6,
    UtmContent = 7,
    UtmTerm = 8,
    Device = 9,
    Browser = 10,
    Os = 11,
    Country = 12,
    Region = 13,
    City = 14,
    EntryPage = 15,
    ExitPage = 16,
    /// `event:page`: visitor rows only; its hours are `page_hours`.
    Page = 17,
    /// `event:name`.
    Name = 18,
}

impl RolledDimension {
    /// The whole site and the visit dimensions, read from a visit's row.
    pub const OF_VISIT: [RolledDimension; 17] = [
        RolledDimension::Total,
        RolledDimension::Source,
        RolledDimension::Referrer,
        RolledDimension::Channel,
        RolledDimension::UtmSource,
        RolledDimension::UtmMedium,
        RolledDimension::UtmCampaign,
        RolledDimension::UtmContent,
        RolledDimension::UtmTerm,
        RolledDimension::Device,
        RolledDimension::Browser,
        RolledDimension::Os,
        RolledDimension::Country,
        RolledDimension::Region,
        RolledDimension::City,
        RolledDimension::EntryPage,
        RolledDimension::ExitPage,
    ];

    pub fn code(self) -> i16 {
        self as i16
    }

    /// The dimension a stored code names.
    pub fn of_code(code: i16) -> Option<Self> {
        let event_dimensions = [RolledDimension::Page, RolledDimension::Name];
        Self::OF_VISIT.into_iter().chain(event_dimensions).find(|dimension| dimension.code() == code)
    }

    /// Whether its visitor rows are kept: the value never changes on a visit.
    pub fn has_visitor_rows(self) -> bool {
        !matches!(self, RolledDimension::EntryPage | RolledDimension::ExitPage)
    }

    /// A visit's value, `""` for none; `None` for an event dimension.
    pub fn of_visit(self, visit: &tracked_session::Model) -> Option<&str> {
        use RolledDimension as D;
        let value = match self {
            D::Total => return Some(""),
            D::Channel => return Some(&visit.channel),
            D::Source => &visit.source,
            D::Referrer => &visit.referrer,
            D::UtmSource => &visit.utm_source,
            D::UtmMedium => &visit.utm_medium,
            D::UtmCampaign => &visit.utm_campaign,
            D::UtmContent => &visit.utm_content,
            D::UtmTerm => &visit.utm_term,
            D::Device => &visit.device_type,
            D::Browser => &visit.browser,
            D::Os => &visit.os,
            D::Country => &visit.country,
            D::Region => &visit.region,
            D::City => &visit.city,
            D::EntryPage => &visit.entry_page,
            D::ExitPage => &visit.exit_page,
            D::Page | D::Name => return None,
        };
        Some(value.as_deref().unwrap_or(""))
    }
}

/// The `value_hours` row something is counted in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ValueKey {
    pub site_id: i64,
    pub dimension: RolledDimension,
    pub hour: i64,
    pub value: String,
}

/// What a visit (or an event, for `event:name`) adds to its row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ValueTally {
    pub visits: i64,
    pub bounces: i64,
    pub pageviews: i64,
    pub events: i64,
    pub seconds: i64,
}

impl Tally for ValueTally {
    fn add(&mut self, other: Self, sign: i64) {
        self.visits += sign * other.visits;
        self.bounces += sign * other.bounces;
        self.pageviews += sign * other.pageviews;
        self.events += sign * other.events;
        self.seconds += sign * other.seconds;
    }
}

/// The rows a visit is counted in, one per visit dimension and the whole
/// site, at the hour it began; none without a human event (Explore counts
/// a visit by its human events, a bounce and its length by the whole visit).
pub(crate) fn visit_entries(visit: &tracked_session::Model) -> Vec<(ValueKey, ValueTally)> {
    if visit.human_event_count <= 0 {
        return Vec::new();
    }
    let tally = ValueTally {
        visits: 1,
        bounces: i64::from(visit.event_count <= 1),
        pageviews: i64::from(visit.human_pageview_count),
        events: i64::from(visit.human_event_count),
        seconds: visit.duration_seconds,
    };
    let hour = hour_of(visit.started_at);
    RolledDimension::OF_VISIT
        .iter()
        .filter_map(|&dimension| {
            let value = dimension.of_visit(visit)?.to_owned();
            Some((ValueKey { site_id: visit.site_id, dimension, hour, value }, tally))
        })
        .collect()
}

/// An event's `event:name` value, as Explore shows it.
pub(crate) fn event_name(kind: EventKind, name: &str) -> &str {
    if kind == EventKind::Pageview { "pageview" } else { name }
}

/// The `event:name` row a human event is counted in.
pub(crate) fn name_entry(site_id: i64, kind: EventKind, name: &str, timestamp: i64) -> (ValueKey, ValueTally) {
    let key = ValueKey {
        site_id,
        dimension: RolledDimension::Name,
        hour: hour_of(timestamp),
        value: event_name(kind, name).to_owned(),
    };
    (key, ValueTally { pageviews: i64::from(kind == EventKind::Pageview), events: 1, ..ValueTally::default() })
}

/// Adds moves to the hourly value rows (the writer's, an erasure's).
pub(crate) fn add_value_moves(writes: &mut Writes, deltas: Deltas<ValueKey, ValueTally>) {
    let rows: Vec<value_hour::ActiveModel> = deltas
        .into_rows()
        .map(|(key, tally)| value_hour::ActiveModel {
            id: NotSet,
            site_id: Set(key.site_id),
            dimension: Set(key.dimension.code()),
            value: Set(key.value),
            hour: Set(key.hour),
            visits: Set(tally.visits),
            bounces: Set(tally.bounces),
            pageviews: Set(tally.pageviews),
            events: Set(tally.events),
            seconds: Set(tally.seconds),
        })
        .collect();
    use value_hour::Column as C;
    upsert_adding::<value_hour::Entity>(
        writes,
        rows,
        &[C::SiteId, C::Dimension, C::Hour, C::Value],
        &[C::Visits, C::Bounces, C::Pageviews, C::Events, C::Seconds],
    );
}

#[cfg(test)]
mod tests {
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
                vec![(key(D::Total, 2, ""), tally(1, 1, 1, 90)), (key(D::ExitPage, 2, "/"), tally(1, 1, 1, 90))],
            ),
            (
                "a second pageview: no longer a bounce, and a new exit page",
                Some(visit(2 * h + 5, 1, 1, "/")),
                visit(2 * h + 5, 2, 2, "/pricing"),
                vec![
                    (key(D::Total, 2, ""), tally(0, -1, 1, 0)),
                    (key(D::ExitPage, 2, "/"), tally(-1, -1, -1, -90)),
                    (key(D::ExitPage, 2, "/pricing"), tally(1, 0, 2, 90)),
                ],
            ),
            ("a bot's visit counts nowhere", None, visit(2 * h + 5, 2, 0, "/"), vec![]),
            (
                "a bot's event adds no pageview but ends the bounce",
                Some(visit(2 * h + 5, 1, 1, "/")),
                visit(2 * h + 5, 2, 1, "/"),
                vec![(key(D::Total, 2, ""), tally(0, -1, 0, 0)), (key(D::ExitPage, 2, "/"), tally(0, -1, 0, 0))],
            ),
            (
                "an older event moves its start into the hour before",
                Some(visit(2 * h + 5, 2, 2, "/")),
                visit(2 * h - 5, 2, 2, "/"),
                vec![
                    (key(D::Total, 1, ""), tally(1, 0, 2, 90)),
                    (key(D::Total, 2, ""), tally(-1, 0, -2, -90)),
                    (key(D::ExitPage, 1, "/"), tally(1, 0, 2, 90)),
                    (key(D::ExitPage, 2, "/"), tally(-1, 0, -2, -90)),
                ],
            ),
        ];
        // Every visit dimension moves as the whole does but the exit page.
        let shown = [D::Total, D::ExitPage];
        for (name, before, after, expected) in cases {
            let mut deltas = Deltas::new();
            before.iter().flat_map(visit_entries).for_each(|entry| deltas.moved(Some(entry), None));
            let entries = visit_entries(&after);
            if after.human_event_count > 0 {
                assert_eq!(entries.len(), RolledDimension::OF_VISIT.len(), "{name}: one row per dimension");
            }
            entries.into_iter().for_each(|entry| deltas.moved(None, Some(entry)));
            let rows: Vec<_> = deltas.into_rows().filter(|(key, _)| shown.contains(&key.dimension)).collect();
            assert_eq!(rows, expected, "{name}");
        }
    }

    #[test]
    fn a_visit_is_counted_under_its_values_blank_or_not() {
        let entries = visit_entries(&visit(HOUR_MS, 1, 1, "/"));
        let value =
            |dimension| entries.iter().find(|(key, _)| key.dimension == dimension).map(|(key, _)| key.value.as_str());
        assert_eq!(value(RolledDimension::Country), Some("DE"));
        assert_eq!(value(RolledDimension::Device), Some("Desktop"));
        assert_eq!(value(RolledDimension::UtmSource), Some(""));
        assert_eq!(value(RolledDimension::Channel), Some("Direct"));
        assert_eq!(value(RolledDimension::Page), None, "pages are events'");
    }

    #[test]
    fn every_stored_code_names_its_dimension() {
        for code in 0..=18 {
            assert_eq!(RolledDimension::of_code(code).map(RolledDimension::code), Some(code));
        }
        assert_eq!(RolledDimension::of_code(19), None);
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
}
