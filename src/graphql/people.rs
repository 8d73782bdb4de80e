//! `person` on everything that names a visitor: the display rule of
//! `service::people`, so every client and page shows the same name.

use async_graphql::{Context, SimpleObject};

use super::loaders::{self, PersonOnSite};
use crate::{error::AppResult, service::people};

/// A visitor as a person: their name, else email, else user id, else
/// "Anonymous" and the end of their visitor id; and their company.
#[derive(SimpleObject, Clone)]
#[graphql(name = "Person")]
pub struct PersonView {
    pub display_name: String,
    pub company: Option<String>,
    /// Whether anything but the anonymous id is known.
    pub identified: bool,
}

impl From<people::Person> for PersonView {
    fn from(person: people::Person) -> Self {
        PersonView { display_name: person.display_name, company: person.company, identified: person.identified }
    }
}

/// The person behind `tracker_vid` on `site_id`, batched with every other
/// lookup of the request; an id with no visitor left is shown anonymously.
pub async fn on_site(ctx: &Context<'_>, site_id: i64, tracker_vid: &str) -> AppResult<PersonView> {
    let key = PersonOnSite { site_id, tracker_vid: tracker_vid.to_owned() };
    Ok(loaders::load_person(ctx, key).await?.map_or_else(
        || PersonView { display_name: people::anonymous(tracker_vid), company: None, identified: false },
        PersonView::from,
    ))
}
