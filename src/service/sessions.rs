//! Server-side sign-in sessions behind the `session` cookie.

use sea_orm::{ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use entity::auth_session;

use crate::{
    auth::{RequestMeta, Viewer, token},
    cluster::{AccessRevoked, Cluster},
    error::AppResult,
    time::{DAY_MS, now_ms},
};

pub const PERSISTENT_LIFETIME_MS: i64 = 7 * DAY_MS;
pub const BROWSER_LIFETIME_MS: i64 = DAY_MS;
/// A persistent session's expiry moves forward at most once a day.
const SLIDE_STEP_MS: i64 = DAY_MS;

pub fn lifetime_ms(persistent: bool) -> i64 {
    if persistent { PERSISTENT_LIFETIME_MS } else { BROWSER_LIFETIME_MS }
}

/// Starts a session and returns its token, the only copy of which goes to the client.
pub async fn create(
    db: &impl ConnectionTrait,
    user_id: i64,
    persistent: bool,
    meta: &RequestMeta,
) -> AppResult<String> {
    let token = token::random_token();
    let now = now_ms();
    auth_session::ActiveModel {
        user_id: Set(user_id),
        token_hash: Set(token::hash_token(&token)),
        created_at: Set(now),
        expires_at: Set(now + lifetime_ms(persistent)),
        updated_at: Set(now),
        persistent: Set(persistent),
        // Design §14: no IP address is stored, in any table.
        ip: Set(None),
        user_agent: Set(meta.user_agent.clone()),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(token)
}

pub struct Resolved {
    pub viewer: Viewer,
    /// Set when this request slid the expiry forward, so the cookie is re-sent.
    pub refreshed_expiry: Option<i64>,
}

pub async fn resolve(db: &impl ConnectionTrait, token: &str) -> AppResult<Option<Resolved>> {
    let Some(session) = auth_session::Entity::find()
        .filter(auth_session::Column::TokenHash.eq(token::hash_token(token)))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let now = now_ms();
    if session.expires_at <= now {
        auth_session::Entity::delete_by_id(session.id).exec(db).await?;
        return Ok(None);
    }
    let mut refreshed_expiry = None;
    let slid_expiry = now + PERSISTENT_LIFETIME_MS;
    if session.persistent && slid_expiry - session.expires_at >= SLIDE_STEP_MS {
        let mut active: auth_session::ActiveModel = session.clone().into();
        active.expires_at = Set(slid_expiry);
        active.updated_at = Set(now);
        active.update(db).await?;
        refreshed_expiry = Some(slid_expiry);
    }
    Ok(Some(Resolved {
        viewer: Viewer::User {
            user_id: session.user_id,
            session_id: session.id,
            session_created_at: session.created_at,
        },
        refreshed_expiry,
    }))
}

pub async fn find(db: &impl ConnectionTrait, session_id: i64) -> AppResult<Option<auth_session::Model>> {
    Ok(auth_session::Entity::find_by_id(session_id).one(db).await?)
}

/// Ends one session (sign-out); sockets opened with it close on every instance.
pub async fn delete(db: &impl ConnectionTrait, cluster: &Cluster, session_id: i64) -> AppResult<()> {
    auth_session::Entity::delete_by_id(session_id).exec(db).await?;
    cluster.access_revoked(AccessRevoked::Session { session_id }).await;
    Ok(())
}

pub async fn delete_all_of_user(db: &impl ConnectionTrait, user_id: i64) -> AppResult<()> {
    auth_session::Entity::delete_many().filter(auth_session::Column::UserId.eq(user_id)).exec(db).await?;
    Ok(())
}
