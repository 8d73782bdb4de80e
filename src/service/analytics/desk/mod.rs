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

use query::TotalFrom;

use entity::visitor;

use super::{
    ScoredVisitor, ranking, snapshot,
    visitors::{self, ListQuery, VisitorPage},
    window,
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

/// The page's rows and the total, for a site the viewer can read. When the
/// filters keep many visitors, the page is read walking the order's index
/// (in score order the stored-score index, as the plain list is) with the
/// filters applied as it goes, so it costs the rows above the page, not
/// every match; when they keep few, those are read by their own indexes
/// and sorted.
async fn list(db: &impl ConnectionTrait, viewer: &Viewer, query: &DeskQuery, now: i64) -> AppResult<VisitorPage> {
    let filtered = select::filtered(db, viewer, query, now).await?;
    // The rollups know the total without filters (`hot` alone included),
    // by country, and by last touch, each with a status, and the page and
    // link indexes know a page's and a link's visitors; anything else is
    // counted row by row.
    let (site, bots, start) = (&filtered.site, filtered.is_bot, filtered.start);
    let total = match (query.filter.total_from(), query.hot) {
        (Some(TotalFrom::Country { country: None, status: None }), hot) => {
            visitors::unfiltered_total(db, site, bots, start, hot, now).await?
        }
        (Some(TotalFrom::Country { country, status }), false) => {
            visitors::total_by_country_and_status(db, site.id, bots, start, country, status).await?
        }
        (Some(TotalFrom::Touch { channel, campaign, form, status }), false) => {
            let touch = window::Touch { channel, campaign, submitted_form: form };
            visitors::total_by_touch_and_status(db, site.id, bots, start, touch, status).await?
        }
        (Some(TotalFrom::PageViewers(pattern)), false) => {
            select::viewers_total(db, site.id, bots, pattern, start).await?
        }
        (Some(TotalFrom::LinkClickers(slug)), false) => select::clickers_total(db, site.id, bots, slug, start).await?,
        _ => filtered.select(now, false).count(db).await?,
    };
    // A walk reads about take × in_range / total rows before the page is
    // settled, reading the matches by their own index reads `total`: few
    // when total² ≤ take × in_range. The total tells SQLite's planner, which
    // keeps no statistics, what it cannot know.
    let take = query.offset.saturating_add(query.limit);
    let filtering = !query.filter.is_empty();
    let few = filtered.few
        || (filtering
            && (total == 0 || {
                let in_range = visitors::unfiltered_total(db, site, bots, start, false, now).await?;
                u128::from(total).pow(2) <= u128::from(take) * u128::from(in_range)
            }));
    let walk = filtering && !few;
    let rows = if query.sort == SortKey::Score && query.descending {
        let scope = ranking::Scope {
            site_id: filtered.site.id,
            is_bot: filtered.is_bot,
            start: filtered.start,
            min_score: filtered.least,
            narrowed: Some(if walk { filtered.walking.clone() } else { filtered.narrowed.clone() }),
            few,
            walk,
        };
        let ids = ranking::page(db, &scope, query.offset, query.limit, now).await?;
        visitors::in_order(db, &ids).await?
    } else {
        // The page's ids first: a statement that reads only the sort key's
        // columns lets the key's own index serve the order and stop after
        // the page; asking for whole rows made SQLite sort every visitor of
        // the range instead.
        let ids: Vec<i64> = select::ordered(filtered.select(now, walk), query, now)
            .select_only()
            .column(visitor::Column::Id)
            .offset(query.offset)
            .limit(query.limit)
            .into_tuple()
            .all(db)
            .await?;
        visitors::in_order(db, &ids).await?
    };
    Ok(VisitorPage {
        visitors: rows.into_iter().map(|v| ScoredVisitor::new(v, filtered.site.hot_threshold, now)).collect(),
        total,
    })
}
