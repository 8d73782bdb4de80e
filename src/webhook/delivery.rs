//! One POST per delivery: a timeout, no redirects, a capped response read.

use std::time::{Duration, Instant};

use reqwest::{
    header::{CONTENT_TYPE, RETRY_AFTER},
    redirect::Policy,
};
use url::Url;

use super::{WebhookType, guard};
use crate::error::{AppError, AppResult};

/// The most of a target's answer that is read.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;

#[derive(Clone)]
pub struct WebhookClient {
    http: reqwest::Client,
}

impl WebhookClient {
    /// With `allow_any`, private and loopback targets are reachable (development only).
    pub fn new(timeout: Duration, allow_any: bool) -> Result<Self, String> {
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(Policy::none())
            // A proxy from the environment would resolve and connect for us,
            // past the guard's checks.
            .no_proxy()
            .user_agent(concat!("Leadtrail-Webhooks/", env!("CARGO_PKG_VERSION")));
        if !allow_any {
            builder = builder.dns_resolver(guard::resolver());
        }
        let http = builder.build().map_err(|err| format!("cannot build the webhook client: {err}"))?;
        Ok(Self { http })
    }
}

/// How an attempt went.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub status: Option<u16>,
    pub success: bool,
    /// Why it failed, for the log and the 502 message.
    pub error: Option<String>,
    pub duration_ms: i64,
    /// How long the target asked us to wait (`Retry-After`), in milliseconds.
    pub retry_after_ms: Option<i64>,
}

/// Reads at most MAX_RESPONSE_BYTES of the answer.
async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = MAX_RESPONSE_BYTES - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_RESPONSE_BYTES {
            break;
        }
    }
    Ok(body)
}

/// Sends the payload. A target the guard refuses is an error (400); every
/// other result, failures included, is an outcome to log.
pub async fn send(
    client: &WebhookClient,
    url: &Url,
    kind: WebhookType,
    headers: &[(String, String)],
    body: String,
) -> AppResult<Outcome> {
    let started = Instant::now();
    let mut request = client.http.post(url.clone()).header(CONTENT_TYPE, "application/json").body(body);
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let elapsed = |started: Instant| started.elapsed().as_millis() as i64;
    let response = match request.send().await {
        Ok(response) => response,
        Err(err) => {
            if let Some(refusal) = guard::refusal_in(&err) {
                return Err(guard::refused(refusal));
            }
            let error = if err.is_timeout() { "the target did not answer in time".to_owned() } else { describe(&err) };
            return Ok(Outcome {
                status: None,
                success: false,
                error: Some(error),
                duration_ms: elapsed(started),
                retry_after_ms: None,
            });
        }
    };
    let status = response.status();
    let retry_after_ms = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| super::retry::parse_retry_after(value, crate::time::now_ms()));
    let body = read_capped(response).await;
    let duration_ms = elapsed(started);
    let outcome = |success: bool, error: Option<String>| Outcome {
        status: Some(status.as_u16()),
        success,
        error,
        duration_ms,
        retry_after_ms,
    };
    Ok(match body {
        Err(err) => outcome(false, Some(format!("reading the answer failed: {}", describe(&err)))),
        Ok(_) if status.is_redirection() => {
            outcome(false, Some(format!("the target answered {status}; redirects are not followed")))
        }
        Ok(_) if !status.is_success() => outcome(false, Some(format!("the target answered {status}"))),
        // Slack answers 200 with the body "ok"; anything else is its error text.
        Ok(body) if kind == WebhookType::ChatOne && String::from_utf8_lossy(&body).trim() != "ok" => {
            let text: String = String::from_utf8_lossy(&body).chars().take(200).collect();
            outcome(false, Some(format!("Slack did not answer ok: {text}")))
        }
        Ok(_) => outcome(true, None),
    })
}

/// The innermost cause, which names what actually went wrong.
fn describe(err: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = err;
    while let Some(next) = source.source() {
        source = next;
    }
    source.to_string()
}

impl From<&Outcome> for AppError {
    fn from(outcome: &Outcome) -> Self {
        AppError::new(
            crate::error::ErrorCode::DeliveryFailed,
            format!("delivery failed: {}", outcome.error.as_deref().unwrap_or("unknown error")),
        )
    }
}
