//! `ACCOUNT_BECAME_HOT` (design §18): read in the batch's transaction after
//! its account rows are written, so the figures are those every instance's
//! batches left. An account the batch touched that is hot now (and not
//! excluded) fires each such destination of its site, with the batch's
//! visitor of that account that scores most; the outbox's unique key on
//! (destination, account) makes it fire once per account, on any instance.

use std::collections::{BTreeMap, BTreeSet};

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use entity::{account, account_setting};

use super::{rollup, sessionize::Batch};
use crate::service::{
    accounts::fold,
    alerts::{
        outbox::{Armed, Fired},
        trigger::AlertTrigger,
    },
};

/// The accounts the batch's human visitors are in now, each with the
/// visitor of it that scores most: (site, key) → (visitor id, tracker id).
pub(super) fn touched(batch: &Batch<'_>) -> BTreeMap<(i64, String), (i64, String, i32)> {
    let mut touched: BTreeMap<(i64, String), (i64, String, i32)> = BTreeMap::new();
    for slot in batch.visitors.iter().filter(|slot| slot.dirty) {
        let Some((key, _)) = rollup::account_entry(&slot.model) else { continue };
        let visitor = (slot.model.id, slot.model.tracker_vid.clone(), slot.model.score);
        touched
            .entry((key.site_id, key.key))
            .and_modify(|best| {
                if visitor.2 > best.2 {
                    *best = visitor.clone();
                }
            })
            .or_insert(visitor);
    }
    touched
}

pub(super) async fn fired<'a>(
    db: &impl ConnectionTrait,
    touched: BTreeMap<(i64, String), (i64, String, i32)>,
    armed: &'a [Armed],
    now: i64,
) -> Result<Vec<Fired<'a>>, DbErr> {
    let mut fired = Vec::new();
    let sites: BTreeSet<i64> = touched.keys().map(|(site, _)| *site).collect();
    for site_id in sites {
        let destinations: Vec<&Armed> =
            armed.iter().filter(|d| d.site_id == site_id && d.trigger == AlertTrigger::AccountBecameHot).collect();
        let Some(hot_threshold) = destinations.first().map(|d| d.hot_threshold) else { continue };
        let settings =
            account_setting::Entity::find().filter(account_setting::Column::SiteId.eq(site_id)).all(db).await?;
        // Each touched account's home (a linked network counts in its
        // domain's), with the visitor that stands for it.
        let mut homes: BTreeMap<String, (i64, String, i32)> = BTreeMap::new();
        for ((_, key), visitor) in touched.iter().filter(|((site, _), _)| *site == site_id) {
            let home = fold::home_key(key, &settings).to_owned();
            homes
                .entry(home)
                .and_modify(|best| {
                    if visitor.2 > best.2 {
                        *best = visitor.clone();
                    }
                })
                .or_insert_with(|| visitor.clone());
        }
        let members: Vec<String> = homes.keys().flat_map(|home| fold::member_keys(home, &settings)).collect();
        let rows = account::Entity::find()
            .filter(account::Column::SiteId.eq(site_id))
            .filter(account::Column::AccountKey.is_in(members))
            .all(db)
            .await?;
        for account in fold::fold(rows, &settings, hot_threshold, now) {
            let Some((visitor_id, tracker_vid, _)) = homes.get(&account.key) else { continue };
            if !account.hot || account.excluded {
                continue;
            }
            fired.extend(destinations.iter().map(|destination| Fired {
                destination,
                visitor_id: *visitor_id,
                tracker_vid: tracker_vid.clone(),
                account_key: Some(account.key.clone()),
                conversion_id: None,
            }));
        }
    }
    Ok(fired)
}
