//! `/settings/goals`: the site's goals (design §20), each with what reaches
//! it and a link to Explore filtered by it; admins add, edit and delete
//! them.

use askama::Template;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{page::PageInput, parts};
use crate::{
    auth::Role,
    error::{AppError, AppResult},
    web::{
        bridge,
        forms::{self, Done, Form, FormInput, FormState, Input, input},
        layout::Layout,
    },
};

const CREATE: &str = include_str!("../documents/create_goal.graphql");
const UPDATE: &str = include_str!("../documents/update_goal.graphql");
const DELETE: &str = include_str!("../documents/delete_goal.graphql");

const PATH: &str = "/settings/goals";

/// The goal form's inputs, each filling a field of `$input`.
const INPUTS: [Input; 5] = [
    input("name", "Name", "input.name"),
    input("page_path", "Page path", "input.pagePath"),
    input("event_name", "Event name", "input.eventName"),
    input("prop_name", "Property", "input.propName"),
    input("prop_value", "Property value", "input.propValue"),
];

fn goal_input(input: &FormInput) -> Value {
    json!({
        "name": input.optional("name"),
        "pagePath": input.optional("page_path"),
        "eventName": input.optional("event_name"),
        "propName": input.optional("prop_name"),
        "propValue": input.optional("prop_value"),
    })
}

pub const FORMS: [Form; 3] = [
    Form {
        action: "create",
        document: CREATE,
        variables: |input| Ok(json!({ "siteId": input.site()?, "input": goal_input(input) })),
        inputs: &INPUTS,
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "goal-created")),
    },
    Form {
        action: "save",
        document: UPDATE,
        variables: |input| Ok(json!({ "id": input.text("goal"), "input": goal_input(input) })),
        inputs: &INPUTS,
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "goal-saved")),
    },
    Form {
        action: "delete",
        document: DELETE,
        variables: |input| Ok(json!({ "id": input.text("goal") })),
        inputs: &[],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "goal-deleted")),
    },
];

#[derive(Deserialize)]
struct Answer {
    workspace: Scoped,
}

#[derive(Deserialize)]
struct Scoped {
    #[serde(default)]
    goals: Option<Vec<Goal>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Goal {
    id: String,
    name: String,
    page_path: Option<String>,
    event_name: Option<String>,
    prop_name: Option<String>,
    prop_value: Option<String>,
}

/// A goal's inputs as a form shows them: stored, or as just typed when its
/// form came back refused.
pub struct GoalFields {
    pub name: String,
    pub page_path: String,
    pub event_name: String,
    pub prop_name: String,
    pub prop_value: String,
}

impl GoalFields {
    /// Each input: its name, label, value and hint.
    pub fn inputs(&self) -> [(&'static str, &'static str, &str, &'static str); 5] {
        [
            ("name", "Name", &self.name, "What Explore shows; empty makes one, like “Visit /pricing”."),
            (
                "page_path",
                "Page path",
                &self.page_path,
                "A pageview goal: /pricing, or /blog/* where * is any characters.",
            ),
            (
                "event_name",
                "Event name",
                &self.event_name,
                "Or a custom event goal: the name given to leadtrail.track.",
            ),
            ("prop_name", "Property", &self.prop_name, "Optional, with an event name: only events whose property…"),
            ("prop_value", "Property value", &self.prop_value, "…has this value count."),
        ]
    }
}

pub struct GoalView {
    pub id: String,
    pub name: String,
    /// What reaches it, in words.
    pub reached_by: String,
    pub explore_href: String,
    pub fields: GoalFields,
    /// Its edit form came back with an error.
    pub reopened: bool,
}

fn typed_fields(state: &FormState, action: &str) -> GoalFields {
    GoalFields {
        name: state.value(action, "name"),
        page_path: state.value(action, "page_path"),
        event_name: state.value(action, "event_name"),
        prop_name: state.value(action, "prop_name"),
        prop_value: state.value(action, "prop_value"),
    }
}

fn reached_by(goal: &Goal) -> String {
    match (&goal.page_path, &goal.event_name, &goal.prop_name, &goal.prop_value) {
        (Some(path), ..) => format!("A pageview of {path}"),
        (None, Some(name), Some(key), Some(value)) => format!("The event {name} with {key} = {value}"),
        (None, Some(name), ..) => format!("The event {name}"),
        _ => String::new(),
    }
}

/// Explore filtered by the goal.
fn explore_href(site: i64, name: &str) -> String {
    let filters = json!([["is", "event:goal", [name]]]).to_string();
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("site", &site.to_string())
        .append_pair("filters", &filters)
        .finish();
    format!("/?{query}")
}

fn view(goal: Goal, site: i64, state: &FormState) -> GoalView {
    let reopened = state.sent("save") && state.value("save", "goal") == goal.id;
    let fields = if reopened {
        typed_fields(state, "save")
    } else {
        GoalFields {
            name: goal.name.clone(),
            page_path: goal.page_path.clone().unwrap_or_default(),
            event_name: goal.event_name.clone().unwrap_or_default(),
            prop_name: goal.prop_name.clone().unwrap_or_default(),
            prop_value: goal.prop_value.clone().unwrap_or_default(),
        }
    };
    GoalView {
        reached_by: reached_by(&goal),
        explore_href: explore_href(site, &goal.name),
        id: goal.id,
        name: goal.name,
        fields,
        reopened,
    }
}

#[derive(Template)]
#[template(path = "goals.html")]
struct GoalsPage<'a> {
    layout: Layout,
    tabs: Vec<parts::Tab>,
    notice: Option<&'static str>,
    action_path: String,
    is_admin: bool,
    goals: Vec<GoalView>,
    new_goal: GoalFields,
    state: &'a FormState,
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let answer = bridge::decode::<Answer>(data)?.workspace;
    let goals = answer.goals.unwrap_or_default().into_iter().map(|goal| view(goal, site, &input.form)).collect();
    layout.title = "Goals".to_owned();
    let page = GoalsPage {
        layout,
        tabs: parts::settings_tabs(input, PATH),
        notice: forms::notice(input.param("done")),
        action_path: input.with_site(PATH),
        is_admin: input.role() >= Role::Admin,
        goals,
        new_goal: typed_fields(&input.form, "create"),
        state: &input.form,
    };
    page.render().map_err(AppError::internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_goal_links_to_explore_filtered_by_its_name() {
        let href = explore_href(3, "Signup & \"pro\"");
        let query = href.trim_start_matches("/?");
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
        assert_eq!(pairs[0], ("site".to_owned(), "3".to_owned()));
        let filters: Value = serde_json::from_str(&pairs[1].1).unwrap();
        assert_eq!(filters, json!([["is", "event:goal", ["Signup & \"pro\""]]]));
    }
}
