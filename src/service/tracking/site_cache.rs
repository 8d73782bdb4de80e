//! Sites as the collect endpoint sees them, kept for a few seconds so a busy
//! site costs no database read per hit. Site changes and deletions evict
//! their entry at once.

use std::{
    collections::HashMap,
    num::NonZeroUsize,
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use entity::site;
use lru::LruCache;
use sea_orm::ConnectionTrait;

use crate::{cluster::Changed, error::AppResult, service::sites};

const CAPACITY: usize = 10_000;
const FRESH_FOR: Duration = Duration::from_secs(30);

type Entries = LruCache<i64, (Instant, Arc<site::Model>)>;

pub struct SiteCache {
    entries: Mutex<Entries>,
    /// Bumped by every eviction, as in `LinkCache`: a read that raced a
    /// change is answered but not kept.
    evictions: AtomicU64,
}

impl Default for SiteCache {
    fn default() -> Self {
        Self {
            entries: Mutex::new(LruCache::new(NonZeroUsize::new(CAPACITY).unwrap_or(NonZeroUsize::MIN))),
            evictions: AtomicU64::new(0),
        }
    }
}

impl SiteCache {
    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The sites with these ids that exist.
    pub async fn get_many(
        &self,
        db: &impl ConnectionTrait,
        ids: impl IntoIterator<Item = i64>,
    ) -> AppResult<HashMap<i64, Arc<site::Model>>> {
        let mut found = HashMap::new();
        let mut missing = Vec::new();
        {
            let mut entries = self.lock();
            for id in ids {
                match entries.get(&id) {
                    Some((loaded, site)) if loaded.elapsed() < FRESH_FOR => {
                        found.insert(id, site.clone());
                    }
                    _ => missing.push(id),
                }
            }
        }
        if !missing.is_empty() {
            let evictions_before = self.evictions.load(Ordering::Acquire);
            let loaded = sites::public_by_ids(db, missing).await?;
            let mut entries = self.lock();
            let keep = self.evictions.load(Ordering::Acquire) == evictions_before;
            for (id, site) in loaded {
                let site = Arc::new(site);
                if keep {
                    entries.put(id, (Instant::now(), site.clone()));
                }
                found.insert(id, site);
            }
        }
        Ok(found)
    }

    /// Forgets every site, for when an account and its orgs were deleted.
    /// Forgets what a change on any instance makes stale.
    pub fn forget(&self, change: Changed) {
        match change {
            Changed::Link { .. } | Changed::Alerts { .. } => {}
            Changed::Site { site_id } => self.evict(site_id),
            Changed::All => self.clear(),
        }
    }

    pub fn clear(&self) {
        let mut entries = self.lock();
        self.evictions.fetch_add(1, Ordering::AcqRel);
        entries.clear();
    }

    pub fn evict(&self, site_id: i64) {
        let mut entries = self.lock();
        self.evictions.fetch_add(1, Ordering::AcqRel);
        entries.pop(&site_id);
    }
}
