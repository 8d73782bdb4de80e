//! Today's cookieless salt, read from the database once a day.

use sea_orm::ConnectionTrait;
use tokio::sync::Mutex;

use crate::{error::AppResult, service::salts};

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
