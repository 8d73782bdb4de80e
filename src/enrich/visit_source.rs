//! A visit's source, Explore's `visit:source` (design §17): the `utm_source`
//! a tagged link names, else the referring site's host without `www.`, else
//! none (a direct visit). Kept on the session when it opens; the migration
//! that added the column derives it for older sessions with this same rule,
//! so this file uses nothing but `url`.

/// The source of a visit tagged `utm_source` (empty counts as untagged) or
/// referred from `referrer_host`.
pub fn visit_source(utm_source: Option<&str>, referrer_host: Option<&str>) -> Option<String> {
    if let Some(tagged) = utm_source.map(str::trim).filter(|source| !source.is_empty()) {
        return Some(tagged.to_owned());
    }
    let host = referrer_host?.trim().to_lowercase();
    let bare = host.strip_prefix("www.").unwrap_or(&host);
    (!bare.is_empty()).then(|| bare.to_owned())
}

/// The host of a stored referrer URL, for sessions stored before the column.
pub fn referrer_host(referrer: &str) -> Option<String> {
    url::Url::parse(referrer).ok()?.host_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources() {
        let cases: [(Option<&str>, Option<&str>, Option<&str>); 6] = [
            (Some("newsletter"), Some("www.google.com"), Some("newsletter")),
            (Some("  "), Some("www.google.com"), Some("google.com")),
            (None, Some("News.YCombinator.com"), Some("news.ycombinator.com")),
            (None, Some("www."), None),
            (None, None, None),
            (Some(""), None, None),
        ];
        for (utm, host, expected) in cases {
            assert_eq!(visit_source(utm, host).as_deref(), expected, "{utm:?} {host:?}");
        }
        assert_eq!(referrer_host("https://www.google.com/search?q=x").as_deref(), Some("www.google.com"));
        assert_eq!(referrer_host("not a url"), None);
    }
}
