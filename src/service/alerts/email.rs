//! Alert destinations of type `email` (design §21): `url` is
//! `mailto:a@example.com,b@example.com`. The alert outbox already makes
//! delivery durable, so the worker hands the message straight to the SMTP
//! server and logs the attempt like a webhook's.

use std::time::Instant;

use sea_orm::{ConnectionTrait, EntityTrait};

use entity::{alert_destination, site, visitor};

use super::trigger::AlertTrigger;
use crate::{
    email::{Mailer, Outgoing, templates},
    error::{AppError, AppResult},
    service::{analytics::profile, delivery::Delivery, people, sites, users},
    webhook::{delivery::Outcome, payload::ConversionNote},
};

/// The `webhookType` of an email destination.
pub const EMAIL_TYPE: &str = "email";
/// Addresses one destination sends to at most.
pub const MAX_RECIPIENTS: usize = 10;

/// `mailto:` with one to ten addresses, each checked; answers the URL as
/// stored (lower-case addresses, no spaces). Refusals name `url`.
pub fn checked_url(raw: &str, sending: &Delivery) -> AppResult<String> {
    if sending.mailer.is_none() {
        return Err(AppError::validation("webhookType", "email is not set up on this server (SMTP_URL)"));
    }
    let recipients = recipients(raw)?;
    Ok(format!("mailto:{}", recipients.join(",")))
}

/// The addresses of a `mailto:` URL.
pub fn recipients(raw: &str) -> AppResult<Vec<String>> {
    let refuse = || {
        AppError::validation(
            "url",
            format!("must be mailto: with 1 to {MAX_RECIPIENTS} addresses, separated by commas"),
        )
    };
    let list = raw.trim().strip_prefix("mailto:").ok_or_else(refuse)?;
    let addresses = list
        .split(',')
        .map(str::trim)
        .filter(|address| !address.is_empty())
        .map(|address| users::normalize_email("url", address))
        .collect::<AppResult<Vec<String>>>()?;
    if addresses.is_empty() || addresses.len() > MAX_RECIPIENTS {
        return Err(refuse());
    }
    Ok(addresses)
}

fn reason(trigger: Option<AlertTrigger>) -> &'static str {
    match trigger {
        Some(AlertTrigger::BecameHot) => "became a hot lead",
        Some(AlertTrigger::Identified) => "was identified",
        Some(AlertTrigger::FormSubmitted) => "submitted a form",
        Some(AlertTrigger::AccountBecameHot) => "is at an account that became hot",
        Some(AlertTrigger::Converted) => "converted",
        None => "is a test alert",
    }
}

/// Renders the alert for `visitor` as it is now and sends it. Answers the
/// attempt's outcome, as a webhook attempt's, for the log and the schedule,
/// and whether a refusal was permanent (retrying cannot help).
pub async fn send(
    db: &impl ConnectionTrait,
    sending: &Delivery,
    destination: &alert_destination::Model,
    visitor: &visitor::Model,
    trigger: &str,
    conversion: Option<&ConversionNote>,
) -> AppResult<(Outcome, bool)> {
    let Some(mailer) = &sending.mailer else {
        return Ok((failed("email is not set up on this server (SMTP_URL)".to_owned()), false));
    };
    let outgoing = message(db, sending, destination, visitor, trigger, conversion).await?;
    Ok(deliver(mailer, &outgoing).await)
}

async fn message(
    db: &impl ConnectionTrait,
    sending: &Delivery,
    destination: &alert_destination::Model,
    visitor: &visitor::Model,
    trigger: &str,
    conversion: Option<&ConversionNote>,
) -> AppResult<Outgoing> {
    let site_name = site::Entity::find_by_id(destination.site_id)
        .one(db)
        .await?
        .map(|site| sites::shown_name(&site).to_owned())
        .unwrap_or_default();
    let identities = profile::identities_of_visitors(db, &[visitor.id]).await?;
    let person = people::of_visitor(visitor, identities.get(&visitor.id).map_or(&[], Vec::as_slice));
    let base = sending.base_url.trim_end_matches('/');
    let vid: String = url::form_urlencoded::byte_serialize(visitor.tracker_vid.as_bytes()).collect();
    let visitor_link = format!("{base}/visitor/{vid}");
    let connect_link = format!("{base}/talk/incoming?visitor={vid}");
    let reason = reason(AlertTrigger::parse(trigger));
    let alert = templates::Alert {
        site_name: &site_name,
        reason,
        visitor_name: &person.display_name,
        company: person.company.as_deref(),
        score: visitor.score,
        email: visitor.email.as_deref(),
        visitor_link: &visitor_link,
        connect_link: &connect_link,
        conversion: conversion.map(ConversionNote::sentence),
    };
    let subject = format!("{} {reason} on {site_name}", person.display_name);
    let rendered = alert
        .render(subject)
        .map_err(|err| AppError::internal(format!("an alert email could not be rendered: {err}")))?;
    Ok(Outgoing {
        to: recipients(&destination.url)?,
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        list_unsubscribe: None,
    })
}

async fn deliver(mailer: &Mailer, outgoing: &Outgoing) -> (Outcome, bool) {
    let started = Instant::now();
    let result = mailer.send(outgoing).await;
    let duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    match result {
        Ok(()) => (Outcome { status: None, success: true, error: None, duration_ms, retry_after_ms: None }, false),
        Err(err) => (Outcome { duration_ms, ..failed(err.message) }, err.permanent),
    }
}

fn failed(message: String) -> Outcome {
    Outcome { status: None, success: false, error: Some(message), duration_ms: 0, retry_after_ms: None }
}
