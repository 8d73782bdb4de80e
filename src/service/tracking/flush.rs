//! The SQL half of a write batch: insert what is new, update what changed.
//! Every statement here only writes, except the new sessions' inserts, which
//! read back their ids.

use std::collections::{HashMap, VecDeque};

use sea_orm::{
    ActiveModelTrait,
    ActiveValue::{NotSet, Set},
    ConnectionTrait, DbBackend, DbErr, IdenStatic, IntoActiveModel, Iterable, Statement, Value,
};

use entity::{event, identity, tracked_session, visitor};

use super::{
    Activity, EventKind, account_alerts, clicks, json_rows, page_rollups,
    quiet_sites::QuietSites,
    rollup_store,
    sessionize::{Batch, SessionIx, SessionSlot, SlotIndex, VisitorIx},
    stored_event_days, triggers, value_batch, visitor_links, visitor_pages,
    visitor_values::WrittenValues,
    writes::{self, Writes},
};
use crate::service::{alerts::outbox, conversions};

/// Writes what the batch changed. Statements go in groups, and the writer
/// builds each group while the database runs the one before, so on two cores
/// they work at the same time instead of taking turns.
pub(super) async fn write(
    db: &impl ConnectionTrait,
    batch: &mut Batch<'_>,
    written: &WrittenValues,
) -> Result<Vec<Activity>, DbErr> {
    batch.rescore();
    let backend = db.get_database_backend();
    let (slots, rows) = new_sessions(batch);
    let (inserted, sessions) = writes::overlap(insert_sessions(db, rows), || session_updates(backend, batch)).await?;
    assign_session_ids(batch, slots, inserted)?;
    link_last_sessions(batch);
    let batch = &*batch;
    let stored = value_batch::stored(db, batch, written).await?;
    let stored = &stored;
    if batch.events.len() < OVERLAP_FROM_EVENTS {
        let mut writes = sessions;
        writes.append(visitor_updates(backend, batch));
        writes.append(activity_rows(backend, batch, written, stored));
        return writes.send_while(db, || activities(batch)).await;
    }
    let visitors = sessions.send_while(db, || visitor_updates(backend, batch)).await?;
    let activity = visitors.send_while(db, || activity_rows(backend, batch, written, stored)).await?;
    activity.send_while(db, || activities(batch)).await
}

/// Below this many events a batch's statements build in less time than a
/// round trip to the database takes, so they go in one group.
const OVERLAP_FROM_EVENTS: usize = 200;

/// Each visitor's latest session becomes their last one.
fn link_last_sessions(batch: &mut Batch<'_>) {
    for index in 0..batch.visitors.len() {
        let v = VisitorIx::new(index);
        if let Some(session) = batch.visitors[v].session {
            let session_id = batch.sessions[session].model.id;
            let slot = &mut batch.visitors[v];
            if slot.model.last_session_id != Some(session_id) {
                slot.model.last_session_id = Some(session_id);
                slot.dirty = true;
            }
        }
    }
}

/// The changed visitors, rewritten whole: an event can change most of a
/// visitor's columns, and every index on them but the key's.
fn visitor_updates(backend: DbBackend, batch: &Batch<'_>) -> Writes {
    let mut writes = Writes::new(backend);
    use visitor::Column as C;
    let changed: Vec<&str> =
        C::iter().filter(|column| !matches!(column, C::Id | C::SiteId | C::TrackerVid)).map(|c| c.as_str()).collect();
    let rows: Vec<visitor::ActiveModel> = batch
        .visitors
        .iter()
        .filter(|slot| slot.dirty)
        .map(|slot| slot.model.clone().into_active_model().reset_all())
        .collect();
    writes.add_models(rows, &json_rows::on_conflict_replace(&[C::Id.as_str()], &changed));
    writes
}

/// The columns an event changes on a stored session. Its start moves only for
/// an event older than the session, as imports out of order can send.
const SESSION_GROWTH: [tracked_session::Column; 9] = {
    use tracked_session::Column as C;
    [
        C::EndedAt,
        C::DurationSeconds,
        C::PageviewCount,
        C::EventCount,
        C::HumanPageviewCount,
        C::HumanEventCount,
        C::HumanHours,
        C::EntryPage,
        C::ExitPage,
    ]
};

/// The stored sessions the batch changed, writing only what an event changes:
/// SQLite rewrites an index for every column an update sets, and a session's
/// two start-ordered indexes keep their keys unless its start moved.
fn session_updates(backend: DbBackend, batch: &Batch<'_>) -> Writes {
    let mut writes = Writes::new(backend);
    let (moved, grown): (Vec<&SessionSlot>, Vec<&SessionSlot>) = batch
        .sessions
        .iter()
        .filter(|slot| slot.dirty && !slot.is_new())
        .partition(|slot| slot.stored_start != Some(slot.model.started_at));
    add_session_updates(&mut writes, grown, &SESSION_GROWTH);
    let with_start: Vec<tracked_session::Column> =
        SESSION_GROWTH.into_iter().chain([tracked_session::Column::StartedAt]).collect();
    add_session_updates(&mut writes, moved, &with_start);
    writes
}

fn add_session_updates(writes: &mut Writes, slots: Vec<&SessionSlot>, changed: &[tracked_session::Column]) {
    if slots.is_empty() {
        return;
    }
    // Every row conflicts, so only `changed` is written; the insert half
    // still needs the columns that cannot be NULL.
    let rows: Vec<tracked_session::ActiveModel> = slots
        .into_iter()
        .map(|slot| {
            let model = &slot.model;
            tracked_session::ActiveModel {
                id: Set(model.id),
                site_id: Set(model.site_id),
                visitor_id: Set(model.visitor_id),
                tracker_vid: Set(model.tracker_vid.clone()),
                started_at: Set(model.started_at),
                ended_at: Set(model.ended_at),
                duration_seconds: Set(model.duration_seconds),
                pageview_count: Set(model.pageview_count),
                event_count: Set(model.event_count),
                human_pageview_count: Set(model.human_pageview_count),
                human_event_count: Set(model.human_event_count),
                human_hours: Set(model.human_hours),
                entry_page: Set(model.entry_page.clone()),
                exit_page: Set(model.exit_page.clone()),
                channel: Set(model.channel.clone()),
                is_bot: Set(model.is_bot),
                ..Default::default()
            }
        })
        .collect();
    let changed: Vec<&str> = changed.iter().map(|column| column.as_str()).collect();
    writes.add_models(rows, &json_rows::on_conflict_replace(&[tracked_session::Column::Id.as_str()], &changed));
}

/// What the batch adds: its events, the rollups they move, its clicks and
/// its identities.
fn activity_rows(
    backend: DbBackend,
    batch: &Batch<'_>,
    written: &WrittenValues,
    stored: &value_batch::Stored,
) -> Writes {
    let mut writes = Writes::new(backend);
    // A ping only moves its session's end; it is not an event of its own.
    let rows: Vec<event::ActiveModel> = batch
        .events
        .iter()
        .filter(|pending| pending.event.kind != EventKind::Ping)
        .map(|pending| {
            let e = pending.event;
            event::ActiveModel {
                id: NotSet,
                site_id: Set(e.site_id),
                visitor_id: Set(batch.visitors[pending.visitor].model.id),
                session_id: Set(batch.sessions[pending.session].model.id),
                event_type: Set(e.kind.as_str().to_owned()),
                event_name: Set(e.event_name.clone()),
                page: Set(e.page.clone()),
                page_title: Set(e.page_title.clone()),
                referrer: Set(e.referrer.clone()),
                props: Set(e.props.clone()),
                engaged_ms: Set(e.engaged_ms),
                is_bot: Set(e.is_bot()),
                timestamp: Set(e.timestamp),
                hostname: Set(e.hostname.clone()),
                revenue_minor: Set(e.revenue.as_ref().map(|money| money.minor)),
                revenue_currency: Set(e.revenue.as_ref().map(|money| money.currency.clone())),
            }
        })
        .collect();
    writes.add_models(rows, "");
    let stored_events = batch.events.iter().map(|pending| pending.event).filter(|e| e.kind != EventKind::Ping);
    stored_event_days::add(&mut writes, stored_events.map(|e| (e.site_id, e.timestamp)));
    add_to_page_hours(&mut writes, batch);
    visitor_pages::add(&mut writes, batch);
    rollup_store::add_visitor_moves(&mut writes, batch.visitor_moves());
    rollup_store::add_touch_moves(&mut writes, batch.touch_moves());
    rollup_store::add_session_moves(&mut writes, batch.session_moves());
    value_batch::add(&mut writes, batch, written, stored);
    let (account_moves, accounts_seen) = batch.account_moves();
    rollup_store::add_account_moves(&mut writes, account_moves, accounts_seen);
    clicks::write_clicks(&mut writes, batch);
    visitor_links::add(&mut writes, batch);
    let identities: Vec<identity::ActiveModel> = batch
        .identities
        .iter()
        .map(|pending| {
            let c = pending.command;
            identity::ActiveModel {
                id: NotSet,
                site_id: Set(c.site_id),
                visitor_id: Set(batch.visitors[pending.visitor].model.id),
                tracker_vid: Set(c.tracker_vid.clone()),
                user_id: Set(c.user_id.clone()),
                email: Set(c.email.clone()),
                name: Set(c.name.clone()),
                company: Set(c.company.clone()),
                phone: Set(c.phone.clone()),
                traits: Set(c.traits.clone()),
                source: Set(c.source.clone()),
                source_detail: Set(c.source_detail.clone()),
                identified_at: Set(c.identified_at),
            }
        })
        .collect();
    writes.add_models(identities, "");
    writes
}

/// Conversions recorded before their person was identified join them now,
/// firing their alerts, in the batch's transaction. Answers how many.
pub(super) async fn tie_conversions(db: &impl ConnectionTrait, batch: &Batch<'_>, now: i64) -> Result<u64, DbErr> {
    let mut tied = 0;
    for pending in &batch.identities {
        let c = pending.command;
        let visitor = &batch.visitors[pending.visitor].model;
        let person = conversions::ToTie {
            site_id: c.site_id,
            visitor_id: visitor.id,
            tracker_vid: &visitor.tracker_vid,
            email: c.email.as_deref(),
            user_id: c.user_id.as_deref(),
        };
        tied += conversions::tie_waiting(db, &person, now).await?;
    }
    Ok(tied)
}

/// The stored events, for the live stream.
fn activities(batch: &Batch<'_>) -> Vec<Activity> {
    batch
        .events
        .iter()
        .filter(|pending| pending.event.kind != EventKind::Ping)
        .map(|pending| Activity {
            site_id: pending.event.site_id,
            tracker_vid: pending.event.tracker_vid.clone(),
            identified_user_id: batch.visitors[pending.visitor].model.identified_user_id.clone(),
            event_type: pending.event.kind.as_str(),
            event_name: pending.event.event_name.clone(),
            page: pending.event.page.clone(),
            timestamp: pending.event.timestamp,
        })
        .collect()
}

/// Adds the alerts the batch fires to the outbox, in the batch's transaction,
/// so a crash can neither lose an alert nor send one for a write that was
/// rolled back. Looks up destinations only when some visitor may fire one,
/// and not when only accounts may and their sites are known to have no
/// destination for them.
pub(super) async fn queue_alerts(
    db: &impl ConnectionTrait,
    batch: &Batch<'_>,
    quiet: &QuietSites,
    now: i64,
) -> Result<u64, DbErr> {
    let changes = triggers::changes(batch, now);
    let accounts = account_alerts::touched(batch);
    if changes.is_empty() && accounts.is_empty() {
        return Ok(0);
    }
    let mut site_ids: Vec<i64> = changes.iter().map(|(v, _)| batch.visitors[*v].model.site_id).collect();
    site_ids.extend(accounts.keys().map(|(site, _)| *site));
    site_ids.sort_unstable();
    site_ids.dedup();
    if changes.is_empty() && quiet.all_quiet(&site_ids) {
        return Ok(0);
    }
    let epoch = quiet.epoch();
    let armed = outbox::armed(db, &site_ids).await?;
    quiet.learn(
        epoch,
        site_ids.iter().copied().filter(|&site| {
            !armed.iter().any(|d| d.site_id == site && d.trigger == triggers::AlertTrigger::AccountBecameHot)
        }),
    );
    if armed.is_empty() {
        return Ok(0);
    }
    let mut fired: Vec<outbox::Fired<'_>> = changes
        .iter()
        .flat_map(|(v, change)| {
            let visitor = &batch.visitors[*v].model;
            armed
                .iter()
                .filter(move |destination| {
                    destination.site_id == visitor.site_id
                        && triggers::fires(destination.trigger, change, destination.hot_threshold)
                })
                .map(move |destination| outbox::Fired {
                    destination,
                    visitor_id: visitor.id,
                    tracker_vid: visitor.tracker_vid.clone(),
                    account_key: None,
                    conversion_id: None,
                })
        })
        .collect();
    if armed.iter().any(|destination| destination.trigger == triggers::AlertTrigger::AccountBecameHot) {
        fired.extend(account_alerts::fired(db, accounts, &armed, now).await?);
    }
    if fired.is_empty() {
        return Ok(0);
    }
    outbox::enqueue(db, fired, now).await
}

/// The new sessions, with their visitors' ids: their slots and their rows.
fn new_sessions(batch: &Batch<'_>) -> (Vec<SessionIx>, Vec<tracked_session::ActiveModel>) {
    (0..batch.sessions.len())
        .map(SessionIx::new)
        .filter(|&s| batch.sessions[s].is_new())
        .map(|s| {
            let slot = &batch.sessions[s];
            let mut row = slot.model.clone().into_active_model().reset_all();
            row.id = NotSet;
            row.visitor_id = Set(batch.visitors[slot.visitor].model.id);
            (s, row)
        })
        .unzip()
}

/// A new session's key, read back from its insert.
struct Inserted {
    id: i64,
    visitor_id: i64,
    started_at: i64,
}

/// Inserts the new sessions in one statement and reads back their keys.
async fn insert_sessions(
    db: &impl ConnectionTrait,
    rows: Vec<tracked_session::ActiveModel>,
) -> Result<Vec<Inserted>, DbErr> {
    let backend = db.get_database_backend();
    let encoded = json_rows::insert_models(backend, rows, "RETURNING id, visitor_id, started_at")
        .map_err(|err| DbErr::Custom(format!("new sessions could not be encoded as JSON: {err}")))?;
    let Some((sql, json)) = encoded else { return Ok(Vec::new()) };
    let returned = db.query_all_raw(Statement::from_sql_and_values(backend, sql, [Value::from(json)])).await?;
    returned
        .iter()
        .map(|row| {
            Ok(Inserted {
                id: row.try_get("", "id")?,
                visitor_id: row.try_get("", "visitor_id")?,
                started_at: row.try_get("", "started_at")?,
            })
        })
        .collect()
}

/// Gives each new session its id. The ids are handed out in insertion order
/// on both databases, which matches them to their slots even when one visitor
/// opens two sessions starting at the same moment.
fn assign_session_ids(batch: &mut Batch<'_>, slots: Vec<SessionIx>, mut inserted: Vec<Inserted>) -> Result<(), DbErr> {
    inserted.sort_by_key(|row| row.id);
    let mut ids: HashMap<(i64, i64), VecDeque<i64>> = HashMap::new();
    for row in inserted {
        ids.entry((row.visitor_id, row.started_at)).or_default().push_back(row.id);
    }
    for s in slots {
        let visitor_id = batch.visitors[batch.sessions[s].visitor].model.id;
        let slot = &mut batch.sessions[s];
        slot.model.visitor_id = visitor_id;
        let id = ids.get_mut(&(visitor_id, slot.model.started_at)).and_then(|queue| queue.pop_front());
        slot.model.id = id.ok_or_else(|| DbErr::Custom("a new session's id did not come back".to_owned()))?;
    }
    Ok(())
}

/// Adds the batch's human events to the per-page rollups.
fn add_to_page_hours(writes: &mut Writes, batch: &Batch<'_>) {
    let human = batch.events.iter().map(|pending| pending.event).filter(|e| !e.is_bot() && e.kind != EventKind::Ping);
    let counts =
        page_rollups::counted(human.map(|e| (e.site_id, e.timestamp, e.page.as_str(), e.kind == EventKind::Pageview)));
    page_rollups::add(writes, counts);
}
