//! The email worker: every instance runs one when `SMTP_URL` is set. It
//! claims due messages, hands each to the SMTP server, and settles it: sent,
//! retried later with the alerts' back-off (a refusal the server calls
//! temporary, a timeout, no connection), or failed (a permanent refusal, or
//! retries used up). A message in flight when the process dies is claimed
//! again when its lease lapses: delivery is at least once.

use std::time::Duration;

use prometheus_client::metrics::{counter::Counter, family::Family};
use rand::Rng;
use sea_orm::DatabaseConnection;

use entity::email_outbox;

use super::outbox::{self, FAILED, PENDING, SENT, Settled};
use crate::{
    email::{Mailer, Outgoing},
    error::AppResult,
    service::{alerts::worker::OutcomeLabels, delivery::Delivery},
    webhook::retry::{self, Class, Next},
};

/// Messages by outcome: sent, retrying (refused or unanswered, tried again
/// later) or failed (refused for good, or retries used up).
#[derive(Clone, Default)]
pub struct EmailMetrics {
    pub messages: Family<OutcomeLabels, Counter>,
}

const CLAIM_LIMIT: u64 = 16;
const POLL: Duration = Duration::from_millis(500);

/// Runs the worker until the process ends; without a mailer there is none.
pub fn spawn(db: DatabaseConnection, sending: Delivery, metrics: EmailMetrics) {
    let Some(mailer) = sending.mailer.clone() else {
        return;
    };
    tokio::spawn(async move {
        loop {
            let claimed = match run_due(&db, &sending, &mailer, &metrics).await {
                Ok(claimed) => claimed,
                Err(err) => {
                    tracing::warn!(error = %err.message, "the email worker could not read the outbox");
                    0
                }
            };
            if claimed < CLAIM_LIMIT as usize {
                tokio::select! {
                    () = sending.email_due.notified() => {}
                    () = tokio::time::sleep(POLL) => {}
                }
            }
        }
    });
}

/// Long enough for the slowest SMTP exchange to finish and be recorded.
fn lease_ms(sending: &Delivery) -> i64 {
    // The exchange is cut off at twice the timeout (`Mailer::send`); the rest
    // is room to record the outcome.
    i64::try_from(sending.smtp_timeout.as_millis()).unwrap_or(i64::MAX / 4) * 3 + 5_000
}

/// One round: claims what is due and sends each. Answers how many it claimed.
pub async fn run_due(
    db: &DatabaseConnection,
    sending: &Delivery,
    mailer: &Mailer,
    metrics: &EmailMetrics,
) -> AppResult<usize> {
    let now = sending.clock.now();
    let claimed = outbox::claim(db, now, now + lease_ms(sending), CLAIM_LIMIT).await?;
    let count = claimed.len();
    let attempts = claimed.iter().map(|message| attempt(db, sending, mailer, message));
    for result in futures_util::future::join_all(attempts).await {
        metrics.messages.get_or_create(&OutcomeLabels { outcome: result? }).inc();
    }
    Ok(count)
}

async fn attempt(
    db: &DatabaseConnection,
    sending: &Delivery,
    mailer: &Mailer,
    claimed: &email_outbox::Model,
) -> AppResult<&'static str> {
    let outgoing = Outgoing {
        to: claimed.recipient.split(',').map(|to| to.trim().to_owned()).filter(|to| !to.is_empty()).collect(),
        subject: claimed.subject.clone(),
        text: claimed.text_body.clone(),
        html: claimed.html_body.clone(),
        list_unsubscribe: claimed.list_unsubscribe.clone(),
    };
    let result = mailer.send(&outgoing).await;
    let now = sending.clock.now();
    let settled = match &result {
        Ok(()) => Settled { status: SENT, next_attempt_at: None, error: None, sent_at: Some(now) },
        Err(err) => {
            let class = if err.permanent { Class::Refused } else { Class::Failed };
            let jitter: f64 = rand::rng().random();
            let (status, next_attempt_at) = match retry::next(claimed.attempts, class, None, jitter, now) {
                Next::RetryAt(at) => (PENDING, Some(at)),
                Next::Delivered | Next::GiveUp => (FAILED, None),
            };
            tracing::warn!(
                message = claimed.id,
                kind = %claimed.kind,
                attempt = claimed.attempts,
                error = %err.message,
                retry = next_attempt_at.is_some(),
                "an email was not accepted by the SMTP server"
            );
            Settled { status, next_attempt_at, error: Some(&err.message), sent_at: None }
        }
    };
    let label = match settled.status {
        SENT => "sent",
        PENDING => "retrying",
        _ => "failed",
    };
    if !outbox::settle(db, claimed, settled).await? {
        tracing::warn!(message = claimed.id, "an email attempt outlived its claim; another worker took it over");
    }
    Ok(label)
}
