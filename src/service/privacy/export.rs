//! Access (GDPR article 15): every stored fact about a visitor as one JSON
//! document: `{"visitor": {...}, "identities": [...], "sessions": [...],
//! "events": [...], "clicks": [...], "conversions": [...]}`, rows as stored (times in epoch
//! milliseconds). It is written as a stream, a page of rows at a time, so a
//! visitor with a hundred thousand events never sits in memory whole.

use axum::body::Bytes;
use futures_util::{Stream, stream};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use serde::Serialize;

use entity::{conversion, event, identity, link_click, tracked_session, visitor};

use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    service::access,
};

/// Rows read per query while streaming.
const PAGE: u64 = 1_000;

/// The lists of the document, in order.
#[derive(Clone, Copy)]
enum Section {
    Identities,
    Sessions,
    Events,
    Clicks,
    Conversions,
}

impl Section {
    const ALL: [Section; 5] =
        [Section::Identities, Section::Sessions, Section::Events, Section::Clicks, Section::Conversions];

    fn key(self) -> &'static str {
        match self {
            Section::Identities => "identities",
            Section::Sessions => "sessions",
            Section::Events => "events",
            Section::Clicks => "clicks",
            Section::Conversions => "conversions",
        }
    }
}

/// Where the stream is: which section, and the last row id written in it.
struct Cursor {
    db: DatabaseConnection,
    visitor: visitor::Model,
    section: usize,
    after: i64,
    started: bool,
}

/// Checks access (admins) and finds the visitor before anything is sent, so a
/// refusal is an ordinary error answer; then streams the document.
pub async fn export_visitor(
    db: DatabaseConnection,
    viewer: &Viewer,
    site_id: i64,
    tracker_vid: &str,
) -> AppResult<impl Stream<Item = AppResult<Bytes>> + Send + 'static> {
    let (site, _) = access::site(&db, viewer, site_id, Role::Admin).await?;
    let found = visitor::Entity::find()
        .filter(visitor::Column::SiteId.eq(site.id))
        .filter(visitor::Column::TrackerVid.eq(tracker_vid))
        .one(&db)
        .await?
        .ok_or_else(|| AppError::not_found("visitor"))?;
    let cursor = Cursor { db, visitor: found, section: 0, after: 0, started: false };
    Ok(stream::unfold(Some(cursor), |cursor| async move {
        let mut cursor = cursor?;
        match next_chunk(&mut cursor).await {
            Ok(Some(chunk)) => Some((Ok(chunk), Some(cursor))),
            Ok(None) => None,
            Err(err) => Some((Err(err), None)),
        }
    }))
}

/// The next piece of the document, or None when it is complete.
async fn next_chunk(cursor: &mut Cursor) -> AppResult<Option<Bytes>> {
    if !cursor.started {
        cursor.started = true;
        let visitor = serde_json::to_string(&cursor.visitor).map_err(AppError::internal)?;
        return Ok(Some(Bytes::from(format!("{{\"visitor\":{visitor},\"{}\":[", Section::ALL[0].key()))));
    }
    let Some(&section) = Section::ALL.get(cursor.section) else {
        return Ok(None);
    };
    let (rows, last) = page(&cursor.db, section, cursor.visitor.id, cursor.after).await?;
    if rows.is_empty() {
        cursor.section += 1;
        cursor.after = 0;
        let tail = match Section::ALL.get(cursor.section) {
            Some(next) => format!("],\"{}\":[", next.key()),
            None => "]}".to_owned(),
        };
        return Ok(Some(Bytes::from(tail)));
    }
    let mut chunk = String::new();
    for row in rows {
        if cursor.after != 0 || !chunk.is_empty() {
            chunk.push(',');
        }
        chunk.push_str(&row);
    }
    cursor.after = last;
    Ok(Some(Bytes::from(chunk)))
}

/// One page of a section after row id `after`: the rows as JSON, and the last id.
async fn page(db: &DatabaseConnection, section: Section, visitor_id: i64, after: i64) -> AppResult<(Vec<String>, i64)> {
    fn encode<T: Serialize>(rows: Vec<T>, id: impl Fn(&T) -> i64) -> AppResult<(Vec<String>, i64)> {
        let last = rows.last().map(&id).unwrap_or_default();
        let rows = rows.iter().map(serde_json::to_string).collect::<Result<_, _>>().map_err(AppError::internal)?;
        Ok((rows, last))
    }
    match section {
        Section::Identities => encode(
            identity::Entity::find()
                .filter(identity::Column::VisitorId.eq(visitor_id))
                .filter(identity::Column::Id.gt(after))
                .order_by_asc(identity::Column::Id)
                .limit(PAGE)
                .all(db)
                .await?,
            |row| row.id,
        ),
        Section::Sessions => encode(
            tracked_session::Entity::find()
                .filter(tracked_session::Column::VisitorId.eq(visitor_id))
                .filter(tracked_session::Column::Id.gt(after))
                .order_by_asc(tracked_session::Column::Id)
                .limit(PAGE)
                .all(db)
                .await?,
            |row| row.id,
        ),
        Section::Events => encode(
            event::Entity::find()
                .filter(event::Column::VisitorId.eq(visitor_id))
                .filter(event::Column::Id.gt(after))
                .order_by_asc(event::Column::Id)
                .limit(PAGE)
                .all(db)
                .await?,
            |row| row.id,
        ),
        Section::Clicks => encode(
            link_click::Entity::find()
                .filter(link_click::Column::VisitorId.eq(visitor_id))
                .filter(link_click::Column::Id.gt(after))
                .order_by_asc(link_click::Column::Id)
                .limit(PAGE)
                .all(db)
                .await?,
            |row| row.id,
        ),
        Section::Conversions => encode(
            conversion::Entity::find()
                .filter(conversion::Column::VisitorId.eq(visitor_id))
                .filter(conversion::Column::Id.gt(after))
                .order_by_asc(conversion::Column::Id)
                .limit(PAGE)
                .all(db)
                .await?,
            |row| row.id,
        ),
    }
}
