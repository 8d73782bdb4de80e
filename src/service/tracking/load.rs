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
    QueryOrder, QuerySelect, Statement, TryInsertResult,
};

use entity::{link_click, tracked_session, visitor};

use super::{
    EventKind, WriteOp,
    sessionize::{Batch, StoredClick, apply_network, new_visitor},
};
use crate::enrich::network;
use crate::service::IN_LIST_CHUNK as CHUNK;

/// What the operations say of a visitor before it is loaded: the earliest
/// time it is seen in them (a visitor created by this batch starts there),
/// and the network it is certain to end the batch with, if any.
#[derive(Clone, Copy)]
struct FirstSeen<'a> {
    at: i64,
    network: KnownNetwork<'a>,
}

/// A visitor's network as the operations tell it.
#[derive(Clone, Copy)]
enum KnownNetwork<'a> {
    /// Every operation on it is an event (not a ping, which may be dropped)
    /// from this one network, so the batch gives it this network for sure.
    Only(&'a network::Network),
    /// Anything else: an identify, a ping, no network, or several.
    Unsure,
}

impl<'a> KnownNetwork<'a> {
    fn and(self, other: KnownNetwork<'a>) -> KnownNetwork<'a> {
        match (self, other) {
            (KnownNetwork::Only(a), KnownNetwork::Only(b)) if a == b => self,
            _ => KnownNetwork::Unsure,
        }
    }
}

/// Every visitor the operations name, with what they say of it.
fn visitor_keys<'a>(ops: &[&'a WriteOp]) -> BTreeMap<(i64, &'a str), FirstSeen<'a>> {
    let mut keys: BTreeMap<(i64, &str), FirstSeen<'a>> = BTreeMap::new();
    let mut note = |site_id: i64, vid: &'a str, at: i64, network: KnownNetwork<'a>| {
        keys.entry((site_id, vid))
            .and_modify(|seen| {
                seen.at = seen.at.min(at);
                seen.network = seen.network.and(network);
            })
            .or_insert(FirstSeen { at, network });
    };
    for op in ops {
        match op {
            WriteOp::Events(events) => events.iter().for_each(|e| {
                let network = match (&e.network, e.kind) {
                    (Some(network), kind) if kind != EventKind::Ping => KnownNetwork::Only(network),
                    _ => KnownNetwork::Unsure,
                };
                note(e.site_id, &e.tracker_vid, e.timestamp, network)
            }),
            WriteOp::Identify(command) => {
                note(command.site_id, &command.tracker_vid, command.identified_at, KnownNetwork::Unsure)
            }
            WriteOp::Click(_) => {}
        }
    }
    keys
}

/// The row a visitor the batch creates is inserted as: with the network
/// (and the network's account) the batch is certain to give it. The search
/// words are indexed as a row is inserted and again whenever its account
/// name changes, so a row inserted without the name the batch then gives it
/// would be indexed twice, its first entry deleted, in one transaction.
fn created_row(site_id: i64, vid: &str, seen: FirstSeen<'_>) -> visitor::ActiveModel {
    let mut model = new_visitor(site_id, vid, seen.at);
    if let KnownNetwork::Only(network) = seen.network {
        apply_network(&mut model, network);
    }
    let mut row = model.into_active_model().reset_all();
    row.id = sea_orm::ActiveValue::NotSet;
    row
}

/// Loads and locks what the operations touch, creating the visitors that do
/// not exist yet.
pub(super) async fn load<'a>(db: &impl ConnectionTrait, ops: &[&'a WriteOp]) -> Result<Batch<'a>, DbErr> {
    let keys = visitor_keys(ops);
    let mut found = lock_visitors(db, keys.keys().copied()).await?;
    let missing: Vec<((i64, &str), FirstSeen<'_>)> =
        keys.iter().filter(|(key, _)| !found.contains_key(key)).map(|(key, seen)| (*key, *seen)).collect();
    // Rows this batch inserts are not in the rollups yet; the batch counts them.
    let mut created: HashSet<i64> = HashSet::new();
    if !missing.is_empty() {
        // Another instance may create the same visitor at the same moment:
        // whichever insert loses does nothing and then locks the winner's row.
        for chunk in super::writes::statement_chunks(missing.clone()) {
            let rows = chunk.into_iter().map(|((site_id, vid), seen)| created_row(site_id, vid, seen));
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
/// visitor is seen as tied. On PostgreSQL the clicks are locked too, in key
/// order after the visitors: one shared landing URL can bring two visitors
/// to two instances at once, and the second writer must see the first one's
/// tie rather than tie the click again to its own visitor.
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
        let mut select = link_click::Entity::find()
            .filter(link_click::Column::ClickKey.is_in(chunk.iter().copied()))
            .order_by_asc(link_click::Column::ClickKey);
        if db.get_database_backend() == DbBackend::Postgres {
            select = select.lock_exclusive();
        }
        let found = select.all(db).await?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        enrich::network::{Network, NetworkKind},
        service::tracking::{
            CollectedEvent,
            sessionize::tests::{event, identify_command},
        },
    };

    fn network(asn: u32, kind: NetworkKind) -> Network {
        Network { asn, org: format!("Org {asn}"), kind }
    }

    fn from(kind: EventKind, ts: i64, network: Option<&Network>) -> CollectedEvent {
        CollectedEvent { network: network.cloned(), ..event(kind, ts, None) }
    }

    /// Which visitors a batch creates with a network, and with which.
    #[test]
    fn a_created_visitor_takes_a_network_only_when_every_operation_agrees() {
        let acme = network(64_500, NetworkKind::Organisation);
        let beta = network(64_501, NetworkKind::Organisation);
        let isp = network(7_922, NetworkKind::Isp);
        let identify = || WriteOp::Identify(Box::new(identify_command("vid-1", Some("u-1"), None, 5)));
        let view = EventKind::Pageview;
        // (case, operations, the network number and account it is created with)
        type Case<'a> = (&'a str, Vec<WriteOp>, Option<(i64, Option<&'a str>)>);
        let cases: Vec<Case> = vec![
            ("one event", vec![WriteOp::Events(vec![from(view, 10, Some(&acme))])], Some((64_500, Some("asn:64500")))),
            (
                "two requests, one network",
                vec![
                    WriteOp::Events(vec![from(view, 10, Some(&acme))]),
                    WriteOp::Events(vec![from(EventKind::CustomEvent, 20, Some(&acme))]),
                ],
                Some((64_500, Some("asn:64500"))),
            ),
            ("an ISP names no account", vec![WriteOp::Events(vec![from(view, 10, Some(&isp))])], Some((7_922, None))),
            (
                "two networks",
                vec![
                    WriteOp::Events(vec![from(view, 10, Some(&acme))]),
                    WriteOp::Events(vec![from(view, 20, Some(&beta))]),
                ],
                None,
            ),
            (
                "a ping may be dropped",
                vec![WriteOp::Events(vec![from(EventKind::Ping, 10, Some(&acme)), from(view, 20, Some(&acme))])],
                None,
            ),
            (
                "an event without a network",
                vec![WriteOp::Events(vec![from(view, 10, Some(&acme)), from(view, 20, None)])],
                None,
            ),
            ("an identify", vec![identify(), WriteOp::Events(vec![from(view, 10, Some(&acme))])], None),
        ];
        for (name, ops, expected) in cases {
            let ops: Vec<&WriteOp> = ops.iter().collect();
            let keys = visitor_keys(&ops);
            let seen = keys[&(1, "vid-1")];
            let row = created_row(1, "vid-1", seen);
            let stored = row.asn.clone().unwrap().map(|asn| (asn, row.account_key.clone().unwrap()));
            let expected = expected.map(|(asn, key)| (asn, key.map(str::to_owned)));
            assert_eq!(stored, expected, "{name}");
            let first = if name == "an identify" { 5 } else { 10 };
            assert_eq!(seen.at, first, "{name}: starts at the earliest operation");
        }
    }
}
