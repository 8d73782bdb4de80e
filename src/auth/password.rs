//! argon2id password hashing. Hashing is CPU-bound, so it runs off the async threads.

use argon2::{
    Argon2, PasswordHash, PasswordHasher, PasswordVerifier,
    password_hash::{SaltString, rand_core::OsRng},
};

use crate::error::{AppError, AppResult, ErrorCode};

pub const MIN_LEN: usize = 8;
pub const MAX_LEN: usize = 128;

/// Length rules, checked before any hashing so a huge password costs nothing;
/// `field` names the input the password came in.
pub fn validate(field: &str, password: &str) -> AppResult<()> {
    let len = password.chars().count();
    if len < MIN_LEN {
        return Err(AppError::invalid(
            ErrorCode::PasswordTooShort,
            field,
            format!("must be at least {MIN_LEN} characters"),
        ));
    }
    if len > MAX_LEN {
        return Err(AppError::invalid(
            ErrorCode::PasswordTooLong,
            field,
            format!("must be at most {MAX_LEN} characters"),
        ));
    }
    Ok(())
}

/// argon2's defaults are OWASP's argon2id recommendation (19 MiB, t=2, p=1).
pub async fn hash(password: String) -> AppResult<String> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|hash| hash.to_string())
            .map_err(AppError::internal)
    })
    .await
    .map_err(AppError::internal)?
}

pub async fn verify(password: String, stored_hash: String) -> AppResult<bool> {
    tokio::task::spawn_blocking(move || {
        let parsed = PasswordHash::new(&stored_hash).map_err(AppError::internal)?;
        Ok(Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
    })
    .await
    .map_err(AppError::internal)?
}

/// Spends the time of one verification, so an unknown email answers as slowly
/// as a wrong password and the two cannot be told apart.
pub async fn burn_verify_time(password: String) {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let dummy = match DUMMY.get() {
        Some(hash) => hash.clone(),
        None => match hash("timing-equaliser".to_owned()).await {
            Ok(hash) => DUMMY.get_or_init(|| hash).clone(),
            Err(_) => return,
        },
    };
    let _ = verify(password, dummy).await;
}
