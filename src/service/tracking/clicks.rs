//! The clicks of a write batch: stored, tied to the visitors their landings
//! report, and counted on their links and in the daily per-link rollups.

use std::collections::{BTreeMap, HashMap};

use sea_orm::{
    ColumnTrait, DbBackend, EntityTrait, QueryFilter,
    sea_query::{Expr, ExprTrait},
};
use serde::Serialize;

use entity::{link, link_click};

use super::{
    json_rows::{self, Column},
    sessionize::{Batch, ClickIx, SlotIndex, VisitorIx},
    writes::Writes,
};
use crate::time::start_of_day;

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
    let rows: Vec<ClickRow<'_>> = (0..batch.clicks.len())
        .map(ClickIx::new)
        .map(|c| {
            let click = batch.clicks[c];
            let visitor = visitor_of_pending.get(&c).map(|&v| &batch.visitors[v].model);
            let (link, geo, info) = (&click.link, &click.client.geo, &click.client.info);
            ClickRow(
                link.site_id,
                link.id,
                &click.click_key,
                visitor.map(|v| v.id),
                visitor.map(|v| v.tracker_vid.as_str()),
                &link.slug,
                &link.campaign,
                &link.source,
                &link.medium,
                &link.destination_url,
                &link.link_type,
                geo.country.as_deref(),
                geo.city.as_deref(),
                geo.region.as_deref(),
                geo.lat,
                geo.lon,
                Some(&info.device_type),
                info.browser.as_deref(),
                info.os.as_deref(),
                click.referrer.as_deref(),
                click.is_bot,
                click.created_at,
                click.client.network.as_ref().map(|network| i64::from(network.asn)),
                click.client.network.as_ref().map(|network| network.org.as_str()),
            )
        })
        .collect();
    let backend = writes.backend();
    writes.add_json_rows(json_rows::insert_select(backend, "link_clicks", &CLICK_COLUMNS), &rows);
    add_to_link_click_days(writes, batch);
    // Link order, so concurrent writers take the link rows' locks in the same order.
    let mut human: BTreeMap<i64, i64> = BTreeMap::new();
    for click in batch.clicks.iter().filter(|click| !click.is_bot && !click.counted) {
        *human.entry(click.link.id).or_default() += 1;
    }
    if backend == DbBackend::Sqlite {
        // One statement whatever the links, so the batch's text stays the same.
        let counts: Vec<(i64, i64)> = human.into_iter().collect();
        let element = |index| json_rows::element(backend, index, "bigint", "counted.value");
        writes.add_json_rows(
            format!(
                "UPDATE links SET human_clicks = links.human_clicks + ({}) FROM {} AS counted WHERE links.id = {}",
                element(1),
                json_rows::rows(backend),
                element(0)
            ),
            &counts,
        );
        return;
    }
    for (link_id, count) in human {
        writes.add(
            &link::Entity::update_many()
                .col_expr(link::Column::HumanClicks, Expr::col(link::Column::HumanClicks).add(count))
                .filter(link::Column::Id.eq(link_id)),
        );
    }
}

/// `link_clicks` columns in `ClickRow` order.
const CLICK_COLUMNS: [Column; 24] = [
    ("site_id", "bigint"),
    ("link_id", "bigint"),
    ("click_key", "text"),
    ("visitor_id", "bigint"),
    ("tracker_vid", "text"),
    ("slug", "text"),
    ("campaign", "text"),
    ("source", "text"),
    ("medium", "text"),
    ("destination_url", "text"),
    ("link_type", "text"),
    ("country", "text"),
    ("city", "text"),
    ("region", "text"),
    ("lat", "double precision"),
    ("lon", "double precision"),
    ("device_type", "text"),
    ("browser", "text"),
    ("os", "text"),
    ("referrer", "text"),
    ("is_bot", "boolean"),
    ("created_at", "bigint"),
    ("asn", "bigint"),
    ("network", "text"),
];

/// One stored click, serialized as a JSON array in `CLICK_COLUMNS` order.
#[derive(Serialize)]
struct ClickRow<'a>(
    i64,
    i64,
    &'a str,
    Option<i64>,
    Option<&'a str>,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<f64>,
    Option<f64>,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    bool,
    i64,
    Option<i64>,
    Option<&'a str>,
);

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
            start_of_day(click.created_at),
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
    let rows: Vec<ClickDayRow<'_>> = counts
        .into_iter()
        .map(|((link_id, day, slug, campaign, source, country, city), (site_id, clicks, lat, lon))| {
            ClickDayRow(site_id, link_id, day, slug, campaign, source, country, city, clicks, lat, lon)
        })
        .collect();
    // The larger of the stored and the new coordinate, either possibly NULL
    // (SQLite's two-argument max() would answer NULL).
    let larger = |column: &str| {
        format!(
            "{column} = CASE WHEN excluded.{column} IS NULL THEN link_click_days.{column} \
             WHEN link_click_days.{column} IS NULL OR excluded.{column} > link_click_days.{column} \
             THEN excluded.{column} ELSE link_click_days.{column} END"
        )
    };
    let sql = format!(
        "{} ON CONFLICT (link_id, day, slug, campaign, source, country, city) DO UPDATE SET \
         clicks = link_click_days.clicks + excluded.clicks, {}, {}",
        json_rows::insert_select(writes.backend(), "link_click_days", &CLICK_DAY_COLUMNS),
        larger("lat"),
        larger("lon")
    );
    writes.add_json_rows(sql, &rows);
}

/// `link_click_days` columns in `ClickDayRow` order.
const CLICK_DAY_COLUMNS: [Column; 11] = [
    ("site_id", "bigint"),
    ("link_id", "bigint"),
    ("day", "bigint"),
    ("slug", "text"),
    ("campaign", "text"),
    ("source", "text"),
    ("country", "text"),
    ("city", "text"),
    ("clicks", "bigint"),
    ("lat", "double precision"),
    ("lon", "double precision"),
];

/// Human clicks of one link, day and place, in `CLICK_DAY_COLUMNS` order.
#[derive(Serialize)]
struct ClickDayRow<'a>(i64, i64, i64, &'a str, &'a str, &'a str, &'a str, &'a str, i64, Option<f64>, Option<f64>);

fn larger(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}
