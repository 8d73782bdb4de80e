//! The client's address: the peer, unless TRUST_PROXY names a proxy whose
//! header to believe, and TRUSTED_PROXIES (when set) includes the peer.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::{
    extract::ConnectInfo,
    http::{HeaderMap, request::Parts},
};

use crate::config::{Config, TrustProxy};

/// The peer's address, as the server accepted the connection.
fn peer(parts: &Parts) -> IpAddr {
    parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|info| info.0.ip()).unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// The proxy whose headers this request's client-IP and geo come from: the
/// configured one when the peer is allowed to speak for it, else none.
pub fn believed_proxy(config: &Config, peer: IpAddr) -> TrustProxy {
    let trusted = config.trusted_proxies.is_empty() || config.trusted_proxies.iter().any(|net| net.contains(&peer));
    if trusted { config.trust_proxy } else { TrustProxy::None }
}

/// The client address a proxy's header names, if it names one.
fn forwarded(headers: &HeaderMap, proxy: TrustProxy) -> Option<IpAddr> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    let value = match proxy {
        TrustProxy::None => None,
        TrustProxy::Cloudflare => header("cf-connecting-ip"),
        TrustProxy::Vercel => header("x-real-ip"),
        // The rightmost entry was added by our own proxy; earlier ones are the
        // client's word and can be forged.
        TrustProxy::Xff => header("x-forwarded-for").and_then(|list| list.rsplit(',').next()),
    };
    value.and_then(|value| value.trim().parse().ok())
}

pub fn client_ip(parts: &Parts, config: &Config) -> IpAddr {
    let peer = peer(parts);
    forwarded(&parts.headers, believed_proxy(config, peer)).unwrap_or(peer)
}

/// Extracts the client address as TRUST_PROXY and TRUSTED_PROXIES say to
/// find it, and the proxy whose geo headers may be believed.
pub struct ClientIp(pub IpAddr, pub TrustProxy);

impl<S> axum::extract::FromRequestParts<S> for ClientIp
where
    S: Send + Sync,
    crate::state::AppState: axum::extract::FromRef<S>,
{
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let app = <crate::state::AppState as axum::extract::FromRef<S>>::from_ref(state);
        let peer = peer(parts);
        let proxy = believed_proxy(&app.config, peer);
        Ok(ClientIp(forwarded(&parts.headers, proxy).unwrap_or(peer), proxy))
    }
}
