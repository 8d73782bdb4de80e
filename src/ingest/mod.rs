//! Public hot paths: the collect endpoint, the tracker script, the short-link
//! redirect, and the batch writer behind them. They bypass GraphQL: validate, enrich, enqueue, answer.

pub mod collect;
pub mod link_cache;
pub mod redirect;
pub mod script;
pub mod site_cache;
pub mod wire;
pub mod writer;

use sea_orm::ConnectionTrait;
use tokio::sync::Mutex;

use crate::{error::AppResult, service::salts};

/// Today's cookieless salt, read from the database once a day.
#[derive(Default)]
pub struct SaltCache(Mutex<Option<(i64, String)>>);

impl SaltCache {
    pub async fn today(&self, db: &impl ConnectionTrait, now: i64) -> AppResult<String> {
        let day = salts::day_of(now);
        let mut cached = self.0.lock().await;
        if let Some((cached_day, salt)) = cached.as_ref()
            && *cached_day == day
        {
            return Ok(salt.clone());
        }
        let salt = salts::salt_for(db, day).await?;
        *cached = Some((day, salt.clone()));
        Ok(salt)
    }
}
