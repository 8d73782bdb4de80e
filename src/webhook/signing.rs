//! Standard Webhooks signatures: `v1,` and base64 of HMAC-SHA256 over
//! `"{id}.{timestamp}.{body}"`, keyed with the secret after `whsec_`.

use base64::{Engine, engine::general_purpose::STANDARD};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

use crate::error::{AppError, AppResult};

/// A message id for the `webhook-id` header.
pub fn message_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    format!("msg_{}", hex::encode(bytes))
}

pub fn sign(secret: &str, id: &str, timestamp_secs: i64, body: &str) -> AppResult<String> {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap_or(secret))
        .map_err(|_| AppError::internal("the org's signing secret is not base64"))?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(AppError::internal)?;
    mac.update(format!("{id}.{timestamp_secs}.").as_bytes());
    mac.update(body.as_bytes());
    Ok(format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes())))
}

/// The three headers of a signed delivery, with a new message id.
pub fn headers(secret: &str, body: &str, now_ms: i64) -> AppResult<Vec<(String, String)>> {
    headers_for(secret, message_id(), body, now_ms)
}

/// The three headers of a signed delivery whose id is already chosen: an
/// alert keeps its id across retries, so receivers can deduplicate.
pub fn headers_for(secret: &str, id: String, body: &str, now_ms: i64) -> AppResult<Vec<(String, String)>> {
    let timestamp = now_ms / 1000;
    let signature = sign(secret, &id, timestamp, body)?;
    Ok(vec![
        ("webhook-id".to_owned(), id),
        ("webhook-timestamp".to_owned(), timestamp.to_string()),
        ("webhook-signature".to_owned(), signature),
    ])
}
