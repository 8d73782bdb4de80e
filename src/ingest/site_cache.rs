//! Sites as the collect endpoint sees them, kept for a few seconds so a busy
//! site costs no database read per hit. Site changes and deletions evict
//! their entry at once.

use std::{
    collections::HashMap,
    num::NonZeroUsize,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use entity::site;
use lru::LruCache;
use sea_orm::ConnectionTrait;

use crate::{error::AppResult, service::sites};

const CAPACITY: usize = 10_000;
const FRESH_FOR: Duration = Duration::from_secs(30);

pub struct SiteCache {
    entries: Mutex<LruCache<i64, (Instant, Arc<site::Model>)>>,
}

impl Default for SiteCache {
    fn default() -> Self {
        Self { entries: Mutex::new(LruCache::new(NonZeroUsize::new(CAPACITY).unwrap_or(NonZeroUsize::MIN))) }
    }
}

impl SiteCache {
    /// The sites with these ids that exist.
    pub async fn get_many(
        &self,
        db: &impl ConnectionTrait,
        ids: impl IntoIterator<Item = i64>,
    ) -> AppResult<HashMap<i64, Arc<site::Model>>> {
        let mut found = HashMap::new();
        let mut missing = Vec::new();
        {
            let mut entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
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
            let loaded = sites::public_by_ids(db, missing).await?;
            let mut entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            for (id, site) in loaded {
                let site = Arc::new(site);
                entries.put(id, (Instant::now(), site.clone()));
                found.insert(id, site);
            }
        }
        Ok(found)
    }

    /// Forgets every site, for when an account and its orgs were deleted.
    pub fn clear(&self) {
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clear();
    }

    pub fn evict(&self, site_id: i64) {
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop(&site_id);
    }
}
