//! The slug, destination-URL and webhook-target validators must never panic,
//! and what they accept must hold up.
#![no_main]

use leadtrail::{
    service::links,
    webhook::{WebhookType, guard},
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &str| {
    if links::validate_slug(input).is_ok() {
        assert!((1..=64).contains(&input.len()));
        assert!(input.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
    }
    if let Ok(url) = links::validate_destination(input) {
        let lower = url.to_ascii_lowercase();
        assert!(lower.starts_with("http://") || lower.starts_with("https://"), "{url}");
        assert!(!url.chars().any(char::is_control));
    }
    for kind in WebhookType::ALL {
        if let Ok(url) = guard::check_url(input, kind, false) {
            assert!(matches!(url.scheme(), "http" | "https"));
        }
    }
});
