//! `/settings/account`: invitations to orgs waiting for an answer, the
//! signed-in person's name, sign-in email and password, and deleting the account under the API's rules (the password,
//! or a session less than a day old).

use askama::Template;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{page::PageInput, parts};
use crate::{
    error::{AppError, AppResult},
    web::{
        bridge, format,
        forms::{self, Done, Form, FormState, input},
        layout::Layout,
    },
};

const UPDATE_NAME: &str = include_str!("../documents/update_name.graphql");
const CHANGE_EMAIL: &str = include_str!("../documents/change_email.graphql");
const CHANGE_PASSWORD: &str = include_str!("../documents/change_password.graphql");
const DELETE_USER: &str = include_str!("../documents/delete_user.graphql");
const ACCEPT_INVITATION: &str = include_str!("../documents/accept_invitation.graphql");
const DECLINE_INVITATION: &str = include_str!("../documents/decline_invitation.graphql");
const SET_DIGEST: &str = include_str!("../documents/set_digest.graphql");

const PATH: &str = "/settings/account";

pub const FORMS: [Form; 7] = [
    Form {
        action: "accept-invitation",
        document: ACCEPT_INVITATION,
        variables: |input| Ok(json!({ "id": input.text("invitation") })),
        inputs: &[],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "invitation-accepted")),
    },
    Form {
        action: "decline-invitation",
        document: DECLINE_INVITATION,
        variables: |input| Ok(json!({ "id": input.text("invitation") })),
        inputs: &[],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "invitation-declined")),
    },
    Form {
        action: "digest",
        document: SET_DIGEST,
        variables: |input| {
            let site: i64 = input.text("digest_site").parse().map_err(|_| AppError::not_found("site"))?;
            Ok(json!({ "siteId": site, "frequency": input.text("frequency") }))
        },
        inputs: &[input("frequency", "Digest", "frequency")],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "digest-saved")),
    },
    Form {
        action: "name",
        document: UPDATE_NAME,
        variables: |input| Ok(json!({ "name": input.text("name") })),
        inputs: &[input("name", "Your name", "name")],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "name-saved")),
    },
    Form {
        action: "email",
        document: CHANGE_EMAIL,
        variables: |input| Ok(json!({ "email": input.text("email") })),
        inputs: &[input("email", "Email", "email")],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "email-saved")),
    },
    Form {
        action: "password",
        document: CHANGE_PASSWORD,
        variables: |input| {
            // Passwords are taken exactly as typed, spaces included.
            let raw = |name: &str| input.fields.get(name).cloned().unwrap_or_default();
            Ok(
                json!({ "current": raw("current_password"), "new": raw("new_password"), "others": input.flag("others")? }),
            )
        },
        inputs: &[
            input("current_password", "Current password", "current"),
            input("new_password", "New password", "new"),
        ],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "password-saved")),
    },
    Form {
        action: "delete",
        document: DELETE_USER,
        variables: |input| {
            input.confirmed()?;
            let password = input.fields.get("password").filter(|p| !p.is_empty()).cloned();
            Ok(json!({ "password": password }))
        },
        inputs: &[input("password", "Password", "password"), input("confirm", "Confirmation", "confirm")],
        done: Done::Redirect(|_, _| "/login".to_owned()),
    },
];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    profile: Profile,
    my_invitations: Vec<Invitation>,
    email_enabled: bool,
    digests: Vec<Digest>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Digest {
    pub site_id: i64,
    pub site_name: String,
    pub frequency: String,
}

/// The digest menu's choices: (value, label).
pub const FREQUENCIES: [(&str, &str); 3] = [("none", "None"), ("daily", "Daily"), ("weekly", "Weekly, on Mondays")];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Invitation {
    id: String,
    org_name: String,
    role: String,
    invited_by: String,
    expires_at: String,
}

pub struct InvitationRow {
    pub id: String,
    pub org: String,
    pub role: String,
    pub invited_by: String,
    pub expires: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Profile {
    name: String,
    email: String,
    created_at: String,
    org: Org,
}

#[derive(Deserialize)]
struct Org {
    name: String,
    role: String,
}

#[derive(Template)]
#[template(path = "settings_account.html")]
struct AccountPage<'a> {
    layout: Layout,
    tabs: Vec<parts::Tab>,
    notice: Option<&'static str>,
    action_path: String,
    name: String,
    email: String,
    since: String,
    org: String,
    invitations: Vec<InvitationRow>,
    /// The member's digests, one per site; empty without email.
    digests: Vec<Digest>,
    frequencies: &'static [(&'static str, &'static str)],
    state: &'a FormState,
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let answer: Answer = bridge::decode(data)?;
    let profile = answer.profile;
    let typed = |action: &str, name: &str, stored: &str| {
        if input.form.sent(action) { input.form.value(action, name) } else { stored.to_owned() }
    };
    layout.title = "Account".to_owned();
    let page = AccountPage {
        layout,
        tabs: parts::settings_tabs(input, PATH),
        notice: forms::notice(input.param("done")),
        action_path: input.with_site(PATH),
        name: typed("name", "name", &profile.name),
        email: typed("email", "email", &profile.email),
        since: format::when(&profile.created_at),
        org: format!("{} ({})", profile.org.name, profile.org.role),
        invitations: answer
            .my_invitations
            .into_iter()
            .map(|invitation| InvitationRow {
                id: invitation.id,
                org: invitation.org_name,
                role: invitation.role,
                invited_by: invitation.invited_by,
                expires: format::when(&invitation.expires_at),
            })
            .collect(),
        digests: if answer.email_enabled { answer.digests } else { Vec::new() },
        frequencies: &FREQUENCIES,
        state: &input.form,
    };
    page.render().map_err(AppError::internal)
}
