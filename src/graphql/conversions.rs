//! Server-side conversions (design §20): recorded by members and API keys,
//! read on the visitor they are tied to. The service checks.

use async_graphql::{Context, ID, InputObject, Json, Object};
use serde_json::Value;

use entity::conversion;

use super::{context::ContextExt, types::Timestamp};
use crate::{
    error::AppResult,
    service::{
        conversions::{self, ConversionInput as Typed},
        money,
    },
    time::now_ms,
};

/// A conversion to record: a closed deal, a payment.
#[derive(InputObject)]
pub struct ConversionInput {
    pub site_id: i64,
    /// What it is: `Closed won`, `Subscription`.
    pub name: String,
    /// The exact amount, as a string (`"1299.00"`) or a number; no more
    /// decimals than the currency has, not negative, at most 2^53 minor units.
    pub amount: Json<Value>,
    /// ISO 4217: `USD`, `EUR`, `JPY`.
    pub currency: String,
    /// Epoch milliseconds or ISO 8601; now when absent.
    pub occurred_at: Option<Json<Value>>,
    /// The visitor, by tracker id (must exist) ...
    pub tracker_vid: Option<String>,
    /// ... or the person, by the user id identify gave them ...
    pub user_id: Option<String>,
    /// ... or by email. A person not yet identified is waited for: the
    /// conversion joins them when identify names them.
    pub email: Option<String>,
    /// The sender's id for it: the same id is stored once.
    pub external_id: Option<String>,
}

/// A stored conversion.
pub struct Conversion {
    model: conversion::Model,
    created: bool,
    tracker_vid: Option<String>,
}

impl Conversion {
    pub fn of(model: conversion::Model, tracker_vid: Option<String>) -> Self {
        Conversion { model, created: false, tracker_vid }
    }
}

#[Object]
impl Conversion {
    async fn id(&self) -> ID {
        ID(self.model.id.to_string())
    }
    async fn site_id(&self) -> i64 {
        self.model.site_id
    }
    async fn name(&self) -> &str {
        &self.model.name
    }
    /// The exact amount as decimal text (`"1299.00"`).
    async fn amount(&self) -> String {
        money::decimal_text(self.model.amount_minor, &self.model.currency)
    }
    /// The amount in the currency's minor units (cents).
    async fn amount_minor(&self) -> i64 {
        self.model.amount_minor
    }
    async fn currency(&self) -> &str {
        &self.model.currency
    }
    async fn occurred_at(&self) -> Timestamp {
        Timestamp(self.model.occurred_at)
    }
    async fn external_id(&self) -> Option<&str> {
        self.model.external_id.as_deref()
    }
    /// The visitor it is tied to; null while it waits for its person.
    async fn tracker_vid(&self) -> Option<&str> {
        self.tracker_vid.as_deref()
    }
    /// Whether this request stored it (false: the `externalId` was stored before).
    async fn created(&self) -> bool {
        self.created
    }
}

/// A total in one currency.
pub struct MoneyTotal(pub money::Money);

#[Object]
impl MoneyTotal {
    /// Exact decimal text (`"1299.00"`).
    async fn amount(&self) -> String {
        money::decimal_text(self.0.minor, &self.0.currency)
    }
    async fn amount_minor(&self) -> i64 {
        self.0.minor
    }
    async fn currency(&self) -> &str {
        &self.0.currency
    }
}

#[derive(Default)]
pub struct ConversionMutation;

#[Object]
impl ConversionMutation {
    /// Records a server-side conversion. Members and API keys.
    async fn record_conversion(&self, ctx: &Context<'_>, input: ConversionInput) -> AppResult<Conversion> {
        let typed = Typed {
            site_id: input.site_id,
            name: input.name,
            amount: input.amount.0,
            currency: input.currency,
            occurred_at: input.occurred_at.map(|at| at.0),
            tracker_vid: input.tracker_vid,
            email: input.email,
            user_id: input.user_id,
            external_id: input.external_id,
        };
        let recorded = conversions::record(&*ctx.db().await?, ctx.viewer()?, typed, now_ms()).await?;
        Ok(Conversion { model: recorded.conversion, created: recorded.created, tracker_vid: recorded.tracker_vid })
    }
}
