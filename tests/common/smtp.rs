//! A real SMTP server on a loopback port (Python's aiosmtpd, which .ci/run
//! installs), and the messages it received, parsed.
#![allow(dead_code)]

use std::{
    io::{BufRead, BufReader},
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::Duration,
};

use leadtrail::config::Config;

pub const FROM: &str = "Leadtrail <leadtrail@example.com>";

pub struct SmtpServer {
    child: Child,
    dir: tempfile::TempDir,
    pub port: u16,
}

/// Whether aiosmtpd is there; without it the email tests say so and skip.
pub fn smtp_missing() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import aiosmtpd"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        eprintln!("SKIPPED: email test needs Python's aiosmtpd (python3 -m pip install aiosmtpd)");
    }
    !found
}

impl SmtpServer {
    /// Starts a server that refuses the first `refuse` messages with a 451.
    pub fn start(refuse: usize) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = super::process::free_port();
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/smtp/server.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .arg(dir.path())
            .arg(refuse.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the SMTP server");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("read the SMTP server's first line");
        assert_eq!(line.trim(), "ready", "the SMTP server did not start");
        Self { child, dir, port }
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// The app's settings for sending through this server.
    pub fn configure(&self, config: &mut Config) {
        config.smtp_url = Some(self.url());
        config.email_from = Some(FROM.to_owned());
        config.smtp_timeout_secs = 5;
    }

    /// Every message received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        let mut found = Vec::new();
        for n in 1.. {
            let base = self.dir.path().join(n.to_string());
            let Ok(raw) = std::fs::read(base.with_extension("eml")) else { break };
            let rcpt = std::fs::read_to_string(base.with_extension("rcpt")).expect("recipients");
            found.push(Received { raw, rcpt: rcpt.lines().map(str::to_owned).collect() });
        }
        found
    }

    /// Waits until at least `count` messages have arrived (up to 20 s).
    pub async fn wait_for(&self, count: usize) -> Vec<Received> {
        for _ in 0..400 {
            let received = self.received();
            if received.len() >= count {
                return received;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("expected {count} messages, got {}", self.received().len());
    }

    /// Waits for the first message to `to` whose subject contains `subject`.
    pub async fn wait_for_message(&self, to: &str, subject: &str) -> Received {
        for _ in 0..400 {
            if let Some(found) =
                self.received().into_iter().find(|m| m.rcpt.iter().any(|r| r == to) && m.subject().contains(subject))
            {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "no message to {to} about {subject:?}; got {:?}",
            self.received().iter().map(Received::subject).collect::<Vec<_>>()
        );
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// One message as the server received it.
pub struct Received {
    pub raw: Vec<u8>,
    /// The envelope recipients.
    pub rcpt: Vec<String>,
}

impl Received {
    fn parsed(&self) -> mail_parser::Message<'_> {
        mail_parser::MessageParser::default().parse(&self.raw).expect("a parsable message")
    }

    pub fn subject(&self) -> String {
        self.parsed().subject().unwrap_or_default().to_owned()
    }

    /// The raw header block, as sent.
    pub fn header_block(&self) -> String {
        let raw = String::from_utf8_lossy(&self.raw);
        raw.split("\r\n\r\n").next().unwrap_or_default().to_owned()
    }

    /// A header's decoded value.
    pub fn header(&self, name: &str) -> Option<String> {
        self.parsed().header_raw(name).map(|value| value.trim().to_owned())
    }

    pub fn from(&self) -> String {
        self.header("From").unwrap_or_default()
    }

    pub fn text(&self) -> String {
        self.parsed().body_text(0).map(|body| body.into_owned()).unwrap_or_default()
    }

    pub fn html(&self) -> String {
        self.parsed().body_html(0).map(|body| body.into_owned()).unwrap_or_default()
    }

    /// The http(s) links of the text body, in order.
    pub fn links(&self) -> Vec<String> {
        self.text()
            .split_whitespace()
            .filter(|word| word.starts_with("http://") || word.starts_with("https://"))
            .map(|word| word.trim_end_matches(['.', ',', ')']).to_owned())
            .collect()
    }

    /// The first link of the text body that contains `part`.
    pub fn link(&self, part: &str) -> String {
        self.links()
            .into_iter()
            .find(|link| link.contains(part))
            .unwrap_or_else(|| panic!("no link with {part} in {}", self.text()))
    }
}

/// The `token` query parameter of a link.
pub fn token_of(link: &str) -> String {
    url::Url::parse(link)
        .expect("a link")
        .query_pairs()
        .find(|(key, _)| key == "token")
        .map(|(_, value)| value.into_owned())
        .expect("the link has a token")
}
