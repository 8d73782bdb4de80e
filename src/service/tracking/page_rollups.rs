//! The per-page rollups: human pageviews and events of each page by UTC
//! hour (`page_hours`, read by `/api/stats` and Explore's edge hours) and by
//! UTC day (`page_days`, Explore's whole days). The writer adds a batch's
//! events to both; an erasure takes a visitor's events out of both.

use std::collections::BTreeMap;

use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter,
    sea_query::{Expr, ExprTrait},
};

use entity::{page_day, page_hour};

use super::{rollup::hour_of, rollup_store, writes::Writes};
use crate::{error::AppResult, time::start_of_day};

/// Pageviews and events by (site, hour or day start, page), in key order,
/// so concurrent writers take row locks in the same order.
pub(crate) type PageCounts<'a> = BTreeMap<(i64, i64, &'a str), (i64, i64)>;

/// The hourly and the daily counts of human events given as (site,
/// timestamp, page, whether a pageview).
pub(crate) fn counted<'a>(events: impl IntoIterator<Item = (i64, i64, &'a str, bool)>) -> [PageCounts<'a>; 2] {
    let mut counts = [PageCounts::new(), PageCounts::new()];
    for (site_id, timestamp, page, pageview) in events {
        for (counts, start) in counts.iter_mut().zip([hour_of(timestamp), start_of_day(timestamp)]) {
            let count = counts.entry((site_id, start, page)).or_default();
            count.0 += i64::from(pageview);
            count.1 += 1;
        }
    }
    counts
}

/// Adds counts to both tables (the writer's batch).
pub(crate) fn add(writes: &mut Writes, [hours, days]: [PageCounts<'_>; 2]) {
    let hours: Vec<page_hour::ActiveModel> = hours
        .into_iter()
        .map(|((site_id, hour, page), (pageviews, events))| page_hour::ActiveModel {
            id: NotSet,
            site_id: Set(site_id),
            hour: Set(hour),
            page: Set(page.to_owned()),
            pageviews: Set(pageviews),
            events: Set(events),
        })
        .collect();
    {
        use page_hour::Column as C;
        rollup_store::upsert_adding::<page_hour::Entity>(
            writes,
            hours,
            &[C::SiteId, C::Hour, C::Page],
            &[C::Pageviews, C::Events],
        );
    }
    let days: Vec<page_day::ActiveModel> = days
        .into_iter()
        .map(|((site_id, day, page), (pageviews, events))| page_day::ActiveModel {
            id: NotSet,
            site_id: Set(site_id),
            day: Set(day),
            page: Set(page.to_owned()),
            pageviews: Set(pageviews),
            events: Set(events),
        })
        .collect();
    use page_day::Column as C;
    rollup_store::upsert_adding::<page_day::Entity>(
        writes,
        days,
        &[C::SiteId, C::Day, C::Page],
        &[C::Pageviews, C::Events],
    );
}

/// Takes counts out of both tables (an erasure), hours first as the writer
/// adds them, and deletes the site's rows left empty (a page nobody else
/// viewed in that hour or day).
pub(crate) async fn subtract(
    db: &impl ConnectionTrait,
    site_id: i64,
    [hours, days]: [PageCounts<'_>; 2],
) -> AppResult<()> {
    for ((_, hour, page), (pageviews, events)) in hours {
        page_hour::Entity::update_many()
            .col_expr(page_hour::Column::Pageviews, Expr::col(page_hour::Column::Pageviews).sub(pageviews))
            .col_expr(page_hour::Column::Events, Expr::col(page_hour::Column::Events).sub(events))
            .filter(page_hour::Column::SiteId.eq(site_id))
            .filter(page_hour::Column::Hour.eq(hour))
            .filter(page_hour::Column::Page.eq(page))
            .exec(db)
            .await?;
    }
    page_hour::Entity::delete_many()
        .filter(page_hour::Column::SiteId.eq(site_id))
        .filter(page_hour::Column::Events.lte(0))
        .exec(db)
        .await?;
    for ((_, day, page), (pageviews, events)) in days {
        page_day::Entity::update_many()
            .col_expr(page_day::Column::Pageviews, Expr::col(page_day::Column::Pageviews).sub(pageviews))
            .col_expr(page_day::Column::Events, Expr::col(page_day::Column::Events).sub(events))
            .filter(page_day::Column::SiteId.eq(site_id))
            .filter(page_day::Column::Day.eq(day))
            .filter(page_day::Column::Page.eq(page))
            .exec(db)
            .await?;
    }
    page_day::Entity::delete_many()
        .filter(page_day::Column::SiteId.eq(site_id))
        .filter(page_day::Column::Events.lte(0))
        .exec(db)
        .await?;
    Ok(())
}
