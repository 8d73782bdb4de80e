//! The desk's filtered read as SQL: which visitors a query selects, in
//! which order, and where a chunk of an export resumes. The page and the
//! export build their statements here, so both read the same rows.

use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbBackend, EntityTrait, IdenStatic, Order as SqlOrder, QueryFilter,
    QueryOrder, Select,
    sea_query::{Expr, ExprTrait, Func, IntoColumnRef, LikeExpr, Query, SimpleExpr},
};

use entity::{identity, link, site, visitor, visitor_link, visitor_page};

use super::query::{DeskQuery, PathPattern, SortKey};
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

/// The search as an FTS5 phrase, which the trigram index matches as a
/// substring of a visitor's words in any case: the typed text in double
/// quotes with its own quotes doubled, and without control characters (one
/// of them separates the words' fields, so no match spans two fields). None
/// under three characters, which a trigram cannot find.
fn search_phrase(text: &str) -> Option<String> {
    let kept: String = text.chars().filter(|c| !c.is_control()).collect();
    (kept.chars().count() >= 3).then(|| format!("\"{}\"", kept.replace('"', "\"\"")))
}

/// The search as a condition on the columns themselves: any of the
/// visitor's words, or any of its identities', holds the text in any case.
fn searched_columns(search: &str) -> Condition {
    let pattern = contains_pattern(search);
    let identities = Query::select()
        .expr(Expr::val(1))
        .from(identity::Entity)
        .and_where(
            Expr::col((identity::Entity, identity::Column::VisitorId)).equals((visitor::Entity, visitor::Column::Id)),
        )
        .cond_where(
            Condition::any()
                .add(lower_like((identity::Entity, identity::Column::Name), &pattern))
                .add(lower_like((identity::Entity, identity::Column::Company), &pattern))
                .add(lower_like((identity::Entity, identity::Column::Email), &pattern)),
        )
        .to_owned();
    Condition::any()
        .add(lower_like((visitor::Entity, visitor::Column::TrackerVid), &pattern))
        .add(lower_like((visitor::Entity, visitor::Column::Email), &pattern))
        .add(lower_like((visitor::Entity, visitor::Column::IdentifiedUserId), &pattern))
        .add(lower_like((visitor::Entity, visitor::Column::AccountName), &pattern))
        .add(Expr::exists(identities))
}

/// What a desk query selects of a site the viewer can read: the site's
/// humans (or bots) seen in the range, narrowed by the filters' conditions
/// on the visitor row, and scoring at least `least` when asked.
pub(super) struct Filtered {
    pub site: site::Model,
    pub is_bot: bool,
    pub start: Option<i64>,
    /// The filters' conditions, without the site, range and score, as each
    /// filter's own index (or subquery) reads them: for counting, and for a
    /// page of few matches, read whole and sorted.
    pub narrowed: Condition,
    /// The same conditions written so that no index of their own serves
    /// them (SQLite): a unary `+` on a column, a correlated EXISTS for a
    /// subquery. For walking the list's order index when they keep many
    /// visitors, which SQLite, without statistics, does not know.
    pub walking: Condition,
    /// `narrowed` holds a condition that picks few visitors by an index of
    /// its own (an account's), for the ranking to read and sort them.
    pub few: bool,
    pub least: Option<i32>,
    backend: DbBackend,
}

impl Filtered {
    /// Every selected visitor, unordered; with `walk`, its conditions as
    /// `walking` writes them, and the range too.
    pub fn select(&self, now: i64, walk: bool) -> Select<visitor::Entity> {
        let mut select = visitor::Entity::find()
            .filter(visitor::Column::SiteId.eq(self.site.id))
            .filter(visitor::Column::IsBot.eq(self.is_bot))
            .filter(if walk { self.walking.clone() } else { self.narrowed.clone() });
        if let Some(start) = self.start {
            select = select.filter(if walk {
                Expr::cust(format!("{} >= {start}", unindexed(self.backend, "last_seen")))
            } else {
                visitor::Column::LastSeen.gte(start)
            });
        }
        if let Some(least) = self.least {
            // Recency adds at most RECENCY_MAX to the stored points: the
            // first condition lets the stored-score index narrow the rows.
            let score = score_sql_text("visitors", now);
            select = select
                .filter(visitor::Column::Score.gte(least - scoring::RECENCY_MAX))
                .filter(Expr::cust(format!("{score} >= {least}")));
        }
        select
    }
}

/// A filter's condition both ways (see `Filtered`).
struct Narrowing {
    backend: DbBackend,
    narrowed: Condition,
    walking: Condition,
}

impl Narrowing {
    fn add(&mut self, narrowed: SimpleExpr, walking: SimpleExpr) {
        self.narrowed = self.narrowed.clone().add(narrowed);
        self.walking = self.walking.clone().add(walking);
    }

    /// `column = value`, and for walking the same with the column unindexed
    /// (a bound `?` is SQLite's placeholder, not PostgreSQL's).
    fn equals(&mut self, column: visitor::Column, value: &str) {
        let plain = Expr::col((visitor::Entity, column)).eq(value);
        let walking = match self.backend {
            DbBackend::Sqlite => {
                Expr::cust_with_values(format!("{} = ?", unindexed(self.backend, column.as_str())), [value.to_owned()])
            }
            _ => plain.clone(),
        };
        self.add(plain, walking);
    }
}

/// A visitor column as SQL that no index serves: `+visitors.column` on
/// SQLite; as it is on PostgreSQL, which has no unary `+` on text and a
/// planner with statistics.
fn unindexed(backend: DbBackend, column: &str) -> String {
    match backend {
        DbBackend::Sqlite => format!("+visitors.{column}"),
        _ => format!("visitors.{column}"),
    }
}

/// What `query` selects, of a site the viewer can read.
pub(super) async fn filtered(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    query: &DeskQuery,
    now: i64,
) -> AppResult<Filtered> {
    let (site, _) = access::site(db, viewer, query.site_id, Role::Viewer).await?;
    let backend = db.get_database_backend();
    let mut by = Narrowing { backend, narrowed: Condition::all(), walking: Condition::all() };
    let mut few = false;
    let filter = &query.filter;
    if let Some(search) = &filter.search {
        let searched = match (backend, search_phrase(search)) {
            // The trigram index (SQLite) answers three characters or more.
            (DbBackend::Sqlite, Some(phrase)) => Condition::all().add(Expr::cust_with_values(
                "visitors.id IN (SELECT rowid FROM visitor_search WHERE visitor_search MATCH ?)",
                [phrase],
            )),
            _ => searched_columns(search),
        };
        by.narrowed = by.narrowed.add(searched.clone());
        by.walking = by.walking.add(searched);
    }
    if let Some(status) = &filter.status {
        by.equals(visitor::Column::Status, status);
    }
    if let Some(country) = &filter.country {
        by.equals(visitor::Column::Country, country);
    }
    if let Some(channel) = &filter.channel {
        by.equals(visitor::Column::LastChannel, channel);
    }
    if let Some(campaign) = &filter.campaign {
        by.equals(visitor::Column::LastCampaign, campaign);
    }
    if let Some(account) = &filter.account {
        // The account's own visitors and those of networks linked to it.
        let keys = crate::service::accounts::visitor_keys(db, site.id, account).await?;
        let condition = visitor::Column::AccountKey.is_in(keys);
        by.add(condition.clone(), condition);
        few = true;
    }
    if let Some(slug) = &filter.link {
        // One row per visitor and link clicked (the writer keeps them, with
        // the visitor's last visit and bot flag), read by the link's index
        // within the range. Walking, each visitor's own by the (visitor,
        // link) key.
        let clicked = clickers(site.id, query.bots, slug, query.range.start(now))
            .column((visitor_link::Entity, visitor_link::Column::VisitorId))
            .to_owned();
        let own = Query::select()
            .expr(Expr::val(1))
            .from(visitor_link::Entity)
            .and_where(
                Expr::col((visitor_link::Entity, visitor_link::Column::VisitorId))
                    .equals((visitor::Entity, visitor::Column::Id)),
            )
            .and_where(
                Expr::col((visitor_link::Entity, visitor_link::Column::LinkId)).in_subquery(link_ids(site.id, slug)),
            )
            .to_owned();
        by.add(visitor::Column::Id.in_subquery(clicked), Expr::exists(own));
    }
    if let Some(pattern) = &filter.visited {
        // One row per visitor and page viewed (the writer keeps them), its
        // latest view within the range when there is one. Walking, each
        // visitor's own pages by the (visitor, page) key.
        let start = query.range.start(now);
        let viewed = viewers(backend, site.id, query.bots, pattern, start)
            .column((visitor_page::Entity, visitor_page::Column::VisitorId))
            .to_owned();
        let mut own = Query::select()
            .expr(Expr::val(1))
            .from(visitor_page::Entity)
            .and_where(
                Expr::col((visitor_page::Entity, visitor_page::Column::VisitorId))
                    .equals((visitor::Entity, visitor::Column::Id)),
            )
            .and_where(pattern.matches(backend, (visitor_page::Entity, visitor_page::Column::Page)))
            .to_owned();
        if let Some(start) = start {
            own.and_where(Expr::col((visitor_page::Entity, visitor_page::Column::LastViewed)).gte(start));
        }
        by.add(visitor::Column::Id.in_subquery(viewed), Expr::exists(own));
    }
    if filter.form {
        // Written out, not bound, so the partial index of submitters serves it.
        let walking = format!("{} > 0", unindexed(backend, "form_submits"));
        by.add(Expr::cust("visitors.form_submits > 0"), Expr::cust(walking));
    }
    let least = match (query.hot, filter.min_score) {
        (true, Some(min)) => Some(Ord::max(min, site.hot_threshold)),
        (true, None) => Some(site.hot_threshold),
        (false, min) => min,
    };
    Ok(Filtered {
        site,
        is_bot: query.bots,
        start: query.range.start(now),
        narrowed: by.narrowed,
        walking: by.walking,
        few,
        least,
        backend,
    })
}

/// The rows of the site's humans (or bots) viewing a page of `pattern`
/// since `start`, as the index on (site, page, bot, last view, visitor)
/// holds them. A visitor viewed a page since `start` only if it was seen
/// since then, so this alone keeps the desk's range.
fn viewers(
    backend: DbBackend,
    site_id: i64,
    bots: bool,
    pattern: &PathPattern,
    start: Option<i64>,
) -> sea_orm::sea_query::SelectStatement {
    let column = |c: visitor_page::Column| Expr::col((visitor_page::Entity, c));
    let mut viewed = Query::select()
        .from(visitor_page::Entity)
        .and_where(column(visitor_page::Column::SiteId).eq(site_id))
        .and_where(pattern.matches(backend, (visitor_page::Entity, visitor_page::Column::Page)))
        .and_where(column(visitor_page::Column::IsBot).eq(bots))
        .to_owned();
    if let Some(start) = start {
        viewed.and_where(column(visitor_page::Column::LastViewed).gte(start));
    }
    viewed
}

/// The ids of the site's link with this slug; a slug the site does not have
/// was clicked by nobody.
fn link_ids(site_id: i64, slug: &str) -> sea_orm::sea_query::SelectStatement {
    Query::select()
        .column((link::Entity, link::Column::Id))
        .from(link::Entity)
        .and_where(Expr::col((link::Entity, link::Column::SiteId)).eq(site_id))
        .and_where(Expr::col((link::Entity, link::Column::Slug)).eq(slug))
        .to_owned()
}

/// The rows of the site's humans (or bots) seen since `start` who clicked
/// the link with this slug, as the index on (link, bot, last seen, visitor)
/// holds them.
fn clickers(site_id: i64, bots: bool, slug: &str, start: Option<i64>) -> sea_orm::sea_query::SelectStatement {
    let column = |c: visitor_link::Column| Expr::col((visitor_link::Entity, c));
    let mut clicked = Query::select()
        .from(visitor_link::Entity)
        .and_where(column(visitor_link::Column::LinkId).in_subquery(link_ids(site_id, slug)))
        .and_where(column(visitor_link::Column::IsBot).eq(bots))
        .to_owned();
    if let Some(start) = start {
        clicked.and_where(column(visitor_link::Column::LastSeen).gte(start));
    }
    clicked
}

/// How many of the site's humans (or bots) seen since `start` clicked the
/// link: the desk's total when `link` is its only filter, counted from the
/// link index without reading a visitor.
pub(super) async fn clickers_total(
    db: &impl ConnectionTrait,
    site_id: i64,
    bots: bool,
    slug: &str,
    start: Option<i64>,
) -> AppResult<u64> {
    let count = clickers(site_id, bots, slug, start)
        .expr_as(Expr::cust("COUNT(DISTINCT visitor_links.visitor_id)"), sea_orm::sea_query::Alias::new("clickers"))
        .to_owned();
    count_of(db, &count, "clickers").await
}

/// The one figure a counting statement answers.
async fn count_of(
    db: &impl ConnectionTrait,
    count: &sea_orm::sea_query::SelectStatement,
    name: &str,
) -> AppResult<u64> {
    let figure: i64 = match db.query_one(count).await? {
        Some(row) => row.try_get("", name)?,
        None => 0,
    };
    Ok(u64::try_from(figure).unwrap_or(0))
}

/// How many of the site's humans (or bots) viewed a page of `pattern` since
/// `start`: the desk's total when `visited` is its only filter, counted
/// from the page index without reading a visitor.
pub(super) async fn viewers_total(
    db: &impl ConnectionTrait,
    site_id: i64,
    bots: bool,
    pattern: &PathPattern,
    start: Option<i64>,
) -> AppResult<u64> {
    let backend = db.get_database_backend();
    let count = viewers(backend, site_id, bots, pattern, start)
        .expr_as(Expr::cust("COUNT(DISTINCT visitor_pages.visitor_id)"), sea_orm::sea_query::Alias::new("viewers"))
        .to_owned();
    count_of(db, &count, "viewers").await
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

/// `select` in the list's order: by the key, ties by last visit, then by
/// row, all in the one direction, so `asc` is the exact reverse of `desc`
/// and one index on (key, last_seen, id) serves both, walked either way.
pub(super) fn ordered(select: Select<visitor::Entity>, query: &DeskQuery, now: i64) -> Select<visitor::Entity> {
    let order = if query.descending { SqlOrder::Desc } else { SqlOrder::Asc };
    select
        .order_by(key(query.sort, now), order.clone())
        .order_by(visitor::Column::LastSeen, order.clone())
        .order_by(visitor::Column::Id, order)
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
    let past = |column: SimpleExpr, value: i64| if query.descending { column.lt(value) } else { column.gt(value) };
    let last_seen = || Expr::col((visitor::Entity, visitor::Column::LastSeen));
    let tie = key(query.sort, now).eq(value).and(
        past(last_seen(), last.last_seen)
            .or(last_seen().eq(last.last_seen).and(past(Expr::col((visitor::Entity, visitor::Column::Id)), last.id))),
    );
    select.filter(Condition::any().add(past(key(query.sort, now), value)).add(tie))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_is_one_phrase_of_three_characters_or_more() {
        let table = [
            ("acme", Some(r#""acme""#)),
            ("PERSON 1", Some(r#""PERSON 1""#)),
            (r#"say "hi""#, Some(r#""say ""hi""""#)),
            ("a\u{1f}b\nc", Some(r#""abc""#)),
            ("ab", None),
            ("a\tb", None),
            ("äöü", Some(r#""äöü""#)),
        ];
        for (typed, phrase) in table {
            assert_eq!(search_phrase(typed).as_deref(), phrase, "{typed:?}");
        }
    }

    #[test]
    fn search_text_is_matched_literally_anywhere() {
        let table =
            [("Acme", "%acme%"), ("50%_off", "%50!%!_off%"), ("a!b", "%a!!b%"), ("a\\b", "%a\\b%"), ("ÄBC", "%äbc%")];
        for (typed, pattern) in table {
            assert_eq!(contains_pattern(typed), pattern, "{typed}");
        }
    }
}
