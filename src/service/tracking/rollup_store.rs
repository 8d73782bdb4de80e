//! Writes moves of visitors and sessions between hourly rollup rows: one
//! upsert per row, adding the change to what is stored. Rows go in key order,
//! so concurrent writers (and an erasure) lock them in the same order.

use sea_orm::{
    ActiveValue::{NotSet, Set},
    EntityTrait, IdenStatic,
};

use entity::{session_hour, visitor_hour};

use super::{
    json_rows,
    rollup::{Deltas, SessionKey, SessionTally, VisitorKey, VisitorTally},
    writes::Writes,
};

pub(crate) fn add_visitor_moves(writes: &mut Writes, deltas: Deltas<VisitorKey, VisitorTally>) {
    let rows: Vec<visitor_hour::ActiveModel> = deltas
        .into_rows()
        .map(|(key, tally)| visitor_hour::ActiveModel {
            id: NotSet,
            site_id: Set(key.site_id),
            is_bot: Set(key.is_bot),
            hour: Set(key.hour),
            country: Set(key.country),
            visitors: Set(tally.visitors),
            identified: Set(tally.identified),
        })
        .collect();
    use visitor_hour::Column as C;
    upsert_adding::<visitor_hour::Entity>(
        writes,
        rows,
        &[C::SiteId, C::IsBot, C::Hour, C::Country],
        &[C::Visitors, C::Identified],
    );
}

pub(crate) fn add_session_moves(writes: &mut Writes, deltas: Deltas<SessionKey, SessionTally>) {
    let rows: Vec<session_hour::ActiveModel> = deltas
        .into_rows()
        .map(|(key, tally)| session_hour::ActiveModel {
            id: NotSet,
            site_id: Set(key.site_id),
            is_bot: Set(key.is_bot),
            hour: Set(key.hour),
            channel: Set(key.channel),
            sessions: Set(tally.sessions),
            seconds: Set(tally.seconds),
        })
        .collect();
    use session_hour::Column as C;
    upsert_adding::<session_hour::Entity>(
        writes,
        rows,
        &[C::SiteId, C::IsBot, C::Hour, C::Channel],
        &[C::Sessions, C::Seconds],
    );
}

/// Inserts rollup rows, or where a row with the same `key` exists, adds the
/// new row's `sums` to it.
pub(crate) fn upsert_adding<E: EntityTrait>(
    writes: &mut Writes,
    rows: Vec<E::ActiveModel>,
    key: &[E::Column],
    sums: &[E::Column],
) {
    let names = |columns: &[E::Column]| columns.iter().map(|column| column.as_str()).collect::<Vec<_>>();
    let conflict = json_rows::on_conflict_add(E::default().table_name(), &names(key), &names(sums));
    writes.add_models(rows, &conflict);
}
