//! The clicks of a write batch: stored, tied to the visitors their landings
//! report, and counted on their links and in the daily per-link rollups.

use std::collections::{BTreeMap, HashMap};

use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, EntityTrait, QueryFilter,
    sea_query::{Alias, Expr, ExprTrait, OnConflict},
};

use entity::{link, link_click, link_click_day};

use super::{
    sessionize::{Batch, ClickIx, SlotIndex, VisitorIx},
    writes::Writes,
};
use crate::time::DAY_MS;

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
