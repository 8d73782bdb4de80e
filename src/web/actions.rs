//! The forms that change something, each a POST running one GraphQL
//! mutation through the bridge: switching the site (`selectSite`), and on a
//! visitor's page pushing them to a webhook target (`sendWebhook`, with a
//! dry-run preview) and identifying them (`identify`).

use std::collections::HashMap;

use axum::{
    extract::{Request, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
};
use serde_json::{Value, json};

use super::{
    auth::read_form,
    bridge,
    error::{WebError, WebResult},
    forms::{field_of, is_page_error},
    frame, nav,
    pages::{
        self, flag,
        visitor::{IdentifyForm, Notice, Outcome, WebhookForm},
    },
};
use crate::{
    RouterState,
    error::{AppError, ErrorCode},
};

const SELECT_SITE: &str = include_str!("documents/select_site.graphql");
const SEND_WEBHOOK: &str = include_str!("documents/send_webhook.graphql");
const IDENTIFY: &str = include_str!("documents/identify.graphql");

/// POST /site: remember the chosen site, then back to where the switcher was.
pub async fn switch_site(State(state): State<RouterState>, request: Request) -> Response {
    let run = async {
        let (mut parts, body) = request.into_parts();
        let form = read_form(body).await?;
        let next = nav::safe_next(form.get("next").map(String::as_str));
        if frame::require_signed_in(&parts).is_err() {
            return Err(WebError::SignIn(next));
        }
        let site = form
            .get("site")
            .and_then(|raw| raw.trim().parse::<i64>().ok())
            .ok_or_else(|| AppError::validation("site", "must be a site number"))?;
        bridge::run(&mut parts, &state, SELECT_SITE, json!({ "siteId": site })).await?;
        Ok::<_, WebError>(Redirect::to(&next).into_response())
    };
    run.await.unwrap_or_else(IntoResponse::into_response)
}

fn text(form: &HashMap<String, String>, name: &str) -> String {
    form.get(name).map(|value| value.trim().to_owned()).unwrap_or_default()
}

fn optional(value: &str) -> Value {
    if value.is_empty() { Value::Null } else { json!(value) }
}

/// POST /visitor/{id}: one of the page's forms, then the page with its outcome.
pub async fn visitor(State(state): State<RouterState>, request: Request) -> Response {
    let run = async {
        let (mut parts, body) = request.into_parts();
        frame::require_signed_in(&parts)?;
        let form = read_form(body).await?;
        let page = &pages::VISITOR;
        let query = frame::query_map(&parts);
        let id = frame::object_id(page, &mut parts, &state, &query).await?.unwrap_or_default();
        let (site, _) = frame::resolve_site(page, &mut parts, &state, &query, Some(&id)).await?;
        let site = site.ok_or_else(|| AppError::not_found("visitor"))?;
        let (outcome, status) = match form.get("action").map(String::as_str) {
            Some("webhook") => webhook(&state, &mut parts, &form, site, &id).await?,
            Some("identify") => identify(&state, &mut parts, &form, site, &id).await?,
            _ => return Err(AppError::validation("action", "must be webhook or identify").into()),
        };
        let mut response = frame::show(page, &state, &mut parts, Some(outcome)).await?;
        *response.status_mut() = status;
        Ok::<_, WebError>(response)
    };
    run.await.unwrap_or_else(IntoResponse::into_response)
}

async fn webhook(
    state: &RouterState,
    parts: &mut axum::http::request::Parts,
    form: &HashMap<String, String>,
    site: i64,
    id: &str,
) -> WebResult<(Outcome, StatusCode)> {
    let values = WebhookForm {
        url: text(form, "url"),
        kind: text(form, "type"),
        journey: flag("journey", form.get("journey").map(String::as_str))?,
        events: flag("events", form.get("events").map(String::as_str))?,
    };
    let dry_run = text(form, "intent") != "send";
    let variables = json!({
        "siteId": site,
        "id": id,
        "url": values.url,
        "type": optional(&values.kind),
        "journey": values.journey,
        "events": values.events,
        "dryRun": dry_run,
    });
    let notice = match bridge::run(parts, state, SEND_WEBHOOK, variables).await {
        Ok(answer) => {
            let sent = &answer.data["sendWebhook"];
            if dry_run {
                let payload = serde_json::to_string_pretty(&sent["payload"]).map_err(AppError::internal)?;
                let headers = sent["headers"]
                    .as_object()
                    .map(|map| map.iter().map(|(k, v)| (k.clone(), super::format::json_text(v))).collect())
                    .unwrap_or_default();
                Notice::Preview { payload, headers }
            } else {
                let at = sent["deliveredAt"].as_str().map(super::format::when).unwrap_or_default();
                Notice::Sent { kind: super::format::json_text(&sent["webhookType"]), at }
            }
        }
        Err(err) if is_page_error(err.code) => return Err(err.into()),
        Err(err) => {
            let field = match err.code {
                ErrorCode::InvalidWebhookUrl | ErrorCode::InvalidUrl => Some("url"),
                _ => field_of(
                    &err.message,
                    &[("webhook_url", "url"), ("webhookUrl", "url"), ("webhook_type", "type"), ("webhookType", "type")],
                ),
            };
            let status = err.status();
            let outcome = Outcome {
                notice: Some(Notice::WebhookFailed { field, message: err.message }),
                webhook: values,
                ..Outcome::default()
            };
            return Ok((outcome, status));
        }
    };
    Ok((Outcome { notice: Some(notice), webhook: values, ..Outcome::default() }, StatusCode::OK))
}

async fn identify(
    state: &RouterState,
    parts: &mut axum::http::request::Parts,
    form: &HashMap<String, String>,
    site: i64,
    id: &str,
) -> WebResult<(Outcome, StatusCode)> {
    let values = IdentifyForm {
        email: text(form, "email"),
        user_id: text(form, "user_id"),
        name: text(form, "name"),
        company: text(form, "company"),
        phone: text(form, "phone"),
    };
    let variables = json!({
        "siteId": site,
        "id": id,
        "email": optional(&values.email),
        "userId": optional(&values.user_id),
        "name": optional(&values.name),
        "company": optional(&values.company),
        "phone": optional(&values.phone),
    });
    match bridge::run(parts, state, IDENTIFY, variables).await {
        Ok(answer) => {
            let as_whom = super::format::json_text(&answer.data["identify"]["identifiedAs"]);
            // The form is done: show it empty again.
            Ok((Outcome { notice: Some(Notice::Identified { as_whom }), ..Outcome::default() }, StatusCode::OK))
        }
        Err(err) if is_page_error(err.code) => Err(err.into()),
        Err(err) => {
            let field = field_of(
                &err.message,
                &[
                    ("email", "email"),
                    ("user_id", "user_id"),
                    ("userId", "user_id"),
                    ("name", "name"),
                    ("company", "company"),
                    ("phone", "phone"),
                ],
            );
            let status = err.status();
            Ok((
                Outcome {
                    notice: Some(Notice::IdentifyFailed { field, message: err.message }),
                    identify: values,
                    ..Outcome::default()
                },
                status,
            ))
        }
    }
}
