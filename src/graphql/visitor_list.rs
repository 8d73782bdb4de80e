//! The scored visitor list behind `visitors` (on Query and on Workspace):
//! cursor or page number, and the lead desk's search, filters and sort.

use async_graphql::{
    Context, SimpleObject,
    connection::{Connection, CursorType, Edge},
};

use serde_json::{Map, Value};

use super::{context::ContextExt, visitor::Visitor};
use crate::{
    error::{AppError, AppResult},
    service::analytics::{
        TimeRange,
        desk::{self, DeskFilter, DeskInput, DeskQuery, MAX_OFFSET, MAX_PAGE, SortKey},
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
    pub channel: Option<String>,
    pub campaign: Option<String>,
    pub link: Option<String>,
    pub account: Option<String>,
    pub visited: Option<String>,
    pub min_score: Option<i64>,
    pub form: Option<bool>,
}

/// Everything `visitors` takes, as its arguments came.
pub(crate) struct ListArgs {
    pub site_id: i64,
    pub time_range: Option<String>,
    pub filter: Option<String>,
    pub first: Option<i64>,
    pub after: Option<String>,
    pub hot: Option<bool>,
    pub desk: DeskArgs,
}

impl ListArgs {
    /// The arguments from a REST route's variables (named as the document
    /// declares them); a value of the wrong type is refused as its field.
    pub(crate) fn from_variables(variables: &Map<String, Value>) -> AppResult<Self> {
        let text = |name: &str| -> AppResult<Option<String>> {
            match variables.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.clone())),
                Some(_) => Err(AppError::validation(name, "must be text")),
            }
        };
        let int = |name: &str| -> AppResult<Option<i64>> {
            match variables.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(value) => value.as_i64().map(Some).ok_or_else(|| AppError::validation(name, "must be a number")),
            }
        };
        let flag = |name: &str| -> AppResult<Option<bool>> {
            match variables.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(value) => {
                    value.as_bool().map(Some).ok_or_else(|| AppError::validation(name, "must be true or false"))
                }
            }
        };
        Ok(ListArgs {
            site_id: int("siteId")?.ok_or_else(|| AppError::validation("siteId", "is required"))?,
            time_range: text("timeRange")?,
            filter: text("filter")?,
            first: int("first")?,
            after: text("after")?,
            hot: flag("hot")?,
            desk: DeskArgs {
                search: text("search")?,
                sort: text("sort")?,
                order: text("order")?,
                page: int("page")?,
                status: text("status")?,
                country: text("country")?,
                channel: text("channel")?,
                campaign: text("campaign")?,
                link: text("link")?,
                account: text("account")?,
                visited: text("visited")?,
                min_score: int("minScore")?,
                form: flag("form")?,
            },
        })
    }

    /// The desk's query: range, bots, filters, sort and the page's place.
    pub(crate) fn query(self) -> AppResult<DeskQuery> {
        let ListArgs { site_id, time_range, filter, first, after, hot, desk } = self;
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
        let filter = DeskFilter::new(DeskInput {
            search: desk.search.as_deref(),
            status: desk.status.as_deref(),
            country: desk.country.as_deref(),
            channel: desk.channel.as_deref(),
            campaign: desk.campaign.as_deref(),
            link: desk.link.as_deref(),
            account: desk.account.as_deref(),
            visited: desk.visited.as_deref(),
            form: desk.form.unwrap_or(false),
            min_score: desk.min_score,
        })?;
        Ok(DeskQuery {
            site_id,
            range,
            bots,
            hot: hot.unwrap_or(false),
            filter,
            sort: SortKey::parse(desk.sort.as_deref())?,
            descending: desk::parse_descending(desk.order.as_deref())?,
            limit,
            offset: offset as u64,
        })
    }
}

/// One page of the list, as a connection.
pub(crate) async fn site_visitors(ctx: &Context<'_>, args: ListArgs) -> AppResult<VisitorConnection> {
    let query = args.query()?;
    let offset = query.offset as usize;
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
