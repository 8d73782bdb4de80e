//! The stylesheet and scripts, compiled into the binary. Their URLs carry a
//! hash of their content, so browsers may keep them for a year and still get
//! a new version the moment it ships.

use std::sync::LazyLock;

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use sha2::{Digest, Sha256};

struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const ASSETS: [Asset; 4] = [
    Asset { name: "app.css", content_type: "text/css; charset=utf-8", body: include_str!("assets/app.css") },
    Asset { name: "app.js", content_type: "text/javascript; charset=utf-8", body: include_str!("assets/app.js") },
    Asset { name: "live.js", content_type: "text/javascript; charset=utf-8", body: include_str!("assets/live.js") },
    Asset { name: "favicon.svg", content_type: "image/svg+xml", body: include_str!("assets/favicon.svg") },
];

fn versioned(name: &str) -> String {
    let body = ASSETS.iter().find(|asset| asset.name == name).map_or("", |asset| asset.body);
    let hash = hex::encode(Sha256::digest(body.as_bytes()));
    format!("/assets/{name}?v={}", &hash[..12])
}

pub static CSS: LazyLock<String> = LazyLock::new(|| versioned("app.css"));
pub static APP_JS: LazyLock<String> = LazyLock::new(|| versioned("app.js"));
pub static LIVE_JS: LazyLock<String> = LazyLock::new(|| versioned("live.js"));
pub static FAVICON: LazyLock<String> = LazyLock::new(|| versioned("favicon.svg"));

/// The asset called `name`, with its type and a year's caching; `None`
/// when there is none (the route answers with the 404 page).
pub fn serve(name: &str) -> Option<Response> {
    let asset = ASSETS.iter().find(|asset| asset.name == name)?;
    let mut response = (StatusCode::OK, asset.body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
    Some(response)
}
