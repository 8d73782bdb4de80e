//! The scored visitor list behind `visitors` (on Query and on Workspace):
//! cursor or page number, and the lead desk's search, filters and sort.

use async_graphql::{
    Context, SimpleObject,
    connection::{Connection, CursorType, Edge},
};

use super::{context::ContextExt, visitor::Visitor};
use crate::{
    error::{AppError, AppResult},
    service::analytics::{
        TimeRange,
        desk::{self, DeskFilter, DeskQuery, MAX_OFFSET, MAX_PAGE, SortKey},
        visitors,
    },
    time::now_ms,
};

#[derive(SimpleObject)]
pub struct VisitorListFields {
    /// Every visitor matching the filters, not only this page.
    pub total: u64,
}

pub type VisitorConnection = Connection<usize, Visitor, VisitorListFields>;

/// The lead desk's arguments of `visitors` (design §19); all optional.
#[derive(Default)]
pub(crate) struct DeskArgs {
    pub search: Option<String>,
    pub sort: Option<String>,
    pub order: Option<String>,
    pub page: Option<i64>,
    pub status: Option<String>,
    pub country: Option<String>,
    pub min_score: Option<i64>,
    pub form: Option<bool>,
}

// One argument per GraphQL argument: the schema's shape, not a Rust choice.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn site_visitors(
    ctx: &Context<'_>,
    site_id: i64,
    time_range: Option<String>,
    filter: Option<String>,
    first: Option<i64>,
    after: Option<String>,
    hot: Option<bool>,
    desk: DeskArgs,
) -> AppResult<VisitorConnection> {
    let range = TimeRange::parse(time_range.as_deref(), true)?;
    let bots = match filter.as_deref().map(str::trim).unwrap_or("") {
        "" => false,
        "bot" => true,
        _ => return Err(AppError::validation("filter", "must be bot or empty")),
    };
    let limit = visitors::clamp_limit(first)?;
    let offset = match after {
        Some(cursor) => usize::decode_cursor(&cursor)
            .ok()
            .and_then(|position| position.checked_add(1))
            .filter(|&offset| offset <= MAX_OFFSET)
            .ok_or_else(|| AppError::validation("after", "is not a cursor of this list"))?,
        None => 0,
    };
    // A page number, when given, places the page instead of the cursor.
    let offset = match desk.page {
        None => offset,
        Some(page) if page < 1 => return Err(AppError::validation("page", "must be at least 1")),
        Some(page) if page > MAX_PAGE => {
            return Err(AppError::validation("page", format!("must be at most {MAX_PAGE}")));
        }
        Some(page) => usize::try_from(page - 1)
            .ok()
            .and_then(|before| before.checked_mul(limit as usize))
            .filter(|&offset| offset <= MAX_OFFSET)
            .ok_or_else(|| AppError::validation("page", "is past the end of the list"))?,
    };
    let filter = DeskFilter::new(
        desk.search.as_deref(),
        desk.status.as_deref(),
        desk.country.as_deref(),
        desk.form.unwrap_or(false),
        desk.min_score,
    )?;
    let query = DeskQuery {
        site_id,
        range,
        bots,
        hot: hot.unwrap_or(false),
        filter,
        sort: SortKey::parse(desk.sort.as_deref())?,
        descending: desk::parse_descending(desk.order.as_deref())?,
        limit,
        offset: offset as u64,
    };
    let page = desk::page(&*ctx.db().await?, ctx.viewer()?, query, now_ms()).await?;
    let shown = page.visitors.len();
    let mut connection = Connection::with_additional_fields(
        offset > 0,
        (offset + shown) < page.total as usize,
        VisitorListFields { total: page.total },
    );
    connection.edges.extend(page.visitors.into_iter().enumerate().map(|(i, v)| Edge::new(offset + i, Visitor::new(v))));
    Ok(connection)
}
