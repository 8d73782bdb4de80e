//! The lead desk's list (design §19): the scored list searched, filtered and
//! sorted as a salesperson asks. The plain list (no search, no filter, score
//! order) stays on `ranking`, which reads only the top of the stored-score
//! index; anything else is one filtered statement for the page and one for
//! the total, both built here from the same conditions.

use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, Order as SqlOrder, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, Select,
    sea_query::{Expr, ExprTrait, Func, IntoColumnRef, LikeExpr, Query, SimpleExpr},
};

use entity::{identity, visitor};

use super::{
    ScoredVisitor, TimeRange, score_sql_text, snapshot,
    visitors::{self, ListQuery, VisitorPage},
};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    service::access,
};

/// The longest search text; longer is refused, not cut.
pub const MAX_SEARCH_LEN: usize = 200;
/// Deeper pages than this are refused: a cursor or page is a position, not a key.
pub const MAX_OFFSET: usize = 1_000_000;
/// The last page number any page size can reach within `MAX_OFFSET`.
pub const MAX_PAGE: i64 = (MAX_OFFSET as u64 / visitors::MAX_LIMIT) as i64 + 1;

/// What the list is sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    #[default]
    Score,
    LastSeen,
    Pageviews,
    Time,
    Sessions,
}

impl SortKey {
    pub const NAMES: [&'static str; 5] = ["score", "last_seen", "pageviews", "time", "sessions"];

    pub fn parse(raw: Option<&str>) -> AppResult<Self> {
        Ok(match raw.map(str::trim).unwrap_or("") {
            "" | "score" => SortKey::Score,
            "last_seen" => SortKey::LastSeen,
            "pageviews" => SortKey::Pageviews,
            "time" => SortKey::Time,
            "sessions" => SortKey::Sessions,
            _ => return Err(AppError::validation("sort", format!("must be one of {}", Self::NAMES.join(", ")))),
        })
    }
}

/// `desc` (the default: most first) or `asc`.
pub fn parse_descending(raw: Option<&str>) -> AppResult<bool> {
    match raw.map(str::trim).unwrap_or("") {
        "" | "desc" => Ok(true),
        "asc" => Ok(false),
        _ => Err(AppError::validation("order", "must be asc or desc")),
    }
}

/// The narrowing a salesperson asks for; empty narrows nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeskFilter {
    /// Part of a name, email, company, user id or visitor id, any case.
    pub search: Option<String>,
    /// `identified` or `anonymous`.
    pub status: Option<String>,
    /// An ISO country code.
    pub country: Option<String>,
    /// Only visitors who submitted a form.
    pub form: bool,
    /// Only visitors whose score (recency included) reaches this.
    pub min_score: Option<i32>,
}

impl DeskFilter {
    /// Checks and normalizes what the caller typed.
    pub fn new(
        search: Option<&str>,
        status: Option<&str>,
        country: Option<&str>,
        form: bool,
        min_score: Option<i64>,
    ) -> AppResult<Self> {
        let text = |raw: Option<&str>| raw.map(str::trim).filter(|text| !text.is_empty()).map(str::to_owned);
        let search = text(search);
        if search.as_ref().is_some_and(|search| search.chars().count() > MAX_SEARCH_LEN) {
            return Err(AppError::validation("search", format!("must be at most {MAX_SEARCH_LEN} characters")));
        }
        let status = text(status);
        if let Some(status) = &status
            && status != "identified"
            && status != "anonymous"
        {
            return Err(AppError::validation("status", "must be identified or anonymous"));
        }
        let country = text(country).map(|code| code.to_ascii_uppercase());
        if country.as_ref().is_some_and(|code| code.len() != 2 || !code.chars().all(|c| c.is_ascii_uppercase())) {
            return Err(AppError::validation("country", "must be a two-letter country code"));
        }
        let min_score = match min_score {
            None => None,
            Some(score @ 0..=100) => Some(score as i32),
            Some(_) => return Err(AppError::validation("minScore", "must be between 0 and 100")),
        };
        Ok(DeskFilter { search, status, country, form, min_score })
    }

    pub fn is_empty(&self) -> bool {
        *self == DeskFilter::default()
    }
}

/// One page of the desk's list.
pub struct DeskQuery {
    pub site_id: i64,
    pub range: TimeRange,
    pub bots: bool,
    pub hot: bool,
    pub filter: DeskFilter,
    pub sort: SortKey,
    pub descending: bool,
    pub limit: u64,
    pub offset: u64,
}

impl DeskQuery {
    /// Whether the plain scored list answers it (the fast path).
    pub fn is_plain(&self) -> bool {
        self.filter.is_empty() && self.sort == SortKey::Score && self.descending
    }
}

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

/// The page the query asks for: the plain list from the ranking, anything
/// else from one filtered read, both in one consistent snapshot.
pub async fn page(db: &DatabaseConnection, viewer: &Viewer, query: DeskQuery, now: i64) -> AppResult<VisitorPage> {
    if query.is_plain() {
        let DeskQuery { site_id, range, bots, hot, limit, offset, .. } = query;
        return visitors::list_filtered(db, viewer, ListQuery { site_id, range, bots, limit, offset }, hot, now).await;
    }
    let view = snapshot(db).await?;
    let page = list(&view, viewer, &query, now).await?;
    view.commit().await?;
    Ok(page)
}

/// The page's rows and the total, for a site the viewer can read.
async fn list(db: &impl ConnectionTrait, viewer: &Viewer, query: &DeskQuery, now: i64) -> AppResult<VisitorPage> {
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
                .add(Expr::exists(identities)),
        );
    }
    if let Some(status) = &filter.status {
        select = select.filter(visitor::Column::Status.eq(status.as_str()));
    }
    if let Some(country) = &filter.country {
        select = select.filter(visitor::Column::Country.eq(country.as_str()));
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
    let total = select.clone().count(db).await?;
    let order = if query.descending { SqlOrder::Desc } else { SqlOrder::Asc };
    let key: SimpleExpr = match query.sort {
        SortKey::Score => Expr::cust(score),
        SortKey::LastSeen => Expr::col(visitor::Column::LastSeen),
        SortKey::Pageviews => Expr::col(visitor::Column::TotalPageviews),
        SortKey::Time => Expr::col(visitor::Column::TotalTimeSeconds),
        SortKey::Sessions => Expr::col(visitor::Column::TotalSessions),
    };
    // Ties: the most recently seen first, then the newest row, whatever the
    // direction, so a page boundary never splits a tie differently.
    let rows = select
        .order_by(key, order)
        .order_by_desc(visitor::Column::LastSeen)
        .order_by_desc(visitor::Column::Id)
        .offset(query.offset)
        .limit(query.limit)
        .all(db)
        .await?;
    Ok(VisitorPage {
        visitors: rows.into_iter().map(|v| ScoredVisitor::new(v, site.hot_threshold, now)).collect(),
        total,
    })
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

    #[test]
    fn filters_are_checked_and_normalized() {
        let ok = DeskFilter::new(Some("  acme "), Some("identified"), Some("de"), true, Some(40)).unwrap();
        assert_eq!(ok.search.as_deref(), Some("acme"));
        assert_eq!(ok.country.as_deref(), Some("DE"));
        assert!(DeskFilter::new(Some("  "), None, Some(""), false, None).unwrap().is_empty());
        let refused = [
            (DeskFilter::new(None, Some("hot"), None, false, None), "status"),
            (DeskFilter::new(None, None, Some("Germany"), false, None), "country"),
            (DeskFilter::new(None, None, None, false, Some(101)), "minScore"),
            (DeskFilter::new(None, None, None, false, Some(-1)), "minScore"),
            (DeskFilter::new(Some(&"x".repeat(MAX_SEARCH_LEN + 1)), None, None, false, None), "search"),
        ];
        for (result, field) in refused {
            assert_eq!(result.err().and_then(|err| err.field), Some(field.to_owned()), "{field}");
        }
        assert_eq!(SortKey::parse(Some("time")).unwrap(), SortKey::Time);
        assert_eq!(SortKey::parse(Some("name")).err().and_then(|e| e.field), Some("sort".to_owned()));
        assert!(!parse_descending(Some("asc")).unwrap());
        assert!(parse_descending(Some("up")).is_err());
    }
}
