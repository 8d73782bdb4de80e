//! The parts of a visitor profile. The batch functions take the ids of
//! visitors or sessions that a scoped finder already returned; the GraphQL
//! loaders call them once per request for every id asked for.

use std::collections::HashMap;

use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::{Expr, ExprTrait},
};

use entity::{event, identity, link_click, tracked_session};

use crate::{error::AppResult, service::IN_LIST_CHUNK, time::DAY_MS};

/// Events in `recent_events`.
pub const RECENT_EVENTS: u64 = 50;
/// Rows in `top_pages`.
pub const TOP_PAGES: u64 = 10;
/// Form submissions listed.
pub const FORM_EVENTS: u64 = 100;
pub const FORM_SUBMIT: &str = "form_submit";

/// Groups rows by a key, keeping their order.
fn group<T>(rows: Vec<T>, key: impl Fn(&T) -> i64) -> HashMap<i64, Vec<T>> {
    let mut grouped: HashMap<i64, Vec<T>> = HashMap::new();
    for row in rows {
        grouped.entry(key(&row)).or_default().push(row);
    }
    grouped
}

/// Every session of each visitor, newest first.
pub async fn sessions_of_visitors(
    db: &impl ConnectionTrait,
    visitor_ids: &[i64],
) -> AppResult<HashMap<i64, Vec<tracked_session::Model>>> {
    let mut rows = Vec::new();
    for chunk in visitor_ids.chunks(IN_LIST_CHUNK) {
        rows.extend(
            tracked_session::Entity::find()
                .filter(tracked_session::Column::VisitorId.is_in(chunk.iter().copied()))
                .order_by_desc(tracked_session::Column::StartedAt)
                .order_by_desc(tracked_session::Column::Id)
                .all(db)
                .await?,
        );
    }
    Ok(group(rows, |s| s.visitor_id))
}

/// Every stored event of each session, in the order they happened.
pub async fn events_of_sessions(
    db: &impl ConnectionTrait,
    session_ids: &[i64],
) -> AppResult<HashMap<i64, Vec<event::Model>>> {
    let mut rows = Vec::new();
    for chunk in session_ids.chunks(IN_LIST_CHUNK) {
        rows.extend(
            event::Entity::find()
                .filter(event::Column::SessionId.is_in(chunk.iter().copied()))
                .order_by_asc(event::Column::Timestamp)
                .order_by_asc(event::Column::Id)
                .all(db)
                .await?,
        );
    }
    Ok(group(rows, |e| e.session_id))
}

/// Every identify call of each visitor, newest first.
pub async fn identities_of_visitors(
    db: &impl ConnectionTrait,
    visitor_ids: &[i64],
) -> AppResult<HashMap<i64, Vec<identity::Model>>> {
    let mut rows = Vec::new();
    for chunk in visitor_ids.chunks(IN_LIST_CHUNK) {
        rows.extend(
            identity::Entity::find()
                .filter(identity::Column::VisitorId.is_in(chunk.iter().copied()))
                .order_by_desc(identity::Column::IdentifiedAt)
                .order_by_desc(identity::Column::Id)
                .all(db)
                .await?,
        );
    }
    Ok(group(rows, |i| i.visitor_id))
}

/// The tracking-link clicks tied to each visitor, newest first.
pub async fn clicks_of_visitors(
    db: &impl ConnectionTrait,
    visitor_ids: &[i64],
) -> AppResult<HashMap<i64, Vec<link_click::Model>>> {
    let mut rows = Vec::new();
    for chunk in visitor_ids.chunks(IN_LIST_CHUNK) {
        rows.extend(
            link_click::Entity::find()
                .filter(link_click::Column::VisitorId.is_in(chunk.iter().copied()))
                .order_by_desc(link_click::Column::CreatedAt)
                .order_by_desc(link_click::Column::Id)
                .all(db)
                .await?,
        );
    }
    Ok(group(rows, |c| c.visitor_id.unwrap_or_default()))
}

/// The visitor's latest events, newest first.
pub async fn recent_events(db: &impl ConnectionTrait, visitor_id: i64) -> AppResult<Vec<event::Model>> {
    Ok(event::Entity::find()
        .filter(event::Column::VisitorId.eq(visitor_id))
        .order_by_desc(event::Column::Timestamp)
        .order_by_desc(event::Column::Id)
        .limit(RECENT_EVENTS)
        .all(db)
        .await?)
}

/// The visitor's form submissions, newest first.
pub async fn form_events(db: &impl ConnectionTrait, visitor_id: i64) -> AppResult<Vec<event::Model>> {
    Ok(event::Entity::find()
        .filter(event::Column::VisitorId.eq(visitor_id))
        .filter(event::Column::EventType.eq("custom_event"))
        .filter(event::Column::EventName.eq(FORM_SUBMIT))
        .order_by_desc(event::Column::Timestamp)
        .order_by_desc(event::Column::Id)
        .limit(FORM_EVENTS)
        .all(db)
        .await?)
}

/// The visitor's most viewed pages.
pub async fn top_pages(db: &impl ConnectionTrait, visitor_id: i64) -> AppResult<Vec<(String, i64)>> {
    Ok(event::Entity::find()
        .filter(event::Column::VisitorId.eq(visitor_id))
        .filter(event::Column::EventType.eq("pageview"))
        .select_only()
        .column(event::Column::Page)
        .column_as(event::Column::Id.count(), "views")
        .group_by(event::Column::Page)
        .order_by_desc(Expr::col("views"))
        .order_by_asc(event::Column::Page)
        .limit(TOP_PAGES)
        .into_tuple()
        .all(db)
        .await?)
}

/// Events per UTC day, for the days the visitor was active, oldest first.
pub async fn daily_activity(db: &impl ConnectionTrait, visitor_id: i64) -> AppResult<Vec<(String, i64)>> {
    // A literal divisor: PostgreSQL must see the same expression in SELECT and GROUP BY.
    let day = Expr::col(event::Column::Timestamp).div(Expr::cust(DAY_MS.to_string()));
    let days: Vec<(i64, i64)> = event::Entity::find()
        .filter(event::Column::VisitorId.eq(visitor_id))
        .select_only()
        .column_as(day.clone(), "day")
        .column_as(event::Column::Id.count(), "events")
        .group_by(day)
        .order_by_asc(Expr::col("day"))
        .into_tuple()
        .all(db)
        .await?;
    Ok(days.into_iter().map(|(day, events)| (crate::time::date(day * DAY_MS), events)).collect())
}

/// Gravatar's address for an email: the md5 of the trimmed, lower-cased
/// email, with an identicon for addresses Gravatar does not know.
pub fn gravatar_url(email: &str) -> String {
    use md5::{Digest, Md5};
    let digest = Md5::digest(email.trim().to_lowercase().as_bytes());
    format!("https://www.gravatar.com/avatar/{digest:x}?d=identicon")
}

#[cfg(test)]
mod tests {
    #[test]
    fn gravatar_hashes_the_trimmed_lower_cased_email() {
        let expected = "https://www.gravatar.com/avatar/0bc83cb571cd1c50ba6f3e8a78ef1346?d=identicon";
        for email in ["myemailaddress@example.com", " MyEmailAddress@example.com ", "MYEMAILADDRESS@EXAMPLE.COM"] {
            assert_eq!(super::gravatar_url(email), expected, "{email}");
        }
    }
}
