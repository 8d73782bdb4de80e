//! The attribution report (design §20): which channels, sources, campaigns
//! and tracking links brought leads, conversions and money. Over a date
//! range, each lead (a visitor's first identification), each server-side
//! conversion tied to a visitor and each event carrying revenue is credited
//! to that visitor's visits by first touch, last touch or linear (`model`),
//! and summed per group, revenue per currency.

pub mod model;

use std::collections::{BTreeMap, HashMap};

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};
use serde_json::Value;

use entity::{conversion, event, identity};

use super::{
    access,
    explore::{
        figures::first_event,
        query::{DateRange, parse_date_range},
        range,
    },
    money::Money,
    sites,
    visit_groups::{self, VisitGroup},
};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
};
use model::{Credit, Model, Touch};

/// What the report groups by: where the credited visit came from.
pub type By = VisitGroup;

/// `channel`, `source`, `campaign` or `link`, refused as `by` otherwise.
pub fn parse_by(name: &str) -> AppResult<By> {
    VisitGroup::parse(name).ok_or_else(|| AppError::validation("by", "must be channel, source, campaign or link"))
}

impl Model {
    pub fn parse(name: &str) -> AppResult<Model> {
        match name {
            "first_touch" => Ok(Model::FirstTouch),
            "last_touch" => Ok(Model::LastTouch),
            "linear" => Ok(Model::Linear),
            _ => Err(AppError::validation("model", "must be first_touch, last_touch or linear")),
        }
    }
}

pub struct CreditAsk {
    pub site_id: i64,
    pub model: Model,
    pub by: By,
    /// Explore's `date_range`.
    pub date_range: Value,
}

/// One group's credit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Credited {
    pub value: String,
    /// Visitors first identified in the range, as credited.
    pub leads: f64,
    pub conversions: f64,
    /// Per currency, by code.
    pub revenue: Vec<Money>,
}

pub struct CreditReport {
    pub site_id: i64,
    pub model: Model,
    pub by: By,
    pub from: i64,
    pub to: i64,
    /// Most conversions first, then most leads.
    pub rows: Vec<Credited>,
    pub total: Credited,
}

/// Something credited: whose, when, and its amount (leads have none).
struct Outcome {
    visitor: i64,
    at: i64,
    kind: Kind,
}

enum Kind {
    Lead,
    Conversion { minor: i64, currency: String },
}

/// The range's leads, conversions and revenue events.
async fn outcomes(db: &impl ConnectionTrait, site_id: i64, span: range::Span) -> AppResult<Vec<Outcome>> {
    let mut found = Vec::new();
    let firsts: Vec<(i64, Option<i64>)> = identity::Entity::find()
        .select_only()
        .column(identity::Column::VisitorId)
        .column_as(identity::Column::IdentifiedAt.min(), "first")
        .filter(identity::Column::SiteId.eq(site_id))
        .group_by(identity::Column::VisitorId)
        .into_tuple()
        .all(db)
        .await?;
    for (visitor, first) in firsts {
        if let Some(at) = first.filter(|at| (span.from..span.to).contains(at)) {
            found.push(Outcome { visitor, at, kind: Kind::Lead });
        }
    }
    let recorded: Vec<(Option<i64>, i64, i64, String)> = conversion::Entity::find()
        .select_only()
        .columns([
            conversion::Column::VisitorId,
            conversion::Column::OccurredAt,
            conversion::Column::AmountMinor,
            conversion::Column::Currency,
        ])
        .filter(conversion::Column::SiteId.eq(site_id))
        .filter(conversion::Column::VisitorId.is_not_null())
        .filter(conversion::Column::OccurredAt.gte(span.from))
        .filter(conversion::Column::OccurredAt.lt(span.to))
        .into_tuple()
        .all(db)
        .await?;
    for (visitor, at, minor, currency) in recorded {
        if let Some(visitor) = visitor {
            found.push(Outcome { visitor, at, kind: Kind::Conversion { minor, currency } });
        }
    }
    let tracked: Vec<(i64, i64, Option<i64>, Option<String>)> = event::Entity::find()
        .select_only()
        .columns([
            event::Column::VisitorId,
            event::Column::Timestamp,
            event::Column::RevenueMinor,
            event::Column::RevenueCurrency,
        ])
        .filter(event::Column::SiteId.eq(site_id))
        .filter(event::Column::IsBot.eq(false))
        .filter(event::Column::RevenueMinor.is_not_null())
        .filter(event::Column::Timestamp.gte(span.from))
        .filter(event::Column::Timestamp.lt(span.to))
        .into_tuple()
        .all(db)
        .await?;
    for (visitor, at, minor, currency) in tracked {
        if let (Some(minor), Some(currency)) = (minor, currency) {
            found.push(Outcome { visitor, at, kind: Kind::Conversion { minor, currency } });
        }
    }
    Ok(found)
}

/// Each visitor's visits as touchpoints, keyed by the report's grouping.
async fn touches(db: &impl ConnectionTrait, by: By, visitors: &[i64]) -> AppResult<HashMap<i64, Vec<Touch>>> {
    let sessions = visit_groups::human_origins_of(db, visitors).await?;
    let slugs = visit_groups::link_slugs(db, by, &sessions).await?;
    let mut touches: HashMap<i64, Vec<Touch>> = HashMap::new();
    for session in sessions {
        let key = by.key(&session, &slugs);
        touches.entry(session.visitor_id).or_default().push(Touch {
            started_at: session.started_at,
            id: session.id,
            key,
        });
    }
    Ok(touches)
}

/// Adds one credit to its group.
fn add(groups: &mut BTreeMap<String, (f64, f64, BTreeMap<String, i64>)>, credit: &Credit, kind: &Kind) {
    let group = groups.entry(credit.key.clone()).or_default();
    match kind {
        Kind::Lead => group.0 += credit.share,
        Kind::Conversion { currency, .. } => {
            group.1 += credit.share;
            *group.2.entry(currency.clone()).or_default() += credit.minor;
        }
    }
}

fn row(value: String, (leads, conversions, revenue): (f64, f64, BTreeMap<String, i64>)) -> Credited {
    let round = |n: f64| (n * 100.0).round() / 100.0;
    Credited {
        value,
        leads: round(leads),
        conversions: round(conversions),
        revenue: revenue.into_iter().map(|(currency, minor)| Money { minor, currency }).collect(),
    }
}

pub async fn report(db: &impl ConnectionTrait, viewer: &Viewer, ask: CreditAsk, now: i64) -> AppResult<CreditReport> {
    let date_range = parse_date_range(Some(&ask.date_range))?;
    let (site, _) = access::site(db, viewer, ask.site_id, Role::Viewer).await?;
    let first = if date_range == DateRange::All { first_event(db, site.id).await? } else { None };
    let span = range::resolve(&date_range, sites::timezone(&site), now, first);
    let outcomes = outcomes(db, site.id, span).await?;
    let mut visitors: Vec<i64> = outcomes.iter().map(|outcome| outcome.visitor).collect();
    visitors.sort_unstable();
    visitors.dedup();
    let touches = touches(db, ask.by, &visitors).await?;
    let mut groups = BTreeMap::new();
    let mut total = (0.0, 0.0, BTreeMap::new());
    for outcome in &outcomes {
        let minor = match &outcome.kind {
            Kind::Lead => 0,
            Kind::Conversion { minor, currency } => {
                total.1 += 1.0;
                *total.2.entry(currency.clone()).or_default() += minor;
                *minor
            }
        };
        if matches!(outcome.kind, Kind::Lead) {
            total.0 += 1.0;
        }
        let own = touches.get(&outcome.visitor).map_or(&[][..], Vec::as_slice);
        for credit in model::credit(ask.model, own, outcome.at, minor) {
            add(&mut groups, &credit, &outcome.kind);
        }
    }
    let mut rows: Vec<Credited> = groups.into_iter().map(|(value, sums)| row(value, sums)).collect();
    rows.sort_by(|a, b| {
        b.conversions
            .total_cmp(&a.conversions)
            .then_with(|| b.leads.total_cmp(&a.leads))
            .then_with(|| a.value.cmp(&b.value))
    });
    Ok(CreditReport {
        site_id: site.id,
        model: ask.model,
        by: ask.by,
        from: span.from,
        to: span.to,
        rows,
        total: row(String::new(), total),
    })
}
