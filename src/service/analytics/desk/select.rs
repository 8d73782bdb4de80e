//! The desk's filtered read as SQL: which visitors a query selects, in
//! which order, and where a chunk of an export resumes. The page and the
//! export build their statements here, so both read the same rows.

use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, Order as SqlOrder, QueryFilter, QueryOrder, Select,
    sea_query::{Expr, ExprTrait, Func, IntoColumnRef, LikeExpr, Query, SimpleExpr},
};

use entity::{event, identity, link, link_click, site, visitor};

use super::query::{DeskQuery, SortKey};
use crate::{
    auth::{Role, Viewer},
    error::AppResult,
    service::{access, analytics::score_sql_text, scoring},
};

/// `text` as a LIKE pattern that matches it anywhere, its own `%`, `_` and
/// `!` taken literally. The escape is `!`, not a backslash, whose meaning in
/// a string literal differs between SQLite and PostgreSQL settings.
fn contains_pattern(text: &str) -> String {
    let mut pattern = String::from("%");
    for c in text.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '!') {
            pattern.push('!');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// `LOWER(column) LIKE pattern ESCAPE '!'`, built by sea-query so each
/// backend gets its own placeholders.
fn lower_like(column: impl IntoColumnRef, pattern: &str) -> SimpleExpr {
    Expr::expr(Func::lower(Expr::col(column))).like(LikeExpr::new(pattern).escape('!'))
}

/// The visitors `query` selects, unordered, of a site the viewer can read.
pub(super) async fn filtered(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    query: &DeskQuery,
    now: i64,
) -> AppResult<(site::Model, Select<visitor::Entity>)> {
    let (site, _) = access::site(db, viewer, query.site_id, Role::Viewer).await?;
    let score = score_sql_text("visitors", now);
    let mut select: Select<visitor::Entity> = visitor::Entity::find()
        .filter(visitor::Column::SiteId.eq(site.id))
        .filter(visitor::Column::IsBot.eq(query.bots));
    if let Some(start) = query.range.start(now) {
        select = select.filter(visitor::Column::LastSeen.gte(start));
    }
    let filter = &query.filter;
    if let Some(search) = &filter.search {
        let pattern = contains_pattern(search);
        let identities = Query::select()
            .expr(Expr::val(1))
            .from(identity::Entity)
            .and_where(
                Expr::col((identity::Entity, identity::Column::VisitorId))
                    .equals((visitor::Entity, visitor::Column::Id)),
            )
            .cond_where(
                Condition::any()
                    .add(lower_like((identity::Entity, identity::Column::Name), &pattern))
                    .add(lower_like((identity::Entity, identity::Column::Company), &pattern))
                    .add(lower_like((identity::Entity, identity::Column::Email), &pattern)),
            )
            .to_owned();
        select = select.filter(
            Condition::any()
                .add(lower_like((visitor::Entity, visitor::Column::TrackerVid), &pattern))
                .add(lower_like((visitor::Entity, visitor::Column::Email), &pattern))
                .add(lower_like((visitor::Entity, visitor::Column::IdentifiedUserId), &pattern))
                .add(lower_like((visitor::Entity, visitor::Column::AccountName), &pattern))
                .add(Expr::exists(identities)),
        );
    }
    if let Some(status) = &filter.status {
        select = select.filter(visitor::Column::Status.eq(status.as_str()));
    }
    if let Some(country) = &filter.country {
        select = select.filter(visitor::Column::Country.eq(country.as_str()));
    }
    if let Some(channel) = &filter.channel {
        select = select.filter(visitor::Column::LastChannel.eq(channel.as_str()));
    }
    if let Some(campaign) = &filter.campaign {
        select = select.filter(visitor::Column::LastCampaign.eq(campaign.as_str()));
    }
    if let Some(account) = &filter.account {
        // The account's own visitors and those of networks linked to it.
        let keys = crate::service::accounts::visitor_keys(db, site.id, account).await?;
        select = select.filter(visitor::Column::AccountKey.is_in(keys));
    }
    if let Some(slug) = &filter.link {
        // The link's clicks by its own index; a slug the site does not have
        // clicked nobody.
        let clicked = Query::select()
            .column((link_click::Entity, link_click::Column::VisitorId))
            .from(link_click::Entity)
            .inner_join(
                link::Entity,
                Expr::col((link::Entity, link::Column::Id)).equals((link_click::Entity, link_click::Column::LinkId)),
            )
            .and_where(Expr::col((link::Entity, link::Column::SiteId)).eq(site.id))
            .and_where(Expr::col((link::Entity, link::Column::Slug)).eq(slug.as_str()))
            .and_where(Expr::col((link_click::Entity, link_click::Column::VisitorId)).is_not_null())
            .to_owned();
        select = select.filter(visitor::Column::Id.in_subquery(clicked));
    }
    if let Some(pattern) = &filter.visited {
        let mut viewed = Query::select()
            .column((event::Entity, event::Column::VisitorId))
            .from(event::Entity)
            .and_where(Expr::col((event::Entity, event::Column::SiteId)).eq(site.id))
            .and_where(Expr::col((event::Entity, event::Column::EventType)).eq("pageview"))
            .and_where(pattern.matches(db.get_database_backend(), (event::Entity, event::Column::Page)))
            .to_owned();
        if let Some(start) = query.range.start(now) {
            viewed.and_where(Expr::col((event::Entity, event::Column::Timestamp)).gte(start));
        }
        select = select.filter(visitor::Column::Id.in_subquery(viewed));
    }
    if filter.form {
        select = select.filter(visitor::Column::FormSubmits.gt(0));
    }
    let least = match (query.hot, filter.min_score) {
        (true, Some(min)) => Some(Ord::max(min, site.hot_threshold)),
        (true, None) => Some(site.hot_threshold),
        (false, min) => min,
    };
    if let Some(least) = least {
        select = select.filter(Expr::cust(format!("{score} >= {least}")));
    }
    Ok((site, select))
}

/// What the list sorts by, as SQL.
fn key(sort: SortKey, now: i64) -> SimpleExpr {
    match sort {
        SortKey::Score => Expr::cust(score_sql_text("visitors", now)),
        SortKey::LastSeen => Expr::col((visitor::Entity, visitor::Column::LastSeen)),
        SortKey::Pageviews => Expr::col((visitor::Entity, visitor::Column::TotalPageviews)),
        SortKey::Time => Expr::col((visitor::Entity, visitor::Column::TotalTimeSeconds)),
        SortKey::Sessions => Expr::col((visitor::Entity, visitor::Column::TotalSessions)),
    }
}

/// A row's value of the sort key, as the SQL of `key` computes it.
fn key_of(sort: SortKey, row: &visitor::Model, now: i64) -> i64 {
    match sort {
        SortKey::Score => i64::from(scoring::total(row.score, row.last_seen, now)),
        SortKey::LastSeen => row.last_seen,
        SortKey::Pageviews => i64::from(row.total_pageviews),
        SortKey::Time => row.total_time_seconds,
        SortKey::Sessions => i64::from(row.total_sessions),
    }
}

/// `select` in the list's order. Ties: the most recently seen first, then
/// the newest row, whatever the direction, so a page boundary never splits
/// a tie differently.
pub(super) fn ordered(select: Select<visitor::Entity>, query: &DeskQuery, now: i64) -> Select<visitor::Entity> {
    let order = if query.descending { SqlOrder::Desc } else { SqlOrder::Asc };
    select
        .order_by(key(query.sort, now), order)
        .order_by_desc(visitor::Column::LastSeen)
        .order_by_desc(visitor::Column::Id)
}

/// The rows of `select` that come after `last` in the list's order (a
/// keyset, so each chunk of an export is read from where the last ended).
/// The values compared are the row's own integers, never input.
pub(super) fn after(
    select: Select<visitor::Entity>,
    query: &DeskQuery,
    now: i64,
    last: &visitor::Model,
) -> Select<visitor::Entity> {
    let value = key_of(query.sort, last, now);
    let beyond = if query.descending { key(query.sort, now).lt(value) } else { key(query.sort, now).gt(value) };
    let tie = key(query.sort, now).eq(value).and(
        Expr::col((visitor::Entity, visitor::Column::LastSeen)).lt(last.last_seen).or(Expr::col((
            visitor::Entity,
            visitor::Column::LastSeen,
        ))
        .eq(last.last_seen)
        .and(Expr::col((visitor::Entity, visitor::Column::Id)).lt(last.id))),
    );
    select.filter(Condition::any().add(beyond).add(tie))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_text_is_matched_literally_anywhere() {
        let table =
            [("Acme", "%acme%"), ("50%_off", "%50!%!_off%"), ("a!b", "%a!!b%"), ("a\\b", "%a\\b%"), ("ÄBC", "%äbc%")];
        for (typed, pattern) in table {
            assert_eq!(contains_pattern(typed), pattern, "{typed}");
        }
    }
}
