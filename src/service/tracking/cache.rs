//! The writer's memory of recently active visitors and their open sessions.
//! The batch writer is the only writer of visitor activity, so what it last
//! wrote is what the database holds, and a returning visitor costs no read.

use std::num::NonZeroUsize;

use lru::LruCache;

use entity::{tracked_session, visitor};

#[derive(Clone)]
pub(super) struct CachedVisitor {
    pub visitor: visitor::Model,
    pub session: Option<tracked_session::Model>,
}

pub struct VisitorCache {
    entries: LruCache<(i64, String), CachedVisitor>,
}

impl VisitorCache {
    pub fn new(capacity: usize) -> Self {
        Self { entries: LruCache::new(NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN)) }
    }

    pub(super) fn get(&mut self, site_id: i64, tracker_vid: &str) -> Option<CachedVisitor> {
        self.entries.get(&(site_id, tracker_vid.to_owned())).cloned()
    }

    pub(super) fn put(&mut self, entry: CachedVisitor) {
        self.entries.put((entry.visitor.site_id, entry.visitor.tracker_vid.clone()), entry);
    }

    /// Forgets everything, for when a write failed half-way.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}
