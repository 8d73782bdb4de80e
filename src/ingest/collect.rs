//! POST /api/collect: public and CORS-open. Validate everything, enrich once
//! per request, enqueue, answer. Nothing is stored unless every event is valid.

use std::{collections::BTreeSet, sync::Arc};

use axum::{
    Json,
    extract::State,
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
};
use entity::site;
use serde_json::json;
use url::Url;

use super::wire::{self, WireEvent, WireTime};
use crate::{
    auth::rate_limit::address_key,
    enrich::{geo, source, source::Utm, user_agent},
    error::{AppError, AppResult},
    request::client_ip::ClientIp,
    request::extract::RawBody,
    service::{
        identify, money, salts,
        sites::{self, high_value_patterns},
        tracking::{Client, CollectedEvent, EventKind},
    },
    state::AppState,
    time::{DAY_MS, MINUTE_MS, now_ms, parse_iso},
};

/// Imports may carry old timestamps, but not from before this.
const MAX_PAST_MS: i64 = 366 * DAY_MS;
/// Clock skew tolerated on client timestamps.
const MAX_FUTURE_MS: i64 = 5 * MINUTE_MS;
const MAX_ENGAGED_MS: i64 = DAY_MS;

pub async fn collect(
    State(app): State<AppState>,
    ClientIp(ip, proxy): ClientIp,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> AppResult<Response> {
    app.collect_limiter.check(address_key(ip))?;
    let wire = wire::parse(&body)?;
    let site_ids: BTreeSet<i64> = wire.iter().map(|event| event.site).collect();
    let sites = app.sites.get_many(&app.db, site_ids.iter().copied()).await?;
    let user_agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let client = Arc::new(Client {
        info: user_agent::classify_cached(user_agent),
        geo: geo::locate(proxy, &headers, ip, app.geoip.as_deref()),
        network: app.asn.as_ref().and_then(|asn| asn.lookup(ip)),
    });
    let batch = wire.len() > 1;
    let now = now_ms();
    let opted_out = asks_not_to_be_tracked(&headers);
    let mut events = Vec::with_capacity(wire.len());
    for (index, event) in wire.into_iter().enumerate() {
        let field = |name: &str| {
            if batch { format!("events[{index}].{name}") } else { name.to_owned() }
        };
        let site = sites.get(&event.site).ok_or_else(|| AppError::not_found("site"))?;
        if opted_out && site.respect_do_not_track {
            continue;
        }
        let tracker_vid = if site.tracking_mode == "cookieless" {
            let salt = app.salts.today(&app.db, now).await?;
            salts::cookieless_visitor_id(&salt, site.id, &ip.to_string(), user_agent)
        } else {
            match event.tracker_vid.as_deref() {
                Some(vid) => identify::validate_id(&field("tracker_vid"), vid)?,
                None => return Err(AppError::validation(&field("tracker_vid"), "is required")),
            }
        };
        events.push(build(event, site, tracker_vid, client.clone(), now, &field)?);
    }
    // A site's budget is charged only for events that will be stored, so
    // invalid ones sent in its name cannot use it up.
    for site_id in events.iter().map(|event| event.site_id).collect::<BTreeSet<_>>() {
        app.site_collect_limiter.check(site_id)?;
    }
    let accepted = events.len();
    if !events.is_empty() {
        app.writer.store_events(events).await?;
    }
    Ok((StatusCode::ACCEPTED, Json(json!({ "accepted": accepted }))).into_response())
}

/// `DNT: 1` or `Sec-GPC: 1`: the browser asks not to be tracked.
fn asks_not_to_be_tracked(headers: &HeaderMap) -> bool {
    ["dnt", "sec-gpc"].iter().any(|name| headers.get(*name).is_some_and(|value| value.as_bytes().trim_ascii() == b"1"))
}

fn too_long(field: &str, max: usize) -> AppError {
    AppError::validation(field, format!("must be at most {max} characters"))
}

/// An optional text field: empty reads as absent. PostgreSQL's text cannot
/// hold a NUL character, so one is refused here, on both databases, instead
/// of failing the whole write batch it would join.
fn bounded(field: &str, value: Option<String>, max: usize) -> Result<Option<String>, AppError> {
    match value.filter(|v| !v.is_empty()) {
        Some(v) if v.chars().count() > max => Err(too_long(field, max)),
        Some(v) if v.contains('\0') => Err(AppError::nul_character(field)),
        other => Ok(other),
    }
}

pub fn build(
    event: WireEvent,
    site: &site::Model,
    tracker_vid: String,
    client: Arc<Client>,
    now: i64,
    field: &dyn Fn(&str) -> String,
) -> AppResult<CollectedEvent> {
    let kind = EventKind::parse(&event.kind)
        .ok_or_else(|| AppError::validation(&field("type"), "must be pageview, custom_event or ping"))?;
    if event.url.len() > wire::MAX_URL_LEN {
        return Err(too_long(&field("url"), wire::MAX_URL_LEN));
    }
    let url = Url::parse(&event.url)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https"))
        .ok_or_else(|| AppError::validation(&field("url"), "must be an absolute http(s) URL"))?;
    let referrer = bounded(&field("referrer"), event.referrer, wire::MAX_URL_LEN)?;
    if referrer.as_deref().is_some_and(|r| Url::parse(r).is_err()) {
        return Err(AppError::validation(&field("referrer"), "must be a URL"));
    }
    let event_name = bounded(&field("event_name"), event.event_name, wire::MAX_EVENT_NAME_LEN)?;
    let event_name = match kind {
        EventKind::CustomEvent => {
            event_name.ok_or_else(|| AppError::validation(&field("event_name"), "is required for custom_event"))?
        }
        EventKind::Pageview | EventKind::Ping => String::new(),
    };
    let revenue = match (event.revenue, kind) {
        (None, _) => None,
        (Some(revenue), EventKind::CustomEvent) => Some(money::parse(
            &field("revenue.amount"),
            &field("revenue.currency"),
            &revenue.amount,
            &revenue.currency,
        )?),
        (Some(_), _) => return Err(AppError::validation(&field("revenue"), "only a custom_event carries revenue")),
    };
    let props = serde_json::Value::Object(event.props.unwrap_or_default()).to_string();
    if props.len() > wire::MAX_PROPS_BYTES {
        return Err(AppError::validation(
            &field("props"),
            format!("must be at most {} bytes of JSON", wire::MAX_PROPS_BYTES),
        ));
    }
    let timestamp = match event.ts {
        None => now,
        Some(WireTime::Millis(ms)) => ms,
        Some(WireTime::Iso(text)) => parse_iso(&text)
            .ok_or_else(|| AppError::validation(&field("ts"), "must be epoch milliseconds or ISO 8601"))?,
    };
    if timestamp < now - MAX_PAST_MS || timestamp > now + MAX_FUTURE_MS {
        return Err(AppError::validation(&field("ts"), "must be within the last year and not in the future"));
    }
    let engaged_ms = event.engaged_ms.unwrap_or(0);
    if !(0..=MAX_ENGAGED_MS).contains(&engaged_ms) {
        return Err(AppError::validation(&field("engaged_ms"), "must be between 0 and 86400000"));
    }
    let click_key = event
        .lt_click
        .or_else(|| url.query_pairs().find(|(key, _)| key == "lt_click").map(|(_, value)| value.into_owned()))
        .filter(|key| !key.is_empty());
    if click_key.as_deref().is_some_and(|key| {
        key.len() > wire::MAX_CLICK_KEY_LEN || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    }) {
        return Err(AppError::validation(&field("lt_click"), "is not a click id"));
    }
    let mut own_hosts = vec![site.domain.as_str(), url.host_str().unwrap_or_default()];
    own_hosts.extend(site.first_party_domain.as_deref());
    let page = url.path().to_owned();
    Ok(CollectedEvent {
        site_id: site.id,
        tracker_vid,
        kind,
        event_name,
        high_value: kind == EventKind::Pageview && sites::is_high_value(&high_value_patterns(site), &page),
        page,
        hostname: url.host_str().map(str::to_lowercase),
        page_title: bounded(&field("title"), event.title, wire::MAX_TITLE_LEN)?,
        external_referrer_host: source::external_referrer_host(referrer.as_deref(), &own_hosts),
        referrer,
        utm: Utm::from_url(&url),
        click_key,
        props,
        revenue,
        engaged_ms,
        timestamp,
        network: client
            .network
            .as_ref()
            .map(|network| network.for_site(&sites::asn_list(&site.hosting_asns), &sites::asn_list(&site.isp_asns))),
        client,
    })
}
