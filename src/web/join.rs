//! `/join?token=...`: where an invitation email leads. Someone without an
//! account creates one with the invited address and joins; someone signed
//! in with that address joins with one click; anyone else is told which
//! address the invitation is for. Over the API's own mutations
//! (`signUpWithInvitation`, `acceptInvitationByToken`).

use askama::Template;
use axum::{
    extract::{Request, State},
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
};
use serde::Deserialize;
use serde_json::json;

use super::{
    bridge, error,
    error::{WebError, WebResult},
    forms::{self, Input, input, read_form},
    frame,
    layout::Layout,
    nav,
};
use crate::{error::AppError, server::RouterState};

const JOIN: &str = include_str!("documents/join.graphql");
const ACCEPT: &str = include_str!("documents/accept_invitation_by_token.graphql");
const SIGN_UP: &str = include_str!("documents/sign_up_with_invitation.graphql");

#[derive(Default)]
struct Errors {
    form: Option<String>,
    name: Option<String>,
    password: Option<String>,
}

#[derive(Template)]
#[template(path = "join.html")]
struct JoinPage {
    layout: Layout,
    token: String,
    /// `/join?token=...`, encoded for a `next` parameter.
    next: String,
    org_name: String,
    email: String,
    role: String,
    invited_by: String,
    /// The signed-in person's address; empty when nobody is signed in.
    signed_in_as: String,
    name: String,
    errors: Errors,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Invitation {
    org_name: String,
    email: String,
    role: String,
    invited_by: String,
}

#[derive(Deserialize)]
struct Viewer {
    email: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JoinData {
    invitation_by_token: Invitation,
    viewer: Option<Viewer>,
}

const INPUTS: [Input; 2] = [input("name", "Name", "name"), input("password", "Password", "password")];

fn render(status: StatusCode, page: JoinPage) -> Response {
    error::form_page(status, &page)
}

/// The invitation the token names, as the page shows it; a refused token
/// is an error page that says why.
async fn load(parts: &mut axum::http::request::Parts, state: &RouterState, token: &str) -> Result<JoinPage, AppError> {
    let answer = bridge::run(parts, state, JOIN, json!({ "token": token })).await?;
    let data: JoinData = bridge::decode(answer.data)?;
    let invitation = data.invitation_by_token;
    let invited_by = if invitation.invited_by.is_empty() { "A colleague".to_owned() } else { invitation.invited_by };
    Ok(JoinPage {
        layout: Layout::bare(format!("Join {}", invitation.org_name)),
        next: nav::encode(&format!("/join?token={token}")),
        token: token.to_owned(),
        org_name: invitation.org_name,
        email: invitation.email,
        role: invitation.role,
        invited_by,
        signed_in_as: data.viewer.map(|viewer| viewer.email).unwrap_or_default(),
        name: String::new(),
        errors: Errors::default(),
    })
}

/// GET /join?token=...
pub async fn show(State(state): State<RouterState>, request: Request) -> Response {
    let (mut parts, _) = request.into_parts();
    let token = frame::query_map(&parts).get("token").cloned().unwrap_or_default();
    match load(&mut parts, &state, &token).await {
        Ok(page) => render(StatusCode::OK, page),
        Err(err) => error::page(&err, None),
    }
}

/// POST /join: `intent` is `signup` or `accept`.
pub async fn submit(State(state): State<RouterState>, request: Request) -> Response {
    answer(state, request).await.unwrap_or_else(IntoResponse::into_response)
}

async fn answer(state: RouterState, request: Request) -> WebResult<Response> {
    let (mut parts, body) = request.into_parts();
    let form = read_form(body).await?;
    let field = |name: &str| form.get(name).cloned().unwrap_or_default();
    let token = field("token");
    let result = if field("intent") == "accept" {
        bridge::run(&mut parts, &state, ACCEPT, json!({ "token": token })).await
    } else {
        let variables = json!({ "token": token, "name": field("name"), "password": field("password") });
        bridge::run(&mut parts, &state, SIGN_UP, variables).await
    };
    match result {
        Ok(answer) => Ok((answer.cookies, Redirect::to("/")).into_response()),
        Err(err) if error::unplaceable(&err) => Err(WebError::App(err)),
        Err(err) if err.field.as_deref() == Some("token") => Ok(error::page(&err, None)),
        Err(err) => {
            let mut page = load(&mut parts, &state, &token).await.map_err(WebError::App)?;
            page.name = field("name");
            let (placed, message) = forms::placed(&err, &INPUTS);
            match placed {
                "name" => page.errors.name = Some(message),
                "password" => page.errors.password = Some(message),
                _ => page.errors.form = Some(message),
            }
            Ok(render(err.status(), page))
        }
    }
}
