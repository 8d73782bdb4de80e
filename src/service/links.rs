//! Tracking links: validation, CRUD and the public lookup for redirects.

use rand::Rng;
use sea_orm::{
    ActiveModelTrait,
    ActiveValue::Set,
    ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    sea_query::{Expr, ExprTrait},
};
use url::Url;

use entity::{link, site};

use super::{access, is_unique_violation};
use crate::{
    auth::{Role, Viewer},
    cluster::{Changed, Cluster},
    error::{AppError, AppResult, ErrorCode},
    time::now_ms,
};

pub const LINK_TYPES: [&str; 3] = ["content", "ad", "bio"];
pub const MAX_SLUG_LEN: usize = 64;
pub const GENERATED_SLUG_LEN: usize = 7;
pub const MAX_URL_LEN: usize = 2048;
pub const MAX_LABEL_LEN: usize = 256;
pub const MAX_NOTES_LEN: usize = 2000;
pub const MAX_TAGS: usize = 20;
pub const MAX_TAG_LEN: usize = 50;
const ID_PREFIX: &str = "lnk_";

/// `lnk_<id>`, the id clients see.
pub fn public_id(id: i64) -> String {
    format!("{ID_PREFIX}{id}")
}

/// The numeric id behind `lnk_<id>`; anything else names no link.
pub fn parse_public_id(id: &str) -> AppResult<i64> {
    id.strip_prefix(ID_PREFIX).and_then(|n| n.parse().ok()).ok_or_else(|| AppError::not_found("link"))
}

/// 1 to 64 characters of `[A-Za-z0-9_-]`, case-sensitive.
pub fn validate_slug(slug: &str) -> AppResult<()> {
    let valid = !slug.is_empty()
        && slug.len() <= MAX_SLUG_LEN
        && slug.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if valid {
        Ok(())
    } else {
        Err(AppError::validation("slug", format!("must be 1 to {MAX_SLUG_LEN} characters of A-Z, a-z, 0-9, _ and -")))
    }
}

/// An absolute http(s) URL of at most 2048 characters, with no control
/// characters; `javascript:`, `data:` and protocol-relative URLs are refused.
pub fn validate_destination(raw: &str) -> AppResult<String> {
    let invalid = |why: &str| AppError::invalid(ErrorCode::InvalidUrl, "destinationUrl", why);
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(invalid("is required"));
    }
    if raw.len() > MAX_URL_LEN {
        return Err(invalid(&format!("must be at most {MAX_URL_LEN} characters")));
    }
    if raw.chars().any(char::is_control) {
        return Err(invalid("must not contain control characters"));
    }
    if raw.starts_with("//") {
        return Err(invalid("must name its scheme (http or https)"));
    }
    let url = Url::parse(raw).map_err(|_| invalid("enter a full web address starting with https://"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("enter a full web address starting with https://"));
    }
    Ok(raw.to_owned())
}

fn label(field: &str, value: Option<String>, max: usize) -> AppResult<String> {
    let value = value.unwrap_or_default().trim().to_owned();
    if value.chars().count() > max {
        return Err(AppError::validation(field, format!("must be at most {max} characters")));
    }
    Ok(value)
}

fn validate_link_type(value: Option<String>) -> AppResult<String> {
    match value.as_deref().map(str::trim) {
        None | Some("") => Ok("content".to_owned()),
        Some(kind) if LINK_TYPES.contains(&kind) => Ok(kind.to_owned()),
        Some(_) => Err(AppError::validation("linkType", "must be content, ad or bio")),
    }
}

fn validate_tags(tags: Vec<String>) -> AppResult<String> {
    if tags.len() > MAX_TAGS {
        return Err(AppError::validation("tags", format!("at most {MAX_TAGS} tags")));
    }
    let mut clean: Vec<String> = Vec::with_capacity(tags.len());
    for tag in tags {
        let tag = tag.trim().to_owned();
        if tag.is_empty() || tag.chars().count() > MAX_TAG_LEN {
            return Err(AppError::validation("tags", format!("each tag is 1 to {MAX_TAG_LEN} characters")));
        }
        if !clean.contains(&tag) {
            clean.push(tag);
        }
    }
    Ok(serde_json::Value::from(clean).to_string())
}

pub fn tags(link: &link::Model) -> Vec<String> {
    serde_json::from_str(&link.tags).unwrap_or_default()
}

fn random_slug() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    (0..GENERATED_SLUG_LEN).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect()
}

fn slug_taken() -> AppError {
    AppError::invalid(ErrorCode::SlugTaken, "slug", "this slug is already used on this site")
}

async fn slug_exists(db: &impl ConnectionTrait, site_id: i64, slug: &str) -> AppResult<bool> {
    Ok(link::Entity::find()
        .filter(link::Column::SiteId.eq(site_id))
        .filter(link::Column::Slug.eq(slug))
        .count(db)
        .await?
        > 0)
}

pub struct NewLink {
    pub site_id: i64,
    pub destination_url: String,
    pub slug: Option<String>,
    pub campaign: Option<String>,
    pub source: Option<String>,
    pub medium: Option<String>,
    pub content: Option<String>,
    pub notes: Option<String>,
    pub link_type: Option<String>,
    /// Active unless `Some(false)`.
    pub is_active: Option<bool>,
    pub expires_at: Option<i64>,
    pub max_clicks: Option<i64>,
    pub tags: Option<Vec<String>>,
}

fn validate_max_clicks(max_clicks: Option<i64>) -> AppResult<Option<i64>> {
    if max_clicks.is_some_and(|max| max < 1) {
        return Err(AppError::validation("maxClicks", "must be at least 1"));
    }
    Ok(max_clicks)
}

/// Members and up; a missing slug is generated.
pub async fn create(db: &impl ConnectionTrait, viewer: &Viewer, new: NewLink) -> AppResult<(link::Model, site::Model)> {
    let (site, _) = access::site(db, viewer, new.site_id, Role::Member).await?;
    let destination_url = validate_destination(&new.destination_url)?;
    let given_slug = new.slug.map(|slug| slug.trim().to_owned()).filter(|slug| !slug.is_empty());
    if let Some(slug) = &given_slug {
        validate_slug(slug)?;
    }
    let now = now_ms();
    let mut row = link::ActiveModel {
        site_id: Set(site.id),
        slug: Set(String::new()),
        destination_url: Set(destination_url),
        campaign: Set(label("campaign", new.campaign, MAX_LABEL_LEN)?),
        source: Set(label("source", new.source, MAX_LABEL_LEN)?),
        medium: Set(label("medium", new.medium, MAX_LABEL_LEN)?),
        content: Set(label("content", new.content, MAX_LABEL_LEN)?),
        notes: Set(label("notes", new.notes, MAX_NOTES_LEN)?),
        link_type: Set(validate_link_type(new.link_type)?),
        is_active: Set(new.is_active.unwrap_or(true)),
        expires_at: Set(new.expires_at),
        max_clicks: Set(validate_max_clicks(new.max_clicks)?),
        tags: Set(validate_tags(new.tags.unwrap_or_default())?),
        human_clicks: Set(0),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    };
    // A generated slug that collides is drawn again; a given one is the caller's.
    for _ in 0..10 {
        let slug = match &given_slug {
            Some(slug) => slug.clone(),
            None => random_slug(),
        };
        if slug_exists(db, site.id, &slug).await? {
            if given_slug.is_some() {
                return Err(slug_taken());
            }
            continue;
        }
        row.slug = Set(slug);
        return match row.clone().insert(db).await {
            Ok(link) => Ok((link, site)),
            Err(err) if is_unique_violation(&err) && given_slug.is_some() => Err(slug_taken()),
            Err(err) if is_unique_violation(&err) => continue,
            Err(err) => Err(err.into()),
        };
    }
    Err(AppError::new(ErrorCode::Conflict, "could not generate a free slug, try again"))
}

/// A link the viewer can reach with at least `needed`, with its site.
pub async fn find(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    link_id: i64,
    needed: Role,
) -> AppResult<(link::Model, site::Model)> {
    let link = link::Entity::find_by_id(link_id).one(db).await?.ok_or_else(|| AppError::not_found("link"))?;
    let (site, _) = access::site(db, viewer, link.site_id, needed)
        .await
        .map_err(|err| if err.code == ErrorCode::NotFound { AppError::not_found("link") } else { err })?;
    Ok((link, site))
}

#[derive(Default)]
pub struct LinkChanges {
    pub destination_url: Option<String>,
    pub slug: Option<String>,
    pub campaign: Option<String>,
    pub source: Option<String>,
    pub medium: Option<String>,
    pub content: Option<String>,
    pub notes: Option<String>,
    pub link_type: Option<String>,
    pub is_active: Option<bool>,
    /// `Some(None)` clears it.
    pub expires_at: Option<Option<i64>>,
    /// `Some(None)` clears it.
    pub max_clicks: Option<Option<i64>>,
    pub tags: Option<Vec<String>>,
}

/// Changes only what is given, and the redirect on every instance follows.
/// Members and up.
pub async fn update(
    db: &impl ConnectionTrait,
    cluster: &Cluster,
    viewer: &Viewer,
    link_id: i64,
    changes: LinkChanges,
) -> AppResult<(link::Model, site::Model)> {
    let (link, site) = find(db, viewer, link_id, Role::Member).await?;
    let current_slug = link.slug.clone();
    let mut row: link::ActiveModel = link.into();
    if let Some(url) = changes.destination_url {
        row.destination_url = Set(validate_destination(&url)?);
    }
    if let Some(slug) = changes.slug.map(|slug| slug.trim().to_owned()) {
        validate_slug(&slug)?;
        if slug != current_slug && slug_exists(db, site.id, &slug).await? {
            return Err(slug_taken());
        }
        row.slug = Set(slug);
    }
    for (field, value, column) in [
        ("campaign", changes.campaign, &mut row.campaign),
        ("source", changes.source, &mut row.source),
        ("medium", changes.medium, &mut row.medium),
        ("content", changes.content, &mut row.content),
    ] {
        if value.is_some() {
            *column = Set(label(field, value, MAX_LABEL_LEN)?);
        }
    }
    if changes.notes.is_some() {
        row.notes = Set(label("notes", changes.notes, MAX_NOTES_LEN)?);
    }
    if changes.link_type.is_some() {
        row.link_type = Set(validate_link_type(changes.link_type)?);
    }
    if let Some(active) = changes.is_active {
        row.is_active = Set(active);
    }
    if let Some(expires_at) = changes.expires_at {
        row.expires_at = Set(expires_at);
    }
    if let Some(max_clicks) = changes.max_clicks {
        row.max_clicks = Set(validate_max_clicks(max_clicks)?);
    }
    if let Some(tags) = changes.tags {
        row.tags = Set(validate_tags(tags)?);
    }
    row.updated_at = Set(now_ms());
    let link = row.update(db).await.map_err(|err| if is_unique_violation(&err) { slug_taken() } else { err.into() })?;
    cluster.changed(Changed::Link { link_id: link.id, site_id: site.id }).await;
    Ok((link, site))
}

/// Deletes the link and its clicks; it stops redirecting on every instance.
/// Members and up.
pub async fn delete(
    db: &impl ConnectionTrait,
    cluster: &Cluster,
    viewer: &Viewer,
    link_id: i64,
) -> AppResult<(link::Model, site::Model)> {
    let (link, site) = find(db, viewer, link_id, Role::Member).await?;
    link::Entity::delete_by_id(link.id).exec(db).await?;
    cluster.changed(Changed::Link { link_id: link.id, site_id: site.id }).await;
    Ok((link, site))
}

/// Whether `slug` is free on the site (the viewer's first site when none is named).
pub async fn slug_available(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: Option<i64>,
    slug: &str,
) -> AppResult<bool> {
    let site = access::site_or_first(db, viewer, site_id, Role::Viewer).await?;
    validate_slug(slug)?;
    Ok(!slug_exists(db, site.id, slug).await?)
}

/// The site's links, newest first.
pub async fn list(db: &impl ConnectionTrait, site_id: i64) -> AppResult<Vec<link::Model>> {
    Ok(link::Entity::find()
        .filter(link::Column::SiteId.eq(site_id))
        .order_by_desc(link::Column::CreatedAt)
        .order_by_desc(link::Column::Id)
        .all(db)
        .await?)
}

/// The public lookup behind a short link: `/l/<site_slug>/<link_slug>`.
pub async fn resolve_public(
    db: &impl ConnectionTrait,
    site_slug: &str,
    link_slug: &str,
) -> AppResult<Option<(site::Model, link::Model)>> {
    // No slug holds a NUL character, and PostgreSQL refuses one in a query's
    // text parameter with an error instead of finding nothing.
    if site_slug.contains('\0') || link_slug.contains('\0') {
        return Ok(None);
    }
    let Some(site) = site::Entity::find().filter(site::Column::Slug.eq(site_slug)).one(db).await? else {
        return Ok(None);
    };
    let link = link::Entity::find()
        .filter(link::Column::SiteId.eq(site.id))
        .filter(link::Column::Slug.eq(link_slug))
        .one(db)
        .await?;
    Ok(link.map(|link| (site, link)))
}

/// `{short_link_base}/l/<site_slug>/<link_slug>`.
pub fn full_url(short_link_base: &str, site: &site::Model, link: &link::Model) -> String {
    format!("{short_link_base}/l/{}/{}", site.slug, link.slug)
}

/// The URL as an SVG QR code.
pub fn qr_svg(url: &str) -> AppResult<String> {
    let code = qrcode::QrCode::new(url.as_bytes()).map_err(AppError::internal)?;
    Ok(code.render::<qrcode::render::svg::Color<'_>>().min_dimensions(256, 256).quiet_zone(true).build())
}

/// Counts a human click on a capped link if it is still under its cap: one
/// conditional increment, so instances sharing the database never let more
/// than `max_clicks` through between them. False when the cap is reached.
pub async fn take_capped_click(db: &impl ConnectionTrait, link_id: i64) -> AppResult<bool> {
    let taken = link::Entity::update_many()
        .col_expr(link::Column::HumanClicks, Expr::col(link::Column::HumanClicks).add(1))
        .filter(link::Column::Id.eq(link_id))
        .filter(Expr::col(link::Column::HumanClicks).lt(Expr::col(link::Column::MaxClicks)))
        .exec(db)
        .await?;
    Ok(taken.rows_affected == 1)
}

/// Gives back a capped click whose redirect could not be recorded, so the cap
/// counts only stored clicks.
pub async fn return_capped_click(db: &impl ConnectionTrait, link_id: i64) -> AppResult<()> {
    link::Entity::update_many()
        .col_expr(link::Column::HumanClicks, Expr::col(link::Column::HumanClicks).sub(1))
        .filter(link::Column::Id.eq(link_id))
        .filter(link::Column::HumanClicks.gt(0))
        .exec(db)
        .await?;
    Ok(())
}

/// A capped link's human clicks as stored now.
pub async fn human_clicks(db: &impl ConnectionTrait, link_id: i64) -> AppResult<i64> {
    let link = link::Entity::find_by_id(link_id).one(db).await?;
    Ok(link.map_or(0, |link| link.human_clicks))
}
