//! Web app helpers: forms posted as a browser posts them, and pages read back.

use serde_json::{Value, json};

use super::{Client, Reply, TestApp};

/// A form POST, urlencoded, as a browser sends it.
pub async fn post_form(client: &Client, path: &str, fields: &[(&str, &str)], headers: &[(&str, &str)]) -> Reply {
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
    let mut request = http
        .post(format!("{}{path}", client.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body);
    if let Some(token) = &client.session {
        request = request.header("cookie", format!("session={token}"));
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    Reply { status, headers, body: Value::Null, text }
}

#[track_caller]
pub fn expect_page(reply: &Reply, status: u16) -> String {
    assert_eq!(reply.status.as_u16(), status, "body: {}", reply.text);
    let kind = reply.headers["content-type"].to_str().unwrap();
    assert!(kind.starts_with("text/html"), "{kind}");
    reply.text.clone()
}

pub fn location(reply: &Reply) -> &str {
    assert_eq!(reply.status.as_u16(), 303, "body: {}", reply.text);
    reply.headers["location"].to_str().unwrap()
}

/// The site's link ids by slug, through the API.
pub async fn link_id(client: &Client, site: i64, slug: &str) -> String {
    let answer =
        client.graphql("query($s: Int) { links(siteId: $s) { links { id slug } } }", json!({ "s": site })).await;
    answer["data"]["links"]["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|link| link["slug"] == slug)
        .map(|link| link["id"].as_str().unwrap().to_owned())
        .unwrap_or_else(|| panic!("no link {slug}: {answer}"))
}

pub async fn site_slug(client: &Client, site: i64) -> String {
    let answer = client.graphql("query($s: Int!) { site(id: $s) { slug } }", json!({ "s": site })).await;
    answer["data"]["site"]["slug"].as_str().unwrap().to_owned()
}

pub async fn org_of(client: &Client, site: i64) -> String {
    let answer = client.graphql("query($s: Int!) { site(id: $s) { orgId } }", json!({ "s": site })).await;
    answer["data"]["site"]["orgId"].as_str().unwrap().to_owned()
}

/// A new user added to `org` with `role`; their client.
pub async fn join(app: &TestApp, owner: &Client, org: &str, name: &str, role: &str) -> Client {
    let (client, email) = app.user(name).await;
    let added = super::invite_and_accept(owner, &client, org, &email, role).await;
    assert_eq!(added["data"]["acceptInvitation"]["role"], role, "{added}");
    client
}

/// The status of a redirect through the short URL.
pub async fn short_status(app: &TestApp, path: &str) -> u16 {
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let request = http.get(format!("{}{path}", app.base)).header("user-agent", super::traffic::DESKTOP_UA);
    request.send().await.unwrap().status().as_u16()
}

pub const LINK_FIELDS: [(&str, &str); 11] = [
    ("action", "create"),
    ("destination", "https://shop.example/spring?ref=mail"),
    ("slug", "spring"),
    ("campaign", "spring-sale"),
    ("source", "newsletter"),
    ("medium", "email"),
    ("content", "hero"),
    ("link_type", "ad"),
    ("tags", "q2, email , q2"),
    ("notes", "for the April mailing"),
    ("active", "1"),
];

/// A form refusal to provoke: the page, the fields to post, the id of the
/// message beside the input, and the input's label the message starts with.
pub struct Refusal {
    pub path: String,
    pub fields: Vec<(&'static str, String)>,
    pub error_id: &'static str,
    pub label: &'static str,
}

/// One refusal per form that takes typed input, on a site with a visitor
/// and a link (made here), for the HTTP and the browser test alike.
pub async fn refusals(app: &TestApp, client: &Client, site: i64) -> Vec<Refusal> {
    app.collect(super::traffic::pageview(site, "form-visitor", "https://forms.example/")).await.expect(202);
    post_form(client, "/links", &LINK_FIELDS, &[]).await;
    let link = link_id(client, site, "spring").await;
    let link_path = format!("/links/{link}");
    let visitor_path = format!("/visitor/form-visitor?site={site}");
    let org = org_of(client, site).await;
    let owned = |fields: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
        fields.iter().map(|(name, value)| (*name, (*value).to_owned())).collect()
    };
    let site_form = |field: &'static str, value: &'static str| {
        let mut fields = vec![
            ("action", "save"),
            ("name", "Forms"),
            ("domain", "forms.example"),
            ("tracking_mode", "cookie"),
            ("hot_threshold", "70"),
            ("high_value_patterns", "/pricing"),
        ];
        fields.retain(|(name, _)| *name != field);
        fields.push((field, value));
        owned(&fields)
    };
    let alert = |field: &'static str, value: &'static str| {
        let mut fields = vec![
            ("action", "create"),
            ("name", "Sales"),
            ("url", "https://hooks.example.com/x"),
            ("webhook_type", "custom"),
            ("trigger", "IDENTIFIED"),
        ];
        fields.retain(|(name, _)| *name != field);
        fields.push((field, value));
        owned(&fields)
    };
    let mut link_update: Vec<(&'static str, &str)> =
        LINK_FIELDS.iter().filter(|(name, _)| !matches!(*name, "action" | "max_clicks")).copied().collect();
    link_update.extend([("action", "update"), ("max_clicks", "0")]);
    let bad_destination: Vec<(&'static str, &str)> = LINK_FIELDS
        .iter()
        .map(|&(name, value)| if name == "destination" { (name, "ftp://files.example/") } else { (name, value) })
        .collect();
    let refusal = |path: &str, fields: Vec<(&'static str, String)>, error_id: &'static str, label: &'static str| {
        Refusal { path: path.to_owned(), fields, error_id, label }
    };
    let account = "/settings/account";
    vec![
        refusal(account, owned(&[("action", "name"), ("name", " ")]), "account-name-error", "Your name: "),
        refusal(account, owned(&[("action", "email"), ("email", "nope")]), "account-email-error", "Email: "),
        refusal(
            account,
            owned(&[("action", "password"), ("current_password", "not it at all"), ("new_password", "long enough")]),
            "current-password-error",
            "Current password: ",
        ),
        refusal(
            account,
            owned(&[("action", "password"), ("current_password", "correct horse"), ("new_password", "short")]),
            "new-password-error",
            "New password: ",
        ),
        refusal(
            account,
            owned(&[("action", "delete"), ("password", "not it at all"), ("confirm", "1")]),
            "delete-password-error",
            "Password: ",
        ),
        refusal("/settings", site_form("hot_threshold", "hot"), "site-hot_threshold-error", "Hot threshold: "),
        refusal("/settings", site_form("domain", "not a host!"), "site-domain-error", "Domain: "),
        refusal("/settings", site_form("tracking_mode", "spy"), "site-tracking_mode-error", "Tracking mode: "),
        refusal("/settings", owned(&[("action", "create"), ("domain", "not a host!")]), "new-domain-error", "Domain: "),
        refusal(
            "/settings/team",
            owned(&[("action", "invite-member"), ("org", &org), ("email", "nope"), ("role", "member")]),
            "member-email-error",
            "Email: ",
        ),
        refusal(
            "/settings/team",
            owned(&[("action", "create-key"), ("org", &org), ("name", " ")]),
            "key-name-error",
            "Name of the new key: ",
        ),
        refusal("/settings/alerts", alert("url", "ftp://files.example/"), "new-url-error", "Target URL: "),
        refusal("/settings/alerts", alert("name", " "), "new-name-error", "Name: "),
        refusal("/links", owned(&bad_destination), "create-destination-error", "Destination URL: "),
        refusal(&link_path, owned(&link_update), "update-max_clicks-error", "Most clicks: "),
        refusal(
            &visitor_path,
            owned(&[("action", "webhook"), ("url", "ftp://files.example/"), ("type", "custom"), ("intent", "preview")]),
            "webhook-url-error",
            "Target URL: ",
        ),
        refusal(&visitor_path, owned(&[("action", "identify")]), "identify-user_id-error", "User id: "),
    ]
}
