//! The SMTP connection, from `SMTP_URL`: `smtp://` upgrades with STARTTLS
//! when the server offers it, `smtps://` speaks TLS from the start, and
//! credentials come in the URL (percent-encoded). lettre does the talking.

use std::time::Duration;

use lettre::{
    AsyncSmtpTransport, AsyncTransport, Tokio1Executor, message::Mailbox, transport::smtp::Error as SmtpError,
};

use super::message::Outgoing;

/// A configured sender: the transport and the `From` address.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    /// The whole exchange's deadline: lettre's own timeout covers each
    /// command, not a server that accepts and never greets.
    deadline: Duration,
}

/// Why a message was not accepted, and whether trying again can help.
#[derive(Debug, Clone)]
pub struct SendError {
    /// The server refused it for good (a 5xx reply): retrying would not help.
    pub permanent: bool,
    pub message: String,
}

impl Mailer {
    /// The mailer `SMTP_URL` and `EMAIL_FROM` describe, or none when
    /// `SMTP_URL` is unset. A malformed setting is an error at start-up.
    pub fn from_settings(
        smtp_url: Option<&str>,
        from: Option<&str>,
        timeout: Duration,
    ) -> Result<Option<Self>, String> {
        let Some(raw) = smtp_url.map(str::trim).filter(|url| !url.is_empty()) else {
            return Ok(None);
        };
        let url = connection_url(raw)?;
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(&url)
            .map_err(|err| format!("SMTP_URL is not usable: {err}"))?
            .timeout(Some(timeout))
            .build();
        let from = from
            .map(str::trim)
            .filter(|from| !from.is_empty())
            .ok_or_else(|| {
                "EMAIL_FROM is required with SMTP_URL (for example Leadtrail <leadtrail@example.com>)".to_owned()
            })?
            .parse::<Mailbox>()
            .map_err(|err| format!("EMAIL_FROM is not an address: {err}"))?;
        Ok(Some(Self { transport, from, deadline: timeout * 2 }))
    }

    /// Hands one message to the server.
    pub async fn send(&self, outgoing: &Outgoing) -> Result<(), SendError> {
        let message = outgoing.build(self.from.clone()).map_err(|message| SendError { permanent: true, message })?;
        match tokio::time::timeout(self.deadline, self.transport.send(message)).await {
            Ok(sent) => sent.map(|_| ()).map_err(|err| describe(&err)),
            Err(_) => Err(SendError { permanent: false, message: "the SMTP server did not answer in time".to_owned() }),
        }
    }
}

/// `SMTP_URL` as lettre reads it: a plain `smtp://` asks for STARTTLS when
/// the server offers it (lettre's default would be no TLS at all); an
/// explicit `?tls=` is kept.
fn connection_url(raw: &str) -> Result<String, String> {
    let mut url = url::Url::parse(raw).map_err(|err| format!("SMTP_URL is not a URL: {err}"))?;
    match url.scheme() {
        "smtp" if !url.query_pairs().any(|(key, _)| key == "tls") => {
            url.query_pairs_mut().append_pair("tls", "opportunistic");
        }
        "smtp" | "smtps" => {}
        other => return Err(format!("SMTP_URL must start with smtp:// or smtps://, not {other}://")),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("SMTP_URL names no host".to_owned());
    }
    Ok(url.to_string())
}

fn describe(err: &SmtpError) -> SendError {
    let message = match err.status() {
        Some(code) => format!("the SMTP server answered {code}: {err}"),
        None if err.is_timeout() => "the SMTP server did not answer in time".to_owned(),
        None => format!("could not reach the SMTP server: {err}"),
    };
    SendError { permanent: err.is_permanent(), message }
}

#[cfg(test)]
mod tests {
    use super::connection_url;

    #[test]
    fn plain_smtp_asks_for_starttls_when_offered() {
        let cases = [
            ("smtp://mail.example:2525", Ok("smtp://mail.example:2525?tls=opportunistic")),
            ("smtp://u%40x:p%3Aw@mail.example", Ok("smtp://u%40x:p%3Aw@mail.example?tls=opportunistic")),
            ("smtp://mail.example?tls=required", Ok("smtp://mail.example?tls=required")),
            ("smtps://mail.example", Ok("smtps://mail.example")),
            ("http://mail.example", Err(())),
            ("not a url", Err(())),
        ];
        for (raw, expected) in cases {
            let got = connection_url(raw).map_err(|_| ());
            assert_eq!(got.as_deref(), expected.as_deref(), "{raw}");
        }
    }
}
