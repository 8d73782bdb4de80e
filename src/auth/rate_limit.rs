//! Per-client-IP rate limits on the credential endpoints.

use std::{net::IpAddr, num::NonZeroU32};

use governor::{
    DefaultKeyedRateLimiter, Quota, RateLimiter,
    clock::{Clock, DefaultClock},
};

use crate::error::{AppError, AppResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CredentialAction {
    SignUp,
    SignIn,
    ChangePassword,
    ChangeEmail,
    DeleteUser,
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

    pub fn per_second(count: u32) -> Self {
        Self::new(Quota::per_second(NonZeroU32::new(count).unwrap_or(NonZeroU32::MIN)))
    }

    pub fn check(&self, key: K) -> AppResult<()> {
        if self.limiter.len() > RETAIN_THRESHOLD {
            self.limiter.retain_recent();
        }
        self.limiter.check_key(&key).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            AppError::rate_limited(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
        })
    }
}

pub type CredentialLimiter = KeyedLimiter<(CredentialAction, IpAddr)>;
