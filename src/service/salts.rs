//! Daily salts for cookieless tracking. A visitor id is a hash of the day's
//! salt, the site, the IP and the user agent; a salt is deleted once its day
//! is over, so an id cannot be recomputed after that.

use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, sea_query::OnConflict};
use sha2::{Digest, Sha256};

use entity::daily_salt;

use crate::{auth::token, error::AppResult, time::DAY_MS};

pub fn day_of(ms: i64) -> i64 {
    ms.div_euclid(DAY_MS)
}

/// The salt of `day`, created by whoever asks first.
pub async fn salt_for(db: &impl ConnectionTrait, day: i64) -> AppResult<String> {
    if let Some(found) = daily_salt::Entity::find_by_id(day).one(db).await? {
        return Ok(found.salt);
    }
    let row = daily_salt::ActiveModel { day: Set(day), salt: Set(token::random_token()) };
    daily_salt::Entity::insert(row)
        .on_conflict(OnConflict::column(daily_salt::Column::Day).do_nothing().to_owned())
        .exec_without_returning(db)
        .await?;
    delete_before(db, day).await?;
    let stored = daily_salt::Entity::find_by_id(day).one(db).await?;
    Ok(stored.map(|row| row.salt).unwrap_or_default())
}

/// Deletes the salts of days before `day`. Also run by the hourly retention
/// job, so a day's salt goes even when no cookieless hit comes the next day.
pub async fn delete_before(db: &impl ConnectionTrait, day: i64) -> AppResult<u64> {
    Ok(daily_salt::Entity::delete_many().filter(daily_salt::Column::Day.lt(day)).exec(db).await?.rows_affected)
}

pub fn cookieless_visitor_id(salt: &str, site_id: i64, ip: &str, user_agent: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [salt, &site_id.to_string(), ip, user_agent] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    format!("cl_{}", &hex::encode(hasher.finalize())[..32])
}
