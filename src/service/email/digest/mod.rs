//! Digests (design §21): each member picks none, daily or weekly per site.
//! The digest goes out at 8:00 in the site's time zone, through the outbox
//! under a key naming the member, site and period, so however many
//! instances look for due digests, one message is queued per period.

pub mod figures;
pub mod schedule;

use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder,
};

use entity::{digest_subscription, email_outbox, site, user};

use super::{DIGEST, Email, outbox};
use crate::{
    auth::{Role, Viewer, token::random_token},
    email::{message::single_line, templates},
    error::{AppError, AppResult},
    service::{access, delivery::Delivery, sites},
};
use schedule::{Frequency, Period};

/// A site the viewer can read, with their digest choice for it.
pub struct Choice {
    pub site: site::Model,
    /// None when they get no digest.
    pub frequency: Option<Frequency>,
}

/// The viewer's digest choice for every site they can read.
pub async fn choices(db: &impl ConnectionTrait, viewer: &Viewer) -> AppResult<Vec<Choice>> {
    let user_id = viewer.user_id().ok_or_else(AppError::unauthorized)?;
    let readable = access::sites(db, viewer).await?;
    let chosen =
        digest_subscription::Entity::find().filter(digest_subscription::Column::UserId.eq(user_id)).all(db).await?;
    Ok(readable
        .into_iter()
        .map(|site| {
            let frequency = chosen
                .iter()
                .find(|choice| choice.site_id == site.id)
                .and_then(|choice| Frequency::parse(&choice.frequency));
            Choice { site, frequency }
        })
        .collect())
}

/// Sets the viewer's digest for a site they can read: `none`, `daily` or
/// `weekly`. Needs email set up.
pub async fn choose(
    db: &impl ConnectionTrait,
    sending: &Delivery,
    viewer: &Viewer,
    site_id: i64,
    frequency: &str,
) -> AppResult<Choice> {
    let user_id = viewer.user_id().ok_or_else(AppError::unauthorized)?;
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    super::require(sending)?;
    let frequency = match frequency.trim().to_ascii_lowercase().as_str() {
        "none" => None,
        other => Some(
            Frequency::parse(other)
                .ok_or_else(|| AppError::validation("frequency", "must be none, daily or weekly"))?,
        ),
    };
    let existing = digest_subscription::Entity::find()
        .filter(digest_subscription::Column::UserId.eq(user_id))
        .filter(digest_subscription::Column::SiteId.eq(site.id))
        .one(db)
        .await?;
    let now = sending.clock.now();
    match (frequency, existing) {
        (None, Some(existing)) => {
            digest_subscription::Entity::delete_by_id(existing.id).exec(db).await?;
        }
        (None, None) => {}
        (Some(frequency), Some(existing)) => {
            let mut active: digest_subscription::ActiveModel = existing.into();
            active.frequency = Set(frequency.as_str().to_owned());
            active.updated_at = Set(now);
            active.update(db).await?;
        }
        (Some(frequency), None) => {
            digest_subscription::ActiveModel {
                user_id: Set(user_id),
                site_id: Set(site.id),
                frequency: Set(frequency.as_str().to_owned()),
                unsubscribe_token: Set(random_token()),
                created_at: Set(now),
                updated_at: Set(now),
                ..Default::default()
            }
            .insert(db)
            .await?;
        }
    }
    Ok(Choice { site, frequency })
}

/// Ends the digest an unsubscribe link names, with no session (RFC 8058's
/// one click). Answers the site's name; an unknown token is 400 on `token`,
/// a digest already ended is fine.
pub async fn unsubscribe(db: &impl ConnectionTrait, token: &str) -> AppResult<String> {
    let (subscription_id, token) = token.trim().split_once('.').unwrap_or(("", token));
    let found = digest_subscription::Entity::find()
        .filter(digest_subscription::Column::Id.eq(subscription_id.parse::<i64>().unwrap_or(0)))
        .filter(digest_subscription::Column::UnsubscribeToken.eq(token))
        .one(db)
        .await?
        .ok_or_else(|| {
            AppError::validation("token", "this unsubscribe link is not valid, or the digest is already off")
        })?;
    let site = site::Entity::find_by_id(found.site_id).one(db).await?;
    digest_subscription::Entity::delete_by_id(found.id).exec(db).await?;
    Ok(site.map(|site| sites::shown_name(&site).to_owned()).unwrap_or_default())
}

/// The outbox key of a member's digest of a site for a period.
fn dedupe_key(subscription: &digest_subscription::Model, period: &Period) -> String {
    format!("digest:{}:{}:{}:{}", subscription.user_id, subscription.site_id, subscription.frequency, period.start)
}

/// Queues every digest whose time has come and that no instance queued yet.
/// Answers how many this call queued.
pub async fn queue_due(db: &DatabaseConnection, sending: &Delivery) -> AppResult<usize> {
    if sending.mailer.is_none() {
        return Ok(0);
    }
    let now = sending.clock.now();
    let subscriptions = digest_subscription::Entity::find()
        .order_by_asc(digest_subscription::Column::Id)
        .find_also_related(site::Entity)
        .all(db)
        .await?;
    let mut queued = 0;
    for (subscription, site) in subscriptions {
        let Some(site) = site else { continue };
        match queue_one(db, sending, &subscription, &site, now).await {
            Ok(true) => queued += 1,
            Ok(false) => {}
            Err(err) => {
                tracing::warn!(error = %err.message, subscription = subscription.id, "a digest could not be queued")
            }
        }
    }
    if queued > 0 {
        sending.email_due.notify_one();
    }
    Ok(queued)
}

async fn queue_one(
    db: &DatabaseConnection,
    sending: &Delivery,
    subscription: &digest_subscription::Model,
    site: &site::Model,
    now: i64,
) -> AppResult<bool> {
    let Some(frequency) = Frequency::parse(&subscription.frequency) else { return Ok(false) };
    let zone = sites::timezone(site);
    let Some(period) = schedule::due(frequency, zone, now) else { return Ok(false) };
    // A member who has just chosen a digest gets the latest due one at once
    // (the last full day or week): they see what they chose, then one per period.
    let key = dedupe_key(subscription, &period);
    let queued = email_outbox::Entity::find().filter(email_outbox::Column::DedupeKey.eq(key.as_str())).one(db).await?;
    if queued.is_some() {
        return Ok(false);
    }
    let Some(member) = user::Entity::find_by_id(subscription.user_id).one(db).await? else { return Ok(false) };
    let viewer = Viewer::User { user_id: member.id, session_id: 0, session_created_at: now };
    // Someone who lost access to the site gets no digest of it.
    if access::site(db, &viewer, site.id, Role::Viewer).await.is_err() {
        return Ok(false);
    }
    let base = sending.base_url.trim_end_matches('/');
    let previous = period.previous(zone);
    let figures = figures::read(db, &viewer, site, &period, &previous, base, now).await?;
    let name = single_line(sites::shown_name(site), 100);
    let cadence = match frequency {
        Frequency::Daily => "Daily",
        Frequency::Weekly => "Weekly",
    };
    let period_text = match frequency {
        Frequency::Daily => period.start.to_string(),
        Frequency::Weekly => format!("{} to {}", period.start, period.last_day()),
    };
    let unsubscribe_link = format!("{base}/unsubscribe?token={}.{}", subscription.id, subscription.unsubscribe_token);
    let explore_link = format!("{base}/?site={}&range=custom&from={}&to={}", site.id, period.start, period.last_day());
    let settings_link = format!("{base}/settings/account");
    let digest = templates::Digest {
        site_name: &name,
        cadence,
        period: &period_text,
        changes: figures.changes,
        hot_leads: figures.hot_leads,
        hot_accounts: figures.hot_accounts,
        identified: figures.identified,
        sources: figures.sources,
        campaigns: figures.campaigns,
        explore_link: &explore_link,
        unsubscribe_link: &unsubscribe_link,
        settings_link: &settings_link,
    };
    let rendered = digest
        .render(format!("{cadence} digest of {name}: {period_text}"))
        .map_err(|err| AppError::internal(format!("a digest could not be rendered: {err}")))?;
    let message = Email {
        org_id: Some(site.org_id),
        user_id: Some(member.id),
        kind: DIGEST,
        to: member.email.clone(),
        rendered,
        list_unsubscribe: Some(unsubscribe_link),
        dedupe_key: Some(key),
    };
    Ok(outbox::enqueue(db, message, now).await?)
}

/// Runs `queue_due` every `every` until the process ends.
pub fn spawn(db: DatabaseConnection, sending: Delivery, every: std::time::Duration) {
    if sending.mailer.is_none() {
        return;
    }
    // The first look waits one period too: a digest is due for hours, and a
    // server that has just started (a test's, say) is not raced for it.
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            if let Err(err) = queue_due(&db, &sending).await {
                tracing::warn!(error = %err.message, "the digest schedule could not be read");
            }
        }
    });
}
