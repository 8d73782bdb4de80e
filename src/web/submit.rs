//! Running a form: the POST routes that take a row of a forms table
//! (`forms`), run its mutation through the one executor, and answer as the
//! row says: a redirect, or the page again with what was typed and the
//! refusal beside its input.

use axum::{
    extract::{Request, State},
    response::{IntoResponse, Redirect, Response},
};

use super::{
    bridge,
    error::{WebError, WebResult},
    forms::{Done, Form, FormInput, FormState, is_page_error, placed, read_form},
    frame, nav,
    pages::{Page, SiteFrom},
};
use crate::{error::AppError, server::RouterState};

/// The POST route of a form that belongs to no page: it goes where its row
/// says, and a refusal is an error page.
pub fn route_alone(form: &'static Form) -> axum::routing::MethodRouter<RouterState> {
    axum::routing::post(move |State(state): State<RouterState>, request: Request| async move {
        let run = async {
            let (mut parts, body) = request.into_parts();
            let fields = read_form(body).await?;
            if frame::require_signed_in(&parts).is_err() {
                let next = nav::safe_next(fields.get("next").map(String::as_str));
                return Err(WebError::SignIn(next));
            }
            let input = FormInput { fields: &fields, site_id: None, id: None, site_chosen: false };
            let answer = bridge::run(&mut parts, &state, form.document, (form.variables)(&input)?).await?;
            let to = match form.done {
                Done::Redirect(to) => to(&input, &answer.data),
                Done::ShowSecret(_) | Done::Show => "/".to_owned(),
            };
            Ok::<_, WebError>((answer.cookies, Redirect::to(&to)).into_response())
        };
        run.await.unwrap_or_else(IntoResponse::into_response)
    })
}

/// The POST route of a page whose forms are rows of `forms`.
pub fn route(page: &'static Page, forms: &'static [Form]) -> axum::routing::MethodRouter<RouterState> {
    axum::routing::post(move |State(state): State<RouterState>, request: Request| async move {
        submit(page, forms, &state, request).await.unwrap_or_else(IntoResponse::into_response)
    })
}

async fn submit(
    page: &'static Page,
    forms: &'static [Form],
    state: &RouterState,
    request: Request,
) -> WebResult<Response> {
    let (mut parts, body) = request.into_parts();
    frame::require_signed_in(&parts)?;
    let fields = read_form(body).await?;
    let action = fields.get("action").map(String::as_str).unwrap_or_default();
    let form = forms.iter().find(|form| form.action == action).ok_or_else(|| {
        let names: Vec<&str> = forms.iter().map(|form| form.action).collect();
        AppError::validation("action", format!("must be one of {}", names.join(", ")))
    })?;
    let query = frame::query_map(&parts);
    let id = frame::object_id(page, &mut parts, state, &query).await?;
    let chosen = frame::chosen_site(&query)?;
    // Creating a site needs no site; every other form acts on the page's.
    let site_id = match frame::place_of_form(page, &mut parts, state, chosen, id.as_deref()).await? {
        Some(site) => Some(site),
        None if page.site == SiteFrom::CurrentOrNone => None,
        None => return Err(AppError::not_found("site").into()),
    };
    let input = FormInput { fields: &fields, site_id, id: id.as_deref(), site_chosen: chosen.is_some() };
    let ran = match (form.variables)(&input) {
        Ok(variables) => bridge::run(&mut parts, state, form.document, variables).await,
        Err(err) => Err(err),
    };
    let mut shown = FormState { action: form.action.to_owned(), values: fields.clone(), ..FormState::default() };
    let status = match ran {
        Ok(answer) => match form.done {
            Done::Redirect(to) => {
                return Ok((answer.cookies, Redirect::to(&to(&input, &answer.data))).into_response());
            }
            Done::ShowSecret(read) => {
                shown.secret = read(&answer.data);
                shown.values.clear();
                axum::http::StatusCode::OK
            }
            Done::Show => {
                shown.answer = Some(answer.data);
                axum::http::StatusCode::OK
            }
        },
        Err(err) => {
            // About the whole request (gone, not allowed, overloaded): a page.
            if is_page_error(err.code) {
                return Err(err.into());
            }
            let (field, message) = placed(&err, form.inputs);
            shown.field = field.to_owned();
            shown.error = Some(message);
            err.status()
        }
    };
    let mut response = frame::show(page, state, &mut parts, shown).await?;
    *response.status_mut() = status;
    Ok(response)
}
