//! What a digest says about one site and period, read as the pages read it:
//! traffic and the top sources and campaigns are Explore queries (the same
//! answers as the explorer for the same days), the people come from the
//! visitor and identity rows.

use std::collections::HashSet;

use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use serde_json::{Value, json};

use entity::{identity, site, visitor};

use super::schedule::Period;
use crate::{
    auth::Viewer,
    email::templates::{Change, Named, Ranked},
    error::AppResult,
    service::{
        accounts::{self, AccountQuery, AccountSort},
        analytics::{TimeRange, profile},
        explore, people,
    },
};

/// Rows each list of a digest shows at most.
pub const LIST_ROWS: usize = 5;

/// A digest's figures.
pub struct Figures {
    pub changes: Vec<Change>,
    pub hot_leads: Vec<Named>,
    pub hot_accounts: Vec<Named>,
    pub identified: Vec<Named>,
    pub sources: Vec<Ranked>,
    pub campaigns: Vec<Ranked>,
}

fn dates(period: &Period) -> Value {
    json!([period.start.to_string(), period.last_day().to_string()])
}

fn count(value: Option<&Value>) -> u64 {
    value.and_then(Value::as_u64).unwrap_or(0)
}

/// Visitors and pageviews of the period, as Explore answers them.
async fn traffic(
    db: &DatabaseConnection,
    viewer: &Viewer,
    site: &site::Model,
    period: &Period,
    now: i64,
) -> AppResult<(u64, u64)> {
    let body = json!({ "site_id": site.id, "metrics": ["visitors", "pageviews"], "date_range": dates(period) });
    let answer = explore::run(db, viewer, Some(site.id), &body, (now, None)).await?;
    let row = answer.results.first();
    Ok((count(row.and_then(|row| row.metrics.first())), count(row.and_then(|row| row.metrics.get(1)))))
}

/// The top values of a visit dimension by visitors, as Explore answers them.
async fn top(
    db: &DatabaseConnection,
    viewer: &Viewer,
    site: &site::Model,
    period: &Period,
    dimension: &str,
    now: i64,
) -> AppResult<Vec<Ranked>> {
    let body = json!({
        "site_id": site.id, "metrics": ["visitors"], "dimensions": [dimension], "date_range": dates(period),
        "order_by": [["visitors", "desc"]], "pagination": { "limit": LIST_ROWS },
    });
    let answer = explore::run(db, viewer, Some(site.id), &body, (now, None)).await?;
    Ok(answer
        .results
        .iter()
        .filter_map(|row| {
            let name = row.dimensions.first()?.as_str()?.to_owned();
            Some(Ranked { name, visitors: count(row.metrics.first()) })
        })
        .collect())
}

/// Start and end of a period in UTC milliseconds.
fn bounds(site: &site::Model, period: &Period) -> (i64, i64) {
    use chrono::TimeZone;
    let zone = crate::service::sites::timezone(site);
    let at = |day: chrono::NaiveDate| {
        day.and_hms_opt(0, 0, 0)
            .and_then(|midnight| zone.from_local_datetime(&midnight).earliest())
            .map_or(0, |at| at.timestamp_millis())
    };
    (at(period.start), at(period.end))
}

fn visitor_link(base: &str, tracker_vid: &str) -> String {
    format!("{base}/visitor/{}", url::form_urlencoded::byte_serialize(tracker_vid.as_bytes()).collect::<String>())
}

/// Hot leads first seen in the period (score at the site's hot threshold or
/// above, bots left out), the highest scores first.
async fn new_hot_leads(
    db: &DatabaseConnection,
    site: &site::Model,
    (start, end): (i64, i64),
    base: &str,
) -> AppResult<Vec<Named>> {
    let found = visitor::Entity::find()
        .filter(visitor::Column::SiteId.eq(site.id))
        .filter(visitor::Column::IsBot.eq(false))
        .filter(visitor::Column::Score.gte(site.hot_threshold))
        .filter(visitor::Column::FirstSeen.gte(start))
        .filter(visitor::Column::FirstSeen.lt(end))
        .order_by_desc(visitor::Column::Score)
        .order_by_asc(visitor::Column::Id)
        .limit(LIST_ROWS as u64)
        .all(db)
        .await?;
    named(db, found, base, |visitor| format!("score {}", visitor.score)).await
}

/// People identified during the period, the latest first.
async fn newly_identified(
    db: &DatabaseConnection,
    site: &site::Model,
    (start, end): (i64, i64),
    base: &str,
) -> AppResult<Vec<Named>> {
    let rows: Vec<i64> = identity::Entity::find()
        .select_only()
        .column(identity::Column::VisitorId)
        .filter(identity::Column::SiteId.eq(site.id))
        .filter(identity::Column::IdentifiedAt.gte(start))
        .filter(identity::Column::IdentifiedAt.lt(end))
        .order_by_desc(identity::Column::IdentifiedAt)
        .into_tuple()
        .all(db)
        .await?;
    let mut seen = HashSet::new();
    let ids: Vec<i64> = rows.into_iter().filter(|id| seen.insert(*id)).take(LIST_ROWS).collect();
    let mut found = visitor::Entity::find().filter(visitor::Column::Id.is_in(ids.clone())).all(db).await?;
    found.sort_by_key(|visitor| ids.iter().position(|id| *id == visitor.id));
    named(db, found, base, |_| String::new()).await
}

/// Visitors as a digest names them: the person's name and company.
async fn named(
    db: &DatabaseConnection,
    found: Vec<visitor::Model>,
    base: &str,
    extra: impl Fn(&visitor::Model) -> String,
) -> AppResult<Vec<Named>> {
    let ids: Vec<i64> = found.iter().map(|visitor| visitor.id).collect();
    let identities = profile::identities_of_visitors(db, &ids).await?;
    Ok(found
        .iter()
        .map(|visitor| {
            let person = people::of_visitor(visitor, identities.get(&visitor.id).map_or(&[], Vec::as_slice));
            let detail = [person.company.unwrap_or_default(), extra(visitor)]
                .into_iter()
                .filter(|part| !part.is_empty())
                .collect::<Vec<_>>()
                .join(", ");
            Named { name: person.display_name, detail, link: visitor_link(base, &visitor.tracker_vid) }
        })
        .collect())
}

/// Hot accounts first seen in the period, as the accounts page ranks them.
async fn new_hot_accounts(
    db: &DatabaseConnection,
    viewer: &Viewer,
    site: &site::Model,
    (start, end): (i64, i64),
    base: &str,
    now: i64,
) -> AppResult<Vec<Named>> {
    let query = AccountQuery {
        site_id: site.id,
        range: TimeRange::All,
        search: None,
        sort: AccountSort::Score,
        hot: true,
        excluded: false,
        limit: accounts::MAX_LIMIT,
        offset: 0,
    };
    let page = accounts::list(db, viewer, query, now).await?;
    Ok(page
        .accounts
        .into_iter()
        .filter(|account| (start..end).contains(&account.first_seen))
        .take(LIST_ROWS)
        .map(|account| Named {
            detail: match account.figures.people {
                1 => format!("score {}, 1 person", account.score),
                people => format!("score {}, {people} people", account.score),
            },
            link: format!(
                "{base}/accounts/{}",
                url::form_urlencoded::byte_serialize(account.key.as_bytes()).collect::<String>()
            ),
            name: account.name,
        })
        .collect())
}

/// Everything a digest of `site` for `period` shows, read as `viewer`.
pub async fn read(
    db: &DatabaseConnection,
    viewer: &Viewer,
    site: &site::Model,
    period: &Period,
    previous: &Period,
    base: &str,
    now: i64,
) -> AppResult<Figures> {
    let (visitors, pageviews) = traffic(db, viewer, site, period, now).await?;
    let (visitors_before, pageviews_before) = traffic(db, viewer, site, previous, now).await?;
    let span = bounds(site, period);
    Ok(Figures {
        changes: vec![
            Change { label: "Visitors", now: visitors, before: visitors_before },
            Change { label: "Pageviews", now: pageviews, before: pageviews_before },
        ],
        hot_leads: new_hot_leads(db, site, span, base).await?,
        hot_accounts: new_hot_accounts(db, viewer, site, span, base, now).await?,
        identified: newly_identified(db, site, span, base).await?,
        sources: top(db, viewer, site, period, "visit:source", now).await?,
        campaigns: top(db, viewer, site, period, "visit:utm_campaign", now).await?,
    })
}
