//! What each email says, as compiled templates: an HTML body (escaped by
//! askama, so markup in a visitor's name or a page title stays text) and a
//! plain-text body from the same fields.

use askama::Template;

/// A rendered message: its subject and both bodies.
pub struct Rendered {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// Gives an email's fields a `render`: its HTML and text templates, each
/// reading the fields as `m`.
macro_rules! email {
    ($name:ident, $html:literal, $text:literal) => {
        impl $name<'_> {
            pub fn render(&self, subject: String) -> Result<Rendered, askama::Error> {
                #[derive(Template)]
                #[template(path = $html)]
                struct Html<'b, 'c> {
                    m: &'b $name<'c>,
                }
                #[derive(Template)]
                #[template(path = $text)]
                struct Text<'b, 'c> {
                    m: &'b $name<'c>,
                }
                Ok(Rendered { subject, html: Html { m: self }.render()?, text: Text { m: self }.render()? })
            }
        }
    };
}

pub struct ResetPassword<'a> {
    pub name: &'a str,
    pub link: &'a str,
}
email!(ResetPassword, "mail_reset.html", "mail_reset.txt");

pub struct VerifyEmail<'a> {
    pub name: &'a str,
    pub email: &'a str,
    pub link: &'a str,
}
email!(VerifyEmail, "mail_verify.html", "mail_verify.txt");

pub struct Invitation<'a> {
    pub org_name: &'a str,
    pub inviter: &'a str,
    pub role: &'a str,
    pub link: &'a str,
    /// The date it lapses, as `2026-12-03`.
    pub expires_on: &'a str,
}
email!(Invitation, "mail_invitation.html", "mail_invitation.txt");

pub struct Alert<'a> {
    pub site_name: &'a str,
    /// Why it fired, as a sentence ("became a hot lead").
    pub reason: &'a str,
    pub visitor_name: &'a str,
    pub company: Option<&'a str>,
    pub score: i32,
    pub email: Option<&'a str>,
    pub visitor_link: &'a str,
    pub connect_link: &'a str,
    /// What a `CONVERTED` alert is about: `Closed won: 1299.00 EUR`.
    pub conversion: Option<String>,
}
email!(Alert, "mail_alert.html", "mail_alert.txt");

/// A figure against the previous period.
pub struct Change {
    pub label: &'static str,
    pub now: u64,
    pub before: u64,
}

impl Change {
    /// `+12%`, `-3%`, `new` or `no change`.
    pub fn delta(&self) -> String {
        match (self.before, self.now) {
            (before, now) if before == now => "no change".to_owned(),
            (0, _) => "new".to_owned(),
            (before, now) => {
                let percent = (now as f64 - before as f64) * 100.0 / before as f64;
                format!("{:+.0}%", percent)
            }
        }
    }
}

/// A row of a digest's top list.
pub struct Ranked {
    pub name: String,
    pub visitors: u64,
}

impl Ranked {
    /// "1 visitor", "2 visitors".
    pub fn visitors_text(&self) -> String {
        if self.visitors == 1 { "1 visitor".to_owned() } else { format!("{} visitors", self.visitors) }
    }
}

/// A person or account a digest names.
pub struct Named {
    pub name: String,
    pub detail: String,
    pub link: String,
}

pub struct Digest<'a> {
    pub site_name: &'a str,
    /// "Daily" or "Weekly".
    pub cadence: &'a str,
    /// The period, as `2026-11-25` or `2026-11-18 to 2026-11-24`.
    pub period: &'a str,
    pub changes: Vec<Change>,
    pub hot_leads: Vec<Named>,
    pub hot_accounts: Vec<Named>,
    pub identified: Vec<Named>,
    pub sources: Vec<Ranked>,
    pub campaigns: Vec<Ranked>,
    pub explore_link: &'a str,
    pub unsubscribe_link: &'a str,
    pub settings_link: &'a str,
}
email!(Digest, "mail_digest.html", "mail_digest.txt");

impl Digest<'_> {
    /// The lists of people and accounts, under their headings.
    pub fn people_sections(&self) -> [(&'static str, &[Named]); 3] {
        [
            ("New hot leads", &self.hot_leads),
            ("Accounts that became hot", &self.hot_accounts),
            ("Newly identified people", &self.identified),
        ]
    }

    /// The top lists, under their headings.
    pub fn ranked_sections(&self) -> [(&'static str, &[Ranked]); 2] {
        [("Top sources", &self.sources), ("Top campaigns", &self.campaigns)]
    }
}
