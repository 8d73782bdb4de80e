//! The leads page's saved-view forms (design §19): save the filters shown
//! as a view, rename it (keeping or replacing its filters), delete it. Each
//! runs its mutation through the one executor; the service checks who may.

use serde_json::json;

use crate::web::{
    forms::{self, Done, Form, FormInput, input},
    layout::view_href,
};

const CREATE_VIEW: &str = include_str!("../documents/create_saved_view.graphql");
const UPDATE_VIEW: &str = include_str!("../documents/update_saved_view.graphql");
const DELETE_VIEW: &str = include_str!("../documents/delete_saved_view.graphql");

/// Where a view form leads: the view, on the site the address chose.
fn to_view(input: &FormInput, id: &str, query: &str) -> String {
    let site = input.site_id.filter(|_| input.site_chosen).map(|site| format!("site={site}"));
    view_href(id, query, site.as_deref())
}

pub const FORMS: [Form; 3] = [
    Form {
        action: "save-view",
        document: CREATE_VIEW,
        variables: |input| {
            Ok(
                json!({ "siteId": input.site()?, "input": { "name": input.text("name"), "query": input.text("query") } }),
            )
        },
        inputs: &[input("name", "View name", "input.name"), input("query", "Filters", "input.query")],
        done: Done::Redirect(|input, answer| {
            let view = &answer["createSavedView"];
            to_view(input, view["id"].as_str().unwrap_or_default(), view["query"].as_str().unwrap_or_default())
        }),
    },
    Form {
        action: "update-view",
        document: UPDATE_VIEW,
        variables: |input| {
            let query = input.flag("replace")?.then(|| input.text("query"));
            Ok(json!({ "id": input.text("view"), "input": { "name": input.text("name"), "query": query } }))
        },
        inputs: &[input("name", "Name", "input.name"), input("query", "Filters", "input.query")],
        done: Done::Redirect(|input, answer| {
            let view = &answer["updateSavedView"];
            to_view(input, view["id"].as_str().unwrap_or_default(), view["query"].as_str().unwrap_or_default())
        }),
    },
    Form {
        action: "delete-view",
        document: DELETE_VIEW,
        variables: |input| Ok(json!({ "id": input.text("view") })),
        inputs: &[],
        done: Done::Redirect(|input, _| forms::back_to(input, "/leads", "view-deleted")),
    },
];
