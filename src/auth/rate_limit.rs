//! Rate limits: per client address on the credential endpoints and collect,
//! per account on sign-in, per caller on reads. All are per instance.

use std::{
    net::{IpAddr, Ipv6Addr},
    num::NonZeroU32,
};

use governor::{
    DefaultKeyedRateLimiter, Quota, RateLimiter,
    clock::{Clock, DefaultClock},
};

use super::{RequestContext, Viewer};
use crate::error::{AppError, AppResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CredentialAction {
    SignUp,
    SignIn,
    ChangePassword,
    ChangeEmail,
    DeleteUser,
    /// request-password-reset and send-verification-email: each sends mail.
    RequestEmail,
    /// reset-password and verify-email: each tries a token.
    UseToken,
}

pub struct KeyedLimiter<K: std::hash::Hash + Eq + Clone> {
    limiter: DefaultKeyedRateLimiter<K>,
}

/// Past this many tracked keys, forget the ones whose budget has refilled.
const RETAIN_THRESHOLD: usize = 10_000;

impl<K: std::hash::Hash + Eq + Clone> KeyedLimiter<K> {
    pub fn new(quota: Quota) -> Self {
        Self { limiter: RateLimiter::keyed(quota) }
    }

    pub fn per_minute(count: u32) -> Self {
        Self::new(Quota::per_minute(NonZeroU32::new(count).unwrap_or(NonZeroU32::MIN)))
    }

    pub fn per_hour(count: u32) -> Self {
        Self::new(Quota::per_hour(NonZeroU32::new(count).unwrap_or(NonZeroU32::MIN)))
    }

    pub fn per_second(count: u32) -> Self {
        Self::new(Quota::per_second(NonZeroU32::new(count).unwrap_or(NonZeroU32::MIN)))
    }

    pub fn check(&self, key: K) -> AppResult<()> {
        self.check_n(key, 1)
    }

    /// Takes `n` from the key's budget at once. More than the whole budget
    /// can never pass: it waits for the full budget and still fails.
    pub fn check_n(&self, key: K, n: u32) -> AppResult<()> {
        if self.limiter.len() > RETAIN_THRESHOLD {
            self.limiter.retain_recent();
        }
        let n = NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN);
        match self.limiter.check_key_n(&key, n) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(not_until)) => {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                Err(AppError::rate_limited(wait.as_secs() + u64::from(wait.subsec_nanos() > 0)))
            }
            Err(_) => Err(AppError::rate_limited(60)),
        }
    }
}

/// Whose read budget an operation spends: a person, an API key, or, for
/// callers without a credential, their address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Caller {
    User(i64),
    ApiKey(i64),
    Address(IpAddr),
}

impl Caller {
    pub fn of(request: &RequestContext) -> Self {
        match &request.viewer {
            Some(Viewer::User { user_id, .. }) => Caller::User(*user_id),
            Some(Viewer::ApiKey { key_id, .. }) => Caller::ApiKey(*key_id),
            None => Caller::Address(address_key(request.meta.client_ip)),
        }
    }
}

/// How much GraphQL work (the complexity points of `graphql::cost`) each
/// caller may have run per minute, REST routes and web pages included, since
/// they run GraphQL documents too. A burst of the whole minute is allowed.
pub struct ReadBudget {
    limiter: KeyedLimiter<Caller>,
}

impl ReadBudget {
    pub fn per_minute(points: u32) -> Self {
        Self { limiter: KeyedLimiter::per_minute(points) }
    }

    pub fn charge(&self, request: &RequestContext, cost: usize) -> AppResult<()> {
        let cost = u32::try_from(cost).unwrap_or(u32::MAX);
        self.limiter.check_n(Caller::of(request), cost).map_err(|err| AppError {
            message: "read budget used up for this minute; retry after the time in Retry-After".to_owned(),
            ..err
        })
    }
}

pub type CredentialLimiter = KeyedLimiter<(CredentialAction, IpAddr)>;

/// The key a client address is limited under. An IPv6 host usually holds a
/// whole /64 (SLAAC, privacy addresses), so one budget covers the /64; an
/// IPv4-mapped address is the IPv4 address it maps.
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from_bits(v6.to_bits() & !u128::from(u64::MAX))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_hosts_share_their_slash_64() {
        for (address, key) in [
            ("192.0.2.7", "192.0.2.7"),
            ("::ffff:192.0.2.7", "192.0.2.7"),
            ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::"),
            ("2001:db8:1:2::1", "2001:db8:1:2::"),
            ("2001:db8:1:3::1", "2001:db8:1:3::"),
            ("::1", "::"),
        ] {
            let address: IpAddr = address.parse().expect("an address");
            assert_eq!(address_key(address).to_string(), key, "{address}");
        }
    }
}
