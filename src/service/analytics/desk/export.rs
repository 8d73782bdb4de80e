//! Every row the desk's query selects, as CSV, streamed: a chunk of rows is
//! read, written and sent before the next is read (keyset, so each chunk
//! starts where the last ended), so memory stays flat however many match.
//! A cell a spreadsheet would take for a formula is neutralised.

use axum::body::Bytes;
use futures_util::{Stream, stream};
use sea_orm::{DatabaseConnection, QuerySelect, Select};

use entity::visitor;

use super::{query::DeskQuery, select};
use crate::{
    auth::Viewer,
    enrich::geo::country_name,
    error::{AppError, AppResult},
    service::{analytics::profile, people},
    time::iso,
};

/// Rows read per statement.
const CHUNK: u64 = 1_000;

/// The header row, in column order.
pub const CSV_COLUMNS: [&str; 20] = [
    "person",
    "email",
    "company",
    "account",
    "score",
    "hot",
    "status",
    "channel",
    "campaign",
    "last_page",
    "city",
    "country",
    "sessions",
    "pageviews",
    "time_seconds",
    "first_seen",
    "last_seen",
    "visitor_id",
    "user_id",
    "profile_url",
];

/// Where the stream is.
struct Cursor {
    db: DatabaseConnection,
    select: Select<visitor::Entity>,
    query: DeskQuery,
    now: i64,
    hot_threshold: i32,
    profile_base: String,
    last: Option<visitor::Model>,
    header_sent: bool,
}

/// Checks access and the query before anything is sent, so a refusal is an
/// ordinary error answer; then streams the CSV. `base_url` makes each row's
/// link to its profile page.
pub async fn export(
    db: DatabaseConnection,
    viewer: &Viewer,
    query: DeskQuery,
    now: i64,
    base_url: &str,
) -> AppResult<impl Stream<Item = AppResult<Bytes>> + Send + 'static> {
    let filtered = select::filtered(&db, viewer, &query, now).await?;
    let cursor = Cursor {
        db,
        select: filtered.select(now, false),
        now,
        hot_threshold: filtered.site.hot_threshold,
        profile_base: format!("{}/visitor/", base_url.trim_end_matches('/')),
        query,
        last: None,
        header_sent: false,
    };
    Ok(stream::unfold(Some(cursor), |cursor| async move {
        let mut cursor = cursor?;
        match next_chunk(&mut cursor).await {
            Ok(Some(chunk)) => Some((Ok(chunk), Some(cursor))),
            Ok(None) => None,
            Err(err) => {
                tracing::error!(error = %err.message, "the desk export stopped");
                Some((Err(err), None))
            }
        }
    }))
}

/// The next piece of the file, or None when every row is written.
async fn next_chunk(cursor: &mut Cursor) -> AppResult<Option<Bytes>> {
    let mut out = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    if !cursor.header_sent {
        cursor.header_sent = true;
        out.write_record(CSV_COLUMNS).map_err(AppError::internal)?;
    }
    let select = match &cursor.last {
        Some(last) => select::after(cursor.select.clone(), &cursor.query, cursor.now, last),
        None => cursor.select.clone(),
    };
    let rows = select::ordered(select, &cursor.query, cursor.now).limit(CHUNK).all(&cursor.db).await?;
    let Some(last) = rows.last().cloned() else {
        let bytes = out.into_inner().map_err(|err| AppError::internal(err.to_string()))?;
        return Ok((!bytes.is_empty()).then(|| Bytes::from(bytes)));
    };
    let ids: Vec<i64> = rows.iter().map(|v| v.id).collect();
    let identities = profile::identities_of_visitors(&cursor.db, &ids).await?;
    for row in &rows {
        let known = identities.get(&row.id).map(Vec::as_slice).unwrap_or_default();
        let person = people::of_visitor(row, known);
        let email = row.email.clone().or_else(|| known.iter().find_map(|i| i.email.clone()));
        let score = crate::service::scoring::total(row.score, row.last_seen, cursor.now);
        let profile = format!(
            "{}{}?site={}",
            cursor.profile_base,
            url::form_urlencoded::byte_serialize(row.tracker_vid.as_bytes()).collect::<String>(),
            row.site_id
        );
        let cells = [
            person.display_name,
            email.unwrap_or_default(),
            person.company.unwrap_or_default(),
            row.account_key.clone().unwrap_or_default(),
            score.to_string(),
            (score >= cursor.hot_threshold).to_string(),
            row.status.clone(),
            row.last_channel.clone().unwrap_or_default(),
            row.last_campaign.clone().unwrap_or_default(),
            row.last_page.clone().unwrap_or_default(),
            row.city.clone().unwrap_or_default(),
            row.country.as_deref().map(|code| country_name(code).to_owned()).unwrap_or_default(),
            row.total_sessions.to_string(),
            row.total_pageviews.to_string(),
            row.total_time_seconds.to_string(),
            iso(row.first_seen),
            iso(row.last_seen),
            row.tracker_vid.clone(),
            row.identified_user_id.clone().unwrap_or_default(),
            profile,
        ];
        out.write_record(cells.iter().map(|cell| neutralised(cell).into_owned())).map_err(AppError::internal)?;
    }
    cursor.last = Some(last);
    let bytes = out.into_inner().map_err(|err| AppError::internal(err.to_string()))?;
    Ok(Some(Bytes::from(bytes)))
}

/// A cell a spreadsheet would read as a formula (it starts with `=`, `+`,
/// `-`, `@`, a tab or a carriage return; OWASP's list) gets a leading
/// apostrophe, so it shows as the text it is.
pub fn neutralised(cell: &str) -> std::borrow::Cow<'_, str> {
    match cell.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{cell}").into(),
        _ => cell.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_neutralised_and_others_left() {
        let table = [
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
            ("+1 555", "'+1 555"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tcmd", "'\tcmd"),
            ("\r=1", "'\r=1"),
            ("Acme = good", "Acme = good"),
            ("42", "42"),
            ("", ""),
        ];
        for (cell, expected) in table {
            assert_eq!(neutralised(cell), expected, "{cell:?}");
        }
    }
}
