//! Test harness: the real router served over HTTP on a free port, against a
//! fresh SQLite database and, when TEST_DATABASE_URL is set, a fresh
//! PostgreSQL database too.
#![allow(dead_code)]
// Test support fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};

use leadtrail::{config::Config, db, state::AppState};
use reqwest::{Method, StatusCode, header::HeaderMap};
use sea_orm::{ConnectionTrait, Database};
use serde_json::{Value, json};

pub mod browser;
pub mod explore_recount;
pub mod process;
pub mod receiver;
pub mod rollup_recount;
pub mod scenario;
pub mod smtp;
pub mod traffic;
pub mod web;
pub mod ws;

static COUNTER: AtomicUsize = AtomicUsize::new(0);

pub fn unique(prefix: &str) -> String {
    format!("{prefix}{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

pub struct TestApp {
    pub backend: &'static str,
    pub base: String,
    pub state: AppState,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    _dir: Option<tempfile::TempDir>,
    pg: Option<(String, String)>,
}

/// One app per backend under test, each on an empty database.
pub async fn apps() -> Vec<TestApp> {
    apps_with(|_| {}).await
}

pub async fn apps_with(configure: impl Fn(&mut Config)) -> Vec<TestApp> {
    let mut apps = vec![sqlite_app(&configure).await];
    if let Ok(url) = std::env::var("TEST_DATABASE_URL")
        && !url.is_empty()
    {
        apps.push(postgres_app(&url, &configure).await);
    }
    apps
}

fn base_config() -> Config {
    let mut config = Config::defaults().expect("test configuration");
    // Tests sign up many users from one address.
    config.auth_rate_limit_per_minute = 100_000;
    config.auth_account_rate_limit_per_minute = 100_000;
    config.query_cost_per_minute = 100_000_000;
    config.collect_rate_limit_per_second = 100_000;
    config.collect_site_rate_limit_per_second = 100_000;
    config.webhook_unsafe_allow_any_target = false;
    config.disable_registration = false;
    config.max_sites_per_account = 10;
    config.graphql_introspection = true;
    config
}

async fn sqlite_app(configure: &impl Fn(&mut Config)) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("test.db").display());
    start("sqlite", url, configure, Some(dir), None).await
}

async fn postgres_app(admin_url: &str, configure: &impl Fn(&mut Config)) -> TestApp {
    let name = unique("lt_test_").replace('-', "_");
    let admin = Database::connect(admin_url).await.expect("connect to TEST_DATABASE_URL");
    admin.execute_unprepared(&format!("CREATE DATABASE {name}")).await.expect("create test database");
    admin.close().await.ok();
    let mut url = url::Url::parse(admin_url).expect("TEST_DATABASE_URL is a URL");
    url.set_path(&format!("/{name}"));
    start("postgres", url.to_string(), configure, None, Some((admin_url.to_owned(), name))).await
}

/// `n` instances of one deployment: app states with their own writers and
/// caches, serving one fresh PostgreSQL database, started at the same moment
/// (so their migrations race). None without TEST_DATABASE_URL.
pub async fn postgres_instances(n: usize) -> Option<Vec<TestApp>> {
    postgres_instances_with(n, |_| {}).await
}

/// `postgres_instances` with a configuration change on each.
pub async fn postgres_instances_with(n: usize, configure: impl Fn(&mut Config)) -> Option<Vec<TestApp>> {
    let admin_url = std::env::var("TEST_DATABASE_URL").ok().filter(|url| !url.is_empty())?;
    let name = unique("lt_test_").replace('-', "_");
    let admin = Database::connect(&admin_url).await.expect("connect to TEST_DATABASE_URL");
    admin.execute_unprepared(&format!("CREATE DATABASE {name}")).await.expect("create test database");
    admin.close().await.ok();
    let mut url = url::Url::parse(&admin_url).expect("TEST_DATABASE_URL is a URL");
    url.set_path(&format!("/{name}"));
    // The last instance drops the database, after the others have stopped.
    let starts = (0..n).map(|index| {
        let owner = (index + 1 == n).then(|| (admin_url.clone(), name.clone()));
        start("postgres", url.to_string(), &configure, None, owner)
    });
    Some(futures_util::future::join_all(starts).await)
}

/// Server errors are logged; show them beside a failing test's output.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,sqlx=error"));
    tracing_subscriber::fmt().with_test_writer().with_env_filter(filter).try_init().ok();
}

async fn start(
    backend: &'static str,
    database_url: String,
    configure: &impl Fn(&mut Config),
    dir: Option<tempfile::TempDir>,
    pg: Option<(String, String)>,
) -> TestApp {
    init_logging();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let base = format!("http://{addr}");
    let mut config = base_config();
    config.database_url = database_url;
    config.base_url = Some(base.clone());
    configure(&mut config);
    let conn = db::connect(&config).await.expect("connect");
    db::migrate(&conn).await.expect("migrate");
    let state = AppState::new(conn, config).expect("state");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(leadtrail::serve(listener, state.clone(), async move {
        stopped.await.ok();
    }));
    eprintln!("[{backend}] test server at {base}");
    TestApp { backend, base, state, server, stop: Some(stop), _dir: dir, pg }
}

impl TestApp {
    /// Shuts down gracefully, as on SIGTERM, and waits until the server has
    /// finished (open requests answered, write queue drained).
    pub async fn shut_down(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.send(()).ok();
        }
        (&mut self.server).await.expect("server task").expect("server ran");
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.server.abort();
        if let Some((admin_url, name)) = self.pg.take() {
            // Drop runs inside the test's runtime; use a thread with its own.
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
                runtime.block_on(async move {
                    if let Ok(admin) = Database::connect(&admin_url).await {
                        admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await.ok();
                    }
                });
            })
            .join()
            .ok();
        }
    }
}

#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Reply {
    /// Asserts the status and, for errors, the JSON error body's code.
    #[track_caller]
    pub fn expect(&self, status: u16) -> &Value {
        assert_eq!(self.status.as_u16(), status, "unexpected status; body: {}", self.text);
        &self.body
    }

    #[track_caller]
    pub fn expect_error(&self, status: u16, code: &str) {
        assert_eq!(self.status.as_u16(), status, "unexpected status; body: {}", self.text);
        assert_eq!(self.body["code"], code, "unexpected error code; body: {}", self.text);
        assert!(self.body["message"].as_str().is_some_and(|m| !m.is_empty()), "error body lacks a message");
        let body = self.body.as_object().expect("error body is an object");
        assert!(
            body.keys().all(|key| ["code", "message", "field"].contains(&key.as_str())),
            "error body has code, message and at most field: {}",
            self.text
        );
        // A refused input names its field as data, and the message names it too.
        if code == "VALIDATION_ERROR" {
            let field = body.get("field").and_then(Value::as_str).unwrap_or_else(|| panic!("no field: {}", self.text));
            assert!(self.body["message"].as_str().is_some_and(|m| m.starts_with(field)), "{}", self.text);
        }
    }

    pub fn set_cookies(&self) -> Vec<String> {
        self.headers.get_all("set-cookie").iter().filter_map(|value| value.to_str().ok().map(str::to_owned)).collect()
    }

    pub fn session_cookie_value(&self) -> Option<String> {
        self.set_cookies().iter().find_map(|cookie| {
            cookie.strip_prefix("session=").map(|rest| rest.split(';').next().unwrap_or_default().to_owned())
        })
    }
}

/// An HTTP client with an optional session cookie, bearer key and Origin.
/// `invitee` joins `org` as `role`: `inviter` invites `email` and the
/// invitee accepts. The answer to the acceptance (`acceptInvitation` is the
/// member, with `userId` and `role`).
pub async fn invite_and_accept(inviter: &Client, invitee: &Client, org: &str, email: &str, role: &str) -> Value {
    let invited = inviter
        .graphql(
            "mutation($o: ID!, $e: String!, $r: String!) { inviteMember(orgId: $o, email: $e, role: $r) { id } }",
            json!({ "o": org, "e": email, "r": role }),
        )
        .await;
    let Some(id) = invited["data"]["inviteMember"]["id"].as_str() else { return invited };
    invitee.graphql("mutation($id: ID!) { acceptInvitation(id: $id) { userId role } }", json!({ "id": id })).await
}

#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    pub base: String,
    pub session: Option<String>,
    pub bearer: Option<String>,
    pub origin: Option<String>,
}

impl TestApp {
    pub fn client(&self) -> Client {
        Client {
            http: reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client"),
            base: self.base.clone(),
            session: None,
            bearer: None,
            origin: None,
        }
    }

    /// Signs up a new user and returns a client holding their cookie, with the email.
    pub async fn user(&self, name: &str) -> (Client, String) {
        let email = format!("{}@example.com", unique(&name.to_lowercase()));
        let client = self.client();
        let reply = client
            .post("/api/auth/sign-up/email", json!({ "name": name, "email": email, "password": "correct horse" }))
            .await;
        reply.expect(200);
        (client.with_session(reply.session_cookie_value().expect("session cookie")), email)
    }

    /// A signed-up user with one site; returns the client and the site id.
    pub async fn user_with_site(&self, name: &str, domain: &str) -> (Client, i64) {
        let (client, _) = self.user(name).await;
        let site = client.post("/api/sites", json!({ "domain": domain })).await;
        let id = site.expect(200)["site"]["siteId"].as_i64().expect("site id");
        (client, id)
    }
}

impl Client {
    pub fn with_session(mut self, token: String) -> Self {
        self.session = Some(token);
        self
    }

    pub fn with_bearer(mut self, key: &str) -> Self {
        self.bearer = Some(key.to_owned());
        self
    }

    pub fn with_origin(mut self, origin: &str) -> Self {
        self.origin = Some(origin.to_owned());
        self
    }

    pub async fn request(&self, method: Method, path: &str, body: Option<RequestBody>) -> Reply {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = &self.session {
            request = request.header("cookie", format!("session={token}"));
        }
        if let Some(key) = &self.bearer {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        if let Some(origin) = &self.origin {
            request = request.header("origin", origin);
        }
        request = match body {
            Some(RequestBody::Json(value)) => request.json(&value),
            Some(RequestBody::Raw(text)) => request.header("content-type", "application/json").body(text),
            None => request,
        };
        let response = request.send().await.expect("request sent");
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply { status, headers, body, text }
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.request(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.request(Method::POST, path, Some(RequestBody::Json(body))).await
    }

    pub async fn post_raw(&self, path: &str, body: &str) -> Reply {
        self.request(Method::POST, path, Some(RequestBody::Raw(body.to_owned()))).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Reply {
        self.request(Method::PUT, path, Some(RequestBody::Json(body))).await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.request(Method::DELETE, path, None).await
    }

    /// POST /graphql; returns the whole GraphQL response.
    pub async fn graphql(&self, query: &str, variables: Value) -> Value {
        let reply = self.post("/graphql", json!({ "query": query, "variables": variables })).await;
        reply.expect(200).clone()
    }
}

pub enum RequestBody {
    Json(Value),
    Raw(String),
}

/// The `extensions.code` of a GraphQL response's first error.
pub fn gql_error_code(response: &Value) -> &str {
    response["errors"][0]["extensions"]["code"].as_str().unwrap_or("<no error>")
}
