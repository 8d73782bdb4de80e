//! Short links as the redirect needs them, kept in memory so a redirect costs
//! no database read. Entries refresh every 30 seconds and are evicted at once
//! when their link or site changes. Each holds the link's human-click count,
//! so `max_clicks` is enforced exactly under concurrency.

use std::{
    collections::HashMap,
    num::NonZeroUsize,
    sync::{
        Arc, Mutex,
        atomic::{AtomicI64, Ordering},
    },
    time::{Duration, Instant},
};

use entity::{link, site};
use lru::LruCache;
use sea_orm::ConnectionTrait;
use url::Url;

use crate::{error::AppResult, service::links};

const CAPACITY: usize = 50_000;
const FRESH_FOR: Duration = Duration::from_secs(30);

pub struct LinkTarget {
    pub site: site::Model,
    pub link: Arc<link::Model>,
    /// The destination with the link's UTM labels merged in.
    pub destination: Url,
    /// Shared by every entry of the link, so evictions keep the count.
    human_clicks: Arc<AtomicI64>,
}

impl LinkTarget {
    /// Why the link does not redirect now, if it does not.
    pub fn unavailable(&self, now: i64) -> Option<&'static str> {
        if !self.link.is_active {
            Some("This link has been turned off.")
        } else if self.link.expires_at.is_some_and(|expires| expires <= now) {
            Some("This link has expired.")
        } else if self.link.max_clicks.is_some_and(|max| self.human_clicks.load(Ordering::Acquire) >= max) {
            Some("This link has reached its click limit.")
        } else {
            None
        }
    }

    /// Counts a human click; false when the link's click limit is reached.
    pub fn take_click(&self) -> bool {
        let Some(max) = self.link.max_clicks else {
            self.human_clicks.fetch_add(1, Ordering::AcqRel);
            return true;
        };
        self.human_clicks.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < max).then_some(n + 1)).is_ok()
    }

    /// Gives back a click that could not be recorded.
    pub fn return_click(&self) {
        self.human_clicks.fetch_sub(1, Ordering::AcqRel);
    }

    /// Where to send this visitor: the destination plus the click id.
    pub fn location(&self, click_key: &str) -> String {
        let mut url = self.destination.clone();
        url.query_pairs_mut().append_pair("lt_click", click_key);
        url.to_string()
    }
}

/// Adds `utm_source`, `utm_medium`, `utm_campaign` and `utm_content` from the
/// link's labels where the destination does not carry them already.
fn with_utm(link: &link::Model) -> Option<Url> {
    let mut url = Url::parse(&link.destination_url).ok()?;
    let present: Vec<String> = url.query_pairs().map(|(key, _)| key.into_owned()).collect();
    let labels = [
        ("utm_source", &link.source),
        ("utm_medium", &link.medium),
        ("utm_campaign", &link.campaign),
        ("utm_content", &link.content),
    ];
    let missing: Vec<_> =
        labels.into_iter().filter(|(key, value)| !value.is_empty() && !present.iter().any(|p| p == key)).collect();
    if !missing.is_empty() {
        let mut pairs = url.query_pairs_mut();
        for (key, value) in missing {
            pairs.append_pair(key, value);
        }
    }
    Some(url)
}

type Key = (String, String);

pub struct LinkCache {
    entries: Mutex<LruCache<Key, (Instant, Arc<LinkTarget>)>>,
    /// Human clicks per link id, counted here as they are redirected: clicks
    /// still in the write queue are not in the database yet.
    counters: Mutex<HashMap<i64, Arc<AtomicI64>>>,
}

impl Default for LinkCache {
    fn default() -> Self {
        Self {
            entries: Mutex::new(LruCache::new(NonZeroUsize::new(CAPACITY).unwrap_or(NonZeroUsize::MIN))),
            counters: Mutex::new(HashMap::new()),
        }
    }
}

impl LinkCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<Key, (Instant, Arc<LinkTarget>)>> {
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub async fn resolve(
        &self,
        db: &impl ConnectionTrait,
        site_slug: &str,
        link_slug: &str,
    ) -> AppResult<Option<Arc<LinkTarget>>> {
        let key = (site_slug.to_owned(), link_slug.to_owned());
        if let Some((loaded, target)) = self.lock().get(&key)
            && loaded.elapsed() < FRESH_FOR
        {
            return Ok(Some(target.clone()));
        }
        let found = links::resolve_public(db, site_slug, link_slug).await?;
        let Some((site, link, destination)) =
            found.and_then(|(site, link)| with_utm(&link).map(|destination| (site, link, destination)))
        else {
            self.lock().pop(&key);
            return Ok(None);
        };
        let human_clicks = {
            let mut counters = self.counters.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let counter = counters.entry(link.id).or_default().clone();
            counter.fetch_max(link.human_clicks, Ordering::AcqRel);
            counter
        };
        let target = Arc::new(LinkTarget { site, link: Arc::new(link), destination, human_clicks });
        self.lock().put(key, (Instant::now(), target.clone()));
        Ok(Some(target))
    }

    /// Forgets every entry of a link (after it changed) or of a site.
    pub fn evict(&self, link_id: Option<i64>, site_id: i64) {
        let mut entries = self.lock();
        let stale: Vec<Key> = entries
            .iter()
            .filter(|(_, (_, target))| target.site.id == site_id && link_id.is_none_or(|id| target.link.id == id))
            .map(|(key, _)| key.clone())
            .collect();
        for key in stale {
            entries.pop(&key);
        }
    }

    /// Forgets every link, for when an account and its orgs were deleted.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Forgets a deleted link's click count too.
    pub fn forget(&self, link_id: i64, site_id: i64) {
        self.evict(Some(link_id), site_id);
        self.counters.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(&link_id);
    }
}
