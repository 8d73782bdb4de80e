//! The pages each visitor viewed, with their latest view and the visitor's
//! bot flag (design §19), kept with the batch's events so the lead desk's
//! `visited` filter reads one row per visitor and page instead of every
//! pageview, and counts them from an index.

use std::collections::BTreeMap;

use sea_orm::ActiveValue::{NotSet, Set};

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};

use entity::visitor_page;

use super::{EventKind, sessionize::Batch, writes::Writes};

/// Upserts a row per visitor and page the batch's pageviews reach, keeping
/// the later of the stored and the new view (imports may send old events),
/// and marks every page of a visitor the batch found to be a bot.
pub(super) fn add(writes: &mut Writes, batch: &Batch<'_>) {
    // Key order, so concurrent writers take row locks in the same order.
    let mut latest: BTreeMap<(i64, &str), (i64, i64, bool)> = BTreeMap::new();
    for pending in &batch.events {
        let e = pending.event;
        if e.kind != EventKind::Pageview {
            continue;
        }
        let visitor = &batch.visitors[pending.visitor].model;
        let seen = latest.entry((visitor.id, e.page.as_str())).or_insert((e.site_id, e.timestamp, visitor.is_bot));
        seen.1 = seen.1.max(e.timestamp);
    }
    let rows: Vec<visitor_page::ActiveModel> = latest
        .into_iter()
        .map(|((visitor_id, page), (site_id, last_viewed, is_bot))| visitor_page::ActiveModel {
            id: NotSet,
            site_id: Set(site_id),
            visitor_id: Set(visitor_id),
            page: Set(page.to_owned()),
            last_viewed: Set(last_viewed),
            is_bot: Set(is_bot),
        })
        .collect();
    writes.add_models(
        rows,
        "ON CONFLICT (visitor_id, page) DO UPDATE SET is_bot = excluded.is_bot, last_viewed = CASE \
         WHEN excluded.last_viewed > visitor_pages.last_viewed THEN excluded.last_viewed \
         ELSE visitor_pages.last_viewed END",
    );
    // A visitor is a bot from its first bot event on, pages viewed before included.
    let turned: Vec<i64> = batch
        .visitors
        .iter()
        .filter(|slot| slot.model.is_bot && slot.counted.as_ref().is_some_and(|(stored, _)| !stored.is_bot))
        .map(|slot| slot.model.id)
        .collect();
    if !turned.is_empty() {
        writes.add(
            &visitor_page::Entity::update_many()
                .col_expr(visitor_page::Column::IsBot, Expr::val(true))
                .filter(visitor_page::Column::VisitorId.is_in(turned)),
        );
    }
}
