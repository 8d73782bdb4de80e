//! Turning answers into text and links for templates. Anything that becomes
//! an `href` goes through here: collected data is attacker-controlled, so
//! only http(s) URLs, checked phone numbers and addresses become links.

use crate::time::{self, DAY_MS, HOUR_MS, MINUTE_MS};

/// An ISO timestamp as `2026-11-22 14:03 UTC`; unreadable text is shown as is.
pub fn when(iso: &str) -> String {
    match time::parse_iso(iso).and_then(chrono::DateTime::from_timestamp_millis) {
        Some(instant) => instant.format("%Y-%m-%d %H:%M UTC").to_string(),
        None => iso.to_owned(),
    }
}

/// An ISO timestamp as `2026-11-22 14:03:09 UTC`, for timelines.
pub fn when_exact(iso: &str) -> String {
    match time::parse_iso(iso).and_then(chrono::DateTime::from_timestamp_millis) {
        Some(instant) => instant.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        None => iso.to_owned(),
    }
}

/// `1 session`, `3 sessions`.
pub fn count(value: i64, one: &str, many: &str) -> String {
    format!("{} {}", number(value), if value == 1 { one } else { many })
}

/// How long before `now` an ISO timestamp was: `just now`, `5 min ago`, `3 h ago`, `2 days ago`.
pub fn ago(iso: &str, now: i64) -> String {
    let Some(at) = time::parse_iso(iso) else {
        return iso.to_owned();
    };
    match now.saturating_sub(at) {
        gap if gap < MINUTE_MS => "just now".to_owned(),
        gap if gap < HOUR_MS => format!("{} min ago", gap / MINUTE_MS),
        gap if gap < DAY_MS => format!("{} h ago", gap / HOUR_MS),
        gap if gap < 2 * DAY_MS => "1 day ago".to_owned(),
        gap => format!("{} days ago", gap / DAY_MS),
    }
}

/// Seconds as `45s`, `3m 20s`, `2h 05m`.
pub fn duration(seconds: i64) -> String {
    let seconds = seconds.max(0);
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `1234567` as `1,234,567`.
pub fn number(value: i64) -> String {
    let digits = value.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if value < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The URL as a link target, only when it is an absolute http or https URL.
/// Anything else (`javascript:`, `data:`, relative or junk) is shown as
/// text and never becomes clickable.
pub fn http_href(raw: &str) -> Option<String> {
    let parsed = url::Url::parse(raw.trim()).ok()?;
    matches!(parsed.scheme(), "http" | "https").then(|| parsed.to_string())
}

/// A `tel:` link for a phone number made only of digits, spaces and `+-().`.
pub fn tel_href(phone: &str) -> Option<String> {
    let phone = phone.trim();
    let digits = phone.chars().filter(char::is_ascii_digit).count();
    let allowed = phone.chars().all(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | ' ' | '(' | ')' | '.'));
    (allowed && (3..=20).contains(&digits)).then(|| {
        let compact: String = phone.chars().filter(|c| c.is_ascii_digit() || *c == '+').collect();
        format!("tel:{compact}")
    })
}

/// A `mailto:` link for a plain, valid address.
pub fn mailto_href(email: &str) -> Option<String> {
    let email = email.trim();
    let plain = email.chars().all(|c| c.is_ascii_graphic() && !matches!(c, '?' | '&' | '#' | '%' | '"' | '<' | '>'));
    (plain && email_address::EmailAddress::is_valid(email)).then(|| format!("mailto:{email}"))
}

/// A short text for a JSON value: strings as they are, others as JSON.
pub fn json_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The entries of a JSON object as (key, text) pairs, in key order, at most `limit`.
pub fn json_pairs(value: &serde_json::Value, limit: usize) -> Vec<(String, String)> {
    match value {
        serde_json::Value::Object(map) => map.iter().take(limit).map(|(k, v)| (k.clone(), json_text(v))).collect(),
        _ => Vec::new(),
    }
}

/// Text or a dash, for optional fields.
pub fn or_dash(value: Option<&str>) -> String {
    match value.map(str::trim) {
        Some(text) if !text.is_empty() => text.to_owned(),
        _ => "—".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_urls_become_links() {
        let cases = [
            ("https://example.com/pricing?a=1", Some("https://example.com/pricing?a=1")),
            ("http://example.com", Some("http://example.com/")),
            ("  https://example.com/x  ", Some("https://example.com/x")),
            ("javascript:window.__pwned=1", None),
            ("JaVaScRiPt:alert(1)", None),
            (" javascript:alert(1)", None),
            ("data:text/html,<script>alert(1)</script>", None),
            ("vbscript:msgbox", None),
            ("//evil.example/x", None),
            ("/relative", None),
            ("", None),
            ("https://exa mple.com", None),
        ];
        for (raw, expected) in cases {
            assert_eq!(http_href(raw).as_deref(), expected, "{raw:?}");
        }
    }

    #[test]
    fn phone_and_mail_links_are_checked() {
        let phones = [
            ("+1 (555) 010-2030", Some("tel:+15550102030")),
            ("555.0100", Some("tel:5550100")),
            ("12", None),
            ("javascript:1", None),
            ("+1 555 0100<script>", None),
        ];
        for (raw, expected) in phones {
            assert_eq!(tel_href(raw).as_deref(), expected, "{raw:?}");
        }
        let mails = [
            ("pat@example.com", Some("mailto:pat@example.com")),
            ("pat@example.com?subject=x", None),
            ("\"a b\"@example.com", None),
            ("not an email", None),
            ("javascript:alert(1)//@x.com", None),
        ];
        for (raw, expected) in mails {
            assert_eq!(mailto_href(raw).as_deref(), expected, "{raw:?}");
        }
    }

    #[test]
    fn numbers_durations_and_ages_read_naturally() {
        for (value, text) in [(0, "0"), (999, "999"), (1000, "1,000"), (1_234_567, "1,234,567"), (-4200, "-4,200")] {
            assert_eq!(number(value), text);
        }
        for (seconds, text) in [(-3, "0s"), (45, "45s"), (200, "3m 20s"), (7500, "2h 05m")] {
            assert_eq!(duration(seconds), text);
        }
        let now = 1_795_000_000_000;
        let cases = [
            (now - 5_000, "just now"),
            (now - 5 * MINUTE_MS, "5 min ago"),
            (now - 3 * HOUR_MS, "3 h ago"),
            (now - 30 * HOUR_MS, "1 day ago"),
            (now - 9 * DAY_MS, "9 days ago"),
        ];
        for (at, text) in cases {
            assert_eq!(ago(&time::iso(at), now), text);
        }
        assert_eq!(when("2026-11-22T14:03:09.120Z"), "2026-11-22 14:03 UTC");
        assert_eq!(when("junk"), "junk");
        assert_eq!(when_exact("2026-11-22T14:03:09.120Z"), "2026-11-22 14:03:09 UTC");
        assert_eq!(
            (count(1, "session", "sessions"), count(2, "session", "sessions")),
            ("1 session".to_owned(), "2 sessions".to_owned())
        );
    }
}
