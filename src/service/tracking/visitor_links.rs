//! The tracking links each visitor clicked, with the visitor's last visit and
//! bot flag (design §19), kept with the batch's clicks so the lead desk counts
//! a link's visitors in a range from one index instead of testing every
//! visitor of the range against the link's clicks.

use std::collections::BTreeMap;

use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, EntityTrait, QueryFilter,
    sea_query::{CaseStatement, Expr, ExprTrait},
};

use entity::visitor_link;

use super::{
    sessionize::Batch,
    writes::{Writes, statement_chunks},
};

/// Upserts a row per visitor and link for the clicks the batch tied to their
/// visitors, and moves the stored rows of the batch's other visitors who
/// have clicked before to their new last visit and bot flag.
pub(super) fn add(writes: &mut Writes, batch: &Batch<'_>) {
    // Key order, so concurrent writers take row locks in the same order.
    let mut tied: BTreeMap<(i64, i64), (i64, i64, i64, bool)> = BTreeMap::new();
    for known in batch.known_clicks.values() {
        let Some(v) = known.attributed_to else { continue };
        let (link_id, clicked) = match (known.stored, known.pending) {
            (Some(stored), _) => (stored.link_id, stored.created_at),
            (None, Some(pending)) => (batch.clicks[pending].link.id, batch.clicks[pending].created_at),
            (None, None) => continue,
        };
        let visitor = &batch.visitors[v].model;
        let row =
            tied.entry((visitor.id, link_id)).or_insert((visitor.site_id, visitor.last_seen, clicked, visitor.is_bot));
        row.2 = Ord::max(row.2, clicked);
    }
    let rows: Vec<visitor_link::ActiveModel> = tied
        .into_iter()
        .map(|((visitor_id, link_id), (site_id, last_seen, last_clicked, is_bot))| visitor_link::ActiveModel {
            id: NotSet,
            site_id: Set(site_id),
            visitor_id: Set(visitor_id),
            link_id: Set(link_id),
            last_seen: Set(last_seen),
            is_bot: Set(is_bot),
            last_clicked: Set(last_clicked),
        })
        .collect();
    writes.add_models(
        rows,
        "ON CONFLICT (visitor_id, link_id) DO UPDATE SET last_seen = excluded.last_seen, \
         is_bot = excluded.is_bot, last_clicked = CASE \
         WHEN excluded.last_clicked > visitor_links.last_clicked THEN excluded.last_clicked \
         ELSE visitor_links.last_clicked END",
    );
    // A stored visitor with clicks has rows; they follow the visitor when its
    // last visit or bot flag changed. (Its rows the upsert above wrote get
    // the same values again.)
    let mut moved: Vec<(i64, i64, bool)> = batch
        .visitors
        .iter()
        .filter(|slot| slot.dirty && slot.model.clicks > 0)
        .filter(|slot| {
            let stored_seen = slot.before.map(|(_, last_seen)| last_seen);
            let stored_bot = slot.counted.as_ref().map(|(key, _)| key.is_bot);
            stored_seen.is_some_and(|seen| seen != slot.model.last_seen)
                || stored_bot.is_some_and(|bot| bot != slot.model.is_bot)
        })
        .map(|slot| (slot.model.id, slot.model.last_seen, slot.model.is_bot))
        .collect();
    moved.sort_unstable();
    for chunk in statement_chunks(moved) {
        let of = |visitor_id: i64| Expr::col(visitor_link::Column::VisitorId).eq(visitor_id);
        let (mut seen, mut bot) = (CaseStatement::new(), CaseStatement::new());
        for &(visitor_id, last_seen, is_bot) in &chunk {
            seen = seen.case(of(visitor_id), last_seen);
            bot = bot.case(of(visitor_id), is_bot);
        }
        writes.add(
            &visitor_link::Entity::update_many()
                .col_expr(
                    visitor_link::Column::LastSeen,
                    seen.finally(Expr::col(visitor_link::Column::LastSeen)).into(),
                )
                .col_expr(visitor_link::Column::IsBot, bot.finally(Expr::col(visitor_link::Column::IsBot)).into())
                .filter(visitor_link::Column::VisitorId.is_in(chunk.iter().map(|&(visitor_id, ..)| visitor_id))),
        );
    }
}
