//! Saved views of the lead desk (design §19): shared in the site's org,
//! members save them, whoever saved one or an admin changes or deletes it,
//! viewers only read; another org's view is not found; names and filters
//! are checked with the field named; the navigation lists them, escaped, and
//! each view's link shows its filters. The `/leads` forms save, rename and
//! delete them as the API does.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    Client, apps, gql_error_code,
    web::{expect_page, join, location, org_of, post_form},
};
use serde_json::{Value, json};

const CREATE: &str =
    "mutation($s: Int!, $i: SavedViewInput!) { createSavedView(siteId: $s, input: $i) { id name query canManage } }";
const UPDATE: &str =
    "mutation($id: ID!, $i: SavedViewInput!) { updateSavedView(id: $id, input: $i) { id name query } }";
const DELETE: &str = "mutation($id: ID!) { deleteSavedView(id: $id) }";
const LIST: &str = "query($s: Int!) { savedViews(siteId: $s) { id name query canManage } }";

async fn create(client: &Client, site: i64, name: &str, query: &str) -> Value {
    client.graphql(CREATE, json!({ "s": site, "i": { "name": name, "query": query } })).await
}

fn field(answer: &Value) -> &str {
    answer["errors"][0]["extensions"]["field"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn views_are_shared_in_the_org_and_kept_by_their_rules() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Olga", "views.example").await;
        let org = org_of(&owner, site).await;
        let member = join(&app, &owner, &org, "Mia", "member").await;
        let other_member = join(&app, &owner, &org, "Max", "member").await;
        let viewer = join(&app, &owner, &org, "Vic", "viewer").await;
        let admin = join(&app, &owner, &org, "Ada", "admin").await;

        // A member saves one; it is kept in canonical form and everyone in the org sees it.
        let saved = create(&member, site, "  Hot in Germany ", "?hot=on&country=de&page=3&range=30d&junk=1").await;
        let view = &saved["data"]["createSavedView"];
        assert_eq!(view["name"], "Hot in Germany", "{saved}");
        assert_eq!(view["query"], "range=30d&hot=1&country=DE");
        assert_eq!(view["canManage"], true);
        let id = view["id"].as_str().unwrap().to_owned();
        for (who, manage) in [(&owner, true), (&admin, true), (&other_member, false), (&viewer, false), (&member, true)]
        {
            let list = who.graphql(LIST, json!({ "s": site })).await;
            assert_eq!(list["data"]["savedViews"][0]["id"], json!(id), "{list}");
            assert_eq!(list["data"]["savedViews"][0]["canManage"], manage, "{list}");
        }

        // Viewers read but do not save; another member neither renames nor deletes it.
        assert_eq!(gql_error_code(&create(&viewer, site, "Mine", "").await), "FORBIDDEN");
        let renamed = other_member.graphql(UPDATE, json!({ "id": id, "i": { "name": "Taken" } })).await;
        assert_eq!(gql_error_code(&renamed), "FORBIDDEN");
        assert_eq!(gql_error_code(&other_member.graphql(DELETE, json!({ "id": id })).await), "FORBIDDEN");

        // Whoever saved it renames it, keeping or replacing its filters.
        let kept = member.graphql(UPDATE, json!({ "id": id, "i": { "name": "Hot in DE" } })).await;
        assert_eq!(kept["data"]["updateSavedView"]["query"], "range=30d&hot=1&country=DE", "{kept}");
        let replaced =
            member.graphql(UPDATE, json!({ "id": id, "i": { "name": "Email leads", "query": "channel=Email" } })).await;
        assert_eq!(replaced["data"]["updateSavedView"]["query"], "channel=Email", "{replaced}");

        // Bad input is refused with its field.
        for (name, query, expected) in [
            ("", "", "input.name"),
            (&"x".repeat(61), "", "input.name"),
            ("Fine", "sort=name", "input.query"),
            ("Fine", "channel=Pigeon", "input.query"),
            ("Fine", "visited=pricing", "input.query"),
            ("Fine", "minScore=200", "input.query"),
        ] {
            let refused = create(&member, site, name, query).await;
            assert_eq!(gql_error_code(&refused), "VALIDATION_ERROR", "{refused}");
            assert_eq!(field(&refused), expected, "{name:?} {query:?}: {refused}");
        }

        // Another org sees none of it: its views, its ids.
        let (stranger, stranger_site) = app.user_with_site("Stan", "stranger.example").await;
        assert_eq!(gql_error_code(&stranger.graphql(LIST, json!({ "s": site })).await), "NOT_FOUND");
        assert_eq!(gql_error_code(&create(&stranger, site, "Spy", "").await), "NOT_FOUND");
        let hijack = stranger.graphql(UPDATE, json!({ "id": id, "i": { "name": "Mine now" } })).await;
        assert_eq!(gql_error_code(&hijack), "NOT_FOUND");
        assert_eq!(gql_error_code(&stranger.graphql(DELETE, json!({ "id": id })).await), "NOT_FOUND");
        assert_eq!(stranger.graphql(LIST, json!({ "s": stranger_site })).await["data"]["savedViews"], json!([]));
        assert_eq!(gql_error_code(&app.client().graphql(LIST, json!({ "s": site })).await), "UNAUTHORIZED");

        // An admin deletes anyone's view.
        assert_eq!(admin.graphql(DELETE, json!({ "id": id })).await["data"]["deleteSavedView"], true);
        assert_eq!(owner.graphql(LIST, json!({ "s": site })).await["data"]["savedViews"], json!([]));
        assert_eq!(gql_error_code(&admin.graphql(DELETE, json!({ "id": id })).await), "NOT_FOUND");
    }
}

#[tokio::test]
async fn the_leads_page_lists_saves_renames_and_deletes_views() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Pia", "pages.example").await;
        let markup = "<script>window.__pwned=1</script> & <b>co</b>";
        let made = create(&owner, site, markup, "range=all&q=<img src=x>").await;
        let id = made["data"]["createSavedView"]["id"].as_str().unwrap().to_owned();

        // Every page's navigation lists the view, escaped, linking to its filters.
        let page = expect_page(&owner.get("/links").await, 200);
        assert!(!page.contains("<script>window.__pwned"), "the name is escaped");
        assert!(
            page.contains("&#60;script&#62;window.__pwned=1&#60;/script&#62; &#38; &#60;b&#62;co&#60;/b&#62;"),
            "{page}"
        );
        let href = format!("/leads?range=all&#38;q=%3Cimg+src%3Dx%3E&#38;view={id}");
        assert!(page.contains(&href), "the view links to its filters: {page}");
        // The view's page: its name as the heading, its filters applied and shown escaped.
        let shown = expect_page(&owner.get(&format!("/leads?range=all&q=%3Cimg+src%3Dx%3E&view={id}")).await, 200);
        assert!(shown.contains("aria-current=\"page\">&#60;script&#62;"), "the nav marks it current");
        assert!(shown.contains("value=\"&#60;img src=x&#62;\""), "the search box shows the text escaped");
        assert!(!shown.contains("<img src=x>"));

        // Saved through the page's form: answers with the new view's address.
        let saved = post_form(
            &owner,
            &format!("/leads?site={site}"),
            &[("action", "save-view"), ("name", "Identified"), ("query", "status=identified&range=30d")],
            &[],
        )
        .await;
        let to = location(&saved).to_owned();
        assert!(to.starts_with("/leads?range=30d&status=identified&view="), "{to}");
        assert!(to.ends_with(&format!("&site={site}")), "{to}");
        // A refused name shows beside its input, under its label.
        let refused = post_form(&owner, "/leads", &[("action", "save-view"), ("name", " "), ("query", "")], &[]).await;
        let refused = expect_page(&refused, 400);
        assert!(refused.contains("id=\"save-view-name-error\">View name: must be 1 to 60 characters"), "{refused}");
        // Renamed with the filters shown, then deleted.
        let new_id = to.split("view=").nth(1).unwrap().split('&').next().unwrap().to_owned();
        let renamed = post_form(
            &owner,
            "/leads",
            &[
                ("action", "update-view"),
                ("view", &new_id),
                ("name", "Known people"),
                ("replace", "1"),
                ("query", "status=identified"),
            ],
            &[],
        )
        .await;
        assert_eq!(location(&renamed), format!("/leads?status=identified&view={new_id}"));
        let list = owner.graphql(LIST, json!({ "s": site })).await;
        let names: Vec<&str> =
            list["data"]["savedViews"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
        assert!(names.contains(&"Known people"), "{list}");
        let deleted = post_form(&owner, "/leads", &[("action", "delete-view"), ("view", &new_id)], &[]).await;
        assert_eq!(location(&deleted), "/leads?done=view-deleted");
        // Another org's view id through the form is the not-found page.
        let (stranger, _) = app.user_with_site("Sly", "sly.example").await;
        let foreign = post_form(&stranger, "/leads", &[("action", "delete-view"), ("view", &id)], &[]).await;
        assert_eq!(foreign.status.as_u16(), 404, "{}", foreign.text);
    }
}
