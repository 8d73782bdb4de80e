//! The one handler every page row runs: the caller first (signed out is a
//! detour through the sign-in form), then the site, the object id and the
//! query become the document's variables, the bridge runs the document, and
//! the row's render function fills its template.

use std::collections::HashMap;

use askama::Template;
use axum::{
    extract::{RawPathParams, Request, State},
    http::request::Parts,
    response::{Html, IntoResponse, Response},
    routing::{MethodRouter, get},
};
use serde_json::{Map, Value, json};

use super::{
    bridge,
    error::{WebError, WebResult},
    forms::FormState,
    layout::{FrameData, Layout},
    pages::{Access, IdFrom, Page, PageInput, SiteFrom},
};
use crate::{
    auth::{RequestContext, Role},
    error::AppError,
    server::RouterState,
    time::now_ms,
};

const CURRENT_SITE: &str = include_str!("documents/current_site.graphql");
const VISITOR_SITE: &str = include_str!("documents/visitor_site.graphql");
const LINK_SITE: &str = include_str!("documents/link_site.graphql");
const ACCESS: &str = include_str!("documents/access.graphql");
/// The welcome page's document: only the frame.
const FRAME_ONLY: &str = concat!("query Welcome { ...Frame }\n", include_str!("documents/frame.graphql"));

/// The GET route for one row.
pub fn route(page: &'static Page) -> MethodRouter<RouterState> {
    get(move |State(state): State<RouterState>, request: Request| async move {
        let (mut parts, _) = request.into_parts();
        show(page, &state, &mut parts, FormState::default()).await.unwrap_or_else(IntoResponse::into_response)
    })
}

/// The path and query asked for, to come back to after signing in.
pub fn path_and_query(parts: &Parts) -> String {
    parts.uri.path_and_query().map_or_else(|| parts.uri.path().to_owned(), |pq| pq.as_str().to_owned())
}

/// Signed out is a detour through the sign-in form.
pub fn require_signed_in(parts: &Parts) -> WebResult<()> {
    let signed_in = parts.extensions.get::<RequestContext>().is_some_and(|ctx| ctx.viewer.is_some());
    if signed_in { Ok(()) } else { Err(WebError::SignIn(path_and_query(parts))) }
}

pub fn query_map(parts: &Parts) -> HashMap<String, String> {
    parts
        .uri
        .query()
        .map(|text| url::form_urlencoded::parse(text.as_bytes()).into_owned().collect())
        .unwrap_or_default()
}

/// The page's object id, from the path or a required query parameter.
pub async fn object_id(
    page: &Page,
    parts: &mut Parts,
    state: &RouterState,
    query: &HashMap<String, String>,
) -> WebResult<Option<String>> {
    Ok(match page.id {
        None => None,
        Some(IdFrom::Path) => {
            let params =
                <RawPathParams as axum::extract::FromRequestParts<RouterState>>::from_request_parts(parts, state)
                    .await
                    .map_err(|err| AppError::bad_request(err.body_text()))?;
            let id = params.iter().find(|(name, _)| *name == "id").map(|(_, value)| value.to_owned());
            Some(id.ok_or_else(|| AppError::not_found("page"))?)
        }
        Some(IdFrom::Query(name)) => {
            let id = query.get(name).map(|id| id.trim()).filter(|id| !id.is_empty());
            Some(id.ok_or_else(|| AppError::validation(name, "is required"))?.to_owned())
        }
    })
}

/// The view's site: `?site=N` (for this view only; switching is a POST),
/// else where the row says. `None` when the user has no site yet.
pub async fn resolve_site(
    page: &Page,
    parts: &mut Parts,
    state: &RouterState,
    query: &HashMap<String, String>,
    id: Option<&str>,
) -> WebResult<(Option<i64>, Option<String>)> {
    if let Some(raw) = query.get("site") {
        let site = raw.trim().parse::<i64>().map_err(|_| AppError::validation("site", "must be a site number"))?;
        return Ok((Some(site), Some(format!("site={site}"))));
    }
    let answer = match (page.site, id) {
        (SiteFrom::Visitor, Some(id)) => {
            bridge::run(parts, state, VISITOR_SITE, json!({ "id": id })).await?.data["visitorSite"]["id"].take()
        }
        (SiteFrom::Link, Some(id)) => {
            bridge::run(parts, state, LINK_SITE, json!({ "id": id })).await?.data["link"]["siteId"].take()
        }
        _ => bridge::run(parts, state, CURRENT_SITE, json!({})).await?.data["currentSite"]["id"].take(),
    };
    Ok((answer.as_i64(), None))
}

/// Runs the row for this request; `form` is what a form of the page just did.
pub async fn show(page: &'static Page, state: &RouterState, parts: &mut Parts, form: FormState) -> WebResult<Response> {
    require_signed_in(parts)?;
    let query = query_map(parts);
    let id = object_id(page, parts, state, &query).await?;
    let (site, site_query) = resolve_site(page, parts, state, &query, id.as_deref()).await?;
    let site_id = match (site, page.site) {
        (Some(site_id), _) => site_id,
        // The settings pages are where a first site is made.
        (None, SiteFrom::CurrentOrNone) => 0,
        (None, _) if page.section.is_some() => return welcome(parts, state).await,
        (None, _) => return Err(AppError::not_found("site").into()),
    };
    let mut variables = Map::new();
    variables.insert("siteId".to_owned(), json!(site_id));
    variables.insert("hasSite".to_owned(), json!(site.is_some()));
    if let Some(id) = &id {
        variables.insert("id".to_owned(), json!(id));
    }
    let access = if page.access { Some(access(parts, state, site).await?) } else { None };
    if let Some(access) = &access {
        variables.insert("orgId".to_owned(), json!(access.org_id));
        variables.insert("orgMember".to_owned(), json!(access.role >= Role::Member));
        variables.insert("orgAdmin".to_owned(), json!(access.role >= Role::Admin));
    }
    for param in page.params {
        (param.fill)(query.get(param.name).map(String::as_str).filter(|v| !v.is_empty()), &mut variables)?;
    }
    let mut answer = bridge::run(parts, state, page.document, Value::Object(variables)).await?;
    let frame = take_frame(&mut answer.data);
    let switch_next = if page.section.is_some() { page.path.to_owned() } else { "/".to_owned() };
    let layout = Layout::framed("", frame, page.section, site, site_query.as_deref(), switch_next);
    let input = PageInput {
        site_id,
        has_site: site.is_some(),
        site_query,
        query,
        now: now_ms(),
        form,
        access,
        base_url: state.app.config.base_url(),
    };
    let html = (page.render)(layout, &input, answer.data)?;
    Ok((answer.cookies, Html(html)).into_response())
}

/// The org of the site (else the viewer's primary org) and the viewer's role in it.
async fn access(parts: &mut Parts, state: &RouterState, site: Option<i64>) -> WebResult<Access> {
    let variables = json!({ "siteId": site.unwrap_or(0), "hasSite": site.is_some() });
    let data = bridge::run(parts, state, ACCESS, variables).await?.data;
    let org_id = data["site"]["orgId"].as_str().or_else(|| data["profile"]["org"]["id"].as_str()).unwrap_or_default();
    let role = data["orgs"]
        .as_array()
        .and_then(|orgs| orgs.iter().find(|org| org["id"].as_str() == Some(org_id)))
        .and_then(|org| org["role"].as_str())
        .map_or(Role::Viewer, Role::parse);
    Ok(Access { org_id: org_id.to_owned(), role })
}

/// Takes the frame's fields out of a page answer.
fn take_frame(data: &mut Value) -> FrameData {
    let Some(map) = data.as_object_mut() else {
        return FrameData::default();
    };
    let frame = json!({ "viewer": map.remove("viewer"), "sites": map.remove("sites").unwrap_or_else(|| json!([])) });
    serde_json::from_value(frame).unwrap_or_default()
}

#[derive(Template)]
#[template(path = "welcome.html")]
struct Welcome {
    layout: Layout,
    base_url: String,
}

/// A signed-in user without a site yet: how to add one.
async fn welcome(parts: &mut Parts, state: &RouterState) -> WebResult<Response> {
    let mut answer = bridge::run(parts, state, FRAME_ONLY, json!({})).await?;
    let frame = take_frame(&mut answer.data);
    let layout = Layout::framed("Welcome", frame, None, None, None, "/".to_owned());
    let page = Welcome { layout, base_url: state.app.config.base_url() };
    Ok(Html(page.render().map_err(AppError::internal)?).into_response())
}
