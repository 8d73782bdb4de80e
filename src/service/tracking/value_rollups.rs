//! The per-value rollups Explore reads for a range that runs to now
//! (design §17), kept with each batch:
//!
//! - `value_hours`: per dimension value and UTC hour, the visits that began
//!   in the hour (visits, bounces, pageviews, events, seconds; a visit with
//!   no human event counts nowhere), and for `event:name` the human events of
//!   the hour. A visit moves between rows as the batch changes it (its
//!   counts, its exit page, an older event that moves its start), as the
//!   hourly rollups of `rollup` do. `value_days` sums them by UTC day in
//!   the same batch, so a range's whole days read one row per value and day.
//! - `visitor_values`: per visitor and value, the hour of their latest human
//!   event with it, for the visit and visitor dimensions, pages and event
//!   names. A range that starts on an hour and runs past every event holds a
//!   value's visitor exactly when that hour is in it. `value_visitor_hours`
//!   counts these rows by that hour, `value_visitor_days` by its UTC day.
//!
//! The entry and exit pages can change on a visit (an older event, a later
//! pageview): `visit_page_values` recounts the page a visit leaves. A
//! visitor's status and account can change (an identify, a company's
//! network): `visitor_dimensions` moves all their visits and their row.

use sea_orm::ActiveValue::{NotSet, Set};

use entity::{tracked_session, value_day, value_hour, visitor};

use super::{
    EventKind,
    rollup::{Deltas, Tally, hour_of},
    rollup_store::upsert_adding,
    visit_hours::{NO_PREVIOUS, human_hours},
    writes::Writes,
};
use crate::time::start_of_day;

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
    /// The whole site's visits by each hour they have a human event in, with
    /// their bounces and seconds: the value is the visit's previous such
    /// hour (`0` for none), so a time bucket's visits are the rows of its
    /// hours whose previous hour lies in an earlier bucket.
    VisitHours = 19,
    /// `visitor:status` and `visitor:account`: the visitor's current value,
    /// so all their visits and their row move when it changes.
    Status = 20,
    Account = 21,
    /// A custom event's name with its visit's source (and so on below): the
    /// event counted at its own hour under `name_by_value` of the two, so a
    /// goal's or a name's conversions by source come from the rollups.
    NameBySource = 101,
    NameByChannel = 103,
    NameByUtmSource = 104,
    NameByUtmMedium = 105,
    NameByUtmCampaign = 106,
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

    /// The visitor dimensions, read from a visit's visitor.
    pub const OF_VISITOR: [RolledDimension; 2] = [RolledDimension::Status, RolledDimension::Account];

    /// Each visit dimension a custom event's name is also kept with, and
    /// the dimension that keeps the pair.
    pub const NAME_BY: [(RolledDimension, RolledDimension); 5] = [
        (RolledDimension::Source, RolledDimension::NameBySource),
        (RolledDimension::Channel, RolledDimension::NameByChannel),
        (RolledDimension::UtmSource, RolledDimension::NameByUtmSource),
        (RolledDimension::UtmMedium, RolledDimension::NameByUtmMedium),
        (RolledDimension::UtmCampaign, RolledDimension::NameByUtmCampaign),
    ];

    pub fn code(self) -> i16 {
        self as i16
    }

    /// The dimension a stored code names.
    pub fn of_code(code: i16) -> Option<Self> {
        let event_dimensions = [RolledDimension::Page, RolledDimension::Name, RolledDimension::VisitHours];
        let pairs = Self::NAME_BY.map(|(_, pair)| pair);
        let all = Self::OF_VISIT.into_iter().chain(Self::OF_VISITOR).chain(event_dimensions).chain(pairs);
        all.into_iter().find(|dimension| dimension.code() == code)
    }

    /// The dimension that keeps custom events' names with this visit
    /// dimension, if one does.
    pub fn name_by(self) -> Option<RolledDimension> {
        Self::NAME_BY.iter().find(|(visit, _)| *visit == self).map(|(_, pair)| *pair)
    }

    /// Whether it counts events at their own hour (pages, names, names by a
    /// visit value), not visits at the hour they began.
    pub fn is_event(self) -> bool {
        matches!(self, RolledDimension::Page | RolledDimension::Name) || self.code() > 100
    }

    /// Whether its visitor rows are kept (the visits' hours have none).
    pub fn has_visitor_rows(self) -> bool {
        self != RolledDimension::VisitHours
    }

    /// Whether a visit's events move its value (entry and exit pages, whose
    /// visitor rows `visit_page_values` keeps).
    pub fn moves_on_visit(self) -> bool {
        matches!(self, RolledDimension::EntryPage | RolledDimension::ExitPage)
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
            D::Page
            | D::Name
            | D::VisitHours
            | D::Status
            | D::Account
            | D::NameBySource
            | D::NameByChannel
            | D::NameByUtmSource
            | D::NameByUtmMedium
            | D::NameByUtmCampaign => return None,
        };
        Some(value.as_deref().unwrap_or(""))
    }

    /// A visitor's value, `""` for none; `None` for all but the visitor dimensions.
    pub fn of_visitor(self, visitor: &visitor::Model) -> Option<&str> {
        match self {
            RolledDimension::Status => Some(&visitor.status),
            RolledDimension::Account => Some(visitor.account_key.as_deref().unwrap_or("")),
            _ => None,
        }
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

/// What a visit with a human event adds to each row it is counted in by its value.
fn visit_tally(visit: &tracked_session::Model) -> ValueTally {
    ValueTally {
        visits: 1,
        bounces: i64::from(visit.event_count <= 1),
        pageviews: i64::from(visit.human_pageview_count),
        events: i64::from(visit.human_event_count),
        seconds: visit.duration_seconds,
    }
}

/// The rows a visit is counted in by its visitor's values (`values`, as
/// `visitor_values_of` gives them): one per visitor dimension at the hour
/// it began; none without a human event.
pub(crate) fn visitor_entries(
    visit: &tracked_session::Model,
    values: &[(RolledDimension, String)],
) -> Vec<(ValueKey, ValueTally)> {
    if visit.human_event_count <= 0 {
        return Vec::new();
    }
    let (hour, tally) = (hour_of(visit.started_at), visit_tally(visit));
    values
        .iter()
        .map(|(dimension, value)| {
            (ValueKey { site_id: visit.site_id, dimension: *dimension, hour, value: value.clone() }, tally)
        })
        .collect()
}

/// A visitor's value in each visitor dimension.
pub(crate) fn visitor_values_of(visitor: &visitor::Model) -> Vec<(RolledDimension, String)> {
    RolledDimension::OF_VISITOR
        .iter()
        .filter_map(|&dimension| Some((dimension, dimension.of_visitor(visitor)?.to_owned())))
        .collect()
}

/// The rows a visit is counted in: one per visit dimension, visitor
/// dimension (by `visitor`'s values) and the whole site at the hour it
/// began, and one per hour it has a human event in (`VisitHours`); none
/// without a human event (Explore counts a visit by its human events, a
/// bounce and its length by the whole visit).
pub(crate) fn visit_entries(
    visit: &tracked_session::Model,
    visitor: &[(RolledDimension, String)],
) -> Vec<(ValueKey, ValueTally)> {
    if visit.human_event_count <= 0 {
        return Vec::new();
    }
    let tally = visit_tally(visit);
    let hour = hour_of(visit.started_at);
    let by_value = RolledDimension::OF_VISIT.iter().filter_map(|&dimension| {
        let value = dimension.of_visit(visit)?.to_owned();
        Some((ValueKey { site_id: visit.site_id, dimension, hour, value }, tally))
    });
    let by_visitor = visitor_entries(visit, visitor);
    // Its pageviews and events are counted at their own hours by name.
    let at_hour = ValueTally { pageviews: 0, events: 0, ..tally };
    let by_hour = human_hours(visit.human_hours, visit.started_at).map(|(hour, previous)| {
        let value = previous.unwrap_or(NO_PREVIOUS).to_string();
        (ValueKey { site_id: visit.site_id, dimension: RolledDimension::VisitHours, hour, value }, at_hour)
    });
    by_value.chain(by_visitor).chain(by_hour).collect()
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

/// The stored value of a custom event's `name` with a visit's `value`: the
/// name's length in characters, `:`, the name, then the value. The length
/// makes the name's part unambiguous whatever either holds, so the rows of
/// one name are those whose value starts with `name_by_prefix(name)`.
pub fn name_by_value(name: &str, value: &str) -> String {
    format!("{}{value}", name_by_prefix(name))
}

/// What every `name_by_value` of `name` starts with.
pub fn name_by_prefix(name: &str) -> String {
    format!("{}:{name}", name.chars().count())
}

/// A custom event's values with its visit in the `NAME_BY` dimensions
/// (none for a pageview: pages have their own rows).
pub(crate) fn name_by_values<'v>(
    kind: EventKind,
    name: &'v str,
    visit: &'v tracked_session::Model,
) -> impl Iterator<Item = (RolledDimension, String)> + 'v {
    let custom = kind == EventKind::CustomEvent;
    RolledDimension::NAME_BY.iter().filter(move |_| custom).filter_map(move |(of_visit, pair)| {
        let value = of_visit.of_visit(visit)?;
        Some((*pair, name_by_value(name, value)))
    })
}

/// The rows a human custom event is counted in with its visit's values.
pub(crate) fn name_by_entries(
    site_id: i64,
    kind: EventKind,
    name: &str,
    timestamp: i64,
    visit: &tracked_session::Model,
) -> Vec<(ValueKey, ValueTally)> {
    let hour = hour_of(timestamp);
    name_by_values(kind, name, visit)
        .map(|(dimension, value)| {
            (ValueKey { site_id, dimension, hour, value }, ValueTally { events: 1, ..ValueTally::default() })
        })
        .collect()
}

/// The same moves by UTC day: `key.hour` becomes its day's start, moves
/// of one day add up, and days whose moves cancel are left out (a visitor
/// row whose latest hour moves within its day). Key order is kept.
pub(crate) fn by_day<T: Tally>(rows: &[(ValueKey, T)]) -> Vec<(ValueKey, T)> {
    let mut days: Deltas<ValueKey, T> = Deltas::new();
    for (key, tally) in rows {
        let day = ValueKey { hour: start_of_day(key.hour), ..key.clone() };
        days.moved(None, Some((day, *tally)));
    }
    days.into_rows().collect()
}

/// Adds moves to the hourly value rows and their days (the writer's, an
/// erasure's).
pub(crate) fn add_value_moves(writes: &mut Writes, deltas: Deltas<ValueKey, ValueTally>) {
    let hours: Vec<(ValueKey, ValueTally)> = deltas.into_rows().collect();
    let days = by_day(&hours);
    let hours: Vec<value_hour::ActiveModel> = hours
        .into_iter()
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
    {
        use value_hour::Column as C;
        upsert_adding::<value_hour::Entity>(
            writes,
            hours,
            &[C::SiteId, C::Dimension, C::Hour, C::Value],
            &[C::Visits, C::Bounces, C::Pageviews, C::Events, C::Seconds],
        );
    }
    let days: Vec<value_day::ActiveModel> = days
        .into_iter()
        .map(|(key, tally)| value_day::ActiveModel {
            id: NotSet,
            site_id: Set(key.site_id),
            dimension: Set(key.dimension.code()),
            value: Set(key.value),
            day: Set(key.hour),
            visits: Set(tally.visits),
            bounces: Set(tally.bounces),
            pageviews: Set(tally.pageviews),
            events: Set(tally.events),
            seconds: Set(tally.seconds),
        })
        .collect();
    use value_day::Column as C;
    upsert_adding::<value_day::Entity>(
        writes,
        days,
        &[C::SiteId, C::Dimension, C::Day, C::Value],
        &[C::Visits, C::Bounces, C::Pageviews, C::Events, C::Seconds],
    );
}

#[cfg(test)]
#[path = "value_rollups_tests.rs"]
mod tests;
