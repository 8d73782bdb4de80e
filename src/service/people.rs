//! How a person is named wherever Leadtrail shows one (every page, the
//! delivery logs, alerts, exports): their name, else their email, else
//! their user id, else a short form of the anonymous visitor id; and their
//! company beside them. One rule, so a lead reads the same everywhere.

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};

use entity::{identity, visitor};

use super::analytics::profile;
use crate::error::AppResult;

/// Characters of an anonymous visitor id that name it.
const SHORT_ID: usize = 8;
/// Visitors looked up per statement.
const IN_LIST_CHUNK: usize = 500;

/// A person as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub display_name: String,
    pub company: Option<String>,
    /// Whether anything but the anonymous id is known.
    pub identified: bool,
}

fn known(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|text| !text.is_empty())
}

/// The display rule itself.
pub fn display_name(name: Option<&str>, email: Option<&str>, user_id: Option<&str>, tracker_vid: &str) -> String {
    match known(name).or(known(email)).or(known(user_id)) {
        Some(known) => known.to_owned(),
        None => anonymous(tracker_vid),
    }
}

/// "Anonymous 1a2b3c4d": the last characters, which differ most between
/// generated ids that share a prefix.
pub fn anonymous(tracker_vid: &str) -> String {
    let chars: Vec<char> = tracker_vid.trim().chars().collect();
    let short: String = chars[chars.len().saturating_sub(SHORT_ID)..].iter().collect();
    if short.is_empty() { "Anonymous".to_owned() } else { format!("Anonymous {short}") }
}

/// The person behind a visitor row and its identities (newest first): the
/// newest name and company anyone gave, the visitor's email and user id.
pub fn of_visitor(visitor: &visitor::Model, identities: &[identity::Model]) -> Person {
    let name = identities.iter().find_map(|identity| known(identity.name.as_deref()));
    // A company someone typed, else the account found for the visitor (a
    // work email's domain, say).
    let company = identities
        .iter()
        .find_map(|identity| known(identity.company.as_deref()))
        .or_else(|| known(visitor.account_name.as_deref()))
        .map(str::to_owned);
    let email = known(visitor.email.as_deref()).or_else(|| identities.iter().find_map(|i| known(i.email.as_deref())));
    let user_id = known(visitor.identified_user_id.as_deref());
    Person {
        display_name: display_name(name, email, user_id, &visitor.tracker_vid),
        identified: name.is_some() || email.is_some() || user_id.is_some(),
        company,
    }
}

/// The people behind `tracker_vids` on one site, in two statements per
/// chunk. An id with no visitor (erased, or never seen) has no entry; show
/// it with `anonymous`.
pub async fn on_site(
    db: &impl ConnectionTrait,
    site_id: i64,
    tracker_vids: &[String],
) -> AppResult<HashMap<String, Person>> {
    let mut people = HashMap::new();
    for chunk in tracker_vids.chunks(IN_LIST_CHUNK) {
        let visitors = visitor::Entity::find()
            .filter(visitor::Column::SiteId.eq(site_id))
            .filter(visitor::Column::TrackerVid.is_in(chunk.iter().cloned()))
            .limit(chunk.len() as u64)
            .all(db)
            .await?;
        let ids: Vec<i64> = visitors.iter().map(|v| v.id).collect();
        let identities = profile::identities_of_visitors(db, &ids).await?;
        for visitor in visitors {
            let person = of_visitor(&visitor, identities.get(&visitor.id).map_or(&[], Vec::as_slice));
            people.insert(visitor.tracker_vid, person);
        }
    }
    Ok(people)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_known_of_name_email_user_id_then_a_short_id() {
        let table = [
            (Some("Ada Lovelace"), Some("ada@example.com"), Some("u-1"), "v-1", "Ada Lovelace"),
            (Some("  "), Some("ada@example.com"), Some("u-1"), "v-1", "ada@example.com"),
            (None, None, Some("u-1"), "v-1", "u-1"),
            (None, Some(""), Some(" "), "seed-1a1d019f-50854", "Anonymous 9f-50854"),
            (None, None, None, "abc", "Anonymous abc"),
            (None, None, None, "", "Anonymous"),
        ];
        for (name, email, user_id, vid, shown) in table {
            assert_eq!(display_name(name, email, user_id, vid), shown, "{name:?} {email:?} {user_id:?} {vid}");
        }
    }
}
