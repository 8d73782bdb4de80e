//! Where a form may send the browser next, and the sign-in detour.

/// The `next` target if it is a path on this site, else `/`. Only a single
/// leading slash is accepted: `//host` and `/\host` are read by browsers as
/// another host, and a scheme (`https:`, `javascript:`) is never a path.
/// Backslashes, whitespace, control and non-ASCII characters are refused
/// too, so the result is always a valid `Location` header.
pub fn safe_next(raw: Option<&str>) -> String {
    match raw {
        Some(next) if is_local_path(next) => next.to_owned(),
        _ => "/".to_owned(),
    }
}

fn is_local_path(next: &str) -> bool {
    let mut chars = next.chars();
    chars.next() == Some('/')
        && !matches!(chars.next(), Some('/' | '\\'))
        && next.len() <= 2048
        && next.chars().all(|c| c.is_ascii_graphic() && c != '\\')
}

/// `/login?next=<path and query>`, percent-encoded; `/` too, as design §13
/// says of every page.
pub fn login_redirect(path_and_query: &str) -> String {
    format!("/login?next={}", encode(&safe_next(Some(path_and_query))))
}

/// Percent-encodes a query value (form encoding, so a space is `+`).
pub fn encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// Percent-encodes one path segment: everything but unreserved characters.
pub fn encode_segment(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_accepts_only_paths_on_this_site() {
        let cases = [
            (None, "/"),
            (Some(""), "/"),
            (Some("/"), "/"),
            (Some("/leads?range=24h&hot=1"), "/leads?range=24h&hot=1"),
            (Some("/visitor/abc%20def"), "/visitor/abc%20def"),
            (Some("//evil.example"), "/"),
            (Some("//evil.example/path"), "/"),
            (Some("/\\evil.example"), "/"),
            (Some("/path\\..\\x"), "/"),
            (Some("https://evil.example/"), "/"),
            (Some("javascript:alert(1)"), "/"),
            (Some("evil.example"), "/"),
            (Some("/ok path"), "/"),
            (Some("/tab\there"), "/"),
            (Some("/line\nbreak"), "/"),
            (Some("/caf\u{e9}"), "/"),
        ];
        for (raw, expected) in cases {
            assert_eq!(safe_next(raw), expected, "{raw:?}");
        }
    }

    #[test]
    fn path_segments_keep_only_unreserved_characters() {
        let cases = [
            ("abc-123_x.y~z", "abc-123_x.y~z"),
            ("a b/c?d#e", "a%20b%2Fc%3Fd%23e"),
            ("<script>", "%3Cscript%3E"),
            ("..", ".."),
            ("caf\u{e9}", "caf%C3%A9"),
        ];
        for (raw, expected) in cases {
            assert_eq!(encode_segment(raw), expected, "{raw:?}");
        }
    }

    #[test]
    fn the_login_redirect_carries_the_path_percent_encoded() {
        let cases = [
            ("/", "/login?next=%2F"),
            ("/leads", "/login?next=%2Fleads"),
            ("/leads?range=24h&hot=1", "/login?next=%2Fleads%3Frange%3D24h%26hot%3D1"),
            ("//evil.example", "/login?next=%2F"),
        ];
        for (path, expected) in cases {
            assert_eq!(login_redirect(path), expected, "{path}");
        }
    }
}
