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
