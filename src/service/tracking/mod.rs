//! Recording visitor activity: the write pipeline in one place. Collect,
//! identify and the redirect hand their writes to the batch writer
//! (`writer`), which queues them and commits in groups. In one transaction a
//! batch loads and locks what it touches (`load`), works out what changes
//! (`sessionize`, pure), and writes the result with its rollups and alert
//! outbox rows (`flush`); after the commit the live stream hears of it
//! (`live`). What the hot paths read on every request is cached here too,
//! and forgotten when the cluster says it changed: sites, links, and the
//! day's cookieless salt.

mod account_alerts;
pub(crate) mod active_hours;
pub mod batch;
mod clicks;
mod flush;
mod json_rows;
pub mod link_cache;
pub mod live;
mod load;
pub(crate) mod page_rollups;
pub mod quiet_sites;
pub(crate) mod rollup;
pub(crate) mod rollup_store;
pub mod salt_cache;
pub(crate) mod sessionize;
pub mod site_cache;
mod slots;
mod stored_event_days;
mod triggers;
mod value_batch;
pub(crate) mod value_rollups;
pub(crate) mod visit_hours;
mod visit_page_values;
mod visitor_dimensions;
mod visitor_links;
mod visitor_pages;
pub mod visitor_values;
pub mod writer;
pub(crate) mod writes;

use std::sync::Arc;

use crate::{
    enrich::{
        ClientInfo, Geo,
        network::{Network, NetworkKind},
        source::Utm,
    },
    service::money::Money,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Pageview,
    CustomEvent,
    /// An engagement ping: extends the open session's time; not shown as an event.
    Ping,
}

impl EventKind {
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "pageview" => Some(Self::Pageview),
            "custom_event" => Some(Self::CustomEvent),
            "ping" => Some(Self::Ping),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pageview => "pageview",
            Self::CustomEvent => "custom_event",
            Self::Ping => "ping",
        }
    }
}

/// Who sent a hit; shared by every event of one request.
#[derive(Debug, Clone)]
pub struct Client {
    /// Shared with the user-agent cache.
    pub info: Arc<ClientInfo>,
    pub geo: Geo,
    /// The network the address belongs to (`ASN_DB_PATH`); the address
    /// itself is not kept.
    pub network: Option<Network>,
}

impl Client {
    /// A bot by its user agent, or traffic from a hosting provider's network.
    pub fn is_bot(&self) -> bool {
        self.info.is_bot || self.network.as_ref().is_some_and(|network| network.kind == NetworkKind::Hosting)
    }
}

/// A validated, enriched event, ready to be recorded.
#[derive(Debug, Clone)]
pub struct CollectedEvent {
    pub site_id: i64,
    pub tracker_vid: String,
    pub kind: EventKind,
    pub event_name: String,
    pub page: String,
    /// The page URL's host, lowercased.
    pub hostname: Option<String>,
    pub page_title: Option<String>,
    /// The referrer as the browser sent it.
    pub referrer: Option<String>,
    /// The host of the referrer when it is another site.
    pub external_referrer_host: Option<String>,
    pub utm: Utm,
    /// The `lt_click` id of the tracking-link click that brought the visitor.
    pub click_key: Option<String>,
    /// A JSON object.
    pub props: String,
    /// A custom event's revenue.
    pub revenue: Option<Money>,
    pub engaged_ms: i64,
    /// Whether the page matches one of the site's high-value patterns.
    pub high_value: bool,
    pub timestamp: i64,
    pub client: Arc<Client>,
    /// The client's network as the event's site sees it (its own ASN lists
    /// applied).
    pub network: Option<Network>,
}

impl CollectedEvent {
    /// A bot by its user agent, or traffic from a network the site counts
    /// as hosting.
    pub fn is_bot(&self) -> bool {
        self.client.info.is_bot || self.network.as_ref().is_some_and(|network| network.kind == NetworkKind::Hosting)
    }
}

/// An identify call, already validated and authorized.
#[derive(Debug, Clone)]
pub struct IdentifyCommand {
    pub site_id: i64,
    pub tracker_vid: String,
    pub user_id: Option<String>,
    pub email: Option<String>,
    pub name: Option<String>,
    pub company: Option<String>,
    pub phone: Option<String>,
    /// A JSON object.
    pub traits: String,
    pub source: String,
    pub source_detail: Option<String>,
    pub identified_at: i64,
}

/// A redirect through a tracking link.
#[derive(Debug, Clone)]
pub struct ClickCommand {
    /// The link as it was when clicked; its labels are copied onto the click.
    pub link: Arc<entity::link::Model>,
    /// The `lt_click` id added to the destination.
    pub click_key: String,
    pub referrer: Option<String>,
    /// Bots and HEAD requests are stored but do not count.
    pub is_bot: bool,
    /// Already added to the link's human clicks when it was let through (a
    /// capped link counts at the redirect, so `max_clicks` holds across instances).
    pub counted: bool,
    pub client: Arc<Client>,
    pub created_at: i64,
}

pub enum WriteOp {
    Events(Vec<CollectedEvent>),
    Identify(Box<IdentifyCommand>),
    Click(Box<ClickCommand>),
}

impl WriteOp {
    /// How many queue slots the operation takes. An identify takes one, so a
    /// full queue refuses it up front like an event (design §12).
    pub fn event_count(&self) -> usize {
        match self {
            WriteOp::Events(events) => events.len(),
            WriteOp::Identify(_) => 1,
            WriteOp::Click(_) => 1,
        }
    }
}

/// A stored event, for the live stream.
#[derive(Debug, Clone)]
pub struct Activity {
    pub site_id: i64,
    pub tracker_vid: String,
    pub identified_user_id: Option<String>,
    pub event_type: &'static str,
    /// A custom event's name (`form_submit`); empty for a pageview.
    pub event_name: String,
    pub page: String,
    pub timestamp: i64,
}
