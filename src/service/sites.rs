//! Tracked sites.

use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait,
    QueryFilter, TransactionTrait,
};

use entity::{org, site};

use super::{access, is_unique_violation, orgs, parent_lock};
use crate::{
    auth::{Role, Viewer},
    cluster::{Changed, Cluster},
    error::{AppError, AppResult, ErrorCode},
    time::now_ms,
};

pub const DEFAULT_HIGH_VALUE_PATTERNS: [&str; 5] = ["/pricing", "/demo", "/contact", "/signup", "/trial"];
pub const DEFAULT_HOT_THRESHOLD: i32 = 70;
pub const MAX_NAME_LEN: usize = 100;
const MAX_PATTERNS: usize = 50;
const MAX_PATTERN_LEN: usize = 200;

pub struct NewSite {
    /// The org to create the site in; the viewer's primary org when absent.
    pub org_id: Option<i64>,
    pub domain: String,
    pub name: Option<String>,
}

#[derive(Default)]
pub struct SiteChanges {
    pub name: Option<String>,
    pub domain: Option<String>,
    pub tracking_mode: Option<String>,
    /// `Some("")` clears it.
    pub first_party_domain: Option<String>,
    pub hot_threshold: Option<i32>,
    pub high_value_patterns: Option<Vec<String>>,
    /// `Some(None)` keeps visitor-level data for ever.
    pub retention_days: Option<Option<i32>>,
    pub respect_do_not_track: Option<bool>,
    pub gravatar: Option<bool>,
    /// Network numbers the site adds to the shipped hosting list.
    pub hosting_asns: Option<Vec<i64>>,
    /// Network numbers the site adds to the shipped ISP list.
    pub isp_asns: Option<Vec<i64>>,
    /// An IANA time zone name such as `Europe/Berlin`.
    pub timezone: Option<String>,
}

/// An IANA time zone name, exactly as the tz database spells it
/// (`Europe/Berlin`, `UTC`; the OpenAPI document lists them); anything else
/// is refused, naming the field. Forms trim what was typed before it gets here.
pub fn parse_timezone(field: &str, name: &str) -> AppResult<chrono_tz::Tz> {
    name.parse::<chrono_tz::Tz>()
        .map_err(|_| AppError::validation(field, "must be an IANA time zone name such as Europe/Berlin or UTC"))
}

/// What a site is called where it is shown (emails, lists): its name, else its domain.
pub fn shown_name(site: &site::Model) -> &str {
    if site.name.trim().is_empty() { &site.domain } else { &site.name }
}

/// The site's time zone; a stored name this build does not know reads as UTC.
pub fn timezone(site: &site::Model) -> chrono_tz::Tz {
    site.timezone.parse().unwrap_or(chrono_tz::Tz::UTC)
}

/// Network numbers a site may add to one list.
pub const MAX_SITE_ASNS: usize = 1_000;

/// A site's own ASN list, as stored (a JSON array); unreadable text is empty.
pub fn asn_list(stored: &str) -> Vec<u32> {
    serde_json::from_str(stored).unwrap_or_default()
}

/// Checks a list of network numbers and stores it sorted, without repeats.
fn asn_list_json(field: &str, asns: Vec<i64>) -> AppResult<String> {
    if asns.len() > MAX_SITE_ASNS {
        return Err(AppError::validation(field, format!("must hold at most {MAX_SITE_ASNS} network numbers")));
    }
    let mut checked = asns
        .into_iter()
        .map(|asn| u32::try_from(asn).ok().filter(|asn| *asn > 0))
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(|| AppError::validation(field, "must be network numbers between 1 and 4294967295"))?;
    checked.sort_unstable();
    checked.dedup();
    serde_json::to_string(&checked).map_err(AppError::internal)
}

/// Accepts a host (`Example.com`) or a URL (`https://example.com/x`) and
/// returns the lower-case host.
pub fn normalize_domain(field: &str, input: &str) -> AppResult<String> {
    let input = input.trim();
    if input.is_empty() {
        return Err(AppError::validation(field, "must not be empty"));
    }
    let with_scheme = if input.contains("://") { input.to_owned() } else { format!("http://{input}") };
    let url = url::Url::parse(&with_scheme)
        .map_err(|_| AppError::validation(field, "must be a host name or an http(s) URL"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(AppError::validation(field, "must be a host name or an http(s) URL"));
    }
    // A URL's host may hold characters no DNS name has (`shop.example*`);
    // the url crate has already lowered it and spelled an international name
    // in its ASCII form.
    let is_dns_name = |host: &str| host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    let host = url
        .host_str()
        .filter(|host| !matches!(url.host(), Some(url::Host::Domain(_))) || is_dns_name(host))
        .map(|host| host.trim_end_matches('.').to_owned())
        .filter(|host| !host.is_empty() && host.len() <= 253)
        .ok_or_else(|| AppError::validation(field, "must contain a host name"))?;
    Ok(host)
}

fn validate_name(name: &str) -> AppResult<String> {
    let name = name.trim();
    if name.is_empty() {
        return Err(AppError::validation("name", "must not be empty"));
    }
    if name.chars().count() > MAX_NAME_LEN {
        return Err(AppError::validation("name", format!("must be at most {MAX_NAME_LEN} characters")));
    }
    Ok(name.to_owned())
}

fn validate_patterns(patterns: Vec<String>) -> AppResult<Vec<String>> {
    if patterns.len() > MAX_PATTERNS {
        return Err(AppError::validation("highValuePatterns", format!("at most {MAX_PATTERNS} patterns")));
    }
    for pattern in &patterns {
        if !pattern.starts_with('/') || pattern.len() > MAX_PATTERN_LEN {
            return Err(AppError::validation(
                "highValuePatterns",
                format!("each pattern is a path starting with / of at most {MAX_PATTERN_LEN} characters"),
            ));
        }
    }
    Ok(patterns)
}

/// The site's high-value path patterns.
pub fn high_value_patterns(site: &site::Model) -> Vec<String> {
    serde_json::from_str(&site.high_value_patterns).unwrap_or_default()
}

fn patterns_json(patterns: &[String]) -> String {
    serde_json::Value::from(patterns.to_vec()).to_string()
}

async fn slug_taken(db: &impl ConnectionTrait, slug: &str) -> AppResult<bool> {
    Ok(site::Entity::find().filter(site::Column::Slug.eq(slug)).count(db).await? > 0)
}

/// A service-wide unique slug derived from the domain: `example-com`, then
/// `example-com-2` and so on, then a random suffix.
async fn unique_slug(db: &impl ConnectionTrait, domain: &str) -> AppResult<String> {
    let base = orgs::slugify(domain, 40);
    let base = if base.is_empty() { "site".to_owned() } else { base };
    if !slug_taken(db, &base).await? {
        return Ok(base);
    }
    for n in 2..=5 {
        let candidate = format!("{base}-{n}");
        if !slug_taken(db, &candidate).await? {
            return Ok(candidate);
        }
    }
    Ok(format!("{base}-{}", orgs::random_suffix()))
}

pub async fn create(db: &DatabaseConnection, viewer: &Viewer, max_sites: u32, new: NewSite) -> AppResult<site::Model> {
    let org_id = match (new.org_id, viewer) {
        (Some(org_id), _) => org_id,
        (None, Viewer::ApiKey { org_id, .. }) => *org_id,
        (None, Viewer::User { user_id, .. }) => orgs::primary(db, *user_id).await?.1.id,
    };
    access::find_org(db, viewer, org_id, Role::Admin).await?;
    let domain = normalize_domain("domain", &new.domain)?;
    let name = match new.name.as_deref().map(str::trim) {
        Some(name) if !name.is_empty() => validate_name(name)?,
        _ => domain.clone(),
    };
    let txn = parent_lock::begin::<org::Entity>(db, org_id).await?;
    let count = site::Entity::find().filter(site::Column::OrgId.eq(org_id)).count(&txn).await?;
    if count >= u64::from(max_sites) {
        return Err(AppError::new(
            ErrorCode::SiteLimitReached,
            format!("this account can have at most {max_sites} sites"),
        ));
    }
    let mut slug = unique_slug(&txn, &domain).await?;
    loop {
        // A savepoint: on PostgreSQL a failed insert ends the transaction
        // unless it is rolled back to one.
        let attempt = txn.begin().await?;
        let inserted = site::ActiveModel {
            org_id: Set(org_id),
            name: Set(name.clone()),
            domain: Set(domain.clone()),
            slug: Set(slug.clone()),
            tracking_mode: Set("cookie".to_owned()),
            first_party_domain: Set(None),
            high_value_patterns: Set(patterns_json(&DEFAULT_HIGH_VALUE_PATTERNS.map(str::to_owned))),
            hot_threshold: Set(DEFAULT_HOT_THRESHOLD),
            created_at: Set(now_ms()),
            ..Default::default()
        }
        .insert(&attempt)
        .await;
        match inserted {
            Ok(site) => {
                attempt.commit().await?;
                txn.commit().await?;
                return Ok(site);
            }
            // Another organization took the slug between our check and insert.
            Err(err) if is_unique_violation(&err) => {
                attempt.rollback().await?;
                slug = format!("{slug}-{}", orgs::random_suffix());
            }
            Err(err) => return Err(err.into()),
        }
    }
}

/// Changes what is given, and tells every instance's caches. Admins only.
pub async fn update(
    db: &impl ConnectionTrait,
    cluster: &Cluster,
    viewer: &Viewer,
    site_id: i64,
    changes: SiteChanges,
) -> AppResult<site::Model> {
    let (site, _) = access::site(db, viewer, site_id, Role::Admin).await?;
    let mut active: site::ActiveModel = site.into();
    if let Some(name) = changes.name {
        active.name = Set(validate_name(&name)?);
    }
    if let Some(domain) = changes.domain {
        active.domain = Set(normalize_domain("domain", &domain)?);
    }
    if let Some(mode) = changes.tracking_mode {
        if !matches!(mode.as_str(), "cookie" | "cookieless") {
            return Err(AppError::validation("trackingMode", "must be cookie or cookieless"));
        }
        active.tracking_mode = Set(mode);
    }
    if let Some(host) = changes.first_party_domain {
        let host = host.trim();
        active.first_party_domain =
            Set(if host.is_empty() { None } else { Some(normalize_domain("firstPartyDomain", host)?) });
    }
    if let Some(threshold) = changes.hot_threshold {
        if !(1..=100).contains(&threshold) {
            return Err(AppError::validation("hotThreshold", "must be between 1 and 100"));
        }
        active.hot_threshold = Set(threshold);
    }
    if let Some(patterns) = changes.high_value_patterns {
        active.high_value_patterns = Set(patterns_json(&validate_patterns(patterns)?));
    }
    if let Some(days) = changes.retention_days {
        if days.is_some_and(|days| days < 1) {
            return Err(AppError::validation("retentionDays", "must be at least 1, or null to keep everything"));
        }
        active.retention_days = Set(days);
    }
    if let Some(respect) = changes.respect_do_not_track {
        active.respect_do_not_track = Set(respect);
    }
    if let Some(gravatar) = changes.gravatar {
        active.gravatar = Set(gravatar);
    }
    if let Some(asns) = changes.hosting_asns {
        active.hosting_asns = Set(asn_list_json("hostingAsns", asns)?);
    }
    if let Some(asns) = changes.isp_asns {
        active.isp_asns = Set(asn_list_json("ispAsns", asns)?);
    }
    if let Some(name) = changes.timezone {
        active.timezone = Set(parse_timezone("timezone", &name)?.name().to_owned());
    }
    let site = active.update(db).await?;
    cluster.changed(Changed::Site { site_id: site.id }).await;
    Ok(site)
}

/// Deletes the site; the database cascades to its links, visitors, sessions,
/// events, identities, clicks and deliveries. Its collect and short links stop
/// answering on every instance.
pub async fn delete(db: &impl ConnectionTrait, cluster: &Cluster, viewer: &Viewer, site_id: i64) -> AppResult<()> {
    let (site, _) = access::site(db, viewer, site_id, Role::Admin).await?;
    site::Entity::delete_by_id(site.id).exec(db).await?;
    cluster.changed(Changed::Site { site_id: site.id }).await;
    Ok(())
}

/// Sites by id for the public collect endpoint, which names sites by their
/// (public) id and needs no caller.
pub async fn public_by_ids(
    db: &impl ConnectionTrait,
    ids: impl IntoIterator<Item = i64>,
) -> AppResult<std::collections::HashMap<i64, site::Model>> {
    let found = site::Entity::find().filter(site::Column::Id.is_in(ids)).all(db).await?;
    Ok(found.into_iter().map(|site| (site.id, site)).collect())
}

/// Whether a path counts as a high-value view: it equals a pattern or lies below it.
pub fn is_high_value(patterns: &[String], page: &str) -> bool {
    patterns.iter().any(|pattern| {
        let pattern = pattern.trim_end_matches('/');
        page == pattern || page.strip_prefix(pattern).is_some_and(|rest| rest.starts_with('/'))
    })
}
