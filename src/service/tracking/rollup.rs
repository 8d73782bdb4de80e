//! How a write batch moves visitors and sessions between their hourly rollup
//! rows, worked out with no I/O. A visitor is counted in the hour it was last
//! seen (once by country, once by last touch) and a session in the hour it
//! ended; when a batch moves either, its old row loses it and its new row
//! gains it, so each is counted exactly once.

use std::collections::BTreeMap;

use entity::{tracked_session, visitor};

use crate::time::HOUR_MS;

/// The rollup row a visitor is counted in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct VisitorKey {
    pub site_id: i64,
    pub is_bot: bool,
    pub hour: i64,
    /// Empty when unknown.
    pub country: String,
}

/// The last-touch rollup row a visitor is counted in: the hour it was last
/// seen, its latest visit's channel and campaign, and whether it submitted
/// a form (the lead desk's filters that match many visitors).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TouchKey {
    pub site_id: i64,
    pub is_bot: bool,
    pub hour: i64,
    /// Empty before the first visit.
    pub channel: String,
    /// Empty when the latest visit had none.
    pub campaign: String,
    pub submitted_form: bool,
}

/// What one visitor adds to its row: itself, and whether it is identified.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct VisitorTally {
    pub visitors: i64,
    pub identified: i64,
}

/// The rollup row a session is counted in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SessionKey {
    pub site_id: i64,
    pub is_bot: bool,
    pub hour: i64,
    pub channel: String,
}

/// What one session adds to its row: itself, and its length.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SessionTally {
    pub sessions: i64,
    pub seconds: i64,
}

impl VisitorTally {
    /// What one visitor adds to a row it is counted in.
    fn of(model: &visitor::Model) -> Self {
        VisitorTally { visitors: 1, identified: i64::from(model.status == "identified") }
    }
}

pub(crate) fn hour_of(ms: i64) -> i64 {
    ms.div_euclid(HOUR_MS) * HOUR_MS
}

pub(crate) fn visitor_entry(model: &visitor::Model) -> (VisitorKey, VisitorTally) {
    (
        VisitorKey {
            site_id: model.site_id,
            is_bot: model.is_bot,
            hour: hour_of(model.last_seen),
            country: model.country.clone().unwrap_or_default(),
        },
        VisitorTally::of(model),
    )
}

pub(crate) fn touch_entry(model: &visitor::Model) -> (TouchKey, VisitorTally) {
    (
        TouchKey {
            site_id: model.site_id,
            is_bot: model.is_bot,
            hour: hour_of(model.last_seen),
            channel: model.last_channel.clone().unwrap_or_default(),
            campaign: model.last_campaign.clone().unwrap_or_default(),
            submitted_form: model.form_submits > 0,
        },
        VisitorTally::of(model),
    )
}

pub(crate) fn session_entry(model: &tracked_session::Model) -> (SessionKey, SessionTally) {
    (
        SessionKey {
            site_id: model.site_id,
            is_bot: model.is_bot,
            hour: hour_of(model.ended_at),
            channel: model.channel.clone(),
        },
        SessionTally { sessions: 1, seconds: model.duration_seconds },
    )
}

/// The account row a visitor is counted in (design §18): its site and key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct AccountKey {
    pub site_id: i64,
    pub key: String,
}

/// What one visitor adds to its account: itself, whether it is a known
/// person, and its engagement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct AccountTally {
    pub visitors: i64,
    pub people: i64,
    pub sessions: i64,
    pub pageviews: i64,
    pub engaged_seconds: i64,
    pub high_value_views: i64,
    pub form_submits: i64,
}

/// The account a visitor counts in, if it has one; bots count in none.
pub(crate) fn account_entry(model: &visitor::Model) -> Option<(AccountKey, AccountTally)> {
    let key = model.account_key.clone().filter(|_| !model.is_bot)?;
    Some((
        AccountKey { site_id: model.site_id, key },
        AccountTally {
            visitors: 1,
            people: i64::from(model.status == "identified"),
            sessions: i64::from(model.total_sessions),
            pageviews: i64::from(model.total_pageviews),
            engaged_seconds: model.total_time_seconds,
            high_value_views: i64::from(model.high_value_views),
            form_submits: i64::from(model.form_submits),
        },
    ))
}

/// What a batch saw of an account besides its tallies: the name a visitor
/// gave it and when that visitor was first and last seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AccountSeen {
    pub key: AccountKey,
    pub name: String,
    pub first_seen: i64,
    pub last_seen: i64,
}

/// Changes to rollup rows, in key order (so concurrent writers lock rows in
/// the same order); rows that end up unchanged are left out.
pub(crate) struct Deltas<K, T> {
    rows: BTreeMap<K, T>,
}

pub(crate) trait Tally: Copy + Default + PartialEq {
    fn add(&mut self, other: Self, sign: i64);
}

impl Tally for VisitorTally {
    fn add(&mut self, other: Self, sign: i64) {
        self.visitors += sign * other.visitors;
        self.identified += sign * other.identified;
    }
}

impl Tally for SessionTally {
    fn add(&mut self, other: Self, sign: i64) {
        self.sessions += sign * other.sessions;
        self.seconds += sign * other.seconds;
    }
}

impl Tally for AccountTally {
    fn add(&mut self, other: Self, sign: i64) {
        self.visitors += sign * other.visitors;
        self.people += sign * other.people;
        self.sessions += sign * other.sessions;
        self.pageviews += sign * other.pageviews;
        self.engaged_seconds += sign * other.engaged_seconds;
        self.high_value_views += sign * other.high_value_views;
        self.form_submits += sign * other.form_submits;
    }
}

impl<K: Ord, T: Tally> Deltas<K, T> {
    pub fn new() -> Self {
        Deltas { rows: BTreeMap::new() }
    }

    /// Moves one row's contribution: `before` is what it counted as until now
    /// (`None` when it was not counted yet), `after` what it counts as from now.
    pub fn moved(&mut self, before: Option<(K, T)>, after: Option<(K, T)>) {
        if let Some((key, tally)) = before {
            self.rows.entry(key).or_default().add(tally, -1);
        }
        if let Some((key, tally)) = after {
            self.rows.entry(key).or_default().add(tally, 1);
        }
    }

    /// Rows that leave the rollups (erased or purged).
    pub fn removed(entries: impl IntoIterator<Item = (K, T)>) -> Self {
        let mut deltas = Self::new();
        entries.into_iter().for_each(|entry| deltas.moved(Some(entry), None));
        deltas
    }

    pub fn into_rows(self) -> impl Iterator<Item = (K, T)> {
        self.rows.into_iter().filter(|(_, tally)| *tally != T::default())
    }

    /// Every row touched, unchanged ones too.
    pub fn into_all_rows(self) -> BTreeMap<K, T> {
        self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::tracking::sessionize::new_visitor;

    fn visitor(last_seen: i64, country: Option<&str>, identified: bool, is_bot: bool) -> visitor::Model {
        let mut model = new_visitor(1, "v", last_seen);
        model.country = country.map(str::to_owned);
        model.status = if identified { "identified" } else { "anonymous" }.to_owned();
        model.is_bot = is_bot;
        model
    }

    fn key(hour: i64, country: &str, is_bot: bool) -> VisitorKey {
        VisitorKey { site_id: 1, is_bot, hour: hour * HOUR_MS, country: country.to_owned() }
    }

    fn tally(visitors: i64, identified: i64) -> VisitorTally {
        VisitorTally { visitors, identified }
    }

    #[test]
    fn a_visitor_moves_between_rows_and_is_counted_once() {
        let h = HOUR_MS;
        type Case = (&'static str, Option<visitor::Model>, visitor::Model, Vec<(VisitorKey, VisitorTally)>);
        let cases: Vec<Case> = vec![
            (
                "new visitor",
                None,
                visitor(2 * h + 5, Some("DE"), false, false),
                vec![(key(2, "DE", false), tally(1, 0))],
            ),
            (
                "same hour, same row",
                Some(visitor(2 * h, Some("DE"), false, false)),
                visitor(2 * h + 9, Some("DE"), false, false),
                vec![],
            ),
            (
                "returns an hour later",
                Some(visitor(2 * h, Some("DE"), false, false)),
                visitor(3 * h, Some("DE"), false, false),
                vec![(key(2, "DE", false), tally(-1, 0)), (key(3, "DE", false), tally(1, 0))],
            ),
            (
                "identified in the same hour",
                Some(visitor(2 * h, None, false, false)),
                visitor(2 * h + 1, None, true, false),
                vec![(key(2, "", false), tally(0, 1))],
            ),
            (
                "country learned",
                Some(visitor(2 * h, None, true, false)),
                visitor(2 * h, Some("FR"), true, false),
                vec![(key(2, "", false), tally(-1, -1)), (key(2, "FR", false), tally(1, 1))],
            ),
            (
                "turns out to be a bot",
                Some(visitor(2 * h, Some("FR"), false, false)),
                visitor(2 * h, Some("FR"), false, true),
                vec![(key(2, "FR", false), tally(-1, 0)), (key(2, "FR", true), tally(1, 0))],
            ),
        ];
        for (name, before, after, expected) in cases {
            let mut deltas = Deltas::new();
            deltas.moved(before.as_ref().map(visitor_entry), Some(visitor_entry(&after)));
            assert_eq!(deltas.into_rows().collect::<Vec<_>>(), expected, "{name}");
        }
    }

    #[test]
    fn a_visitor_moves_between_last_touch_rows_as_its_visits_and_forms_change() {
        let h = HOUR_MS;
        let touched = |hour: i64, channel: Option<&str>, campaign: Option<&str>, forms: i32, identified: bool| {
            let mut model = visitor(hour, None, identified, false);
            model.last_channel = channel.map(str::to_owned);
            model.last_campaign = campaign.map(str::to_owned);
            model.form_submits = forms;
            model
        };
        let key = |hour: i64, channel: &str, campaign: &str, submitted_form: bool| TouchKey {
            site_id: 1,
            is_bot: false,
            hour: hour * HOUR_MS,
            channel: channel.to_owned(),
            campaign: campaign.to_owned(),
            submitted_form,
        };
        type Case = (&'static str, Option<visitor::Model>, visitor::Model, Vec<(TouchKey, VisitorTally)>);
        let cases: Vec<Case> = vec![
            (
                "new visitor",
                None,
                touched(2 * h, Some("Direct"), None, 0, false),
                vec![(key(2, "Direct", "", false), tally(1, 0))],
            ),
            (
                "another page of the same visit",
                Some(touched(2 * h, Some("Email"), Some("winter"), 0, false)),
                touched(2 * h + 60_000, Some("Email"), Some("winter"), 0, false),
                vec![],
            ),
            (
                "a second form changes nothing",
                Some(touched(2 * h, Some("Direct"), None, 1, false)),
                touched(2 * h + 1, Some("Direct"), None, 2, false),
                vec![],
            ),
            (
                "the first form",
                Some(touched(2 * h, Some("Direct"), None, 0, false)),
                touched(2 * h + 1, Some("Direct"), None, 1, false),
                vec![(key(2, "Direct", "", false), tally(-1, 0)), (key(2, "Direct", "", true), tally(1, 0))],
            ),
            (
                "back next day from a campaign, identified",
                Some(touched(2 * h, Some("Direct"), None, 0, false)),
                touched(26 * h, Some("Paid Search"), Some("brand"), 0, true),
                vec![
                    (key(2, "Direct", "", false), tally(-1, 0)),
                    (key(26, "Paid Search", "brand", false), tally(1, 1)),
                ],
            ),
        ];
        for (name, before, after, expected) in cases {
            let mut deltas = Deltas::new();
            deltas.moved(before.as_ref().map(touch_entry), Some(touch_entry(&after)));
            assert_eq!(deltas.into_rows().collect::<Vec<_>>(), expected, "{name}");
        }
    }

    #[test]
    fn moves_of_many_rows_add_up_in_key_order() {
        let h = HOUR_MS;
        let mut deltas = Deltas::new();
        // One visitor leaves hour 1 for hour 3, another arrives new in hour 1.
        deltas.moved(
            Some(visitor_entry(&visitor(h, None, false, false))),
            Some(visitor_entry(&visitor(3 * h, None, false, false))),
        );
        deltas.moved(None, Some(visitor_entry(&visitor(h + 1, None, false, false))));
        assert_eq!(deltas.into_rows().collect::<Vec<_>>(), vec![(key(3, "", false), tally(1, 0))]);
    }

    #[test]
    fn a_growing_session_moves_its_seconds_with_it() {
        let mut session = tracked_session::Model {
            id: 1,
            site_id: 1,
            visitor_id: 1,
            tracker_vid: "v".to_owned(),
            started_at: HOUR_MS - 60_000,
            ended_at: HOUR_MS - 1,
            duration_seconds: 59,
            pageview_count: 1,
            event_count: 1,
            human_pageview_count: 1,
            human_event_count: 1,
            human_hours: 1,
            entry_page: None,
            exit_page: None,
            referrer: None,
            channel: "Direct".to_owned(),
            utm_source: None,
            utm_medium: None,
            utm_campaign: None,
            utm_content: None,
            utm_term: None,
            is_bot: false,
            country: None,
            city: None,
            region: None,
            lat: None,
            lon: None,
            device_type: None,
            browser: None,
            os: None,
            source: None,
            link_id: None,
        };
        let before = session_entry(&session);
        session.ended_at = HOUR_MS + 60_000;
        session.duration_seconds = 120;
        let mut deltas = Deltas::new();
        deltas.moved(Some(before), Some(session_entry(&session)));
        let key = |hour: i64| SessionKey { site_id: 1, is_bot: false, hour, channel: "Direct".to_owned() };
        assert_eq!(
            deltas.into_rows().collect::<Vec<_>>(),
            vec![
                (key(0), SessionTally { sessions: -1, seconds: -59 }),
                (key(HOUR_MS), SessionTally { sessions: 1, seconds: 120 })
            ]
        );
    }
}
