//! The SSRF guard. A target must be http(s), and every address the client
//! connects to must be public. Names are checked where they are resolved for
//! the connection itself, so a name that resolves to a public address for a
//! check and a private one for the request (DNS rebinding) gets nowhere.

use std::{
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    sync::Arc,
};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use super::WebhookType;
use crate::error::{AppError, AppResult, ErrorCode};

pub const MAX_URL_LEN: usize = 2048;

/// Why a target was refused; found again in the client's error chain.
#[derive(Debug)]
pub struct RefusedTarget(pub String);

impl std::fmt::Display for RefusedTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RefusedTarget {}

/// The field a webhook target arrives in (`sendWebhook`'s input); other
/// inputs that take a target rename it (`AppError::renamed`).
pub const FIELD: &str = "webhookUrl";

/// A refused target: `problem` says what is wrong in words for a person.
pub fn refused(problem: impl std::fmt::Display) -> AppError {
    AppError::invalid(ErrorCode::InvalidWebhookUrl, FIELD, problem)
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || a == 0
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let segments = ip.segments();
    // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [a, b] = segments[6].to_be_bytes();
        let [c, d] = segments[7].to_be_bytes();
        return is_public_v4(Ipv4Addr::new(a, b, c, d));
    }
    // 6to4 (2002::/16) and IPv4-translated (::ffff:0:0:0/96) carry an IPv4 address too.
    let embedded = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    if segments[0] == 0x2002 {
        return is_public_v4(embedded(segments[1], segments[2]));
    }
    if segments[..5] == [0, 0, 0, 0, 0xffff] && segments[5] == 0 {
        return is_public_v4(embedded(segments[6], segments[7]));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        // Teredo, local-use NAT64, discard-only.
        || (segments[0] == 0x2001 && segments[1] == 0)
        || (segments[0] == 0x64 && segments[1] == 0xff9b && segments[2] == 1)
        || segments[..4] == [0x100, 0, 0, 0]
        || (segments[0] & 0xfe00) == 0xfc00
        || (segments[0] & 0xffc0) == 0xfe80
        || (segments[0] & 0xffc0) == 0xfec0
        || (segments[0] == 0x2001 && segments[1] == 0x0db8)
        || segments[..6] == [0, 0, 0, 0, 0, 0])
}

/// Whether an address is on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

/// Slack incoming webhooks.
fn is_slack(url: &Url) -> bool {
    url.host_str() == Some("hooks.slack.com") && url.path().starts_with("/services/")
}

/// Microsoft Teams workflows (Power Automate) and the older connectors.
fn is_teams(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    [".logic.azure.com", ".powerplatform.com", ".webhook.office.com"].iter().any(|suffix| host.ends_with(suffix))
}

/// Parses and checks a target before anything is sent. With `allow_any`, only
/// the scheme is checked.
pub fn check_url(raw: &str, kind: WebhookType, allow_any: bool) -> AppResult<Url> {
    if raw.len() > MAX_URL_LEN {
        return Err(refused(format!("must be at most {MAX_URL_LEN} characters")));
    }
    let url = Url::parse(raw.trim()).map_err(|_| refused("enter a full web address starting with https://"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refused("must start with https:// or http://"));
    }
    let Some(host) = url.host() else {
        return Err(refused("must name a host, as in https://hooks.example.com/..."));
    };
    if allow_any {
        return Ok(url);
    }
    // The URL parser already turned decimal, octal and hex IPv4 forms into addresses.
    let literal = match host {
        Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
        Host::Domain(_) => None,
    };
    if literal.is_some_and(|ip| !is_public(ip)) {
        return Err(refused("points to a private, loopback or reserved address"));
    }
    match kind {
        WebhookType::ChatOne if url.scheme() != "https" || !is_slack(&url) => {
            Err(refused("a Slack target must be an incoming-webhook address (https://hooks.slack.com/services/...)"))
        }
        WebhookType::ChatTwo if url.scheme() != "https" || !is_teams(&url) => {
            Err(refused("a Teams target must be a Microsoft Teams workflow address"))
        }
        _ => Ok(url),
    }
}

/// Resolves names for the webhook client and refuses the connection when any
/// resolved address is not public.
pub struct PublicOnlyResolver;

impl Resolve for PublicOnlyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            // The refusal does not say which address a name resolved to: it
            // would map this server's internal network for whoever asks.
            if addrs.iter().any(|addr| !is_public(addr.ip())) {
                let message = "its host does not resolve to a public address".to_owned();
                return Err(Box::new(RefusedTarget(message)) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

pub fn resolver() -> Arc<PublicOnlyResolver> {
    Arc::new(PublicOnlyResolver)
}

/// The refusal inside a client error, if the guard caused it.
pub fn refusal_in(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(err);
    while let Some(err) = current {
        if let Some(refused) = err.downcast_ref::<RefusedTarget>() {
            return Some(refused.0.clone());
        }
        current = err.source();
    }
    None
}
