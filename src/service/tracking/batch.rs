//! The in-memory half of a write batch: the visitors and open sessions it
//! touches, and what each operation changes about them.

use std::collections::{BTreeSet, HashMap};

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use entity::{link_click, tracked_session, visitor};

use super::{
    ClickCommand, CollectedEvent, EventKind, IdentifyCommand, WriteOp,
    cache::{CachedVisitor, VisitorCache},
};
use crate::{
    enrich::source::{self, LinkKind},
    service::scoring,
    time::{DAY_MS, MINUTE_MS},
};

/// Inactivity that ends a session.
pub const SESSION_TIMEOUT_MS: i64 = 30 * MINUTE_MS;
/// No session lasts longer than this.
pub const SESSION_MAX_MS: i64 = DAY_MS;
use crate::service::IN_LIST_CHUNK as CHUNK;

pub(super) struct VisitorSlot {
    pub model: visitor::Model,
    pub is_new: bool,
    pub dirty: bool,
    /// The visitor's open session, an index into `Batch::sessions`.
    pub session: Option<usize>,
}

pub(super) struct SessionSlot {
    pub model: tracked_session::Model,
    pub visitor: usize,
    pub is_new: bool,
    pub dirty: bool,
}

pub(super) struct PendingEvent<'a> {
    pub visitor: usize,
    pub session: usize,
    pub event: &'a CollectedEvent,
}

/// A click the batch may attribute to a visitor: already stored, or new in this batch.
pub(super) struct KnownClick {
    /// The stored row's id; `None` for a click of this batch.
    pub id: Option<i64>,
    /// Index into `Batch::clicks` for a click of this batch.
    pub pending: Option<usize>,
    pub link_type: String,
    pub visitor: Option<i64>,
    /// The visitor it was attributed to in this batch.
    pub attributed_to: Option<usize>,
}

pub(super) struct PendingIdentity<'a> {
    pub visitor: usize,
    pub command: &'a IdentifyCommand,
}

pub(super) struct Batch<'a> {
    pub visitors: Vec<VisitorSlot>,
    by_key: HashMap<(i64, String), usize>,
    pub sessions: Vec<SessionSlot>,
    pub events: Vec<PendingEvent<'a>>,
    pub identities: Vec<PendingIdentity<'a>>,
    pub clicks: Vec<&'a ClickCommand>,
    /// Clicks by `lt_click` key.
    pub known_clicks: HashMap<String, KnownClick>,
}

fn keys<'a>(ops: &[&'a WriteOp]) -> BTreeSet<(i64, &'a str)> {
    let mut keys = BTreeSet::new();
    for op in ops {
        match op {
            WriteOp::Events(events) => keys.extend(events.iter().map(|e| (e.site_id, e.tracker_vid.as_str()))),
            WriteOp::Identify(command) => {
                keys.insert((command.site_id, command.tracker_vid.as_str()));
            }
            WriteOp::Click(_) => {}
        }
    }
    keys
}

impl<'a> Batch<'a> {
    /// Takes the visitors the operations name, and their open sessions, from
    /// the cache or else from the database.
    pub async fn load(
        db: &impl ConnectionTrait,
        cache: &mut VisitorCache,
        ops: &[&'a WriteOp],
    ) -> Result<Batch<'a>, DbErr> {
        let mut batch = Batch {
            visitors: Vec::new(),
            by_key: HashMap::new(),
            sessions: Vec::new(),
            events: Vec::new(),
            identities: Vec::new(),
            clicks: Vec::new(),
            known_clicks: HashMap::new(),
        };
        batch.load_clicks(db, ops).await?;
        let mut by_site: HashMap<i64, Vec<&str>> = HashMap::new();
        for (site_id, vid) in keys(ops) {
            match cache.get(site_id, vid) {
                Some(cached) => batch.adopt(cached),
                None => by_site.entry(site_id).or_default().push(vid),
            }
        }
        for (site_id, vids) in by_site {
            for chunk in vids.chunks(CHUNK) {
                let found = visitor::Entity::find()
                    .filter(visitor::Column::SiteId.eq(site_id))
                    .filter(visitor::Column::TrackerVid.is_in(chunk.iter().copied()))
                    .all(db)
                    .await?;
                for model in found {
                    batch.by_key.insert((model.site_id, model.tracker_vid.clone()), batch.visitors.len());
                    batch.visitors.push(VisitorSlot { model, is_new: false, dirty: false, session: None });
                }
            }
        }
        let session_ids: Vec<(i64, usize)> = batch
            .visitors
            .iter()
            .enumerate()
            .filter(|(_, slot)| slot.session.is_none())
            .filter_map(|(index, slot)| slot.model.last_session_id.map(|id| (id, index)))
            .collect();
        let owner: HashMap<i64, usize> = session_ids.iter().copied().collect();
        for chunk in session_ids.chunks(CHUNK) {
            let found = tracked_session::Entity::find()
                .filter(tracked_session::Column::Id.is_in(chunk.iter().map(|(id, _)| *id)))
                .all(db)
                .await?;
            for model in found {
                if let Some(&visitor) = owner.get(&model.id) {
                    batch.visitors[visitor].session = Some(batch.sessions.len());
                    batch.sessions.push(SessionSlot { model, visitor, is_new: false, dirty: false });
                }
            }
        }
        Ok(batch)
    }

    /// The stored clicks that this batch's events report by `lt_click`.
    async fn load_clicks(&mut self, db: &impl ConnectionTrait, ops: &[&'a WriteOp]) -> Result<(), DbErr> {
        let keys: BTreeSet<&str> = ops
            .iter()
            .filter_map(|op| match op {
                WriteOp::Events(events) => Some(events.iter().filter_map(|e| e.click_key.as_deref())),
                _ => None,
            })
            .flatten()
            .collect();
        let keys: Vec<&str> = keys.into_iter().collect();
        for chunk in keys.chunks(CHUNK) {
            let found = link_click::Entity::find()
                .filter(link_click::Column::ClickKey.is_in(chunk.iter().copied()))
                .all(db)
                .await?;
            for click in found {
                self.known_clicks.insert(
                    click.click_key,
                    KnownClick {
                        id: Some(click.id),
                        pending: None,
                        link_type: click.link_type,
                        visitor: click.visitor_id,
                        attributed_to: None,
                    },
                );
            }
        }
        Ok(())
    }

    pub fn click(&mut self, click: &'a ClickCommand) {
        self.known_clicks.insert(
            click.click_key.clone(),
            KnownClick {
                id: None,
                pending: Some(self.clicks.len()),
                link_type: click.link.link_type.clone(),
                visitor: None,
                attributed_to: None,
            },
        );
        self.clicks.push(click);
    }

    /// The link type of the click an event reports, attributing that click to
    /// the event's visitor when it has no visitor yet.
    fn attribute_click(&mut self, v: usize, event: &CollectedEvent) -> Option<LinkKind> {
        let known = self.known_clicks.get_mut(event.click_key.as_deref()?)?;
        let same_site = match known.pending {
            Some(index) => self.clicks[index].link.site_id == event.site_id,
            None => true,
        };
        if !same_site {
            return None;
        }
        if known.visitor.is_none() && known.attributed_to.is_none() {
            known.attributed_to = Some(v);
            self.visitors[v].model.clicks += 1;
            self.visitors[v].dirty = true;
        }
        Some(match known.link_type.as_str() {
            "ad" => LinkKind::Ad,
            "bio" => LinkKind::Bio,
            _ => LinkKind::Content,
        })
    }

    fn adopt(&mut self, cached: CachedVisitor) {
        let visitor = self.visitors.len();
        self.by_key.insert((cached.visitor.site_id, cached.visitor.tracker_vid.clone()), visitor);
        let session = cached.session.map(|model| {
            self.sessions.push(SessionSlot { model, visitor, is_new: false, dirty: false });
            self.sessions.len() - 1
        });
        self.visitors.push(VisitorSlot { model: cached.visitor, is_new: false, dirty: false, session });
    }

    /// Puts the committed state of every visitor in the batch into the cache.
    pub fn remember(self, cache: &mut VisitorCache) {
        let Batch { visitors, mut sessions, .. } = self;
        let mut open: Vec<Option<tracked_session::Model>> = sessions.drain(..).map(|slot| Some(slot.model)).collect();
        for slot in visitors {
            let session = slot.session.and_then(|index| open[index].take());
            cache.put(CachedVisitor { visitor: slot.model, session });
        }
    }

    fn visitor_slot(&mut self, site_id: i64, tracker_vid: &str, now: i64) -> usize {
        if let Some(&index) = self.by_key.get(&(site_id, tracker_vid.to_owned())) {
            return index;
        }
        let index = self.visitors.len();
        self.by_key.insert((site_id, tracker_vid.to_owned()), index);
        self.visitors.push(VisitorSlot {
            model: new_visitor(site_id, tracker_vid, now),
            is_new: true,
            dirty: true,
            session: None,
        });
        index
    }

    /// Whether `event` continues the open session: within 30 minutes of its
    /// last activity, within 24 hours of its start, and with the same
    /// campaign when the event carries one.
    fn continues(session: &tracked_session::Model, event: &CollectedEvent) -> bool {
        let ts = event.timestamp;
        let campaign_changed = event.utm.campaign_key().is_some_and(|key| Some(key) != session_campaign(session));
        ts - session.ended_at <= SESSION_TIMEOUT_MS
            && session.started_at - ts <= SESSION_TIMEOUT_MS
            && ts - session.started_at < SESSION_MAX_MS
            && !campaign_changed
    }

    pub fn record(&mut self, event: &'a CollectedEvent) {
        let ts = event.timestamp;
        let v = self.visitor_slot(event.site_id, &event.tracker_vid, ts);
        let link = self.attribute_click(v, event);
        let open = self.visitors[v].session.filter(|&s| Self::continues(&self.sessions[s].model, event));
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
        if event.kind == EventKind::Pageview {
            model.pageview_count += 1;
            if ts <= model.started_at || model.entry_page.is_none() {
                model.entry_page = Some(event.page.clone());
            }
            if ts >= model.ended_at || model.exit_page.is_none() {
                model.exit_page = Some(event.page.clone());
            }
        }
        if event.kind != EventKind::Ping {
            model.event_count += 1;
        }
        model.started_at = model.started_at.min(ts);
        model.ended_at = model.ended_at.max(ts);
        model.duration_seconds = (model.ended_at - model.started_at) / 1000;
        let duration_delta = model.duration_seconds - before;

        let slot = &mut self.visitors[v];
        slot.dirty = true;
        let visitor = &mut slot.model;
        visitor.total_time_seconds += duration_delta;
        visitor.first_seen = visitor.first_seen.min(ts);
        let latest = ts >= visitor.last_seen;
        visitor.last_seen = visitor.last_seen.max(ts);
        visitor.is_bot |= event.client.info.is_bot;
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
        }
        self.events.push(PendingEvent { visitor: v, session: s, event });
    }

    fn open_session(&mut self, v: usize, event: &CollectedEvent, link: Option<LinkKind>) -> usize {
        let visitor = &mut self.visitors[v];
        visitor.model.total_sessions += 1;
        visitor.dirty = true;
        let client = &event.client;
        let external_referrer =
            event.external_referrer_host.as_ref().map(|host| event.referrer.clone().unwrap_or_else(|| host.clone()));
        let model = tracked_session::Model {
            id: 0,
            site_id: event.site_id,
            visitor_id: visitor.model.id,
            tracker_vid: event.tracker_vid.clone(),
            started_at: event.timestamp,
            ended_at: event.timestamp,
            duration_seconds: 0,
            pageview_count: 0,
            event_count: 0,
            entry_page: None,
            exit_page: None,
            referrer: external_referrer,
            channel: source::channel(&event.utm, event.external_referrer_host.as_deref(), link).to_owned(),
            utm_source: event.utm.source.clone(),
            utm_medium: event.utm.medium.clone(),
            utm_campaign: event.utm.campaign.clone(),
            utm_content: event.utm.content.clone(),
            utm_term: event.utm.term.clone(),
            is_bot: client.info.is_bot,
            country: client.geo.country.clone(),
            city: client.geo.city.clone(),
            region: client.geo.region.clone(),
            lat: client.geo.lat,
            lon: client.geo.lon,
            device_type: Some(client.info.device_type.clone()),
            browser: client.info.browser.clone(),
            os: client.info.os.clone(),
        };
        let index = self.sessions.len();
        self.sessions.push(SessionSlot { model, visitor: v, is_new: true, dirty: true });
        visitor.session = Some(index);
        index
    }

    pub fn identify(&mut self, command: &'a IdentifyCommand) {
        let v = self.visitor_slot(command.site_id, &command.tracker_vid, command.identified_at);
        let slot = &mut self.visitors[v];
        slot.dirty = true;
        let visitor = &mut slot.model;
        visitor.status = "identified".to_owned();
        visitor.identified_user_id = command.user_id.clone().or_else(|| command.email.clone());
        if command.email.is_some() {
            visitor.email = command.email.clone();
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

fn session_campaign(session: &tracked_session::Model) -> Option<(Option<&str>, Option<&str>, Option<&str>)> {
    let key = (session.utm_source.as_deref(), session.utm_medium.as_deref(), session.utm_campaign.as_deref());
    (key != (None, None, None)).then_some(key)
}

/// The visitor's latest place and device are those of their latest event.
fn apply_client(visitor: &mut visitor::Model, event: &CollectedEvent) {
    let client = &event.client;
    visitor.device_type = Some(client.info.device_type.clone());
    visitor.browser = client.info.browser.clone().or(visitor.browser.take());
    visitor.os = client.info.os.clone().or(visitor.os.take());
    if client.geo.country.is_some() {
        visitor.country = client.geo.country.clone();
        visitor.city = client.geo.city.clone();
        visitor.region = client.geo.region.clone();
        visitor.lat = client.geo.lat;
        visitor.lon = client.geo.lon;
    }
}

fn new_visitor(site_id: i64, tracker_vid: &str, now: i64) -> visitor::Model {
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
    }
}
