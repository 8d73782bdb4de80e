//! `/settings/team`: the org's members with their roles (invite, change the
//! role, remove, under the owner rules the API enforces), the invitations
//! not yet answered and its API keys
//! (create, shown once; revoke). The org is the current site's, else the
//! viewer's primary org; the forms name it in a hidden field and the API
//! checks the viewer's role in it.

use askama::Template;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{page::PageInput, parts};
use crate::{
    auth::Role,
    error::{AppError, AppResult},
    web::{
        bridge, format,
        forms::{self, Done, Form, FormState, input},
        layout::Layout,
    },
};

const INVITE_MEMBER: &str = include_str!("../documents/invite_member.graphql");
const CANCEL_INVITATION: &str = include_str!("../documents/cancel_invitation.graphql");
const CHANGE_ROLE: &str = include_str!("../documents/change_role.graphql");
const REMOVE_MEMBER: &str = include_str!("../documents/remove_member.graphql");
const CREATE_API_KEY: &str = include_str!("../documents/create_api_key.graphql");
const REVOKE_API_KEY: &str = include_str!("../documents/revoke_api_key.graphql");

const PATH: &str = "/settings/team";

pub const FORMS: [Form; 6] = [
    Form {
        action: "invite-member",
        document: INVITE_MEMBER,
        variables: |input| {
            Ok(json!({ "orgId": input.text("org"), "email": input.text("email"), "role": input.text("role") }))
        },
        inputs: &[input("email", "Email", "email"), input("role", "Role", "role")],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "member-invited")),
    },
    Form {
        action: "cancel-invitation",
        document: CANCEL_INVITATION,
        variables: |input| Ok(json!({ "id": input.text("invitation") })),
        inputs: &[],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "invitation-canceled")),
    },
    Form {
        action: "change-role",
        document: CHANGE_ROLE,
        variables: |input| {
            Ok(json!({ "orgId": input.text("org"), "userId": input.text("user"), "role": input.text("role") }))
        },
        inputs: &[],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "role-changed")),
    },
    Form {
        action: "remove-member",
        document: REMOVE_MEMBER,
        variables: |input| {
            input.confirmed()?;
            Ok(json!({ "orgId": input.text("org"), "userId": input.text("user") }))
        },
        inputs: &[],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "member-removed")),
    },
    Form {
        action: "create-key",
        document: CREATE_API_KEY,
        variables: |input| Ok(json!({ "orgId": input.text("org"), "name": input.text("name") })),
        inputs: &[input("name", "Name of the new key", "name")],
        done: Done::ShowSecret(|answer| answer["createApiKey"]["key"].as_str().map(str::to_owned)),
    },
    Form {
        action: "revoke-key",
        document: REVOKE_API_KEY,
        variables: |input| {
            input.confirmed()?;
            Ok(json!({ "id": input.text("key") }))
        },
        inputs: &[],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "key-revoked")),
    },
];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    /// `viewer` itself goes to the frame.
    me: Viewer,
    orgs: Vec<Org>,
    workspace: Scoped,
    email_enabled: bool,
}

/// A message of the org's email log.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EmailMessage {
    kind: String,
    recipient: String,
    subject: String,
    status: String,
    attempts: i32,
    last_error: Option<String>,
    created_at: String,
    sent_at: Option<String>,
}

pub struct EmailRow {
    pub kind: String,
    pub recipient: String,
    pub subject: String,
    /// "sent 2026-11-26 10:00", "waiting (2 attempts)", "failed".
    pub status: String,
    pub error: String,
    pub queued: String,
}

/// The org's people; null lists when the viewer's role does not see them.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Scoped {
    #[serde(default)]
    members: Option<Vec<Member>>,
    #[serde(default)]
    api_keys: Option<Vec<ApiKey>>,
    #[serde(default)]
    invitations: Option<Vec<Invitation>>,
    #[serde(default)]
    email_log: Option<Vec<EmailMessage>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Invitation {
    id: String,
    email: String,
    role: String,
    invited_by: String,
    expires_at: String,
}

pub struct InvitationRow {
    pub id: String,
    pub email: String,
    pub role: String,
    pub invited_by: String,
    pub expires: String,
}

#[derive(Deserialize)]
struct Viewer {
    id: String,
}

#[derive(Deserialize)]
struct Org {
    id: String,
    name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Member {
    user_id: String,
    name: String,
    email: String,
    role: String,
    member_since: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ApiKey {
    id: String,
    name: String,
    prefix: String,
    created_at: String,
    last_used_at: Option<String>,
    revoked_at: Option<String>,
}

pub struct MemberRow {
    pub user_id: String,
    pub name: String,
    pub email: String,
    pub role: String,
    pub since: String,
    /// The roles the viewer may give this member (empty: no form).
    pub roles: Vec<&'static str>,
    pub removable: bool,
    /// The viewer's own row: anyone may leave (the API keeps the last owner).
    pub is_self: bool,
}

pub struct KeyRow {
    pub id: String,
    pub name: String,
    pub prefix: String,
    pub created: String,
    pub used: String,
    pub revoked: Option<String>,
}

#[derive(Template)]
#[template(path = "team.html")]
struct TeamPage<'a> {
    layout: Layout,
    tabs: Vec<parts::Tab>,
    notice: Option<&'static str>,
    action_path: String,
    org_id: String,
    org_name: String,
    can_admin: bool,
    add_roles: Vec<&'static str>,
    members: Vec<MemberRow>,
    invitations: Vec<InvitationRow>,
    keys: Vec<KeyRow>,
    /// Shown to admins when email is set up.
    emails: Option<Vec<EmailRow>>,
    state: &'a FormState,
}

/// The roles `viewer_role` may hand out or take away: admins manage members
/// below owner, owners every role.
fn grantable(viewer_role: Role) -> Vec<&'static str> {
    match viewer_role {
        Role::Owner => vec!["owner", "admin", "member", "viewer"],
        Role::Admin => vec!["admin", "member", "viewer"],
        Role::Member | Role::Viewer => Vec::new(),
    }
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let Answer { me, orgs, workspace, email_enabled } = bridge::decode(data)?;
    let role = input.role();
    let org_id = input.access.as_ref().map(|access| access.org_id.clone()).unwrap_or_default();
    let org_name = orgs.iter().find(|org| org.id == org_id).map(|org| org.name.clone()).unwrap_or_default();
    let roles = grantable(role);
    let members = workspace
        .members
        .unwrap_or_default()
        .into_iter()
        .map(|member| {
            let member_role = Role::parse(&member.role);
            // An admin cannot change or remove an owner.
            let manageable = !roles.is_empty() && (member_role < Role::Owner || role == Role::Owner);
            let is_self = member.user_id == me.id;
            MemberRow {
                roles: if manageable { roles.clone() } else { Vec::new() },
                removable: manageable || is_self,
                is_self,
                user_id: member.user_id,
                name: member.name,
                email: member.email,
                role: member.role,
                since: format::when(&member.member_since),
            }
        })
        .collect();
    let keys = workspace
        .api_keys
        .unwrap_or_default()
        .into_iter()
        .map(|key| KeyRow {
            id: key.id,
            name: key.name,
            prefix: key.prefix,
            created: format::when(&key.created_at),
            used: key.last_used_at.as_deref().map_or_else(|| "never".to_owned(), |at| format::ago(at, input.now)),
            revoked: key.revoked_at.as_deref().map(format::when),
        })
        .collect();
    let invitations = workspace
        .invitations
        .unwrap_or_default()
        .into_iter()
        .map(|invitation| InvitationRow {
            id: invitation.id,
            email: invitation.email,
            role: invitation.role,
            invited_by: invitation.invited_by,
            expires: format::when(&invitation.expires_at),
        })
        .collect();
    let emails = workspace.email_log.filter(|_| email_enabled).map(|log| {
        log.into_iter()
            .map(|message| EmailRow {
                status: match (message.status.as_str(), &message.sent_at) {
                    ("sent", Some(at)) => format!("sent {}", format::when(at)),
                    ("pending", _) => format!("waiting ({} attempts so far)", message.attempts),
                    (other, _) => format!("{other} after {} attempts", message.attempts),
                },
                error: message.last_error.unwrap_or_default(),
                queued: format::when(&message.created_at),
                kind: message.kind.replace('_', " "),
                recipient: message.recipient,
                subject: message.subject,
            })
            .collect()
    });
    layout.title = "Members and API keys".to_owned();
    let page = TeamPage {
        layout,
        tabs: parts::settings_tabs(input, PATH),
        notice: forms::notice(input.param("done")),
        action_path: input.with_site(PATH),
        org_id,
        org_name,
        can_admin: role >= Role::Admin,
        add_roles: roles,
        members,
        invitations,
        keys,
        emails,
        state: &input.form,
    };
    page.render().map_err(AppError::internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_admins_and_owners_hand_out_roles() {
        let cases =
            [(Role::Viewer, 0, false), (Role::Member, 0, false), (Role::Admin, 3, false), (Role::Owner, 4, true)];
        for (role, count, owner) in cases {
            let roles = grantable(role);
            assert_eq!(roles.len(), count, "{role:?}");
            assert_eq!(roles.contains(&"owner"), owner, "{role:?}");
        }
    }
}
