//! Writes moves of visitors and sessions between hourly rollup rows: one
//! upsert per row, adding the change to what is stored. Rows go in key order,
//! so concurrent writers (and an erasure) lock them in the same order.

use std::collections::BTreeMap;

use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, DbBackend, EntityTrait, IdenStatic, QueryFilter,
    sea_query::Expr,
};

use entity::{account, session_hour, visitor, visitor_hour, visitor_touch_hour};

use super::{
    json_rows,
    rollup::{
        AccountKey, AccountSeen, AccountTally, Deltas, SessionKey, SessionTally, TouchKey, VisitorKey, VisitorTally,
    },
    writes::Writes,
};

/// Takes visitors (erased or purged) out of every rollup that counts them:
/// their hour's, their last touch's and their account's.
pub(crate) fn add_visitors_removed(writes: &mut Writes, rows: &[visitor::Model]) {
    add_visitor_moves(writes, Deltas::removed(rows.iter().map(super::rollup::visitor_entry)));
    add_touch_moves(writes, Deltas::removed(rows.iter().map(super::rollup::touch_entry)));
    add_account_moves(writes, Deltas::removed(rows.iter().filter_map(super::rollup::account_entry)), Vec::new());
}

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

pub(crate) fn add_touch_moves(writes: &mut Writes, deltas: Deltas<TouchKey, VisitorTally>) {
    let rows: Vec<visitor_touch_hour::ActiveModel> = deltas
        .into_rows()
        .map(|(key, tally)| visitor_touch_hour::ActiveModel {
            id: NotSet,
            site_id: Set(key.site_id),
            is_bot: Set(key.is_bot),
            hour: Set(key.hour),
            channel: Set(key.channel),
            campaign: Set(key.campaign),
            submitted_form: Set(key.submitted_form),
            visitors: Set(tally.visitors),
            identified: Set(tally.identified),
        })
        .collect();
    use visitor_touch_hour::Column as C;
    upsert_adding::<visitor_touch_hour::Entity>(
        writes,
        rows,
        &[C::SiteId, C::IsBot, C::Hour, C::Channel, C::Campaign, C::SubmittedForm],
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

/// Moves visitors between account rows (design §18): adds each row's
/// change to what is stored, and keeps the name and span the batch saw. A
/// row only losing visitors (an erasure, a purge) leaves name and span.
pub(crate) fn add_account_moves(writes: &mut Writes, deltas: Deltas<AccountKey, AccountTally>, seen: Vec<AccountSeen>) {
    let mut rows: BTreeMap<AccountKey, (AccountTally, Option<AccountSeen>)> =
        deltas.into_all_rows().into_iter().map(|(key, tally)| (key, (tally, None))).collect();
    for visitor in seen {
        let entry = &mut rows.entry(visitor.key.clone()).or_default().1;
        *entry = Some(match entry.take() {
            None => visitor,
            Some(mut kept) => {
                kept.first_seen = kept.first_seen.min(visitor.first_seen);
                if visitor.last_seen >= kept.last_seen {
                    kept.last_seen = visitor.last_seen;
                    kept.name = visitor.name;
                }
                kept
            }
        });
    }
    // An account a visitor left (for another, or erased, or purged) takes
    // its span from the visitors it still has, once they are written.
    let left: Vec<AccountKey> =
        rows.iter().filter(|(_, (tally, _))| tally.visitors < 0).map(|(key, _)| key.clone()).collect();
    let models: Vec<account::ActiveModel> = rows
        .into_iter()
        .filter(|(_, (tally, seen))| *tally != AccountTally::default() || seen.is_some())
        .map(|(key, (tally, seen))| account::ActiveModel {
            id: NotSet,
            site_id: Set(key.site_id),
            account_key: Set(key.key),
            name: Set(seen.as_ref().map(|seen| seen.name.clone()).unwrap_or_default()),
            visitors: Set(tally.visitors),
            people: Set(tally.people),
            sessions: Set(tally.sessions),
            pageviews: Set(tally.pageviews),
            engaged_seconds: Set(tally.engaged_seconds),
            high_value_views: Set(tally.high_value_views),
            form_submits: Set(tally.form_submits),
            first_seen: Set(seen.as_ref().map_or(i64::MAX, |seen| seen.first_seen)),
            last_seen: Set(seen.as_ref().map_or(0, |seen| seen.last_seen)),
        })
        .collect();
    let (least, greatest) =
        if writes.backend() == DbBackend::Postgres { ("LEAST", "GREATEST") } else { ("min", "max") };
    let sums = ["visitors", "people", "sessions", "pageviews", "engaged_seconds", "high_value_views", "form_submits"]
        .map(|column| format!("{column} = accounts.{column} + excluded.{column}"))
        .join(", ");
    let conflict = format!(
        "ON CONFLICT (site_id, account_key) DO UPDATE SET {sums}, \
         name = CASE WHEN excluded.name = '' THEN accounts.name ELSE excluded.name END, \
         first_seen = {least}(accounts.first_seen, excluded.first_seen), \
         last_seen = {greatest}(accounts.last_seen, excluded.last_seen)"
    );
    writes.add_models(models, &conflict);
    add_account_span_refresh(writes, &left);
}

/// Sets the span (first and last seen) of each account to that of the
/// visitors it holds now, which the additive upsert cannot lower. Reads
/// the visitors' index on (site, account, last seen); add it after the
/// statements that change those visitors.
pub(crate) fn add_account_span_refresh(writes: &mut Writes, keys: &[AccountKey]) {
    let span = |aggregate: &str, column: &str| {
        Expr::cust(format!(
            "COALESCE((SELECT {aggregate}(v.{column}) FROM visitors v WHERE v.site_id = accounts.site_id \
             AND v.account_key = accounts.account_key AND v.is_bot = false), accounts.{column})"
        ))
    };
    for key in keys {
        writes.add(
            &account::Entity::update_many()
                .col_expr(account::Column::LastSeen, span("MAX", "last_seen"))
                .col_expr(account::Column::FirstSeen, span("MIN", "first_seen"))
                .filter(account::Column::SiteId.eq(key.site_id))
                .filter(account::Column::AccountKey.eq(key.key.as_str())),
        );
    }
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
