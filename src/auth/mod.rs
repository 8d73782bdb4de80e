//! Who a caller is and what they may do: the viewer, roles, session cookies,
//! API key and session tokens, passwords, rate limits. Resolving a request's
//! caller is `request`'s.

pub mod cookie;
pub mod password;
pub mod rate_limit;
pub mod token;

use std::net::IpAddr;

/// The authenticated caller of one request.
#[derive(Debug, Clone)]
pub enum Viewer {
    /// A person signed in with the session cookie.
    User { user_id: i64, session_id: i64, session_created_at: i64 },
    /// A server-to-server caller holding an org's API key.
    ApiKey { org_id: i64, key_id: i64 },
}

impl Viewer {
    pub fn user_id(&self) -> Option<i64> {
        match self {
            Viewer::User { user_id, .. } => Some(*user_id),
            Viewer::ApiKey { .. } => None,
        }
    }
}

/// Facts about the request that services need besides the caller.
#[derive(Debug, Clone)]
pub struct RequestMeta {
    pub client_ip: IpAddr,
    pub user_agent: Option<String>,
}

/// Everything a REST handler or GraphQL resolver knows about the request.
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub viewer: Option<Viewer>,
    pub meta: RequestMeta,
    /// The signed-in user's cookie token: get-session shows it, as Better Auth does.
    pub session_token: Option<String>,
}

/// Org roles, weakest first, so `role >= Role::Admin` reads as a permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Viewer,
    Member,
    Admin,
    Owner,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Member => "member",
            Role::Admin => "admin",
            Role::Owner => "owner",
        }
    }

    /// Unknown values read as the weakest role, never a stronger one.
    pub fn parse(value: &str) -> Role {
        match value {
            "owner" => Role::Owner,
            "admin" => Role::Admin,
            "member" => Role::Member,
            _ => Role::Viewer,
        }
    }

    /// The role an org API key acts with: it may read, identify, manage links
    /// and send webhooks, but not manage sites, keys or members.
    pub const API_KEY: Role = Role::Member;
}
