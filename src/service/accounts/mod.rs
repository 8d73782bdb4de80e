//! Accounts (design §18): the companies behind a site's visitors, read from
//! the rows the batch writer keeps (`accounts`), folded with what admins
//! decided (`account_settings`); and those decisions: rename, exclude, link
//! a network to a domain.

pub mod fold;
pub mod score;

use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter,
    sea_query::OnConflict,
};

use entity::{account, account_setting, site};

pub use fold::{Account, home_key, member_keys};

use super::{access, analytics::TimeRange};
use crate::{
    auth::{Role, Viewer},
    enrich::account::web_domain,
    error::{AppError, AppResult},
    time::now_ms,
};

/// The longest key or search text taken.
pub const MAX_KEY_LEN: usize = 200;
/// The longest name an admin may give an account.
pub const MAX_NAME_LEN: usize = 100;
/// Accounts per page at most.
pub const MAX_LIMIT: u64 = 200;

/// How the list is ordered; ties go to the most recently seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountSort {
    Score,
    LastSeen,
    People,
    Visitors,
    Pageviews,
}

impl AccountSort {
    pub const NAMES: [&'static str; 5] = ["score", "last_seen", "people", "visitors", "pageviews"];

    pub fn parse(value: Option<&str>) -> AppResult<Self> {
        match value.map(str::trim).filter(|v| !v.is_empty()).unwrap_or("score") {
            "score" => Ok(Self::Score),
            "last_seen" => Ok(Self::LastSeen),
            "people" => Ok(Self::People),
            "visitors" => Ok(Self::Visitors),
            "pageviews" => Ok(Self::Pageviews),
            _ => Err(AppError::validation("sort", format!("must be one of {}", Self::NAMES.join(", ")))),
        }
    }

    fn key(self, account: &Account) -> i64 {
        match self {
            Self::Score => i64::from(account.score),
            Self::LastSeen => account.figures.last_seen,
            Self::People => account.figures.people,
            Self::Visitors => account.figures.visitors,
            Self::Pageviews => account.figures.pageviews,
        }
    }
}

/// What the accounts list is asked for.
#[derive(Debug, Clone)]
pub struct AccountQuery {
    pub site_id: i64,
    pub range: TimeRange,
    /// Part of a name or key, any case.
    pub search: Option<String>,
    pub sort: AccountSort,
    /// Only accounts at or above the site's hot threshold.
    pub hot: bool,
    /// The excluded accounts instead of the others.
    pub excluded: bool,
    pub limit: u64,
    pub offset: u64,
}

impl AccountQuery {
    /// Checks the search text and the page size.
    pub fn checked(mut self) -> AppResult<Self> {
        self.search = self.search.map(|text| text.trim().to_lowercase()).filter(|text| !text.is_empty());
        if self.search.as_ref().is_some_and(|text| text.chars().count() > MAX_KEY_LEN) {
            return Err(AppError::validation("search", format!("must be at most {MAX_KEY_LEN} characters")));
        }
        if self.limit == 0 || self.limit > MAX_LIMIT {
            return Err(AppError::validation("first", format!("must be between 1 and {MAX_LIMIT}")));
        }
        Ok(self)
    }
}

pub struct AccountPage {
    pub site: site::Model,
    pub accounts: Vec<Account>,
    /// Every account that matches, not only this page's.
    pub total: u64,
}

async fn settings_of(db: &impl ConnectionTrait, site_id: i64) -> AppResult<Vec<account_setting::Model>> {
    Ok(account_setting::Entity::find().filter(account_setting::Column::SiteId.eq(site_id)).all(db).await?)
}

/// The site's accounts seen in the range, ranked.
pub async fn list(db: &impl ConnectionTrait, viewer: &Viewer, query: AccountQuery, now: i64) -> AppResult<AccountPage> {
    let query = query.checked()?;
    let (site, _) = access::site(db, viewer, query.site_id, Role::Viewer).await?;
    let settings = settings_of(db, site.id).await?;
    let start = query.range.start(now);
    let mut rows = account::Entity::find().filter(account::Column::SiteId.eq(site.id));
    if let Some(start) = start {
        // Rows seen in the range, and every row of an account that links
        // networks, so a folded account's figures are whole.
        let linked: Vec<String> = settings
            .iter()
            .filter_map(|setting| setting.merged_into.clone().map(|home| [home, setting.account_key.clone()]))
            .flatten()
            .collect();
        rows = rows.filter(
            Condition::any().add(account::Column::LastSeen.gte(start)).add(account::Column::AccountKey.is_in(linked)),
        );
    }
    let mut accounts: Vec<Account> = fold::fold(rows.all(db).await?, &settings, site.hot_threshold, now)
        .into_iter()
        .filter(|account| start.is_none_or(|start| account.figures.last_seen >= start))
        .filter(|account| account.excluded == query.excluded)
        .filter(|account| !query.hot || account.hot)
        .filter(|account| {
            query.search.as_ref().is_none_or(|text| {
                account.name.to_lowercase().contains(text.as_str()) || account.key.contains(text.as_str())
            })
        })
        .collect();
    accounts.sort_by(|a, b| {
        (query.sort.key(b), b.figures.last_seen, &a.key).cmp(&(query.sort.key(a), a.figures.last_seen, &b.key))
    });
    let total = accounts.len() as u64;
    let accounts = accounts.into_iter().skip(query.offset as usize).take(query.limit as usize).collect();
    Ok(AccountPage { site, accounts, total })
}

/// One account of a site the viewer can read, by its key; a network linked
/// to a domain answers as that domain's account.
pub async fn one(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    key: &str,
    now: i64,
) -> AppResult<(site::Model, Account)> {
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    let key = key.trim().to_lowercase();
    if key.is_empty() || key.chars().count() > MAX_KEY_LEN {
        return Err(AppError::not_found("account"));
    }
    let settings = settings_of(db, site.id).await?;
    let home = home_key(&key, &settings).to_owned();
    let rows = account::Entity::find()
        .filter(account::Column::SiteId.eq(site.id))
        .filter(account::Column::AccountKey.is_in(member_keys(&home, &settings)))
        .all(db)
        .await?;
    let account = fold::fold(rows, &settings, site.hot_threshold, now)
        .into_iter()
        .find(|account| account.key == home)
        .ok_or_else(|| AppError::not_found("account"))?;
    Ok((site, account))
}

/// The keys whose visitors belong to `key`'s account on a site (itself and
/// the networks linked to it), for the leads list's `account` filter.
pub async fn visitor_keys(db: &impl ConnectionTrait, site_id: i64, key: &str) -> AppResult<Vec<String>> {
    let settings = settings_of(db, site_id).await?;
    Ok(member_keys(home_key(key, &settings), &settings))
}

/// What an admin changes about an account; `None` leaves a part as it is.
#[derive(Debug, Default)]
pub struct AccountChanges {
    /// Empty text gives the account its own name back.
    pub name: Option<String>,
    pub excluded: Option<bool>,
    /// For a network: the domain it belongs to; empty text unlinks it.
    pub link_to: Option<String>,
}

/// Changes an account of a site the viewer administers and answers it as
/// the list shows it. Linking takes a network (`asn:<number>`) and a web
/// domain; the network's visitors then count in that domain's account.
pub async fn change(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    key: &str,
    changes: AccountChanges,
) -> AppResult<(site::Model, Account)> {
    let (site, _) = access::site(db, viewer, site_id, Role::Admin).await?;
    let key = key.trim().to_lowercase();
    let known = account::Entity::find()
        .filter(account::Column::SiteId.eq(site.id))
        .filter(account::Column::AccountKey.eq(key.as_str()))
        .one(db)
        .await?;
    let existing = account_setting::Entity::find()
        .filter(account_setting::Column::SiteId.eq(site.id))
        .filter(account_setting::Column::AccountKey.eq(key.as_str()))
        .one(db)
        .await?;
    if known.is_none() && existing.is_none() {
        return Err(AppError::not_found("account"));
    }
    let display_name = match changes.name {
        None => existing.as_ref().and_then(|setting| setting.display_name.clone()),
        Some(name) => {
            let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
            if name.chars().count() > MAX_NAME_LEN || name.chars().any(char::is_control) {
                return Err(AppError::validation("name", format!("must be at most {MAX_NAME_LEN} characters")));
            }
            (!name.is_empty()).then_some(name)
        }
    };
    let merged_into = match changes.link_to {
        None => existing.as_ref().and_then(|setting| setting.merged_into.clone()),
        Some(domain) if domain.trim().is_empty() => None,
        Some(domain) => {
            if !key.starts_with("asn:") {
                return Err(AppError::validation("linkTo", "only a network (asn:<number>) can be linked to a domain"));
            }
            Some(
                web_domain(&domain)
                    .ok_or_else(|| AppError::validation("linkTo", "must be a web domain such as acme.com"))?,
            )
        }
    };
    let excluded = changes.excluded.unwrap_or_else(|| existing.as_ref().is_some_and(|setting| setting.excluded));
    let row = account_setting::ActiveModel {
        id: NotSet,
        site_id: Set(site.id),
        account_key: Set(key.clone()),
        display_name: Set(display_name),
        excluded: Set(excluded),
        merged_into: Set(merged_into),
        updated_at: Set(now_ms()),
    };
    account_setting::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([account_setting::Column::SiteId, account_setting::Column::AccountKey])
                .update_columns([
                    account_setting::Column::DisplayName,
                    account_setting::Column::Excluded,
                    account_setting::Column::MergedInto,
                    account_setting::Column::UpdatedAt,
                ])
                .to_owned(),
        )
        .exec(db)
        .await?;
    let settings = settings_of(db, site.id).await?;
    let home = home_key(&key, &settings).to_owned();
    one(db, viewer, site.id, &home, now_ms()).await
}
