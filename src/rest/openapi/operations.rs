//! Every `/api` route as the REST face shows it.

use serde_json::{Value, json};

macro_rules! doc {
    ($name:literal) => {
        include_str!(concat!("../documents/", $name, ".graphql"))
    };
}

/// Which part of the GraphQL answer is the REST answer.
pub enum Output {
    /// The whole `data` object (the document's aliases give the REST names).
    Whole,
    /// One top-level field of `data`.
    Field(&'static str),
}

/// Where the JSON body's schema comes from.
pub enum Body {
    None,
    /// The document's variables, less those taken from the path or query.
    Variables {
        except: &'static [&'static str],
    },
    /// A body the handler maps onto the document itself.
    Schema(fn() -> Value),
}

pub struct Operation {
    pub method: &'static str,
    pub path: &'static str,
    pub id: &'static str,
    pub tag: &'static str,
    pub summary: &'static str,
    /// The GraphQL document the route runs.
    pub document: &'static str,
    pub output: Output,
    /// Query parameters: name, JSON type, required.
    pub query: &'static [(&'static str, &'static str, bool)],
    pub body: Body,
    /// Works without a session.
    pub public: bool,
}

const fn op(
    method: &'static str,
    path: &'static str,
    id: &'static str,
    tag: &'static str,
    summary: &'static str,
) -> Operation {
    Operation {
        method,
        path,
        id,
        tag,
        summary,
        document: "",
        output: Output::Whole,
        query: &[],
        body: Body::None,
        public: false,
    }
}

const SITE_ID: (&str, &str, bool) = ("siteId", "integer", true);
const OPTIONAL_SITE_ID: (&str, &str, bool) = ("siteId", "integer", false);
const NO_EXCEPTIONS: &[&str] = &[];

fn link_update_body() -> Value {
    let text = json!({ "type": "string" });
    json!({ "type": "object", "properties": {
        "destinationUrl": text, "slug": text, "campaign": text, "source": text, "medium": text,
        "content": text, "notes": text,
        "link_type": { "type": "string", "enum": ["content", "ad", "bio"] },
        "is_active": { "type": "boolean" },
        "expires_at": { "type": ["string", "null"] },
        "max_clicks": { "type": ["integer", "null"] },
        "tags": { "type": ["array", "null"], "items": { "type": "string" } },
    }})
}

pub const OPERATIONS: &[Operation] = &[
    Operation {
        document: doc!("sign_up"),
        output: Output::Field("signUp"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        public: true,
        ..op("POST", "/api/auth/sign-up/email", "signUp", "auth", "Create an account and sign in")
    },
    Operation {
        document: doc!("sign_in"),
        output: Output::Field("signIn"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        public: true,
        ..op("POST", "/api/auth/sign-in/email", "signIn", "auth", "Sign in; sets the session cookie")
    },
    Operation {
        document: doc!("sign_out"),
        output: Output::Field("signOut"),
        ..op("POST", "/api/auth/sign-out", "signOut", "auth", "End the session")
    },
    Operation {
        document: doc!("get_session"),
        output: Output::Field("session"),
        public: true,
        ..op("GET", "/api/auth/get-session", "getSession", "auth", "The current session and user, or null")
    },
    Operation {
        document: doc!("update_user"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/auth/update-user", "updateUser", "auth", "Change the user's name")
    },
    Operation {
        document: doc!("change_email"),
        output: Output::Field("changeEmail"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/auth/change-email", "changeEmail", "auth", "Change the user's email")
    },
    Operation {
        document: doc!("change_password"),
        output: Output::Field("changePassword"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/auth/change-password", "changePassword", "auth", "Change the password")
    },
    Operation {
        document: doc!("delete_user"),
        output: Output::Field("deleteUser"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/auth/delete-user", "deleteUser", "auth", "Delete the account")
    },
    Operation {
        document: doc!("profile"),
        ..op("GET", "/api/profile", "profile", "account", "The signed-in user's profile")
    },
    Operation {
        document: doc!("sites_list"),
        ..op("GET", "/api/sites", "listSites", "sites", "Sites the caller can reach")
    },
    Operation {
        document: doc!("site_create"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/sites", "createSite", "sites", "Add a site (admins)")
    },
    Operation {
        document: doc!("site_update"),
        body: Body::Variables { except: &["id"] },
        ..op("PUT", "/api/sites/{id}", "updateSite", "sites", "Change a site (admins)")
    },
    Operation {
        document: doc!("site_delete"),
        output: Output::Field("deleteSite"),
        ..op("DELETE", "/api/sites/{id}", "deleteSite", "sites", "Remove a site and its data (admins)")
    },
    Operation {
        document: doc!("identity"),
        output: Output::Field("identity"),
        query: &[("tracker_vid", "string", true), OPTIONAL_SITE_ID],
        ..op("GET", "/api/identify", "identity", "identify", "The latest identity of a visitor")
    },
    Operation {
        document: doc!("identify"),
        output: Output::Field("identify"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/identify", "identify", "identify", "Link a visitor to a known person")
    },
    Operation {
        document: doc!("links_list"),
        output: Output::Field("links"),
        query: &[OPTIONAL_SITE_ID],
        ..op("GET", "/api/links", "listLinks", "links", "Tracking links with click counts")
    },
    Operation {
        document: doc!("link_create"),
        output: Output::Field("createLink"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/links", "createLink", "links", "Create a tracking link")
    },
    Operation {
        document: doc!("check_slug"),
        output: Output::Field("checkSlug"),
        query: &[("slug", "string", true), OPTIONAL_SITE_ID],
        ..op("GET", "/api/links/check-slug", "checkSlug", "links", "Whether a slug is free")
    },
    Operation {
        document: doc!("link_update"),
        body: Body::Schema(link_update_body),
        ..op("PUT", "/api/links/{id}", "updateLink", "links", "Change the fields given")
    },
    Operation {
        document: doc!("link_delete"),
        output: Output::Field("deleteLink"),
        ..op("DELETE", "/api/links/{id}", "deleteLink", "links", "Delete a link")
    },
    Operation {
        document: doc!("link_analytics"),
        output: Output::Field("linkAnalytics"),
        query: &[
            OPTIONAL_SITE_ID,
            ("range", "string", false),
            ("slug", "string", false),
            ("campaign", "string", false),
            ("source", "string", false),
        ],
        ..op(
            "GET",
            "/api/link-analytics",
            "linkAnalytics",
            "links",
            "Human clicks grouped by country, city, campaign, source and day",
        )
    },
    Operation {
        document: doc!("live_stream"),
        output: Output::Field("liveStream"),
        query: &[SITE_ID],
        ..op("GET", "/api/visitors", "liveVisitors", "visitors", "Visitors and events of the last 24 hours")
    },
    Operation {
        document: doc!("visitor_list"),
        output: Output::Field("visitors"),
        query: &[SITE_ID, ("limit", "integer", false), ("timeRange", "string", false), ("filter", "string", false)],
        ..op("GET", "/api/visitor", "listVisitors", "visitors", "Scored visitors")
    },
    Operation {
        document: doc!("visitor_profile"),
        output: Output::Field("visitor"),
        query: &[SITE_ID],
        ..op("GET", "/api/visitor/{id}", "visitorProfile", "visitors", "One visitor's profile")
    },
    Operation {
        document: doc!("stats"),
        output: Output::Field("stats"),
        query: &[SITE_ID, ("timeRange", "string", false)],
        ..op("GET", "/api/stats", "stats", "visitors", "Overview statistics")
    },
    Operation {
        document: doc!("session"),
        output: Output::Field("trackedSession"),
        query: &[SITE_ID],
        ..op("GET", "/api/session/{id}", "trackedSession", "visitors", "One session and its timeline")
    },
    Operation {
        document: doc!("webhook_info"),
        output: Output::Field("webhookInfo"),
        ..op("GET", "/api/webhook", "webhookInfo", "webhooks", "Payload types and an example request")
    },
    Operation {
        document: doc!("webhook_send"),
        output: Output::Field("sendWebhook"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op(
            "POST",
            "/api/webhook",
            "sendWebhook",
            "webhooks",
            "Push a visitor's profile to a target, or preview it with dry_run",
        )
    },
];
