//! `GET /links/<id>/qr.svg`: a link's short URL as an SVG QR code, from the
//! same `qrSvg` field the API answers; `?download=1` saves it as a file.

use axum::{
    extract::{Request, State},
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};
use serde_json::json;

use super::{bridge, error::WebResult, frame};
use crate::{error::AppError, server::RouterState};

const LINK_QR: &str = include_str!("documents/link_qr.graphql");

pub async fn serve(State(state): State<RouterState>, request: Request) -> Response {
    let run = async {
        let (mut parts, _) = request.into_parts();
        frame::require_signed_in(&parts)?;
        let query = frame::query_map(&parts);
        let id = frame::object_id(&super::pages::LINK, &mut parts, &state, &query).await?.unwrap_or_default();
        let answer = bridge::run(&mut parts, &state, LINK_QR, json!({ "id": id })).await?;
        let svg = answer.data["link"]["qrSvg"].as_str().ok_or_else(|| AppError::not_found("link"))?.to_owned();
        let slug = answer.data["link"]["slug"].as_str().unwrap_or("link");
        // Slugs are letters, digits, `-` and `_`; anything else becomes `_`.
        let file: String =
            slug.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        let mut response = ([(header::CONTENT_TYPE, HeaderValue::from_static("image/svg+xml"))], svg).into_response();
        if super::forms::flag("download", query.get("download").map(String::as_str))? {
            let disposition = format!("attachment; filename=\"qr-{file}.svg\"");
            let value = HeaderValue::from_str(&disposition).map_err(AppError::internal)?;
            response.headers_mut().insert(header::CONTENT_DISPOSITION, value);
        }
        WebResult::Ok(response)
    };
    run.await.unwrap_or_else(IntoResponse::into_response)
}
