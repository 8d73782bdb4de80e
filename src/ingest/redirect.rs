//! GET /l/<site_slug>/<link_slug>: the public short-link redirect. It finds
//! the link in memory and answers once the batch writer has committed the
//! click, or after a bounded wait when the writer is behind.

use axum::{
    extract::{Request, State},
    http::{HeaderValue, Method, StatusCode, header},
    response::{Html, IntoResponse, Response},
};

use std::time::Duration;

use crate::{
    enrich::{geo, user_agent},
    error::{AppError, AppResult},
    request::client_ip::ClientIp,
    request::extract::ApiPath,
    service::links,
    service::tracking::link_cache::CLICK_LIMIT_REACHED,
    service::tracking::{ClickCommand, Client},
    state::AppState,
    time::now_ms,
};

/// Base62 in ASCII order, so fixed-width encodings sort like the numbers.
const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// Random characters in a click id: 14 base62 characters, 83 bits.
const CLICK_KEY_RANDOM: usize = 14;

/// The `lt_click` id: 8 characters of time, then 14 random ones. Ids made
/// later sort later, so the unique index on them grows at its end instead of
/// dirtying a random page per click; the random part keeps them unguessable.
pub fn click_key(now: i64) -> String {
    use rand::Rng;
    let mut time = [b'0'; 8];
    let mut rest = now.max(0) as u64;
    for slot in time.iter_mut().rev() {
        *slot = BASE62[(rest % 62) as usize];
        rest /= 62;
    }
    let mut rng = rand::rng();
    let mut key = String::with_capacity(time.len() + CLICK_KEY_RANDOM);
    key.extend(time.into_iter().map(char::from));
    key.extend((0..CLICK_KEY_RANDOM).map(|_| char::from(BASE62[rng.random_range(0..BASE62.len())])));
    key
}
const PAGE_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// How long a redirect waits for its click to be committed before it sends
/// the person on anyway: reaching the destination matters more than the count.
pub const CLICK_WAIT: Duration = Duration::from_secs(1);

pub async fn redirect(
    State(app): State<AppState>,
    ClientIp(ip, proxy): ClientIp,
    ApiPath((site_slug, link_slug)): ApiPath<(String, String)>,
    // Taken whole so the headers are borrowed, not copied, on this hot path.
    request: Request,
) -> AppResult<Response> {
    let (method, headers) = (request.method(), request.headers());
    let Some(target) = app.links.resolve(&app.db, &site_slug, &link_slug).await? else {
        return Ok(link_page(StatusCode::NOT_FOUND, "Link not found", UNKNOWN_LINK));
    };
    let now = now_ms();
    if let Some(reason) = target.unavailable(now) {
        return Ok(gone(reason));
    }
    let user_agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let client = Client {
        info: user_agent::classify_cached(user_agent),
        geo: geo::locate(proxy, headers, ip, app.geoip.as_deref()),
        network: app.asn.as_ref().and_then(|asn| asn.lookup(ip)),
    };
    // HEAD requests are link checkers and unfurlers, not people.
    let is_bot = client.is_bot() || method == Method::HEAD;
    // A capped link counts in the database before it lets anyone through;
    // uncapped links are counted by the writer with the click.
    let counted = target.is_capped() && !is_bot;
    if counted && !links::take_capped_click(&app.db, target.link.id).await? {
        target.mark_exhausted();
        return Ok(gone(CLICK_LIMIT_REACHED));
    }
    if target.is_capped() && is_bot && links::human_clicks(&app.db, target.link.id).await? >= target.max_clicks() {
        return Ok(gone(CLICK_LIMIT_REACHED));
    }
    let click_key = click_key(now);
    let click = ClickCommand {
        link: target.link.clone(),
        click_key: click_key.clone(),
        referrer: headers.get(header::REFERER).and_then(|v| v.to_str().ok()).map(|r| r.chars().take(2048).collect()),
        is_bot,
        counted,
        client: std::sync::Arc::new(client),
        created_at: now,
    };
    if !app.writer.record_click(click, CLICK_WAIT).await {
        app.metrics.clicks_unrecorded.inc();
        tracing::warn!(link_id = target.link.id, "redirected without recording the click: the writer is behind");
        if counted && let Err(err) = links::return_capped_click(&app.db, target.link.id).await {
            tracing::warn!(error = ?err, "could not give back a capped click");
        }
    }
    let location = HeaderValue::try_from(target.location(&click_key)).map_err(AppError::internal)?;
    Ok((
        StatusCode::FOUND,
        [(header::LOCATION, location), (header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
    )
        .into_response())
}

/// What a person who followed an unknown short link reads.
const UNKNOWN_LINK: &str = "This short link does not exist, or it was deleted. Check the address you were given.";

/// 410 with a small page: the link exists but no longer redirects.
fn gone(reason: &str) -> Response {
    link_page(StatusCode::GONE, "Link unavailable", reason)
}

/// A short link's error as a small branded page for the person who clicked
/// it (never JSON: they came from an email or an ad, not an API client).
/// `title` and `reason` are this file's own words, never request data.
fn link_page(status: StatusCode, title: &str, reason: &str) -> Response {
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · Leadtrail</title>\
         <style>body{{font:16px/1.5 system-ui,sans-serif;margin:15vh auto;max-width:30em;padding:0 1em;\
         text-align:center;color:#1f2937}}.brand{{font-weight:700;letter-spacing:.02em;color:#4338ca}}\
         h1{{font-size:1.5em}}</style></head><body><main><p class=\"brand\">Leadtrail</p>\
         <h1>{title}</h1><p>{reason}</p></main></body></html>"
    );
    (
        status,
        [
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_POLICY)),
        ],
        Html(page),
    )
        .into_response()
}

/// GET /l/<site_slug>/<link_slug>/qr.svg: the short link as a QR code.
pub async fn qr_code(
    State(app): State<AppState>,
    ApiPath((site_slug, link_slug)): ApiPath<(String, String)>,
) -> AppResult<Response> {
    let target =
        app.links.resolve(&app.db, &site_slug, &link_slug).await?.ok_or_else(|| AppError::not_found("link"))?;
    let url = links::full_url(&app.config.short_link_base(), &target.site, &target.link);
    let svg = links::qr_svg(&url)?;
    Ok(([(header::CONTENT_TYPE, "image/svg+xml"), (header::CACHE_CONTROL, "public, max-age=3600")], svg)
        .into_response())
}
