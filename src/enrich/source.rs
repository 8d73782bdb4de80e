//! Where a visit came from: UTM parameters, the external referrer, and the
//! channel, following Plausible's ordered rules in simplified form.

use url::Url;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Utm {
    pub source: Option<String>,
    pub medium: Option<String>,
    pub campaign: Option<String>,
    pub content: Option<String>,
    pub term: Option<String>,
}

impl Utm {
    pub fn from_url(url: &Url) -> Self {
        let mut utm = Utm::default();
        for (key, value) in url.query_pairs() {
            let value = value.trim();
            if value.is_empty() {
                continue;
            }
            let slot = match key.as_ref() {
                "utm_source" => &mut utm.source,
                "utm_medium" => &mut utm.medium,
                "utm_campaign" => &mut utm.campaign,
                "utm_content" => &mut utm.content,
                "utm_term" => &mut utm.term,
                _ => continue,
            };
            slot.get_or_insert_with(|| value.chars().take(256).collect());
        }
        utm
    }

    /// A visit is tagged with a campaign when any of these three is set; a
    /// change of them starts a new session.
    pub fn campaign_key(&self) -> Option<(Option<&str>, Option<&str>, Option<&str>)> {
        let key = (self.source.as_deref(), self.medium.as_deref(), self.campaign.as_deref());
        (key != (None, None, None)).then_some(key)
    }
}

const SEARCH_ENGINES: &[&str] = &[
    "google",
    "bing",
    "yahoo",
    "duckduckgo",
    "baidu",
    "yandex",
    "ecosia",
    "search.brave",
    "startpage",
    "qwant",
    "naver",
    "seznam",
    "sogou",
    "kagi",
];
const SOCIAL_NETWORKS: &[&str] = &[
    "facebook",
    "fb",
    "instagram",
    "twitter",
    "t.co",
    "x.com",
    "linkedin",
    "lnkd.in",
    "reddit",
    "pinterest",
    "youtube",
    "tiktok",
    "threads",
    "mastodon",
    "bsky",
    "snapchat",
    "tumblr",
    "quora",
    "vk.com",
    "whatsapp",
    "telegram",
    "discord",
];

fn mentions(haystack: &str, names: &[&str]) -> bool {
    names.iter().any(|name| {
        haystack == *name
            || haystack.starts_with(&format!("{name}."))
            || haystack.contains(&format!(".{name}."))
            || haystack.ends_with(&format!(".{name}"))
            || (name.contains('.') && haystack.contains(name))
    })
}

fn is_paid_medium(medium: &str) -> bool {
    medium.contains("cp") || matches!(medium, "ppc" | "retargeting" | "paid") || medium.starts_with("paid")
}

/// How a tracking link describes itself; `ad` is paid and `bio` is organic social.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    Content,
    Ad,
    Bio,
}

/// Every channel `channel` answers, in its order of precedence.
pub const CHANNELS: [&str; 9] = [
    "Paid Search",
    "Paid Social",
    "Display",
    "Paid Other",
    "Organic Social",
    "Organic Search",
    "Email",
    "Referral",
    "Direct",
];

/// The channel of a visit from its UTM tags, external referrer host and, when
/// it came through a tracking link, that link's type.
pub fn channel(utm: &Utm, referrer_host: Option<&str>, link: Option<LinkKind>) -> &'static str {
    let source = utm.source.as_deref().unwrap_or_default().to_lowercase();
    let medium = utm.medium.as_deref().unwrap_or_default().to_lowercase();
    let referrer = referrer_host.unwrap_or_default().to_lowercase();
    let from_search = mentions(&source, SEARCH_ENGINES) || mentions(&referrer, SEARCH_ENGINES);
    let from_social = mentions(&source, SOCIAL_NETWORKS) || mentions(&referrer, SOCIAL_NETWORKS);
    let paid = is_paid_medium(&medium) || link == Some(LinkKind::Ad);

    if paid && from_search {
        "Paid Search"
    } else if paid && from_social {
        "Paid Social"
    } else if matches!(medium.as_str(), "display" | "banner" | "expandable" | "interstitial" | "cpm") {
        "Display"
    } else if paid {
        "Paid Other"
    } else if from_social
        || link == Some(LinkKind::Bio)
        || matches!(
            medium.as_str(),
            "social" | "social-network" | "social-media" | "sm" | "social network" | "social media"
        )
    {
        "Organic Social"
    } else if from_search || medium == "organic" {
        "Organic Search"
    } else if ["email", "e-mail", "e_mail", "e mail", "newsletter"]
        .iter()
        .any(|e| source.contains(e) || medium.contains(e))
    {
        "Email"
    } else if !referrer.is_empty() || medium == "referral" || !source.is_empty() {
        "Referral"
    } else {
        "Direct"
    }
}

/// The referrer's host when it is another site than the tracked one.
pub fn external_referrer_host(referrer: Option<&str>, own_hosts: &[&str]) -> Option<String> {
    let url = Url::parse(referrer?).ok()?;
    let host = url.host_str()?.to_lowercase();
    let bare = host.strip_prefix("www.").unwrap_or(&host);
    let internal = own_hosts.iter().any(|own| {
        let own = own.strip_prefix("www.").unwrap_or(own);
        bare == own || bare.ends_with(&format!(".{own}"))
    });
    (!internal).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utm(source: &str, medium: &str) -> Utm {
        Utm {
            source: (!source.is_empty()).then(|| source.to_owned()),
            medium: (!medium.is_empty()).then(|| medium.to_owned()),
            ..Utm::default()
        }
    }

    #[test]
    fn channels() {
        assert_eq!(channel(&utm("google", "cpc"), None, None), "Paid Search");
        assert_eq!(channel(&utm("facebook", "paid_social"), None, None), "Paid Social");
        assert_eq!(channel(&utm("partner", "display"), None, None), "Display");
        assert_eq!(channel(&utm("partner", "cpc"), None, None), "Paid Other");
        assert_eq!(channel(&utm("", ""), Some("www.linkedin.com"), None), "Organic Social");
        assert_eq!(channel(&utm("", ""), Some("www.google.com"), None), "Organic Search");
        assert_eq!(channel(&utm("newsletter", "email"), None, None), "Email");
        assert_eq!(channel(&utm("", ""), Some("news.ycombinator.com"), None), "Referral");
        assert_eq!(channel(&utm("", ""), None, None), "Direct");
        assert_eq!(channel(&utm("instagram", ""), None, Some(LinkKind::Ad)), "Paid Social");
        assert_eq!(channel(&utm("linktree", ""), None, Some(LinkKind::Bio)), "Organic Social");
    }

    #[test]
    fn referrers() {
        assert_eq!(external_referrer_host(Some("https://www.shop.example/a"), &["shop.example"]), None);
        assert_eq!(external_referrer_host(Some("https://blog.shop.example/a"), &["shop.example"]), None);
        assert_eq!(
            external_referrer_host(Some("https://google.com/"), &["shop.example"]).as_deref(),
            Some("google.com")
        );
        assert_eq!(external_referrer_host(Some("not a url"), &["shop.example"]), None);
    }
}
