//! What a write batch changes, worked out in memory with no I/O: which events
//! continue a visit and which open a new session, what each visitor's running
//! totals become, which clicks a landing ties to its visitor, and the stored
//! score. `load` fills a `Batch` with the rows it locked; `flush` writes the result.

use std::collections::HashMap;

use entity::{tracked_session, visitor};

pub(super) use super::slots::{ClickIx, SessionIx, SlotIndex, VisitorIx};
use super::{
    ClickCommand, CollectedEvent, EventKind, IdentifyCommand,
    rollup::{self, AccountKey, AccountTally, SessionKey, SessionTally, TouchKey, VisitorKey, VisitorTally},
    slots::Slots,
    value_rollups::{self, RolledDimension, ValueKey, ValueTally},
    visit_hours::{with_event_at, with_human_hour},
};
use crate::{
    enrich::{
        account::{self, AccountSource},
        network::Network,
        source::{self, LinkKind},
        visit_source::visit_source,
    },
    service::scoring,
    time::{DAY_MS, MINUTE_MS},
};

/// Inactivity that ends a session.
pub const SESSION_TIMEOUT_MS: i64 = 30 * MINUTE_MS;
/// No session lasts longer than this.
pub const SESSION_MAX_MS: i64 = DAY_MS;

pub(super) struct VisitorSlot {
    pub model: visitor::Model,
    pub dirty: bool,
    /// The visitor's open session.
    pub session: Option<SessionIx>,
    /// The rollup row the stored visitor is counted in; `None` for a visitor
    /// this batch created.
    pub counted: Option<(VisitorKey, VisitorTally)>,
    /// The last-touch rollup row the stored visitor is counted in; `None`
    /// for a visitor this batch created.
    pub touch_counted: Option<(TouchKey, VisitorTally)>,
    /// The account row the stored visitor is counted in, if any.
    pub account_counted: Option<(AccountKey, AccountTally)>,
    /// The visitor's values in the visitor dimensions as stored (as created,
    /// for a visitor this batch created), which its visits are counted under.
    pub values_counted: Vec<(RolledDimension, String)>,
    /// The stored score and last activity as loaded, which alerts compare
    /// against; `None` for a visitor this batch created, who had no score.
    pub before: Option<(i32, i64)>,
    /// The batch identified a visitor who was anonymous, or it submitted a form.
    pub identified: bool,
    pub submitted_form: bool,
}

pub(super) struct SessionSlot {
    pub model: tracked_session::Model,
    pub visitor: VisitorIx,
    pub dirty: bool,
    /// The start as stored; `None` for a session this batch opened.
    pub stored_start: Option<i64>,
    /// The rollup row the stored session is counted in; `None` when new.
    pub counted: Option<(SessionKey, SessionTally)>,
    /// The value rows the stored session is counted in; none when new.
    pub values_counted: Vec<(ValueKey, ValueTally)>,
}

impl SessionSlot {
    /// Opened by this batch, so not stored yet.
    pub fn is_new(&self) -> bool {
        self.stored_start.is_none()
    }
}

pub(super) struct PendingEvent<'a> {
    pub visitor: VisitorIx,
    pub session: SessionIx,
    pub event: &'a CollectedEvent,
}

/// A click the batch may tie to a visitor: already stored, or new in this batch.
pub(super) struct KnownClick {
    pub stored: Option<StoredClick>,
    /// A click of this batch.
    pub pending: Option<ClickIx>,
    pub link_type: String,
    /// The visitor this batch tied it to.
    pub attributed_to: Option<VisitorIx>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StoredClick {
    pub id: i64,
    pub site_id: i64,
    pub link_id: i64,
    pub has_visitor: bool,
    pub created_at: i64,
}

pub(super) struct PendingIdentity<'a> {
    pub visitor: VisitorIx,
    pub command: &'a IdentifyCommand,
}

pub(super) struct Batch<'a> {
    pub visitors: Slots<VisitorIx, VisitorSlot>,
    by_key: HashMap<(i64, String), VisitorIx>,
    pub sessions: Slots<SessionIx, SessionSlot>,
    pub events: Vec<PendingEvent<'a>>,
    pub identities: Vec<PendingIdentity<'a>>,
    pub clicks: Slots<ClickIx, &'a ClickCommand>,
    /// Clicks by `lt_click` key.
    pub known_clicks: HashMap<String, KnownClick>,
}

impl Batch<'_> {
    /// How the batch moves its visitors between rollup rows. A visitor the
    /// batch created is counted even if nothing else changed it (a lone ping).
    pub(super) fn visitor_moves(&self) -> rollup::Deltas<VisitorKey, VisitorTally> {
        let mut deltas = rollup::Deltas::new();
        for slot in self.visitors.iter().filter(|slot| slot.dirty || slot.counted.is_none()) {
            deltas.moved(slot.counted.clone(), Some(rollup::visitor_entry(&slot.model)));
        }
        deltas
    }

    /// How the batch moves its visitors between last-touch rollup rows, as
    /// `visitor_moves` does between the hourly ones.
    pub(super) fn touch_moves(&self) -> rollup::Deltas<TouchKey, VisitorTally> {
        let mut deltas = rollup::Deltas::new();
        for slot in self.visitors.iter().filter(|slot| slot.dirty || slot.touch_counted.is_none()) {
            deltas.moved(slot.touch_counted.clone(), Some(rollup::touch_entry(&slot.model)));
        }
        deltas
    }

    /// How the batch moves its visitors between accounts, and what each
    /// account it touches now holds of them: a name and the span seen.
    pub(super) fn account_moves(&self) -> (rollup::Deltas<AccountKey, AccountTally>, Vec<rollup::AccountSeen>) {
        let mut deltas = rollup::Deltas::new();
        let mut seen: Vec<rollup::AccountSeen> = Vec::new();
        for slot in self.visitors.iter().filter(|slot| slot.dirty) {
            let after = rollup::account_entry(&slot.model);
            if let Some((key, _)) = &after {
                let visitor = &slot.model;
                seen.push(rollup::AccountSeen {
                    key: key.clone(),
                    name: visitor.account_name.clone().unwrap_or_else(|| key.key.clone()),
                    first_seen: visitor.first_seen,
                    last_seen: visitor.last_seen,
                });
            }
            deltas.moved(slot.account_counted.clone(), after);
        }
        (deltas, seen)
    }

    /// How the batch moves its sessions between rollup rows.
    pub(super) fn session_moves(&self) -> rollup::Deltas<SessionKey, SessionTally> {
        let mut deltas = rollup::Deltas::new();
        for slot in self.sessions.iter().filter(|slot| slot.dirty) {
            deltas.moved(slot.counted.clone(), Some(rollup::session_entry(&slot.model)));
        }
        deltas
    }
}

impl<'a> Batch<'a> {
    pub fn new() -> Self {
        Batch {
            visitors: Slots::new(),
            by_key: HashMap::new(),
            sessions: Slots::new(),
            events: Vec::new(),
            identities: Vec::new(),
            clicks: Slots::new(),
            known_clicks: HashMap::new(),
        }
    }

    /// A visitor row as stored (and locked), with its open session if it has
    /// one; `created` when `load` inserted the row for this batch, so it is
    /// not counted in the rollups yet.
    pub fn add_visitor(&mut self, model: visitor::Model, open_session: Option<tracked_session::Model>, created: bool) {
        let key = (model.site_id, model.tracker_vid.clone());
        let counted = (!created).then(|| rollup::visitor_entry(&model));
        let touch_counted = (!created).then(|| rollup::touch_entry(&model));
        let account_counted = if created { None } else { rollup::account_entry(&model) };
        let before = (!created).then_some((model.score, model.last_seen));
        let values_counted = value_rollups::visitor_values_of(&model);
        let visitor = self.visitors.push(VisitorSlot {
            values_counted,
            model,
            dirty: false,
            session: None,
            counted,
            touch_counted,
            account_counted,
            before,
            identified: false,
            submitted_form: false,
        });
        self.by_key.insert(key, visitor);
        if let Some(model) = open_session {
            let counted = Some(rollup::session_entry(&model));
            let values_counted = value_rollups::visit_entries(&model, &self.visitors[visitor].values_counted);
            let stored_start = Some(model.started_at);
            let session =
                self.sessions.push(SessionSlot { model, visitor, dirty: false, stored_start, counted, values_counted });
            self.visitors[visitor].session = Some(session);
        }
    }

    pub fn add_stored_click(&mut self, key: String, click: StoredClick, link_type: String) {
        self.known_clicks
            .insert(key, KnownClick { stored: Some(click), pending: None, link_type, attributed_to: None });
    }

    pub fn click(&mut self, click: &'a ClickCommand) {
        let pending = self.clicks.push(click);
        self.known_clicks.insert(
            click.click_key.clone(),
            KnownClick {
                stored: None,
                pending: Some(pending),
                link_type: click.link.link_type.clone(),
                attributed_to: None,
            },
        );
    }

    fn visitor(&self, site_id: i64, tracker_vid: &str) -> Option<VisitorIx> {
        self.by_key.get(&(site_id, tracker_vid.to_owned())).copied()
    }

    /// The link (its type and id) of the click an event reports, tying that
    /// click to the event's visitor when it has no visitor yet.
    fn attribute_click(&mut self, v: VisitorIx, event: &CollectedEvent) -> Option<(LinkKind, i64)> {
        let known = self.known_clicks.get_mut(event.click_key.as_deref()?)?;
        let (site_id, link_id, has_visitor) = match (known.stored, known.pending) {
            (Some(stored), _) => (stored.site_id, stored.link_id, stored.has_visitor),
            (None, Some(pending)) => (self.clicks[pending].link.site_id, self.clicks[pending].link.id, false),
            (None, None) => return None,
        };
        if site_id != event.site_id {
            return None;
        }
        if !has_visitor && known.attributed_to.is_none() {
            known.attributed_to = Some(v);
            self.visitors[v].model.clicks += 1;
            self.visitors[v].dirty = true;
        }
        let kind = match known.link_type.as_str() {
            "ad" => LinkKind::Ad,
            "bio" => LinkKind::Bio,
            _ => LinkKind::Content,
        };
        Some((kind, link_id))
    }

    /// Applies one event. `load` created every visitor the batch names, so an
    /// event of an unknown visitor is a bug upstream and is skipped.
    pub fn record(&mut self, event: &'a CollectedEvent) {
        let Some(v) = self.visitor(event.site_id, &event.tracker_vid) else {
            debug_assert!(false, "load creates every visitor of the batch");
            return;
        };
        let ts = event.timestamp;
        let link = self.attribute_click(v, event);
        let open = self.visitors[v].session.filter(|&s| continues(&self.sessions[s].model, event));
        let s = match (open, event.kind) {
            (Some(s), _) => s,
            // A ping only extends an open session; on its own it is no visit.
            (None, EventKind::Ping) => return,
            (None, _) => self.open_session(v, event, link),
        };

        let session = &mut self.sessions[s];
        session.dirty = true;
        let model = &mut session.model;
        let before = model.duration_seconds;
        let human = !event.is_bot();
        if event.kind == EventKind::Pageview {
            model.pageview_count += 1;
            model.human_pageview_count += i32::from(human);
            if ts <= model.started_at || model.entry_page.is_none() {
                model.entry_page = Some(event.page.clone());
            }
            if ts >= model.ended_at || model.exit_page.is_none() {
                model.exit_page = Some(event.page.clone());
            }
        }
        // Any event before the start moves it, and the hours' bits with it.
        model.human_hours = with_event_at(model.human_hours, model.started_at, ts);
        model.started_at = model.started_at.min(ts);
        if event.kind != EventKind::Ping {
            model.event_count += 1;
            model.human_event_count += i32::from(human);
            if human {
                model.human_hours = with_human_hour(model.human_hours, model.started_at, ts);
            }
        }
        model.ended_at = model.ended_at.max(ts);
        model.duration_seconds = (model.ended_at - model.started_at) / 1000;
        let duration_delta = model.duration_seconds - before;

        let slot = &mut self.visitors[v];
        slot.dirty = true;
        slot.submitted_form |= event.kind == EventKind::CustomEvent && event.event_name == "form_submit";
        let visitor = &mut slot.model;
        visitor.total_time_seconds += duration_delta;
        visitor.first_seen = visitor.first_seen.min(ts);
        let latest = ts >= visitor.last_seen;
        visitor.last_seen = visitor.last_seen.max(ts);
        visitor.is_bot |= event.is_bot();
        match event.kind {
            EventKind::Pageview => {
                visitor.total_pageviews += 1;
                visitor.total_events += 1;
                visitor.high_value_views += i32::from(event.high_value);
            }
            EventKind::CustomEvent => {
                visitor.total_events += 1;
                visitor.form_submits += i32::from(event.event_name == "form_submit");
            }
            EventKind::Ping => {}
        }
        if let Some(host) = &event.external_referrer_host {
            let referrer = event.referrer.clone().unwrap_or_else(|| host.clone());
            visitor.first_referrer.get_or_insert_with(|| referrer.clone());
            if latest {
                visitor.last_referrer = Some(referrer);
            }
        }
        if latest {
            apply_client(visitor, event);
            let session = &self.sessions[s].model;
            visitor.last_channel = Some(session.channel.clone());
            visitor.last_campaign = session.utm_campaign.clone();
            if event.kind == EventKind::Pageview {
                visitor.last_page = Some(event.page.clone());
            }
        }
        self.events.push(PendingEvent { visitor: v, session: s, event });
    }

    fn open_session(&mut self, v: VisitorIx, event: &CollectedEvent, link: Option<(LinkKind, i64)>) -> SessionIx {
        let visitor = &mut self.visitors[v];
        visitor.model.total_sessions += 1;
        visitor.dirty = true;
        let model = new_session(visitor.model.id, event, link);
        let session = self.sessions.push(SessionSlot {
            model,
            visitor: v,
            dirty: true,
            stored_start: None,
            counted: None,
            values_counted: Vec::new(),
        });
        self.visitors[v].session = Some(session);
        session
    }

    pub fn identify(&mut self, command: &'a IdentifyCommand) {
        let Some(v) = self.visitor(command.site_id, &command.tracker_vid) else {
            debug_assert!(false, "load creates every visitor of the batch");
            return;
        };
        let slot = &mut self.visitors[v];
        slot.dirty = true;
        slot.identified |= slot.model.status != "identified";
        let visitor = &mut slot.model;
        visitor.status = "identified".to_owned();
        visitor.identified_user_id = command.user_id.clone().or_else(|| command.email.clone());
        if command.email.is_some() {
            visitor.email = command.email.clone();
        }
        // The latest identify that names a company decides the account.
        if let Some(found) =
            account::from_identity(command.email.as_deref(), command.company.as_deref(), &command.traits)
        {
            visitor.account_key = Some(found.key);
            visitor.account_name = Some(found.name);
            visitor.account_source = Some(found.source.as_str().to_owned());
        }
        self.identities.push(PendingIdentity { visitor: v, command });
    }

    /// Recomputes the stored score of every changed visitor.
    pub fn rescore(&mut self) {
        for slot in self.visitors.iter_mut().filter(|slot| slot.dirty) {
            slot.model.score = scoring::stored_points(&slot.model);
        }
    }
}

/// Whether `event` continues the open session: within 30 minutes of its
/// activity (either side, for imports out of order), within 24 hours of its
/// start and of its end, and with the same campaign when the event carries
/// one. Every visit so spans less than 24 hours, however its events arrive,
/// which Explore relies on to find the visits that reach into a range.
pub(super) fn continues(session: &tracked_session::Model, event: &CollectedEvent) -> bool {
    let ts = event.timestamp;
    let campaign_changed = event.utm.campaign_key().is_some_and(|key| Some(key) != session_campaign(session));
    ts - session.ended_at <= SESSION_TIMEOUT_MS
        && session.started_at - ts <= SESSION_TIMEOUT_MS
        && ts - session.started_at < SESSION_MAX_MS
        && session.ended_at - ts < SESSION_MAX_MS
        && !campaign_changed
}

fn session_campaign(session: &tracked_session::Model) -> Option<(Option<&str>, Option<&str>, Option<&str>)> {
    let key = (session.utm_source.as_deref(), session.utm_medium.as_deref(), session.utm_campaign.as_deref());
    (key != (None, None, None)).then_some(key)
}

/// The visitor's network is that of their latest event that has one.
pub(super) fn apply_network(visitor: &mut visitor::Model, network: &Network) {
    visitor.asn = Some(i64::from(network.asn));
    visitor.network = Some(network.org.clone());
    // A company's own network names the account until an identify does.
    if let Some(key) = network.account_key()
        && visitor.account_source.as_deref().is_none_or(|source| source == AccountSource::Network.as_str())
    {
        visitor.account_key = Some(key);
        visitor.account_name = Some(network.org.clone());
        visitor.account_source = Some(AccountSource::Network.as_str().to_owned());
    }
}

/// The visitor's latest place and device are those of their latest event.
fn apply_client(visitor: &mut visitor::Model, event: &CollectedEvent) {
    let client = &event.client;
    visitor.device_type = Some(client.info.device_type.clone());
    visitor.browser = client.info.browser.clone().or(visitor.browser.take());
    visitor.os = client.info.os.clone().or(visitor.os.take());
    if let Some(network) = &event.network {
        apply_network(visitor, network);
    }
    if client.geo.country.is_some() {
        visitor.country = client.geo.country.clone();
        visitor.city = client.geo.city.clone();
        visitor.region = client.geo.region.clone();
        visitor.lat = client.geo.lat;
        visitor.lon = client.geo.lon;
    }
}

/// A visit that `link` (its type and id) started, when a tracking link did.
fn new_session(visitor_id: i64, event: &CollectedEvent, link: Option<(LinkKind, i64)>) -> tracked_session::Model {
    let client = &event.client;
    let external_referrer =
        event.external_referrer_host.as_ref().map(|host| event.referrer.clone().unwrap_or_else(|| host.clone()));
    tracked_session::Model {
        id: 0,
        site_id: event.site_id,
        visitor_id,
        tracker_vid: event.tracker_vid.clone(),
        started_at: event.timestamp,
        ended_at: event.timestamp,
        duration_seconds: 0,
        pageview_count: 0,
        event_count: 0,
        entry_page: None,
        exit_page: None,
        referrer: external_referrer,
        channel: source::channel(&event.utm, event.external_referrer_host.as_deref(), link.map(|(kind, _)| kind))
            .to_owned(),
        utm_source: event.utm.source.clone(),
        utm_medium: event.utm.medium.clone(),
        utm_campaign: event.utm.campaign.clone(),
        utm_content: event.utm.content.clone(),
        utm_term: event.utm.term.clone(),
        is_bot: event.is_bot(),
        country: client.geo.country.clone(),
        city: client.geo.city.clone(),
        region: client.geo.region.clone(),
        lat: client.geo.lat,
        lon: client.geo.lon,
        device_type: Some(client.info.device_type.clone()),
        browser: client.info.browser.clone(),
        os: client.info.os.clone(),
        source: visit_source(event.utm.source.as_deref(), event.external_referrer_host.as_deref()),
        link_id: link.map(|(_, id)| id),
        human_event_count: 0,
        human_pageview_count: 0,
        human_hours: 0,
    }
}

/// The row a visitor starts with; `load` inserts it before the batch is applied.
pub(crate) fn new_visitor(site_id: i64, tracker_vid: &str, now: i64) -> visitor::Model {
    visitor::Model {
        id: 0,
        site_id,
        tracker_vid: tracker_vid.to_owned(),
        status: "anonymous".to_owned(),
        identified_user_id: None,
        email: None,
        first_seen: now,
        last_seen: now,
        total_sessions: 0,
        total_pageviews: 0,
        total_events: 0,
        total_time_seconds: 0,
        clicks: 0,
        high_value_views: 0,
        form_submits: 0,
        score: 0,
        is_bot: false,
        first_referrer: None,
        last_referrer: None,
        last_session_id: None,
        country: None,
        city: None,
        region: None,
        lat: None,
        lon: None,
        device_type: None,
        browser: None,
        os: None,
        last_channel: None,
        last_campaign: None,
        last_page: None,
        account_key: None,
        account_name: None,
        account_source: None,
        asn: None,
        network: None,
    }
}

#[cfg(test)]
#[path = "sessionize_tests.rs"]
pub(super) mod tests;
