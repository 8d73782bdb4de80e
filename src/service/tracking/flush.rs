//! The SQL half of a write batch: insert what is new, update what changed.

use std::collections::{BTreeMap, HashMap};

use sea_orm::{
    ActiveModelTrait,
    ActiveValue::{NotSet, Set},
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, IdenStatic, IntoActiveModel, Iterable, QueryFilter,
    sea_query::{Alias, Expr, ExprTrait, OnConflict},
};

use entity::{event, identity, link, link_click, link_click_day, page_hour, tracked_session, visitor};

use super::{
    Activity, EventKind, rollup, rollup_store,
    sessionize::{Batch, ClickIx, SessionIx, SlotIndex, VisitorIx},
    statement_chunks, triggers,
    writes::Writes,
};
use crate::service::alerts::outbox;
use crate::time::{DAY_MS, HOUR_MS};

pub(super) async fn write(db: &impl ConnectionTrait, batch: &mut Batch<'_>) -> Result<Vec<Activity>, DbErr> {
    batch.rescore();
    insert_sessions(db, batch).await?;
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
    // Everything from here on only writes, so it goes in one call.
    let mut writes = Writes::new(db.get_database_backend());
    let visitors: Vec<visitor::Model> =
        batch.visitors.iter().filter(|slot| slot.dirty).map(|slot| slot.model.clone()).collect();
    update_rows::<visitor::Entity>(
        &mut writes,
        visitors,
        &[visitor::Column::Id, visitor::Column::SiteId, visitor::Column::TrackerVid],
    );
    let sessions: Vec<tracked_session::Model> =
        batch.sessions.iter().filter(|slot| slot.dirty && !slot.is_new).map(|slot| slot.model.clone()).collect();
    update_rows::<tracked_session::Entity>(
        &mut writes,
        sessions,
        &[tracked_session::Column::Id, tracked_session::Column::SiteId],
    );

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
                is_bot: Set(e.client.info.is_bot),
                timestamp: Set(e.timestamp),
            }
        })
        .collect();
    writes.add_rows::<event::Entity, _>(rows, event::Entity::insert_many);
    add_to_page_hours(&mut writes, batch);
    rollup_store::add_visitor_moves(&mut writes, rollup::visitor_moves(batch));
    rollup_store::add_session_moves(&mut writes, rollup::session_moves(batch));

    write_clicks(&mut writes, batch);

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
    writes.add_rows::<identity::Entity, _>(identities, identity::Entity::insert_many);
    writes.send(db).await?;

    Ok(batch
        .events
        .iter()
        .filter(|pending| pending.event.kind != EventKind::Ping)
        .map(|pending| Activity {
            site_id: pending.event.site_id,
            tracker_vid: pending.event.tracker_vid.clone(),
            identified_user_id: batch.visitors[pending.visitor].model.identified_user_id.clone(),
            event_type: pending.event.kind.as_str(),
            page: pending.event.page.clone(),
            timestamp: pending.event.timestamp,
        })
        .collect())
}

/// Adds the alerts the batch fires to the outbox, in the batch's transaction,
/// so a crash can neither lose an alert nor send one for a write that was
/// rolled back. Looks up destinations only when some visitor may fire one.
pub(super) async fn queue_alerts(db: &impl ConnectionTrait, batch: &Batch<'_>, now: i64) -> Result<u64, DbErr> {
    let changes = triggers::changes(batch, now);
    if changes.is_empty() {
        return Ok(0);
    }
    let mut site_ids: Vec<i64> = changes.iter().map(|(v, _)| batch.visitors[*v].model.site_id).collect();
    site_ids.sort_unstable();
    site_ids.dedup();
    let armed = outbox::armed(db, &site_ids).await?;
    let fired: Vec<outbox::Fired<'_>> = changes
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
                })
        })
        .collect();
    if fired.is_empty() {
        return Ok(0);
    }
    outbox::enqueue(db, fired, now).await
}

/// New sessions go in with multi-row inserts. Their ids come back in insertion
/// order on both databases, which matches them to their slots even when one
/// visitor opens two sessions starting at the same moment.
async fn insert_sessions(db: &impl ConnectionTrait, batch: &mut Batch<'_>) -> Result<(), DbErr> {
    let new: Vec<SessionIx> =
        (0..batch.sessions.len()).map(SessionIx::new).filter(|&s| batch.sessions[s].is_new).collect();
    for chunk in statement_chunks(new) {
        let rows = chunk.iter().map(|&s| {
            let slot = &batch.sessions[s];
            let mut active = slot.model.clone().into_active_model().reset_all();
            active.id = NotSet;
            active.visitor_id = Set(batch.visitors[slot.visitor].model.id);
            active
        });
        let mut inserted = tracked_session::Entity::insert_many(rows).exec_with_returning(db).await?;
        inserted.sort_by_key(|model| model.id);
        let mut ids: HashMap<(i64, i64), std::collections::VecDeque<i64>> = HashMap::new();
        for model in inserted {
            ids.entry((model.visitor_id, model.started_at)).or_default().push_back(model.id);
        }
        for s in chunk {
            let visitor_id = batch.visitors[batch.sessions[s].visitor].model.id;
            let slot = &mut batch.sessions[s];
            slot.model.visitor_id = visitor_id;
            let id = ids.get_mut(&(visitor_id, slot.model.started_at)).and_then(|queue| queue.pop_front());
            slot.model.id = id.ok_or_else(|| DbErr::Custom("a new session's id did not come back".to_owned()))?;
        }
    }
    Ok(())
}

/// Adds the batch's human events to the hourly per-page rollups.
fn add_to_page_hours(writes: &mut Writes, batch: &Batch<'_>) {
    // Key order, so concurrent writers take row locks in the same order.
    let mut counts: BTreeMap<(i64, i64, &str), (i64, i64)> = BTreeMap::new();
    for pending in &batch.events {
        let e = pending.event;
        if e.client.info.is_bot || e.kind == EventKind::Ping {
            continue;
        }
        let hour = e.timestamp.div_euclid(HOUR_MS) * HOUR_MS;
        let count = counts.entry((e.site_id, hour, e.page.as_str())).or_default();
        count.0 += i64::from(e.kind == EventKind::Pageview);
        count.1 += 1;
    }
    let rows: Vec<page_hour::ActiveModel> = counts
        .into_iter()
        .map(|((site_id, hour, page), (pageviews, events))| page_hour::ActiveModel {
            id: NotSet,
            site_id: Set(site_id),
            hour: Set(hour),
            page: Set(page.to_owned()),
            pageviews: Set(pageviews),
            events: Set(events),
        })
        .collect();
    use page_hour::Column as C;
    rollup_store::upsert_adding::<page_hour::Entity>(
        writes,
        rows,
        &[C::SiteId, C::Hour, C::Page],
        &[C::Pageviews, C::Events],
    );
}

/// Stores the batch's clicks, ties clicks reported by `lt_click` to their
/// visitors, and counts human clicks on their links. Clicks of capped links
/// were counted when they were let through (`ClickCommand::counted`).
pub(super) fn write_clicks(writes: &mut Writes, batch: &Batch<'_>) {
    let mut visitor_of_pending: HashMap<ClickIx, VisitorIx> = HashMap::new();
    for known in batch.known_clicks.values() {
        let Some(v) = known.attributed_to else { continue };
        let visitor = &batch.visitors[v].model;
        match (known.stored, known.pending) {
            (Some(stored), _) => {
                writes.add(
                    &link_click::Entity::update_many()
                        .col_expr(link_click::Column::VisitorId, Expr::value(visitor.id))
                        .col_expr(link_click::Column::TrackerVid, Expr::value(visitor.tracker_vid.clone()))
                        .filter(link_click::Column::Id.eq(stored.id)),
                );
            }
            (None, Some(pending)) => {
                visitor_of_pending.insert(pending, v);
            }
            (None, None) => {}
        }
    }
    let rows: Vec<link_click::ActiveModel> = (0..batch.clicks.len())
        .map(ClickIx::new)
        .map(|c| {
            let click = batch.clicks[c];
            let visitor = visitor_of_pending.get(&c).map(|&v| &batch.visitors[v].model);
            let geo = &click.client.geo;
            let link = &click.link;
            link_click::ActiveModel {
                id: NotSet,
                site_id: Set(link.site_id),
                link_id: Set(link.id),
                click_key: Set(click.click_key.clone()),
                visitor_id: Set(visitor.map(|v| v.id)),
                tracker_vid: Set(visitor.map(|v| v.tracker_vid.clone())),
                slug: Set(link.slug.clone()),
                campaign: Set(link.campaign.clone()),
                source: Set(link.source.clone()),
                medium: Set(link.medium.clone()),
                destination_url: Set(link.destination_url.clone()),
                link_type: Set(link.link_type.clone()),
                country: Set(geo.country.clone()),
                city: Set(geo.city.clone()),
                region: Set(geo.region.clone()),
                lat: Set(geo.lat),
                lon: Set(geo.lon),
                device_type: Set(Some(click.client.info.device_type.clone())),
                browser: Set(click.client.info.browser.clone()),
                os: Set(click.client.info.os.clone()),
                referrer: Set(click.referrer.clone()),
                is_bot: Set(click.is_bot),
                created_at: Set(click.created_at),
            }
        })
        .collect();
    writes.add_rows::<link_click::Entity, _>(rows, link_click::Entity::insert_many);
    add_to_link_click_days(writes, batch);
    // Link order, so concurrent writers take the link rows' locks in the same order.
    let mut human: BTreeMap<i64, i64> = BTreeMap::new();
    for click in batch.clicks.iter().filter(|click| !click.is_bot && !click.counted) {
        *human.entry(click.link.id).or_default() += 1;
    }
    for (link_id, count) in human {
        writes.add(
            &link::Entity::update_many()
                .col_expr(link::Column::HumanClicks, Expr::col(link::Column::HumanClicks).add(count))
                .filter(link::Column::Id.eq(link_id)),
        );
    }
}

/// Adds the batch's human clicks to the daily per-link rollups that link
/// analytics reads, in the same transaction as the clicks.
fn add_to_link_click_days(writes: &mut Writes, batch: &Batch<'_>) {
    type Key<'a> = (i64, i64, &'a str, &'a str, &'a str, &'a str, &'a str);
    // Key order, so concurrent writers take row locks in the same order.
    let mut counts: BTreeMap<Key<'_>, (i64, i64, Option<f64>, Option<f64>)> = BTreeMap::new();
    for click in batch.clicks.iter().filter(|click| !click.is_bot) {
        let (link, geo) = (&click.link, &click.client.geo);
        let key = (
            link.id,
            click.created_at.div_euclid(DAY_MS) * DAY_MS,
            link.slug.as_str(),
            link.campaign.as_str(),
            link.source.as_str(),
            geo.country.as_deref().unwrap_or_default(),
            geo.city.as_deref().unwrap_or_default(),
        );
        let entry = counts.entry(key).or_insert((link.site_id, 0, None, None));
        entry.1 += 1;
        entry.2 = larger(entry.2, geo.lat);
        entry.3 = larger(entry.3, geo.lon);
    }
    let rows: Vec<link_click_day::ActiveModel> = counts
        .into_iter()
        .map(|((link_id, day, slug, campaign, source, country, city), (site_id, clicks, lat, lon))| {
            link_click_day::ActiveModel {
                id: NotSet,
                site_id: Set(site_id),
                link_id: Set(link_id),
                day: Set(day),
                slug: Set(slug.to_owned()),
                campaign: Set(campaign.to_owned()),
                source: Set(source.to_owned()),
                country: Set(country.to_owned()),
                city: Set(city.to_owned()),
                clicks: Set(clicks),
                lat: Set(lat),
                lon: Set(lon),
            }
        })
        .collect();
    // The larger of the stored and the new coordinate, either possibly NULL
    // (SQLite's two-argument max() would answer NULL).
    let larger_sql = |column: &str| {
        Expr::cust(format!(
            "CASE WHEN excluded.{column} IS NULL THEN link_click_days.{column} \
             WHEN link_click_days.{column} IS NULL OR excluded.{column} > link_click_days.{column} \
             THEN excluded.{column} ELSE link_click_days.{column} END"
        ))
    };
    use link_click_day::Column as C;
    let conflict = OnConflict::columns([C::LinkId, C::Day, C::Slug, C::Campaign, C::Source, C::Country, C::City])
        .value(
            C::Clicks,
            Expr::col((link_click_day::Entity, C::Clicks)).add(Expr::col((Alias::new("excluded"), C::Clicks))),
        )
        .value(C::Lat, larger_sql("lat"))
        .value(C::Lon, larger_sql("lon"))
        .to_owned();
    writes.add_rows::<link_click_day::Entity, _>(rows, |chunk| {
        link_click_day::Entity::insert_many(chunk).on_conflict(conflict.clone())
    });
}

fn larger(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Rewrites existing rows many at a time: a multi-row INSERT whose every row
/// conflicts on the primary key, so each becomes an UPDATE. One statement per
/// chunk of rows instead of one per row; SQLite and PostgreSQL both support it.
fn update_rows<E>(writes: &mut Writes, rows: Vec<E::Model>, keep: &[E::Column])
where
    E: EntityTrait,
    E::Model: IntoActiveModel<E::ActiveModel>,
    E::ActiveModel: ActiveModelTrait<Entity = E> + Send,
{
    let columns: Vec<E::Column> =
        E::Column::iter().filter(|column| keep.iter().all(|kept| kept.as_str() != column.as_str())).collect();
    let conflict = OnConflict::column(keep[0]).update_columns(columns).to_owned();
    let models = rows.into_iter().map(|model| model.into_active_model().reset_all()).collect();
    writes.add_rows::<E, _>(models, |chunk| E::insert_many(chunk).on_conflict(conflict.clone()));
}
