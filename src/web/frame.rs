//! The one handler every page row runs: the caller first (signed out is a
//! detour through the sign-in form), then the site, the object id and the
//! query become the document's variables, the bridge runs the document, and
//! the row's render function fills its template.

use std::collections::HashMap;

use askama::Template;
use axum::{
    extract::{RawPathParams, Request, State},
    http::StatusCode,
    http::request::Parts,
    response::{Html, IntoResponse, Response},
    routing::{MethodRouter, get},
};
use serde_json::{Map, Value, json};

use super::{
    bridge,
    error::{WebError, WebResult},
    forms::FormState,
    layout::{FrameData, Layout, SavedViewData, Section},
    pages::{Access, FILTER, IdFrom, Page, PageInput, Param, SiteFrom},
};
use crate::{
    auth::{RequestContext, Role},
    error::{AppError, ErrorCode},
    server::RouterState,
    time::now_ms,
};

/// The site a form acts on when the address names none.
const PLACE: &str = include_str!("documents/place.graphql");

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

/// `?site=N`: the site the address chose, for this view only (switching
/// is a POST).
pub fn chosen_site(query: &HashMap<String, String>) -> WebResult<Option<i64>> {
    let Some(raw) = query.get("site") else { return Ok(None) };
    let site = raw.trim().parse::<i64>().map_err(|_| AppError::validation("site", "must be a site number"))?;
    Ok(Some(site))
}

/// The site and org a page's answer is about, from its `workspace { ...Place }`,
/// and the site's saved views for the navigation.
pub struct Place {
    pub site: Option<i64>,
    pub access: Option<Access>,
    pub views: Vec<SavedViewData>,
}

impl Place {
    fn of(data: &Value) -> Place {
        let workspace = &data["workspace"];
        let site = workspace["site"]["id"].as_i64();
        let access = workspace["org"]["id"].as_str().map(|org_id| Access {
            org_id: org_id.to_owned(),
            role: workspace["org"]["role"].as_str().map_or(Role::Viewer, Role::parse),
        });
        let views = serde_json::from_value(workspace["savedViews"].clone()).unwrap_or_default();
        Place { site, access, views }
    }
}

/// The site and org a form acts on: the address's `?site=N`, else one run
/// of the small `Place` document naming what the page is about.
pub async fn place_of_form(
    page: &Page,
    parts: &mut Parts,
    state: &RouterState,
    chosen: Option<i64>,
    id: Option<&str>,
) -> WebResult<Option<i64>> {
    if chosen.is_some() {
        return Ok(chosen);
    }
    let variables = match (page.site, id) {
        (SiteFrom::Visitor, Some(id)) => json!({ "trackerVid": id }),
        (SiteFrom::Link, Some(id)) => json!({ "linkId": id }),
        _ => json!({}),
    };
    let answer = bridge::run(parts, state, PLACE, variables).await?;
    Ok(Place::of(&answer.data).site)
}

/// Runs the row for this request, in one run of its document; `form` is
/// what a form of the page just did.
pub async fn show(page: &'static Page, state: &RouterState, parts: &mut Parts, form: FormState) -> WebResult<Response> {
    require_signed_in(parts)?;
    let query = query_map(parts);
    let id = object_id(page, parts, state, &query).await?;
    let chosen = chosen_site(&query)?;
    let site_query = chosen.map(|site| format!("site={site}"));
    let mut variables = Map::new();
    variables.insert("siteId".to_owned(), json!(chosen));
    if let Some(id) = &id {
        variables.insert("id".to_owned(), json!(id));
    }
    let mut form = form;
    let mut refused_filter = None;
    for param in page.params {
        let raw = query.get(param.name).map(String::as_str).filter(|v| !v.is_empty());
        match (param.fill)(raw, &mut variables) {
            Err(err) if !param.label.is_empty() => {
                refused_filter.get_or_insert((param, err));
                (param.fill)(None, &mut variables)?;
            }
            other => other?,
        }
    }
    let mut answer = match bridge::run(parts, state, page.document, Value::Object(variables.clone())).await {
        // A filter the document refuses: the page without it, the refusal beside its input.
        Err(err) if refused_filter.is_none() && err.code == ErrorCode::ValidationError => {
            let Some(param) = param_of(page, &err) else { return Err(err.into()) };
            refused_filter = Some((param, err));
            (param.fill)(None, &mut variables)?;
            bridge::run(parts, state, page.document, Value::Object(variables)).await?
        }
        other => other?,
    };
    let status = if refused_filter.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
    if let Some((param, err)) = refused_filter {
        form = FormState {
            action: FILTER.to_owned(),
            field: param.name.to_owned(),
            error: Some(format!("{}: {}", param.label, err.problem())),
            ..form
        };
    }
    let frame = take_frame(&mut answer.data);
    let place = Place::of(&answer.data);
    if place.site.is_none() && page.site != SiteFrom::CurrentOrNone {
        return match page.section {
            Some(_) => welcome(frame, state),
            None => Err(AppError::not_found("site").into()),
        };
    }
    let switch_next = if page.section.is_some() { page.path.to_owned() } else { "/".to_owned() };
    let mut layout = Layout::framed("", frame, page.section, place.site, site_query.as_deref(), switch_next);
    let current_view = (page.section == Some(Section::Leads)).then(|| query.get("view")).flatten();
    layout.add_views(place.views, site_query.as_deref(), current_view.map(String::as_str));
    let input = PageInput {
        site_id: place.site,
        site_query,
        query,
        now: now_ms(),
        form,
        access: place.access,
        base_url: state.app.config.base_url(),
    };
    let html = (page.render)(layout, &input, answer.data)?;
    Ok((status, answer.cookies, Html(html)).into_response())
}

/// The page parameter whose variable a refusal names, when the page shows
/// an input for it.
fn param_of(page: &Page, err: &AppError) -> Option<&'static Param> {
    let field = err.field.as_deref()?;
    page.params.iter().filter(|param| !param.label.is_empty()).find(|param| {
        let mut filled = Map::new();
        if (param.fill)(Some("1"), &mut filled).is_err() {
            filled.clear();
        }
        // A part of an input variable is named by its path (`explorer.range`).
        let part =
            field.split_once('.').is_some_and(|(variable, rest)| filled.contains_key(variable) && rest == param.name);
        filled.contains_key(field) || part || param.name == field
    })
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

/// A signed-in user without a site yet: how to add one, framed by the
/// answer the page's own run gave.
fn welcome(frame: FrameData, state: &RouterState) -> WebResult<Response> {
    let layout = Layout::framed("Welcome", frame, None, None, None, "/".to_owned());
    let page = Welcome { layout, base_url: state.app.config.base_url() };
    Ok(Html(page.render().map_err(AppError::internal)?).into_response())
}
