//! One message as it goes out: both bodies, and the headers a digest needs.
//! Every header value comes from a single line: CR, LF and other control
//! characters in a name, site name or subject become spaces, so nothing a
//! visitor or a member typed can add a header or a recipient.

use lettre::{
    Message,
    message::{
        Mailbox, MultiPart,
        header::{Header, HeaderName, HeaderValue},
    },
};

/// What a service rendered for one message.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// One or more addresses (an alert may go to several).
    pub to: Vec<String>,
    pub subject: String,
    pub text: String,
    pub html: String,
    /// The one-click unsubscribe URL (RFC 8058), for digests.
    pub list_unsubscribe: Option<String>,
}

/// Text for a header: one line, no control characters, at most `max` characters.
pub fn single_line(value: &str, max: usize) -> String {
    let cleaned: String = value.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let trimmed = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    trimmed.chars().take(max).collect()
}

impl Outgoing {
    pub(super) fn build(&self, from: Mailbox) -> Result<Message, String> {
        // A Message-ID from this host, so replies and bounces can be matched.
        let mut builder = Message::builder().from(from).message_id(None).subject(single_line(&self.subject, 200));
        for to in &self.to {
            let address = to.trim().parse().map_err(|err| format!("{to} is not an address: {err}"))?;
            builder = builder.to(Mailbox::new(None, address));
        }
        if let Some(url) = &self.list_unsubscribe {
            builder =
                builder.header(ListUnsubscribe(format!("<{}>", single_line(url, 2000)))).header(ListUnsubscribePost);
        }
        builder
            .multipart(MultiPart::alternative_plain_html(self.text.clone(), self.html.clone()))
            .map_err(|err| format!("the message could not be built: {err}"))
    }
}

/// `List-Unsubscribe: <https://...>` (RFC 2369).
#[derive(Clone)]
struct ListUnsubscribe(String);

impl Header for ListUnsubscribe {
    fn name() -> HeaderName {
        HeaderName::new_from_ascii_str("List-Unsubscribe")
    }
    fn parse(value: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Self(value.to_owned()))
    }
    fn display(&self) -> HeaderValue {
        HeaderValue::new(Self::name(), self.0.clone())
    }
}

/// `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (RFC 8058).
#[derive(Clone)]
struct ListUnsubscribePost;

impl Header for ListUnsubscribePost {
    fn name() -> HeaderName {
        HeaderName::new_from_ascii_str("List-Unsubscribe-Post")
    }
    fn parse(_: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Self)
    }
    fn display(&self) -> HeaderValue {
        HeaderValue::new(Self::name(), "List-Unsubscribe=One-Click".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_text_is_one_clean_line() {
        let cases = [
            ("Weekly digest", "Weekly digest"),
            ("Acme\r\nBcc: victim@example.com", "Acme Bcc: victim@example.com"),
            ("tab\there", "tab here"),
            ("  spaced   out  ", "spaced out"),
            ("nul\0byte", "nul byte"),
        ];
        for (raw, expected) in cases {
            assert_eq!(single_line(raw, 200), expected, "{raw:?}");
        }
        assert_eq!(single_line("abcdef", 3), "abc");
    }

    #[test]
    fn a_built_message_has_no_injected_header() {
        let outgoing = Outgoing {
            to: vec!["a@example.com".to_owned()],
            subject: "Hi\r\nBcc: victim@example.com".to_owned(),
            text: "text".to_owned(),
            html: "<p>html</p>".to_owned(),
            list_unsubscribe: Some("https://x.example/u/1\r\nBcc: v@example.com".to_owned()),
        };
        let from: Mailbox = "Leadtrail <lt@example.com>".parse().expect("address");
        let message = outgoing.build(from).expect("builds");
        let raw = String::from_utf8(message.formatted()).expect("utf-8");
        let headers = raw.split("\r\n\r\n").next().unwrap_or_default();
        assert!(!headers.lines().any(|line| line.starts_with("Bcc:")), "{headers}");
        assert!(headers.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"), "{headers}");
    }

    #[test]
    fn a_bad_recipient_is_refused() {
        let outgoing = Outgoing {
            to: vec!["not an address".to_owned()],
            subject: "x".to_owned(),
            text: String::new(),
            html: String::new(),
            list_unsubscribe: None,
        };
        let from: Mailbox = "lt@example.com".parse().expect("address");
        assert!(outgoing.build(from).is_err());
    }
}
