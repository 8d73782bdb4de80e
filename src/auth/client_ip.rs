//! The client's address: the peer, unless TRUST_PROXY names a proxy whose header to believe.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::{extract::ConnectInfo, http::request::Parts};

use crate::config::TrustProxy;

pub fn client_ip(parts: &Parts, trust: TrustProxy) -> IpAddr {
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let header = |name: &str| parts.headers.get(name).and_then(|value| value.to_str().ok());
    let forwarded = match trust {
        TrustProxy::None => None,
        TrustProxy::Cloudflare => header("cf-connecting-ip").map(str::to_owned),
        TrustProxy::Vercel => header("x-real-ip").map(str::to_owned),
        // The rightmost entry was added by our own proxy; earlier ones are the
        // client's word and can be forged.
        TrustProxy::Xff => {
            header("x-forwarded-for").and_then(|list| list.rsplit(',').next()).map(|entry| entry.trim().to_owned())
        }
    };
    forwarded.and_then(|value| value.parse().ok()).unwrap_or(peer)
}

/// Extracts the client address as TRUST_PROXY says to find it.
pub struct ClientIp(pub IpAddr);

impl<S> axum::extract::FromRequestParts<S> for ClientIp
where
    S: Send + Sync,
    crate::state::AppState: axum::extract::FromRef<S>,
{
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let app = <crate::state::AppState as axum::extract::FromRef<S>>::from_ref(state);
        Ok(ClientIp(client_ip(parts, app.config.trust_proxy)))
    }
}
