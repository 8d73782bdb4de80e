//! Short links as the redirect needs them, kept in memory so a redirect costs
//! no database read. Entries refresh every 30 seconds and are evicted at once
//! when their link or site changes, on every instance (`cluster`). A capped
//! link's clicks are counted in the database, not here, so `max_clicks`
//! holds across instances; an entry only remembers that its cap was reached.

use std::{
    num::NonZeroUsize,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use entity::{link, site};
use lru::LruCache;
use sea_orm::ConnectionTrait;
use url::Url;

use crate::{cluster::Changed, error::AppResult, service::links};

const CAPACITY: usize = 50_000;
const FRESH_FOR: Duration = Duration::from_secs(30);
pub const CLICK_LIMIT_REACHED: &str = "This link has reached its click limit.";

pub struct LinkTarget {
    pub site: site::Model,
    pub link: Arc<link::Model>,
    /// Where visitors go: the destination with the link's UTM labels merged
    /// in, split where the click id goes, so a redirect only concatenates.
    location: ClickLocation,
    /// Set once the database said the cap is reached; a cap only rises
    /// through an edit, which evicts the entry.
    exhausted: AtomicBool,
}

impl LinkTarget {
    /// Why the link does not redirect now, if it does not.
    pub fn unavailable(&self, now: i64) -> Option<&'static str> {
        if !self.link.is_active {
            Some("This link has been turned off.")
        } else if self.link.expires_at.is_some_and(|expires| expires <= now) {
            Some("This link has expired.")
        } else if self.exhausted.load(Ordering::Acquire)
            || self.link.max_clicks.is_some_and(|max| self.link.human_clicks >= max)
        {
            Some(CLICK_LIMIT_REACHED)
        } else {
            None
        }
    }

    pub fn is_capped(&self) -> bool {
        self.link.max_clicks.is_some()
    }

    pub fn max_clicks(&self) -> i64 {
        self.link.max_clicks.unwrap_or(i64::MAX)
    }

    pub fn mark_exhausted(&self) {
        self.exhausted.store(true, Ordering::Release);
    }

    /// Where to send this visitor: the destination plus the click id.
    pub fn location(&self, click_key: &str) -> String {
        self.location.with(click_key)
    }
}

/// A destination as the text before and after its `lt_click` value: what
/// `Url::query_pairs_mut().append_pair("lt_click", key)` would produce,
/// without parsing and re-serializing the URL on every redirect.
struct ClickLocation {
    /// Up to and including `lt_click=`.
    head: String,
    /// The fragment, with its `#`, or nothing.
    tail: String,
}

impl ClickLocation {
    fn new(mut destination: Url) -> Self {
        let tail = destination.fragment().map(|fragment| format!("#{fragment}")).unwrap_or_default();
        destination.set_fragment(None);
        let separator = match destination.query() {
            None => "?",
            Some("") => "",
            Some(_) => "&",
        };
        Self { head: format!("{destination}{separator}lt_click="), tail }
    }

    /// The location for `click_key`, which is base62 and so needs no escaping.
    fn with(&self, click_key: &str) -> String {
        let mut location = String::with_capacity(self.head.len() + click_key.len() + self.tail.len());
        location.push_str(&self.head);
        location.push_str(click_key);
        location.push_str(&self.tail);
        location
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
    /// Bumped by every eviction. A lookup that read the database before an
    /// eviction does not store what it read, so a change that committed
    /// meanwhile is not hidden for `FRESH_FOR` behind a stale entry.
    evictions: AtomicU64,
}

impl Default for LinkCache {
    fn default() -> Self {
        Self {
            entries: Mutex::new(LruCache::new(NonZeroUsize::new(CAPACITY).unwrap_or(NonZeroUsize::MIN))),
            evictions: AtomicU64::new(0),
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
        let evictions_before = self.evictions.load(Ordering::Acquire);
        let found = links::resolve_public(db, site_slug, link_slug).await?;
        let Some((site, link, destination)) =
            found.and_then(|(site, link)| with_utm(&link).map(|destination| (site, link, destination)))
        else {
            self.lock().pop(&key);
            return Ok(None);
        };
        let target = Arc::new(LinkTarget {
            site,
            link: Arc::new(link),
            location: ClickLocation::new(destination),
            exhausted: AtomicBool::new(false),
        });
        let mut entries = self.lock();
        if self.evictions.load(Ordering::Acquire) == evictions_before {
            entries.put(key, (Instant::now(), target.clone()));
        }
        Ok(Some(target))
    }

    /// Forgets every entry of a link (after it changed) or of a site.
    pub fn evict(&self, link_id: Option<i64>, site_id: i64) {
        let mut entries = self.lock();
        self.evictions.fetch_add(1, Ordering::AcqRel);
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
    /// Forgets what a change on any instance makes stale.
    pub fn forget(&self, change: Changed) {
        match change {
            Changed::Link { link_id, site_id } => self.evict(Some(link_id), site_id),
            Changed::Site { site_id } => self.evict(None, site_id),
            Changed::Alerts { .. } => {}
            Changed::All => self.clear(),
        }
    }

    pub fn clear(&self) {
        let mut entries = self.lock();
        self.evictions.fetch_add(1, Ordering::AcqRel);
        entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_click_location_is_what_appending_the_pair_to_the_url_gives() {
        for destination in [
            "https://a.example",
            "https://a.example/landing",
            "https://a.example/landing?",
            "https://a.example/landing?utm_source=x&b=%20y",
            "https://a.example/landing#pricing",
            "https://a.example/landing?q=1#top?x=2",
            "https://a.example/landing?#",
            "https://user@a.example:8443/d%C3%A9j%C3%A0/?q=%E2%9C%93",
            "mailto:sales@a.example",
        ] {
            let url = Url::parse(destination).expect(destination);
            let mut expected = url.clone();
            expected.query_pairs_mut().append_pair("lt_click", "00AbCdEfGhIjKlMnOpQrSt");
            assert_eq!(ClickLocation::new(url).with("00AbCdEfGhIjKlMnOpQrSt"), expected.as_str(), "{destination}");
        }
    }
}
