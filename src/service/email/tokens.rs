//! Single-use tokens sent by email. The raw token only ever exists in the
//! message; the table holds its hash. Using one is one statement, so two
//! requests racing with the same link cannot both succeed.

use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, sea_query::Expr,
};

use entity::auth_token;

use crate::{
    auth::token::{hash_token, random_token},
    error::{AppError, AppResult},
};

/// Issues a token for `purpose`, replacing the user's unused ones of the same
/// purpose (only the newest reset link works). Answers the raw token.
pub async fn issue(
    db: &impl ConnectionTrait,
    user_id: i64,
    purpose: &str,
    email: &str,
    lifetime_ms: i64,
    now: i64,
) -> AppResult<String> {
    auth_token::Entity::delete_many()
        .filter(auth_token::Column::UserId.eq(user_id))
        .filter(auth_token::Column::Purpose.eq(purpose))
        .filter(auth_token::Column::UsedAt.is_null())
        .exec(db)
        .await?;
    let token = random_token();
    auth_token::ActiveModel {
        user_id: Set(user_id),
        purpose: Set(purpose.to_owned()),
        token_hash: Set(hash_token(&token)),
        email: Set(email.to_owned()),
        expires_at: Set(now + lifetime_ms),
        used_at: Set(None),
        created_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(token)
}

/// Why a token cannot be used, for the page and the API (field `token`).
pub fn refused(reason: &str) -> AppError {
    AppError::validation("token", reason)
}

/// Whether the token could be used now, without using it: a page checks
/// the link before asking for a new password. Same refusals as `consume`.
pub async fn check(db: &impl ConnectionTrait, purpose: &str, raw: &str, now: i64) -> AppResult<()> {
    let found = auth_token::Entity::find()
        .filter(auth_token::Column::TokenHash.eq(hash_token(raw.trim())))
        .filter(auth_token::Column::Purpose.eq(purpose))
        .one(db)
        .await?;
    match found {
        Some(token) if token.used_at.is_some() => Err(refused("this link was already used; ask for a new one")),
        Some(token) if token.expires_at <= now => Err(refused("this link has expired; ask for a new one")),
        Some(_) => Ok(()),
        None => Err(refused("this link is not valid; ask for a new one")),
    }
}

/// Uses the token: it must be of `purpose`, unused and unexpired. Answers
/// the token's row; a wrong, used or expired token is a 400 on `token` that
/// says which.
pub async fn consume(db: &impl ConnectionTrait, purpose: &str, raw: &str, now: i64) -> AppResult<auth_token::Model> {
    use auth_token::Column as T;
    let hash = hash_token(raw.trim());
    let used = auth_token::Entity::update_many()
        .col_expr(T::UsedAt, Expr::value(now))
        .filter(T::TokenHash.eq(hash.as_str()))
        .filter(T::Purpose.eq(purpose))
        .filter(T::UsedAt.is_null())
        .filter(T::ExpiresAt.gt(now))
        .exec_with_returning(db)
        .await?;
    match used.into_iter().next() {
        Some(token) => Ok(token),
        None => {
            // Say why: `check` names the fault of the row the update did not take.
            check(db, purpose, raw, now).await?;
            Err(refused("this link is not valid; ask for a new one"))
        }
    }
}
