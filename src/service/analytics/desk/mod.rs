//! The lead desk's list (design §19): the scored list searched, filtered and
//! sorted as a salesperson asks. The plain list (no search, no filter, score
//! order) stays on `ranking`, which reads only the top of the stored-score
//! index; anything else is one filtered statement for the page and one for
//! the total, both built here from the same conditions.

mod export;
mod query;
mod select;

pub use export::{CSV_COLUMNS, export, neutralised};
pub use query::{
    DeskFilter, DeskInput, DeskQuery, MAX_FILTER_LEN, MAX_OFFSET, MAX_PAGE, MAX_SEARCH_LEN, PathPattern, SortKey,
    parse_descending,
};

use sea_orm::{ConnectionTrait, DatabaseConnection, PaginatorTrait, QuerySelect};

use super::{
    ScoredVisitor, snapshot,
    visitors::{self, ListQuery, VisitorPage},
};
use crate::{auth::Viewer, error::AppResult};

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
    let (site, select) = select::filtered(db, viewer, query, now).await?;
    let total = select.clone().count(db).await?;
    let rows = select::ordered(select, query, now).offset(query.offset).limit(query.limit).all(db).await?;
    Ok(VisitorPage {
        visitors: rows.into_iter().map(|v| ScoredVisitor::new(v, site.hot_threshold, now)).collect(),
        total,
    })
}
