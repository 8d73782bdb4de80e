//! Server-side conversions (design §20): a CRM's closed-won deal or a
//! payment, sent with `POST /api/conversions`. Each names its person by
//! tracker id, user id or email; a person Leadtrail has not identified yet
//! is waited for (the write pipeline ties the conversion when identify
//! names them). The same `external_id` is stored once per site, however
//! often and by however many instances it is sent.

use std::collections::{BTreeMap, HashMap};

use sea_orm::{
    ActiveModelTrait,
    ActiveValue::Set,
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    TransactionTrait,
    sea_query::{Expr, ExprTrait, Func},
};
use serde_json::Value;

use entity::{conversion, event, visitor};

use super::{
    IN_LIST_CHUNK, access,
    alerts::{outbox, trigger::AlertTrigger},
    credit,
    identify::validate_id,
    is_unique_violation,
    money::{self, Money},
    users,
};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    time::{DAY_MS, parse_iso},
    webhook::payload::ConversionNote,
};

pub const MAX_NAME_CHARS: usize = 200;
/// The earliest `occurred_at` taken: 2000-01-01.
const EARLIEST_MS: i64 = 946_684_800_000;

/// A conversion as sent.
#[derive(Debug, Clone, Default)]
pub struct ConversionInput {
    pub site_id: i64,
    pub name: String,
    pub amount: Value,
    pub currency: String,
    /// Epoch milliseconds or ISO 8601; now when absent.
    pub occurred_at: Option<Value>,
    pub tracker_vid: Option<String>,
    pub email: Option<String>,
    pub user_id: Option<String>,
    pub external_id: Option<String>,
}

/// What was stored, and whether this request stored it.
pub struct Recorded {
    pub conversion: conversion::Model,
    /// False when the `external_id` was already stored: the first one is answered.
    pub created: bool,
    /// The tracker id of the visitor it is tied to, if any yet.
    pub tracker_vid: Option<String>,
}

/// Who a conversion names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Person {
    Visitor(String),
    User(String),
    Email(String),
}

fn text(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|text| !text.is_empty())
}

/// The person keys, checked: a tracker id wins over a user id over an email.
fn person(input: &ConversionInput) -> AppResult<Person> {
    if let Some(vid) = text(input.tracker_vid.as_deref()) {
        return Ok(Person::Visitor(validate_id("tracker_vid", vid)?));
    }
    if let Some(user) = text(input.user_id.as_deref()) {
        return Ok(Person::User(validate_id("user_id", user)?));
    }
    if let Some(email) = text(input.email.as_deref()) {
        return Ok(Person::Email(users::validate_email("email", email)?.to_lowercase()));
    }
    Err(AppError::validation("tracker_vid", "name the person: tracker_vid, user_id or email"))
}

fn occurred_at(raw: Option<&Value>, now: i64) -> AppResult<i64> {
    let refused = || {
        AppError::validation(
            "occurred_at",
            "must be epoch milliseconds or ISO 8601, from 2000 on and not in the future",
        )
    };
    let at = match raw {
        None | Some(Value::Null) => return Ok(now),
        Some(Value::Number(number)) => number.as_i64().ok_or_else(refused)?,
        Some(Value::String(text)) => parse_iso(text).ok_or_else(refused)?,
        Some(_) => return Err(refused()),
    };
    // A day of slack for a sender whose clock runs ahead.
    if at < EARLIEST_MS || at > now + DAY_MS { Err(refused()) } else { Ok(at) }
}

/// The visitor a person key names on the site, if any.
async fn find_visitor(db: &impl ConnectionTrait, site_id: i64, person: &Person) -> AppResult<Option<visitor::Model>> {
    let mut query = visitor::Entity::find().filter(visitor::Column::SiteId.eq(site_id));
    query = match person {
        Person::Visitor(vid) => query.filter(visitor::Column::TrackerVid.eq(vid.as_str())),
        Person::User(user) => query.filter(visitor::Column::IdentifiedUserId.eq(user.as_str())),
        Person::Email(email) => {
            query.filter(Expr::expr(Func::lower(Expr::col(visitor::Column::Email))).eq(email.as_str()))
        }
    };
    Ok(query.order_by_desc(visitor::Column::LastSeen).order_by_desc(visitor::Column::Id).limit(1).one(db).await?)
}

/// Checks and stores a conversion. Members and API keys of the site's org.
pub async fn record(db: &DatabaseConnection, viewer: &Viewer, input: ConversionInput, now: i64) -> AppResult<Recorded> {
    let name = text(Some(&input.name)).ok_or_else(|| AppError::validation("name", "is required"))?.to_owned();
    if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(AppError::validation(
            "name",
            format!("must be at most {MAX_NAME_CHARS} characters, without control characters"),
        ));
    }
    let amount = money::parse("amount", "currency", &input.amount, &input.currency)?;
    let at = occurred_at(input.occurred_at.as_ref(), now)?;
    let external_id = match text(input.external_id.as_deref()) {
        Some(id) => Some(validate_id("external_id", id)?),
        None => None,
    };
    let person = person(&input)?;
    let (site, _) = access::site(db, viewer, input.site_id, Role::Member).await?;
    let found = find_visitor(db, site.id, &person).await?;
    if found.is_none()
        && let Person::Visitor(_) = person
    {
        return Err(AppError::validation("tracker_vid", "no visitor of this site has this id"));
    }
    // Kept only while the conversion waits for its person.
    let (email, user_id) = match (&found, &person) {
        (None, Person::Email(email)) => (Some(email.clone()), None),
        (None, Person::User(user)) => (None, Some(user.clone())),
        _ => (None, None),
    };
    let row = conversion::ActiveModel {
        site_id: Set(site.id),
        visitor_id: Set(found.as_ref().map(|visitor| visitor.id)),
        name: Set(name),
        amount_minor: Set(amount.minor),
        currency: Set(amount.currency),
        occurred_at: Set(at),
        external_id: Set(external_id.clone()),
        email: Set(email),
        user_id: Set(user_id),
        created_at: Set(now),
        ..Default::default()
    };
    // The conversion and the alerts it fires are stored together.
    let txn = db.begin().await?;
    match row.insert(&txn).await {
        Ok(conversion) => {
            if let Some(visitor) = &found {
                let tied = [(conversion.id, visitor.id, visitor.tracker_vid.clone())];
                fire_converted(&txn, site.id, &tied, now).await?;
                credit::cache::forget_from(&txn, site.id, at, now).await?;
            }
            txn.commit().await?;
            Ok(Recorded { conversion, created: true, tracker_vid: found.map(|visitor| visitor.tracker_vid) })
        }
        // Sent before (or at the same moment by another instance): the first one stands.
        Err(err) if is_unique_violation(&err) => {
            txn.rollback().await?;
            let stored = conversion::Entity::find()
                .filter(conversion::Column::SiteId.eq(site.id))
                .filter(conversion::Column::ExternalId.eq(external_id))
                .one(db)
                .await?
                .ok_or_else(|| AppError::from(err))?;
            let tracker_vid = match stored.visitor_id {
                Some(id) => visitor::Entity::find_by_id(id).one(db).await?.map(|visitor| visitor.tracker_vid),
                None => None,
            };
            Ok(Recorded { conversion: stored, created: false, tracker_vid })
        }
        Err(err) => Err(err.into()),
    }
}

/// Ties the conversions waiting for a person to the visitor identify just
/// named, and fires their `CONVERTED` alerts, in the identify's transaction
/// (the write pipeline calls it). Answers how many it tied.
pub(crate) async fn tie_waiting(
    db: &impl ConnectionTrait,
    person: &ToTie<'_>,
    now: i64,
) -> Result<u64, sea_orm::DbErr> {
    let mut named = sea_orm::Condition::any();
    if let Some(email) = person.email {
        named = named.add(conversion::Column::Email.eq(email.to_lowercase()));
    }
    if let Some(user) = person.user_id {
        named = named.add(conversion::Column::UserId.eq(user));
    }
    if person.email.is_none() && person.user_id.is_none() {
        return Ok(0);
    }
    let found: Vec<(i64, i64)> = conversion::Entity::find()
        .select_only()
        .columns([conversion::Column::Id, conversion::Column::OccurredAt])
        .filter(conversion::Column::SiteId.eq(person.site_id))
        .filter(conversion::Column::VisitorId.is_null())
        .filter(named)
        .into_tuple()
        .all(db)
        .await?;
    let Some(earliest) = found.iter().map(|(_, at)| *at).min() else {
        return Ok(0);
    };
    let waiting: Vec<i64> = found.into_iter().map(|(id, _)| id).collect();
    // Tied, they are the person's outcomes from when they happened.
    credit::cache::forget_from(db, person.site_id, earliest, now).await?;
    conversion::Entity::update_many()
        .col_expr(conversion::Column::VisitorId, Expr::value(person.visitor_id))
        .col_expr(conversion::Column::Email, Expr::value(Option::<String>::None))
        .col_expr(conversion::Column::UserId, Expr::value(Option::<String>::None))
        .filter(conversion::Column::Id.is_in(waiting.iter().copied()))
        .exec(db)
        .await?;
    let tied: Vec<(i64, i64, String)> =
        waiting.iter().map(|id| (*id, person.visitor_id, person.tracker_vid.to_owned())).collect();
    fire_converted(db, person.site_id, &tied, now).await?;
    Ok(waiting.len() as u64)
}

/// A person identify named, whose waiting conversions join them.
pub(crate) struct ToTie<'a> {
    pub site_id: i64,
    pub visitor_id: i64,
    pub tracker_vid: &'a str,
    pub email: Option<&'a str>,
    pub user_id: Option<&'a str>,
}

/// Adds a `CONVERTED` alert per conversion (id, visitor id, tracker id) and
/// live destination of the site, once each.
async fn fire_converted(
    db: &impl ConnectionTrait,
    site_id: i64,
    conversions: &[(i64, i64, String)],
    now: i64,
) -> Result<u64, sea_orm::DbErr> {
    let armed = outbox::armed(db, &[site_id]).await?;
    let fired: Vec<outbox::Fired<'_>> = armed
        .iter()
        .filter(|destination| destination.trigger == AlertTrigger::Converted)
        .flat_map(|destination| {
            conversions.iter().map(move |(id, visitor_id, tracker_vid)| outbox::Fired {
                destination,
                visitor_id: *visitor_id,
                tracker_vid: tracker_vid.clone(),
                account_key: None,
                conversion_id: Some(*id),
            })
        })
        .collect();
    if fired.is_empty() {
        return Ok(0);
    }
    outbox::enqueue(db, fired, now).await
}

/// The conversion a `CONVERTED` alert is about, as its payload tells it;
/// none for other alerts, or when the conversion was erased since.
pub(crate) async fn note(db: &impl ConnectionTrait, id: Option<i64>) -> AppResult<Option<ConversionNote>> {
    let Some(id) = id else { return Ok(None) };
    let found = conversion::Entity::find_by_id(id).one(db).await?;
    Ok(found.map(|row| ConversionNote {
        id: row.id,
        amount: money::decimal_text(row.amount_minor, &row.currency),
        name: row.name,
        currency: row.currency,
        occurred_at: row.occurred_at,
        external_id: row.external_id,
    }))
}

/// The conversions tied to each visitor, newest first.
pub async fn of_visitors(
    db: &impl ConnectionTrait,
    visitor_ids: &[i64],
) -> AppResult<HashMap<i64, Vec<conversion::Model>>> {
    let mut grouped: HashMap<i64, Vec<conversion::Model>> = HashMap::new();
    for chunk in visitor_ids.chunks(IN_LIST_CHUNK) {
        let rows = conversion::Entity::find()
            .filter(conversion::Column::VisitorId.is_in(chunk.iter().copied()))
            .order_by_desc(conversion::Column::OccurredAt)
            .order_by_desc(conversion::Column::Id)
            .all(db)
            .await?;
        for row in rows {
            grouped.entry(row.visitor_id.unwrap_or_default()).or_default().push(row);
        }
    }
    Ok(grouped)
}

/// The revenue each visitor's events carry: (minor units, currency).
pub async fn event_revenue_of_visitors(
    db: &impl ConnectionTrait,
    visitor_ids: &[i64],
) -> AppResult<HashMap<i64, Vec<(i64, String)>>> {
    let mut grouped: HashMap<i64, Vec<(i64, String)>> = HashMap::new();
    for chunk in visitor_ids.chunks(IN_LIST_CHUNK) {
        let rows: Vec<(i64, Option<i64>, Option<String>)> = event::Entity::find()
            .select_only()
            .column(event::Column::VisitorId)
            .column(event::Column::RevenueMinor)
            .column(event::Column::RevenueCurrency)
            .filter(event::Column::VisitorId.is_in(chunk.iter().copied()))
            .filter(event::Column::RevenueMinor.is_not_null())
            .into_tuple()
            .all(db)
            .await?;
        for (visitor, minor, currency) in rows {
            if let (Some(minor), Some(currency)) = (minor, currency) {
                grouped.entry(visitor).or_default().push((minor, currency));
            }
        }
    }
    Ok(grouped)
}

/// An account's conversions and revenue: how many conversions its visitors
/// have, and their revenue with that their events carry, per currency.
pub async fn of_account(db: &impl ConnectionTrait, site_id: i64, key: &str) -> AppResult<(i64, Vec<Money>)> {
    let visitors: Vec<i64> = visitor::Entity::find()
        .select_only()
        .column(visitor::Column::Id)
        .filter(visitor::Column::SiteId.eq(site_id))
        .filter(visitor::Column::AccountKey.eq(key))
        .into_tuple()
        .all(db)
        .await?;
    let recorded = of_visitors(db, &visitors).await?;
    let events = event_revenue_of_visitors(db, &visitors).await?;
    let count = recorded.values().map(|rows| rows.len() as i64).sum();
    let amounts = recorded
        .values()
        .flatten()
        .map(|c| (c.amount_minor, c.currency.as_str()))
        .chain(events.values().flatten().map(|(minor, currency)| (*minor, currency.as_str())));
    Ok((count, totals(amounts)))
}

/// Amounts summed per currency, by currency code.
pub fn totals<'a>(amounts: impl Iterator<Item = (i64, &'a str)>) -> Vec<Money> {
    let mut sums: BTreeMap<&str, i64> = BTreeMap::new();
    for (minor, currency) in amounts {
        *sums.entry(currency).or_default() += minor;
    }
    sums.into_iter().map(|(currency, minor)| Money { minor, currency: currency.to_owned() }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_person_is_named_by_one_key_in_order() {
        let input = |vid: &str, user: &str, email: &str| ConversionInput {
            tracker_vid: Some(vid.to_owned()),
            user_id: Some(user.to_owned()),
            email: Some(email.to_owned()),
            ..Default::default()
        };
        let table = [
            (input("v1", "u1", "a@b.example"), Ok(Person::Visitor("v1".to_owned()))),
            (input(" ", "u1", "a@b.example"), Ok(Person::User("u1".to_owned()))),
            (input("", "", "Pat@B.Example"), Ok(Person::Email("pat@b.example".to_owned()))),
            (input("", "", ""), Err("tracker_vid")),
            (input("", "", "not-an-email"), Err("email")),
            (input("null", "", ""), Err("tracker_vid")),
        ];
        for (given, expected) in table {
            match (person(&given), expected) {
                (Ok(got), Ok(want)) => assert_eq!(got, want),
                (Err(err), Err(field)) => assert_eq!(err.field.as_deref(), Some(field), "{given:?}"),
                (got, want) => panic!("{given:?}: {:?} but expected {want:?}", got.map_err(|e| e.message)),
            }
        }
    }

    #[test]
    fn occurred_at_is_a_time_from_2000_until_tomorrow() {
        let now = 1_800_000_000_000;
        assert_eq!(occurred_at(None, now).unwrap(), now);
        assert_eq!(occurred_at(Some(&json!(1_700_000_000_000_i64)), now).unwrap(), 1_700_000_000_000);
        assert_eq!(occurred_at(Some(&json!("2026-11-01T10:00:00Z")), now).unwrap(), 1_793_527_200_000);
        for bad in [json!("yesterday"), json!(now + 2 * DAY_MS), json!(0), json!(true), json!(1.5)] {
            assert_eq!(occurred_at(Some(&bad), now).unwrap_err().field.as_deref(), Some("occurred_at"), "{bad}");
        }
    }
}
