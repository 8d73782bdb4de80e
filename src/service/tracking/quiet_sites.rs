//! Sites known to have no live `ACCOUNT_BECAME_HOT` destination. With the ASN
//! lookup on, nearly every batch touches an account, so without this every
//! batch would read the site's destinations only to find that nothing can
//! fire. Only that answer ("none") is kept, and only for batches whose sole
//! possible alerts are accounts': a visitor's own trigger still reads the
//! destinations every time.
//!
//! Creating a destination or turning one back on evicts its site here and on
//! every instance (`Changed::Alerts`). An account that turned hot while a
//! stale entry was still believed fires at its next visit all the same: the
//! outbox, not this cache, remembers what has fired.

use std::{
    num::NonZeroUsize,
    sync::{
        Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use lru::LruCache;

use crate::cluster::Changed;

const CAPACITY: usize = 10_000;
/// A bound on a belief whose eviction signal went missing.
const FRESH_FOR: Duration = Duration::from_secs(30);

pub struct QuietSites {
    entries: Mutex<LruCache<i64, Instant>>,
    /// Bumped by every eviction: what was read before one is not kept, as in
    /// `SiteCache`.
    evictions: AtomicU64,
}

impl Default for QuietSites {
    fn default() -> Self {
        Self {
            entries: Mutex::new(LruCache::new(NonZeroUsize::new(CAPACITY).unwrap_or(NonZeroUsize::MIN))),
            evictions: AtomicU64::new(0),
        }
    }
}

/// Where a read of the destinations began, to keep its answer only if no
/// eviction came in between.
#[derive(Clone, Copy)]
pub(super) struct Epoch(u64);

impl QuietSites {
    fn lock(&self) -> MutexGuard<'_, LruCache<i64, Instant>> {
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether every one of these sites is known to have none.
    pub(super) fn all_quiet(&self, site_ids: &[i64]) -> bool {
        let mut entries = self.lock();
        site_ids.iter().all(|site| entries.get(site).is_some_and(|learned| learned.elapsed() < FRESH_FOR))
    }

    /// Taken before reading the destinations.
    pub(super) fn epoch(&self) -> Epoch {
        Epoch(self.evictions.load(Ordering::Acquire))
    }

    /// Keeps what a read begun at `epoch` found, unless a change came since.
    pub(super) fn learn(&self, epoch: Epoch, quiet: impl IntoIterator<Item = i64>) {
        let mut entries = self.lock();
        if self.evictions.load(Ordering::Acquire) != epoch.0 {
            return;
        }
        let now = Instant::now();
        for site in quiet {
            entries.put(site, now);
        }
    }

    /// Forgets what a change on any instance makes stale.
    pub fn forget(&self, change: Changed) {
        let mut entries = self.lock();
        self.evictions.fetch_add(1, Ordering::AcqRel);
        match change {
            Changed::Alerts { site_id } | Changed::Site { site_id } => {
                entries.pop(&site_id);
            }
            Changed::Link { .. } => {}
            Changed::All => entries.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_is_quiet_only_once_learned_and_until_its_alerts_change() {
        let quiet = QuietSites::default();
        assert!(!quiet.all_quiet(&[1]));
        quiet.learn(quiet.epoch(), [1, 2]);
        assert!(quiet.all_quiet(&[1, 2]));
        assert!(!quiet.all_quiet(&[1, 3]), "an unknown site is not quiet");
        quiet.forget(Changed::Alerts { site_id: 1 });
        assert!(!quiet.all_quiet(&[1]));
        assert!(quiet.all_quiet(&[2]));
        quiet.forget(Changed::All);
        assert!(!quiet.all_quiet(&[2]));
    }

    #[test]
    fn a_read_that_raced_a_change_is_not_kept() {
        let quiet = QuietSites::default();
        let before = quiet.epoch();
        quiet.forget(Changed::Alerts { site_id: 9 });
        quiet.learn(before, [1]);
        assert!(!quiet.all_quiet(&[1]));
        quiet.learn(quiet.epoch(), [1]);
        assert!(quiet.all_quiet(&[1]));
    }
}
