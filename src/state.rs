//! Shared application state.

use std::{ops::Deref, sync::Arc};

use sea_orm::DatabaseConnection;
use tokio::sync::broadcast;

use crate::{
    auth::rate_limit::{CredentialLimiter, KeyedLimiter},
    config::Config,
    graphql::types::LiveActivity,
    metrics::Metrics,
};

#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    pub db: DatabaseConnection,
    pub config: Config,
    pub credential_limiter: CredentialLimiter,
    /// Every stored visitor event, for the `liveVisitors` subscription.
    pub live: broadcast::Sender<LiveActivity>,
    pub metrics: Metrics,
    /// BASE_URL's origin, which cookie-authenticated writes must come from.
    pub base_origin: String,
}

impl AppState {
    pub fn new(db: DatabaseConnection, config: Config) -> Self {
        let credential_limiter = KeyedLimiter::per_minute(config.auth_rate_limit_per_minute);
        let (live, _) = broadcast::channel(1024);
        let base_origin = config.base_origin();
        Self(Arc::new(Shared {
            db,
            config,
            credential_limiter,
            live,
            metrics: Metrics::default(),
            base_origin,
        }))
    }
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}
