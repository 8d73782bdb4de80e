//! The read half of a write batch: the visitors it names, locked for the rest
//! of the transaction, their open sessions, and the clicks its landings report.
//!
//! The lock is what keeps aggregates exact when several instances write to one
//! PostgreSQL database: each batch reads a visitor's totals and open session
//! only once it holds the visitor's row, so no other writer can change them
//! before this transaction commits. Rows are locked in key order, so two
//! writers never wait on each other in a cycle. SQLite has no row locks; its
//! single database write lock serializes writers instead.

use std::collections::{BTreeMap, HashMap, HashSet};

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, IntoActiveModel, QueryFilter,
    Statement, TryInsertResult,
};

use entity::{link_click, tracked_session, visitor};

use super::{
    WriteOp,
    sessionize::{Batch, StoredClick, new_visitor},
};
use crate::service::IN_LIST_CHUNK as CHUNK;

/// Every visitor the operations name, with the earliest time each is seen in
/// them: a visitor created by this batch starts there.
fn visitor_keys<'a>(ops: &[&'a WriteOp]) -> BTreeMap<(i64, &'a str), i64> {
    let mut keys: BTreeMap<(i64, &str), i64> = BTreeMap::new();
    let mut note = |site_id: i64, vid: &'a str, ts: i64| {
        keys.entry((site_id, vid)).and_modify(|first| *first = (*first).min(ts)).or_insert(ts);
    };
    for op in ops {
        match op {
            WriteOp::Events(events) => events.iter().for_each(|e| note(e.site_id, &e.tracker_vid, e.timestamp)),
            WriteOp::Identify(command) => note(command.site_id, &command.tracker_vid, command.identified_at),
            WriteOp::Click(_) => {}
        }
    }
    keys
}

/// Loads and locks what the operations touch, creating the visitors that do
/// not exist yet.
pub(super) async fn load<'a>(db: &impl ConnectionTrait, ops: &[&'a WriteOp]) -> Result<Batch<'a>, DbErr> {
    let keys = visitor_keys(ops);
    let mut found = lock_visitors(db, keys.keys().copied()).await?;
    let missing: Vec<((i64, &str), i64)> =
        keys.iter().filter(|(key, _)| !found.contains_key(key)).map(|(key, first)| (*key, *first)).collect();
    // Rows this batch inserts are not in the rollups yet; the batch counts them.
    let mut created: HashSet<i64> = HashSet::new();
    if !missing.is_empty() {
        // Another instance may create the same visitor at the same moment:
        // whichever insert loses does nothing and then locks the winner's row.
        for chunk in super::writes::statement_chunks(missing.clone()) {
            let rows = chunk.into_iter().map(|((site_id, vid), first)| {
                let mut row = new_visitor(site_id, vid, first).into_active_model().reset_all();
                row.id = sea_orm::ActiveValue::NotSet;
                row
            });
            let inserted = visitor::Entity::insert_many(rows)
                .on_conflict_do_nothing_on([visitor::Column::SiteId, visitor::Column::TrackerVid])
                .exec_with_returning_keys(db)
                .await?;
            if let TryInsertResult::Inserted(ids) = inserted {
                created.extend(ids);
            }
        }
        found.extend(lock_visitors(db, missing.iter().map(|(key, _)| *key)).await?);
    }

    let sessions = open_sessions(db, found.values()).await?;
    let mut batch = Batch::new();
    for (_, model) in found {
        let session = model.last_session_id.and_then(|id| sessions.get(&id).cloned());
        let is_new = created.contains(&model.id);
        batch.add_visitor(model, session, is_new);
    }
    load_clicks(db, &mut batch, ops).await?;
    Ok(batch)
}

type Found = BTreeMap<(i64, String), visitor::Model>;

/// `SELECT ... FOR UPDATE` on PostgreSQL, in key order; a plain read on SQLite.
async fn lock_visitors<'k>(
    db: &impl ConnectionTrait,
    keys: impl Iterator<Item = (i64, &'k str)>,
) -> Result<FoundByKey, DbErr> {
    let mut by_site: BTreeMap<i64, Vec<&str>> = BTreeMap::new();
    for (site_id, vid) in keys {
        by_site.entry(site_id).or_default().push(vid);
    }
    let mut found = FoundByKey::default();
    for (site_id, vids) in by_site {
        let rows = if db.get_database_backend() == DbBackend::Postgres {
            lock_on_postgres(db, site_id, &vids).await?
        } else {
            let mut rows = Vec::with_capacity(vids.len());
            for chunk in vids.chunks(CHUNK) {
                let chunk = visitor::Entity::find()
                    .filter(visitor::Column::SiteId.eq(site_id))
                    .filter(visitor::Column::TrackerVid.is_in(chunk.iter().copied()))
                    .all(db)
                    .await?;
                rows.extend(chunk);
            }
            rows
        };
        for model in rows {
            found.0.insert((model.site_id, model.tracker_vid.clone()), model);
        }
    }
    Ok(found)
}

/// Locks one site's visitors: one lookup of the `(site_id, tracker_vid)` key
/// for each of `vids`, in their order. A subquery that locks is never merged
/// into the outer query, so the plan stays a loop of key lookups even without
/// statistics, as in a fresh database until autovacuum's first pass. With an
/// `IN` list the planner then compared each of the site's rows with every key
/// (15 ms for 500 keys); with a plain join it hashed the keys and read the
/// whole site.
async fn lock_on_postgres(
    db: &impl ConnectionTrait,
    site_id: i64,
    vids: &[&str],
) -> Result<Vec<visitor::Model>, DbErr> {
    const LOCK: &str = "SELECT v.* FROM unnest($2::text[]) AS k(tracker_vid) \
        CROSS JOIN LATERAL (SELECT * FROM visitors \
            WHERE site_id = $1 AND tracker_vid = k.tracker_vid FOR UPDATE) AS v";
    let keys: Vec<String> = vids.iter().map(|&vid| vid.to_owned()).collect();
    let statement = Statement::from_sql_and_values(DbBackend::Postgres, LOCK, [site_id.into(), keys.into()]);
    visitor::Entity::find().from_raw_sql(statement).all(db).await
}

/// Locked visitor rows by (site, tracker_vid).
#[derive(Default)]
struct FoundByKey(Found);

impl FoundByKey {
    fn contains_key(&self, key: &(i64, &str)) -> bool {
        self.0.contains_key(&(key.0, key.1.to_owned()))
    }

    fn extend(&mut self, other: FoundByKey) {
        self.0.extend(other.0);
    }

    fn values(&self) -> impl Iterator<Item = &visitor::Model> {
        self.0.values()
    }
}

impl IntoIterator for FoundByKey {
    type Item = ((i64, String), visitor::Model);
    type IntoIter = std::collections::btree_map::IntoIter<(i64, String), visitor::Model>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// Each visitor's latest session; whether it is still open is for
/// `sessionize` to say.
async fn open_sessions<'m>(
    db: &impl ConnectionTrait,
    visitors: impl Iterator<Item = &'m visitor::Model>,
) -> Result<HashMap<i64, tracked_session::Model>, DbErr> {
    let ids: Vec<i64> = visitors.filter_map(|model| model.last_session_id).collect();
    let mut sessions = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(CHUNK) {
        let rows = tracked_session::Entity::find()
            .filter(tracked_session::Column::Id.is_in(chunk.iter().copied()))
            .all(db)
            .await?;
        sessions.extend(rows.into_iter().map(|model| (model.id, model)));
    }
    Ok(sessions)
}

/// The stored clicks that this batch's events report by `lt_click`. Read after
/// the visitors are locked, so a click another writer just tied to the same
/// visitor is seen as tied.
async fn load_clicks(db: &impl ConnectionTrait, batch: &mut Batch<'_>, ops: &[&WriteOp]) -> Result<(), DbErr> {
    let mut keys: Vec<&str> = ops
        .iter()
        .filter_map(|op| match op {
            WriteOp::Events(events) => Some(events.iter().filter_map(|e| e.click_key.as_deref())),
            _ => None,
        })
        .flatten()
        .collect();
    keys.sort_unstable();
    keys.dedup();
    for chunk in keys.chunks(CHUNK) {
        let found = link_click::Entity::find()
            .filter(link_click::Column::ClickKey.is_in(chunk.iter().copied()))
            .all(db)
            .await?;
        for click in found {
            let stored = StoredClick {
                id: click.id,
                site_id: click.site_id,
                link_id: click.link_id,
                has_visitor: click.visitor_id.is_some(),
                created_at: click.created_at,
            };
            batch.add_stored_click(click.click_key, stored, click.link_type);
        }
    }
    Ok(())
}
