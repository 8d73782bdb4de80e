//! User-agent classification: woothee for browser, OS and category; isbot's
//! pattern list for the many automated clients woothee does not know.

use std::{
    num::NonZeroUsize,
    sync::{Arc, Mutex, OnceLock},
};

use lru::LruCache;

pub const DESKTOP: &str = "desktop";
pub const MOBILE: &str = "mobile";
pub const TABLET: &str = "tablet";
pub const BOT: &str = "bot";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientInfo {
    pub browser: Option<String>,
    pub os: Option<String>,
    /// `desktop`, `mobile`, `tablet` or `bot`.
    pub device_type: String,
    pub is_bot: bool,
}

fn bots() -> &'static isbot::Bots {
    static BOTS: OnceLock<isbot::Bots> = OnceLock::new();
    BOTS.get_or_init(isbot::Bots::default)
}

fn known(value: &str) -> Option<String> {
    (!value.is_empty() && value != woothee::woothee::VALUE_UNKNOWN).then(|| value.to_owned())
}

/// User agents repeat a lot (a few browser versions make most traffic), so
/// recent classifications are kept.
const CACHED_AGENTS: usize = 4096;
/// Longer strings are classified every time rather than kept.
const MAX_CACHED_LEN: usize = 512;

fn cache() -> &'static Mutex<LruCache<String, Arc<ClientInfo>>> {
    static CACHE: OnceLock<Mutex<LruCache<String, Arc<ClientInfo>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(LruCache::new(NonZeroUsize::new(CACHED_AGENTS).unwrap_or(NonZeroUsize::MIN))))
}

/// `classify`, remembered for recently seen user agents.
pub fn classify_cached(user_agent: &str) -> Arc<ClientInfo> {
    if user_agent.len() > MAX_CACHED_LEN {
        return Arc::new(classify(user_agent));
    }
    if let Some(info) = cache().lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(user_agent) {
        return info.clone();
    }
    let info = Arc::new(classify(user_agent));
    cache().lock().unwrap_or_else(|poisoned| poisoned.into_inner()).put(user_agent.to_owned(), info.clone());
    info
}

pub fn classify(user_agent: &str) -> ClientInfo {
    let parsed = woothee::parser::Parser::new().parse(user_agent);
    let category = parsed.as_ref().map(|p| p.category).unwrap_or_default();
    let is_bot = user_agent.trim().is_empty() || category == "crawler" || bots().is_bot(user_agent);
    let os = parsed.as_ref().and_then(|p| known(p.os));
    let device_type = if is_bot {
        BOT
    } else if is_tablet(user_agent, os.as_deref()) {
        TABLET
    } else if matches!(category, "smartphone" | "mobilephone") {
        MOBILE
    } else {
        DESKTOP
    };
    ClientInfo { browser: parsed.as_ref().and_then(|p| known(p.name)), os, device_type: device_type.to_owned(), is_bot }
}

/// woothee files tablets under smartphones. iPads report an `iPad` OS, and
/// Android tablets leave out the `Mobile` token that Android phones send.
fn is_tablet(user_agent: &str, os: Option<&str>) -> bool {
    os == Some("iPad")
        || user_agent.contains("Tablet")
        || (user_agent.contains("Android") && !user_agent.contains("Mobile"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        let desktop = classify(
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
        );
        assert_eq!((desktop.device_type.as_str(), desktop.browser.as_deref()), (DESKTOP, Some("Chrome")));
        let phone = classify(
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
        );
        assert_eq!(phone.device_type, MOBILE);
        let tablet = classify(
            "Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
        );
        assert_eq!(tablet.device_type, TABLET);
        let android_tablet = classify(
            "Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
        );
        assert_eq!(android_tablet.device_type, TABLET);
        let bot = classify("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)");
        assert!(bot.is_bot);
        assert_eq!(bot.device_type, BOT);
        assert!(classify("curl/8.5.0").is_bot);
        assert!(classify("").is_bot);
    }
}
