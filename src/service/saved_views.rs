//! Saved views of the lead desk (design §19): a named set of the leads
//! list's filters, sort and range, kept per site and so shared by the
//! site's org. Members save views; whoever saved a view, or an admin,
//! renames or deletes it. A view is stored as the `/leads` query string
//! that shows it, checked with the list's own rules and written in one
//! canonical order, so its link always works.

use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel, PaginatorTrait,
    QueryFilter, QueryOrder,
};

use entity::saved_view;

use super::{
    access,
    analytics::{
        TimeRange,
        desk::{self, DeskFilter, DeskInput, SortKey},
    },
};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult, ErrorCode},
};

/// Views per site at most.
pub const MAX_VIEWS: u64 = 50;
pub const MAX_NAME_CHARS: usize = 60;

/// The `/leads` parameters a view keeps, in the order it writes them. The
/// page number is not part of a view.
pub const PARAMETERS: [&str; 15] = [
    "range", "q", "status", "hot", "bots", "country", "channel", "campaign", "link", "visited", "account", "form",
    "minScore", "sort", "order",
];

/// `raw` (a query string, with or without `?`) checked as the leads list
/// checks its parameters and written in canonical form: known parameters
/// only, empty ones and defaults dropped, in `PARAMETERS` order. A bad value
/// is refused as `query`, saying which parameter.
pub fn canonical_query(raw: &str) -> AppResult<String> {
    let pairs: Vec<(String, String)> =
        url::form_urlencoded::parse(raw.trim().trim_start_matches('?').as_bytes()).into_owned().collect();
    let value = |name: &str| {
        pairs.iter().rev().find(|(key, _)| key == name).map(|(_, value)| value.trim()).filter(|v| !v.is_empty())
    };
    let refused = |err: AppError| {
        let parameter = err.field.clone().unwrap_or_default();
        AppError::validation("query", format!("{parameter}: {}", err.problem()))
    };
    let flag = |name: &str| -> AppResult<bool> {
        match value(name) {
            None | Some("0" | "false") => Ok(false),
            Some("1" | "true" | "on") => Ok(true),
            Some(_) => Err(AppError::validation("query", format!("{name}: must be 1 or 0"))),
        }
    };
    let min_score = match value("minScore") {
        None => None,
        Some(text) => {
            Some(text.parse::<i64>().map_err(|_| AppError::validation("query", "minScore: must be a number"))?)
        }
    };
    TimeRange::parse(value("range"), true).map_err(|err| refused(err.renamed("range".to_owned())))?;
    SortKey::parse(value("sort")).map_err(refused)?;
    desk::parse_descending(value("order")).map_err(refused)?;
    let filter = DeskFilter::new(DeskInput {
        search: value("q"),
        status: value("status"),
        country: value("country"),
        channel: value("channel"),
        campaign: value("campaign"),
        link: value("link"),
        account: value("account"),
        visited: value("visited"),
        form: flag("form")?,
        min_score,
    })
    .map_err(|err| {
        let renamed = if err.field.as_deref() == Some("search") { err.renamed("q".to_owned()) } else { err };
        refused(renamed)
    })?;
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    let mut put = |name: &str, text: Option<String>| {
        if let Some(text) = text {
            out.append_pair(name, &text);
        }
    };
    put("range", value("range").map(str::to_owned));
    put("q", filter.search);
    put("status", filter.status);
    put("hot", flag("hot")?.then(|| "1".to_owned()));
    put("bots", flag("bots")?.then(|| "1".to_owned()));
    put("country", filter.country);
    put("channel", filter.channel);
    put("campaign", filter.campaign);
    put("link", filter.link);
    put("visited", filter.visited.map(|pattern| pattern.as_str().to_owned()));
    put("account", filter.account);
    put("form", filter.form.then(|| "1".to_owned()));
    put("minScore", filter.min_score.map(|score| score.to_string()));
    put("sort", value("sort").filter(|sort| *sort != "score").map(str::to_owned));
    put("order", value("order").filter(|order| *order != "desc").map(str::to_owned));
    Ok(out.finish())
}

fn checked_name(raw: &str) -> AppResult<String> {
    super::checked_name(raw, MAX_NAME_CHARS)
}

/// The site's views, by name, with the viewer's role there. Anyone who can
/// read the site.
pub async fn list(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
) -> AppResult<(Vec<saved_view::Model>, Role)> {
    let (site, role) = access::site(db, viewer, site_id, Role::Viewer).await?;
    let views = saved_view::Entity::find()
        .filter(saved_view::Column::SiteId.eq(site.id))
        .order_by_asc(saved_view::Column::Name)
        .order_by_asc(saved_view::Column::Id)
        .all(db)
        .await?;
    Ok((views, role))
}

/// A view of a site the viewer can read, with the viewer's role there;
/// another org's is not found.
async fn find(db: &impl ConnectionTrait, viewer: &Viewer, id: i64) -> AppResult<(saved_view::Model, Role)> {
    let view = saved_view::Entity::find_by_id(id).one(db).await?.ok_or_else(|| AppError::not_found("saved view"))?;
    match access::site(db, viewer, view.site_id, Role::Viewer).await {
        Err(err) if err.code == ErrorCode::NotFound => Err(AppError::not_found("saved view")),
        Err(err) => Err(err),
        Ok((_, role)) => Ok((view, role)),
    }
}

/// Whether the viewer may rename or delete `view`: whoever saved it (still
/// a member at least), or an admin.
pub fn may_manage(view: &saved_view::Model, viewer: &Viewer, role: Role) -> bool {
    let own = matches!(viewer, Viewer::User { user_id, .. } if view.created_by == Some(*user_id));
    role >= Role::Admin || (own && role >= Role::Member)
}

fn user_of(viewer: &Viewer) -> Option<i64> {
    match viewer {
        Viewer::User { user_id, .. } => Some(*user_id),
        Viewer::ApiKey { .. } => None,
    }
}

pub async fn create(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    name: &str,
    query: &str,
    now: i64,
) -> AppResult<(saved_view::Model, Role)> {
    let (site, role) = access::site(db, viewer, site_id, Role::Member).await?;
    let name = checked_name(name)?;
    let query = canonical_query(query)?;
    let count = saved_view::Entity::find().filter(saved_view::Column::SiteId.eq(site.id)).count(db).await?;
    if count >= MAX_VIEWS {
        return Err(AppError::validation("siteId", format!("a site has at most {MAX_VIEWS} saved views")));
    }
    let created = saved_view::ActiveModel {
        site_id: Set(site.id),
        name: Set(name),
        query: Set(query),
        created_by: Set(user_of(viewer)),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok((created, role))
}

/// Renames the view and, when `query` is given, replaces its filters.
pub async fn update(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    id: i64,
    name: &str,
    query: Option<&str>,
    now: i64,
) -> AppResult<(saved_view::Model, Role)> {
    let (view, role) = find(db, viewer, id).await?;
    if !may_manage(&view, viewer, role) {
        return Err(AppError::forbidden("only whoever saved this view, or an admin, can change it"));
    }
    let mut active = view.into_active_model();
    active.name = Set(checked_name(name)?);
    if let Some(query) = query {
        active.query = Set(canonical_query(query)?);
    }
    active.updated_at = Set(now);
    Ok((active.update(db).await?, role))
}

pub async fn delete(db: &impl ConnectionTrait, viewer: &Viewer, id: i64) -> AppResult<()> {
    let (view, role) = find(db, viewer, id).await?;
    if !may_manage(&view, viewer, role) {
        return Err(AppError::forbidden("only whoever saved this view, or an admin, can delete it"));
    }
    saved_view::Entity::delete_by_id(view.id).exec(db).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_checked_and_written_one_way() {
        let table = [
            ("", Ok("")),
            ("?range=30d&hot=1", Ok("range=30d&hot=1")),
            ("hot=on&range=30d&page=4&site=9&junk=x", Ok("range=30d&hot=1")),
            ("sort=score&order=desc&q=+acme+", Ok("q=acme")),
            (
                "order=asc&sort=pageviews&channel=Email&visited=/docs/*",
                Ok("channel=Email&visited=%2Fdocs%2F*&sort=pageviews&order=asc"),
            ),
            ("country=de&minScore=40&form=1", Ok("country=DE&form=1&minScore=40")),
            ("range=week", Err("range")),
            ("sort=name", Err("sort")),
            ("channel=Pigeon", Err("channel")),
            ("minScore=lots", Err("minScore")),
            ("hot=maybe", Err("hot")),
            ("visited=docs", Err("visited")),
        ];
        for (raw, expected) in table {
            match (canonical_query(raw), expected) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{raw}"),
                (Err(err), Err(parameter)) => {
                    assert_eq!(err.field.as_deref(), Some("query"), "{raw}");
                    assert!(err.message.contains(parameter), "{raw}: {}", err.message);
                }
                (got, want) => panic!("{raw}: {:?} but expected {want:?}", got.map_err(|e| e.message)),
            }
        }
    }

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(checked_name("  Hot in Germany ").unwrap(), "Hot in Germany");
        for bad in ["", "   ", "tab\there", &"x".repeat(MAX_NAME_CHARS + 1)] {
            assert_eq!(checked_name(bad).err().and_then(|e| e.field).as_deref(), Some("name"), "{bad:?}");
        }
    }
}
