//! The pages each visitor viewed, with their latest view (design §19), kept
//! with the batch's events so the lead desk's `visited` filter reads one row
//! per visitor and page instead of every pageview.

use std::collections::BTreeMap;

use sea_orm::ActiveValue::{NotSet, Set};

use entity::visitor_page;

use super::{EventKind, sessionize::Batch, writes::Writes};

/// Upserts a row per visitor and page the batch's pageviews reach, keeping
/// the later of the stored and the new view (imports may send old events).
pub(super) fn add(writes: &mut Writes, batch: &Batch<'_>) {
    // Key order, so concurrent writers take row locks in the same order.
    let mut latest: BTreeMap<(i64, &str), (i64, i64)> = BTreeMap::new();
    for pending in &batch.events {
        let e = pending.event;
        if e.kind != EventKind::Pageview {
            continue;
        }
        let visitor_id = batch.visitors[pending.visitor].model.id;
        let seen = latest.entry((visitor_id, e.page.as_str())).or_insert((e.site_id, e.timestamp));
        seen.1 = seen.1.max(e.timestamp);
    }
    let rows: Vec<visitor_page::ActiveModel> = latest
        .into_iter()
        .map(|((visitor_id, page), (site_id, last_viewed))| visitor_page::ActiveModel {
            id: NotSet,
            site_id: Set(site_id),
            visitor_id: Set(visitor_id),
            page: Set(page.to_owned()),
            last_viewed: Set(last_viewed),
        })
        .collect();
    writes.add_models(
        rows,
        "ON CONFLICT (visitor_id, page) DO UPDATE SET last_viewed = CASE \
         WHEN excluded.last_viewed > visitor_pages.last_viewed THEN excluded.last_viewed \
         ELSE visitor_pages.last_viewed END",
    );
}
