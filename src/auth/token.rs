//! Random bearer secrets (session tokens, API keys) and their stored hashes.

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// 256 bits from the OS generator, URL-safe.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Tokens carry 256 bits of entropy, so a fast hash is enough: a leaked table
/// cannot be turned back into usable tokens.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

pub const API_KEY_PREFIX: &str = "lt_";

pub fn new_api_key() -> String {
    format!("{API_KEY_PREFIX}{}", random_token())
}

/// Whether a presented secret is the configured one. The digests are
/// compared, so the time taken says nothing about how much of the secret
/// was right.
pub fn same_secret(presented: &str, expected: &str) -> bool {
    Sha256::digest(presented.as_bytes()) == Sha256::digest(expected.as_bytes())
}
