//! Accounts (design §18): the companies behind a site's visitors, ranked,
//! one by one with their people, and what admins change about them. The
//! service reads and checks; this converts.

use async_graphql::{
    ComplexObject, Context, InputObject, Object, SimpleObject,
    connection::{Connection, CursorType, Edge},
};

use super::{
    context::ContextExt,
    conversions::MoneyTotal,
    cost,
    types::Timestamp,
    visitor::ScoreFactor,
    visitor_list::{self, DeskArgs, VisitorConnection},
};
use crate::{
    error::{AppError, AppResult},
    service::{
        accounts::{self, AccountChanges, AccountQuery, AccountSort},
        analytics::TimeRange,
        conversions,
        money::Money,
    },
    time::now_ms,
};

/// A company behind the site's visitors.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct Account {
    #[graphql(skip)]
    site_id: i64,
    /// A web domain (`acme.com`), `name:<company>`, or `asn:<number>` for a
    /// network no one has named yet. The leads list's `account` filter.
    pub key: String,
    pub name: String,
    /// 0 to 100, from its people's engagement and recency; see `scoreBreakdown`.
    pub score: i32,
    /// Whether the score reaches the site's hot threshold.
    pub hot: bool,
    pub score_breakdown: Vec<ScoreFactor>,
    /// Identified people.
    pub people: i64,
    /// Every visitor, known or anonymous.
    pub visitors: i64,
    pub sessions: i64,
    pub pageviews: i64,
    pub high_value_views: i64,
    pub form_submits: i64,
    pub engaged_seconds: i64,
    pub first_seen: Timestamp,
    pub last_seen: Timestamp,
    /// Networks (`asn:<number>`) linked to it.
    pub networks: Vec<String>,
    /// Left out of the list (the site owner's own company).
    pub excluded: bool,
    /// Whether an admin gave it its name.
    pub renamed: bool,
    /// Its conversions and revenue, read once however many fields ask.
    #[graphql(skip)]
    money: tokio::sync::OnceCell<(i64, Vec<Money>)>,
}

impl Account {
    async fn money(&self, ctx: &Context<'_>) -> AppResult<&(i64, Vec<Money>)> {
        self.money
            .get_or_try_init(|| async { conversions::of_account(&*ctx.db().await?, self.site_id, &self.key).await })
            .await
    }

    fn new(site_id: i64, account: accounts::Account) -> Self {
        Account {
            site_id,
            score_breakdown: account
                .reasons
                .iter()
                .map(|reason| ScoreFactor {
                    name: reason.factor.to_owned(),
                    points: reason.points,
                    reason: reason.because.clone(),
                })
                .collect(),
            key: account.key,
            name: account.name,
            score: account.score,
            hot: account.hot,
            people: account.figures.people,
            visitors: account.figures.visitors,
            sessions: account.sessions,
            pageviews: account.figures.pageviews,
            high_value_views: account.figures.high_value_views,
            form_submits: account.figures.form_submits,
            engaged_seconds: account.figures.engaged_seconds,
            first_seen: Timestamp(account.first_seen),
            last_seen: Timestamp(account.figures.last_seen),
            networks: account.networks,
            excluded: account.excluded,
            renamed: account.renamed,
            money: tokio::sync::OnceCell::new(),
        }
    }
}

#[ComplexObject]
impl Account {
    /// How many conversions its visitors have (`recordConversion`).
    async fn conversions(&self, ctx: &Context<'_>) -> AppResult<i64> {
        Ok(self.money(ctx).await?.0)
    }

    /// Its visitors' revenue, conversions and revenue events, per currency.
    async fn revenue(&self, ctx: &Context<'_>) -> AppResult<Vec<MoneyTotal>> {
        Ok(self.money(ctx).await?.1.iter().cloned().map(MoneyTotal).collect())
    }

    /// Its visitors (people first), as the leads list shows them: every
    /// visitor of the account or of a network linked to it, by score.
    #[graphql(complexity = "cost::ranked_window(Some(\"all\")) + cost::visitor_page(first) * child_complexity")]
    async fn members(&self, ctx: &Context<'_>, first: Option<i64>, page: Option<i64>) -> AppResult<VisitorConnection> {
        let desk = DeskArgs { account: Some(self.key.clone()), page, ..DeskArgs::default() };
        let args = visitor_list::ListArgs {
            site_id: self.site_id,
            time_range: Some("all".to_owned()),
            filter: None,
            first,
            after: None,
            hot: None,
            desk,
        };
        visitor_list::site_visitors(ctx, args).await
    }
}

#[derive(SimpleObject)]
pub struct AccountListFields {
    /// Every account matching, not only this page.
    pub total: u64,
}

pub type AccountConnection = Connection<usize, Account, AccountListFields>;

/// What narrows the list.
#[derive(InputObject, Default)]
pub struct AccountFilter {
    /// Part of a name or key, any case.
    pub search: Option<String>,
    /// Only hot accounts.
    pub hot: Option<bool>,
    /// The excluded accounts instead of the others.
    pub excluded: Option<bool>,
}

/// What an admin changes; omitted parts stay.
#[derive(InputObject)]
pub struct AccountInput {
    /// Shown instead of its own name; empty gives it back.
    pub name: Option<String>,
    /// Leaves it out of the list (your own company).
    pub excluded: Option<bool>,
    /// For a network (`asn:<number>`): the web domain of the company it
    /// belongs to; its visitors then count there. Empty unlinks it.
    pub link_to: Option<String>,
}

#[derive(Default)]
pub struct AccountsQuery;

#[Object]
impl AccountsQuery {
    /// The site's accounts seen in `range` (`24h`, `7d`, `30d` (default),
    /// `all`), by `sort` (`score` (default), `last_seen`, `people`,
    /// `visitors`, `pageviews`); `first` defaults to 50 and is capped at 200.
    #[graphql(complexity = "cost::window(range.as_deref()) + cost::visitor_page(first) * child_complexity")]
    #[allow(clippy::too_many_arguments)]
    async fn accounts(
        &self,
        ctx: &Context<'_>,
        site_id: i64,
        range: Option<String>,
        filter: Option<AccountFilter>,
        sort: Option<String>,
        first: Option<i64>,
        after: Option<String>,
        #[graphql(desc = "1-based page of `first` rows; takes the place of `after`")] page: Option<i64>,
    ) -> AppResult<AccountConnection> {
        let args = ListArgs { range, filter: filter.unwrap_or_default(), sort, first, after, page };
        site_accounts(ctx, site_id, args).await
    }

    /// One account by its key; a network linked to a domain answers as that
    /// domain's account.
    async fn account(&self, ctx: &Context<'_>, site_id: i64, key: String) -> AppResult<Account> {
        site_account(ctx, site_id, &key).await
    }
}

#[derive(Default)]
pub struct AccountsMutation;

#[Object]
impl AccountsMutation {
    /// Renames, excludes or includes an account, or links a network to a
    /// company's domain. Admins.
    async fn update_account(
        &self,
        ctx: &Context<'_>,
        site_id: i64,
        key: String,
        input: AccountInput,
    ) -> AppResult<Account> {
        let changes = AccountChanges { name: input.name, excluded: input.excluded, link_to: input.link_to };
        let (site, account) = accounts::change(&*ctx.db().await?, ctx.viewer()?, site_id, &key, changes).await?;
        Ok(Account::new(site.id, account))
    }
}

/// The arguments of `accounts`, as they came.
pub(crate) struct ListArgs {
    pub range: Option<String>,
    pub filter: AccountFilter,
    pub sort: Option<String>,
    pub first: Option<i64>,
    pub after: Option<String>,
    pub page: Option<i64>,
}

/// `accounts` as a function, which `workspace` also calls with its site.
pub(crate) async fn site_accounts(ctx: &Context<'_>, site_id: i64, args: ListArgs) -> AppResult<AccountConnection> {
    let ListArgs { range, filter, sort, first, after, page } = args;
    // As the visitor list does, a page size past the limit is capped.
    let limit = first.map_or(50, |n| u64::try_from(n).unwrap_or(1).clamp(1, accounts::MAX_LIMIT));
    let offset = match (page, after) {
        (Some(page), _) if page < 1 => return Err(AppError::validation("page", "must be at least 1")),
        (Some(page), _) => (page as u64 - 1).saturating_mul(limit),
        (None, Some(cursor)) => usize::decode_cursor(&cursor)
            .map(|position| position as u64 + 1)
            .map_err(|_| AppError::validation("after", "is not a cursor of this list"))?,
        (None, None) => 0,
    };
    let query = AccountQuery {
        site_id,
        range: TimeRange::parse(Some(range.as_deref().unwrap_or("30d")), true)
            .map_err(|err| err.renamed("range".to_owned()))?,
        search: filter.search,
        sort: AccountSort::parse(sort.as_deref())?,
        hot: filter.hot.unwrap_or(false),
        excluded: filter.excluded.unwrap_or(false),
        limit,
        offset,
    };
    let page = accounts::list(&*ctx.db().await?, ctx.viewer()?, query, now_ms()).await?;
    let offset = offset as usize;
    let shown = page.accounts.len();
    let mut connection = Connection::with_additional_fields(
        offset > 0,
        offset + shown < page.total as usize,
        AccountListFields { total: page.total },
    );
    let site_id = page.site.id;
    connection.edges.extend(
        page.accounts.into_iter().enumerate().map(|(i, account)| Edge::new(offset + i, Account::new(site_id, account))),
    );
    Ok(connection)
}

/// `account` as a function, which `workspace` also calls with its site.
pub(crate) async fn site_account(ctx: &Context<'_>, site_id: i64, key: &str) -> AppResult<Account> {
    let (site, account) = accounts::one(&*ctx.db().await?, ctx.viewer()?, site_id, key, now_ms()).await?;
    Ok(Account::new(site.id, account))
}
