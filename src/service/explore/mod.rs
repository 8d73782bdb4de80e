//! Explore (design §17): every aggregate a marketer asks for as one query
//! model, Plausible's Stats API v2. `query` reads the body, `range` places
//! the dates in the site's time zone, `figures` counts over the raw rows
//! (exact by construction), and `answer` turns counts into metrics, orders,
//! pages and compares them.

mod active_hours;
mod answer;
mod breakdowns;
mod click_days;
mod conversion;
mod counts;
pub mod dashboard;
pub mod figures;
mod frame;
pub mod query;
pub mod range;
mod revenue;
mod rolled_rows;
mod rollups;
pub mod sql;
mod statements;
mod taken;
pub mod visit_copy;
mod visits;

use std::sync::Arc;

use sea_orm::DatabaseConnection;
use serde_json::Value;

use entity::site;

pub use answer::{Answer, Comparison, Row};
use query::SiteRef;
use visit_copy::VisitCopies;

use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    service::{access, analytics::snapshot, sites},
};

/// The site a query names: `site_id` (from the path or GraphQL argument)
/// wins over the body's `site_id`, which may be a domain or an id.
async fn site_of(
    db: &DatabaseConnection,
    viewer: &Viewer,
    given: Option<i64>,
    named: Option<&SiteRef>,
) -> AppResult<site::Model> {
    let id = match (given, named) {
        (Some(id), _) => id,
        (None, Some(SiteRef::Id(id))) => *id,
        (None, Some(SiteRef::Domain(domain))) => {
            let readable = access::sites(db, viewer).await?;
            let found = readable.into_iter().find(|site| site.domain.eq_ignore_ascii_case(domain));
            return found.ok_or_else(|| AppError::not_found("site"));
        }
        (None, None) => return Err(AppError::validation("site_id", "is required: the site's domain or id")),
    };
    Ok(access::site(db, viewer, id, Role::Viewer).await?.0)
}

/// Answers a query body for the viewer, on one consistent snapshot.
pub async fn run(
    db: &DatabaseConnection,
    viewer: &Viewer,
    site_id: Option<i64>,
    body: &Value,
    (now, copies): (i64, Option<Arc<VisitCopies>>),
) -> AppResult<Answer> {
    let query = query::parse(body)?;
    let site = site_of(db, viewer, site_id, query.site.as_ref()).await?;
    let zone = sites::timezone(&site);
    let txn = snapshot(db).await?;
    let filters = body.get("filters").filter(|filters| filters.is_array()).cloned().unwrap_or(Value::Array(Vec::new()));
    let taken = taken::Taken::of(copies);
    let answer =
        answer::build(&txn, &site, zone, &query, now, &filters, answer::Known::default().sharing(&taken)).await;
    txn.commit().await?;
    answer
}
