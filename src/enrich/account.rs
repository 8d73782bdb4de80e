//! Which company (account, design §18) a visitor belongs to, from what
//! identify told us: a work email's domain first, then the company's web
//! domain from the traits, then the company name alone. Pure: no I/O.
//!
//! The migration that backfills existing visitors includes this file, so it
//! depends only on `std`, `serde_json` and `url`.

use std::{collections::HashSet, sync::LazyLock};

/// Free-mail and ISP-mail domains: an address there names a person, not a
/// company (the file names its source and licence).
static FREE_MAIL: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    include_str!("../../data/free_mail_domains.txt")
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect()
});

/// Where an account came from, strongest first: a later identify replaces a
/// network's guess, never the other way round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccountSource {
    Email,
    Company,
    Network,
}

impl AccountSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Email => "email",
            Self::Company => "company",
            Self::Network => "network",
        }
    }
}

/// The account a visitor belongs to: its key (a web domain such as
/// `acme.com`, `name:<company>` for a name without a domain, or
/// `asn:<number>` for a network) and the name shown for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountRef {
    pub key: String,
    pub name: String,
    pub source: AccountSource,
}

/// Keys and names longer than this are not an account but noise.
const MAX_LEN: usize = 200;

pub fn is_free_mail(domain: &str) -> bool {
    FREE_MAIL.contains(domain.to_ascii_lowercase().as_str())
}

/// A web domain from what people type for one: `Acme.com`, `www.acme.com`,
/// `https://www.acme.com/about`. Lower case, without `www.`; `None` unless
/// it is a host name with a dot (an IP address is not a company's domain).
pub fn web_domain(input: &str) -> Option<String> {
    let input = input.trim();
    if input.is_empty() || input.len() > MAX_LEN {
        return None;
    }
    let with_scheme = if input.contains("://") { input.to_owned() } else { format!("https://{input}") };
    let parsed = url::Url::parse(&with_scheme).ok()?;
    let url::Host::Domain(host) = parsed.host()? else { return None };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host).to_owned();
    let labels_ok =
        host.split('.').all(|label| !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    (host.contains('.') && labels_ok).then_some(host)
}

/// The domain of an email address when it is a company's, not a free-mail one.
pub fn work_domain(email: &str) -> Option<String> {
    let (_, domain) = email.trim().rsplit_once('@')?;
    web_domain(domain).filter(|domain| !is_free_mail(domain))
}

/// A company name as a key: lower case, spaces collapsed.
fn name_key(name: &str) -> Option<String> {
    let words: Vec<String> = name.split_whitespace().map(str::to_lowercase).collect();
    let joined = words.join(" ");
    (!joined.is_empty() && joined.chars().count() <= MAX_LEN).then(|| format!("name:{joined}"))
}

fn tidy_name(name: &str) -> Option<String> {
    let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    (!name.is_empty() && name.chars().count() <= MAX_LEN).then_some(name)
}

/// The company's web domain from identify's traits (`company_domain`,
/// `website`, or `domain`), when one is given as text.
fn traits_domain(traits: &str) -> Option<String> {
    let traits: serde_json::Value = serde_json::from_str(traits).ok()?;
    ["company_domain", "companyDomain", "website", "domain"]
        .iter()
        .filter_map(|field| traits.get(*field).and_then(serde_json::Value::as_str))
        .find_map(web_domain)
}

/// The account an identify names, in design §18's order.
pub fn from_identity(email: Option<&str>, company: Option<&str>, traits: &str) -> Option<AccountRef> {
    let company = company.and_then(tidy_name);
    if let Some(domain) = email.and_then(work_domain) {
        let name = company.unwrap_or_else(|| domain.clone());
        return Some(AccountRef { key: domain, name, source: AccountSource::Email });
    }
    if let Some(domain) = traits_domain(traits) {
        let name = company.unwrap_or_else(|| domain.clone());
        return Some(AccountRef { key: domain, name, source: AccountSource::Company });
    }
    let company = company?;
    Some(AccountRef { key: name_key(&company)?, name: company, source: AccountSource::Company })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_domains_are_tidied_or_refused() {
        let cases = [
            ("acme.com", Some("acme.com")),
            ("  Acme.COM ", Some("acme.com")),
            ("www.acme.com", Some("acme.com")),
            ("https://www.acme.co.uk/about?x=1", Some("acme.co.uk")),
            ("http://eng.acme.com:8080", Some("eng.acme.com")),
            ("acme.com.", Some("acme.com")),
            ("localhost", None),
            ("10.0.0.1", None),
            ("[::1]", None),
            ("", None),
            ("not a domain", None),
            ("acme..com", None),
            ("javascript:alert(1)", None),
        ];
        for (input, expected) in cases {
            assert_eq!(web_domain(input).as_deref(), expected, "{input:?}");
        }
    }

    #[test]
    fn free_mail_is_not_a_company() {
        let cases = [
            ("ada@acme.com", Some("acme.com")),
            ("Ada@Example.com", Some("example.com")),
            ("ada@gmail.com", None),
            ("ada@GMAIL.com", None),
            ("ada@gmx.de", None),
            ("ada@comcast.net", None),
            ("ada@yahoo.co.uk", None),
            ("no-at-sign", None),
        ];
        for (email, expected) in cases {
            assert_eq!(work_domain(email).as_deref(), expected, "{email}");
        }
    }

    #[test]
    fn identify_finds_the_account_in_order() {
        use AccountSource::{Company, Email};
        type Expected = Option<(&'static str, &'static str, AccountSource)>;
        let cases: [(Option<&str>, Option<&str>, &str, Expected); 9] = [
            (Some("ada@acme.com"), None, "{}", Some(("acme.com", "acme.com", Email))),
            (Some("ada@acme.com"), Some(" Acme  Inc "), "{}", Some(("acme.com", "Acme Inc", Email))),
            // The work email wins over a traits domain.
            (Some("ada@acme.com"), Some("Acme"), r#"{"website":"acme.io"}"#, Some(("acme.com", "Acme", Email))),
            (
                Some("ada@gmail.com"),
                Some("Acme"),
                r#"{"company_domain":"https://www.Acme.io/"}"#,
                Some(("acme.io", "Acme", Company)),
            ),
            (None, None, r#"{"website":"acme.io"}"#, Some(("acme.io", "acme.io", Company))),
            (Some("ada@gmail.com"), Some("Acme  Inc"), "{}", Some(("name:acme inc", "Acme Inc", Company))),
            (Some("ada@gmail.com"), None, r#"{"website": 42}"#, None),
            (None, Some("   "), "not json", None),
            (None, None, "{}", None),
        ];
        for (email, company, traits, expected) in cases {
            let got = from_identity(email, company, traits);
            let got = got.as_ref().map(|a| (a.key.as_str(), a.name.as_str(), a.source));
            assert_eq!(got, expected, "{email:?} {company:?} {traits}");
        }
    }
}
