//! `/api/auth/*`: the account endpoints, in Better Auth's shapes.

use axum::response::Response;
use serde_json::Value;

use super::{
    bridge::{Bridge, PublicBridge},
    extract::JsonBody,
};
use crate::error::AppResult;

pub async fn sign_up(PublicBridge(bridge): PublicBridge, JsonBody(body): JsonBody) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/sign_up.graphql"), body).await?.field("signUp"))
}

pub async fn sign_in(PublicBridge(bridge): PublicBridge, JsonBody(body): JsonBody) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/sign_in.graphql"), body).await?.field("signIn"))
}

pub async fn sign_out(bridge: Bridge) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/sign_out.graphql"), Value::Null).await?.field("signOut"))
}

/// `null` when not signed in, like Better Auth.
pub async fn get_session(PublicBridge(bridge): PublicBridge) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/get_session.graphql"), Value::Null).await?.field("session"))
}

pub async fn update_user(bridge: Bridge, JsonBody(body): JsonBody) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/update_user.graphql"), body).await?.whole())
}

pub async fn change_email(bridge: Bridge, JsonBody(body): JsonBody) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/change_email.graphql"), body).await?.field("changeEmail"))
}

pub async fn change_password(bridge: Bridge, JsonBody(body): JsonBody) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/change_password.graphql"), body).await?.field("changePassword"))
}

pub async fn delete_user(bridge: Bridge, JsonBody(body): JsonBody) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/delete_user.graphql"), body).await?.field("deleteUser"))
}
