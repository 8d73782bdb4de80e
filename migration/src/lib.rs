//! Schema migrations. Every timestamp column holds UTC epoch milliseconds as a
//! BIGINT, so SQLite and PostgreSQL sort, compare and bucket them identically.

pub use sea_orm_migration::prelude::*;

mod m20261121_000001_create_accounts;
mod m20261121_000002_create_sites;
mod m20261121_000003_create_tracking;
mod m20261121_000004_create_links;
mod m20261121_000005_create_webhook_deliveries;
mod m20261122_000006_create_page_hours;
mod m20261122_235000_add_users_current_site;
mod m20261123_000009_add_site_privacy;
mod m20261123_000010_add_account_fields;
mod m20261123_013000_index_sessions_by_channel;
mod m20261123_100000_forget_session_ips;
mod m20261123_110000_create_link_click_days;
mod m20261123_130000_create_visitor_and_session_hours;
mod m20261123_200000_create_alerts;
mod m20261125_000001_create_invitations;
mod m20261125_120000_rescore_visitors;
mod m20261125_190000_rescore_slower_saturation;
mod m20261125_200000_add_visitor_last_touch;
mod m20261125_210000_create_saved_views;
mod m20261125_210100_add_site_gravatar;
mod m20261126_000001_add_visitor_account;
mod m20261126_000002_add_networks;
mod m20261126_000003_create_accounts;
mod m20261126_000004_add_account_alerts;
mod m20261126_000005_add_site_asn_lists;
mod m20261127_000001_add_site_timezone;
mod m20261127_000002_add_explore_columns;
mod m20261127_000003_add_session_link;
mod m20261128_000001_create_goals;
mod m20261128_000002_create_revenue;
mod m20261128_000003_create_funnels;
mod m20261128_000004_add_conversion_alerts;
mod m20261128_000005_index_waiting_conversions;
mod m20261129_000001_create_email;
mod m20261130_000001_index_desk_sorts;
mod m20261130_000002_create_visitor_search;
mod m20261130_000003_create_visitor_pages;
mod m20261201_000001_add_session_human_counts;
mod m20261202_000001_index_account_humans;
mod m20261203_000001_create_visitor_touch_hours;
mod m20261203_000002_add_visitor_page_bots;
mod m20261204_000001_create_visitor_links;
mod m20261205_000001_create_value_rollups;
mod m20261205_000002_create_value_visitor_hours;
mod m20261206_000001_create_active_hours;
mod m20261206_000002_index_revenue_events;
mod m20261207_000001_index_custom_events;
mod m20261208_000001_fill_custom_event_values;
mod m20261209_000001_index_identities_by_site;
mod m20261210_000001_add_visit_hours;
mod m20261211_000001_fill_visit_page_values;
mod m20261212_000001_fill_visitor_dimension_values;
mod m20261213_000001_index_active_hour_counts;
mod m20261214_000001_create_value_days;
mod m20261215_000001_create_page_days;
mod m20261216_000001_index_visits_by_visitor_with_origin;
mod m20261217_000001_index_visits_by_link;
mod m20261218_000001_create_credit_days;
mod m20261219_000001_index_events_by_time_with_visit;
mod m20261220_000001_index_visits_by_start_with_end;
mod m20261221_000001_add_settled_generation;
mod m20261222_000001_index_identified_visitors;
mod m20261223_000001_index_tails_with_id;
mod m20261224_000001_create_stored_event_days;
mod rescore;

pub use m20261126_000001_add_visitor_account::backfill_visitor_accounts;
pub use rescore::rescore_visitors;

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261121_000001_create_accounts::Migration),
            Box::new(m20261121_000002_create_sites::Migration),
            Box::new(m20261121_000003_create_tracking::Migration),
            Box::new(m20261121_000004_create_links::Migration),
            Box::new(m20261121_000005_create_webhook_deliveries::Migration),
            Box::new(m20261122_000006_create_page_hours::Migration),
            Box::new(m20261123_000009_add_site_privacy::Migration),
            Box::new(m20261122_235000_add_users_current_site::Migration),
            Box::new(m20261123_000010_add_account_fields::Migration),
            Box::new(m20261123_013000_index_sessions_by_channel::Migration),
            Box::new(m20261123_100000_forget_session_ips::Migration),
            Box::new(m20261123_110000_create_link_click_days::Migration),
            Box::new(m20261123_130000_create_visitor_and_session_hours::Migration),
            Box::new(m20261123_200000_create_alerts::Migration),
            Box::new(m20261125_000001_create_invitations::Migration),
            Box::new(m20261125_120000_rescore_visitors::Migration),
            Box::new(m20261125_190000_rescore_slower_saturation::Migration),
            Box::new(m20261125_200000_add_visitor_last_touch::Migration),
            Box::new(m20261125_210000_create_saved_views::Migration),
            Box::new(m20261125_210100_add_site_gravatar::Migration),
            Box::new(m20261126_000001_add_visitor_account::Migration),
            Box::new(m20261126_000002_add_networks::Migration),
            Box::new(m20261126_000003_create_accounts::Migration),
            Box::new(m20261126_000004_add_account_alerts::Migration),
            Box::new(m20261126_000005_add_site_asn_lists::Migration),
            Box::new(m20261127_000001_add_site_timezone::Migration),
            Box::new(m20261127_000002_add_explore_columns::Migration),
            Box::new(m20261127_000003_add_session_link::Migration),
            Box::new(m20261128_000001_create_goals::Migration),
            Box::new(m20261128_000002_create_revenue::Migration),
            Box::new(m20261128_000003_create_funnels::Migration),
            Box::new(m20261128_000004_add_conversion_alerts::Migration),
            Box::new(m20261128_000005_index_waiting_conversions::Migration),
            Box::new(m20261129_000001_create_email::Migration),
            Box::new(m20261130_000001_index_desk_sorts::Migration),
            Box::new(m20261130_000002_create_visitor_search::Migration),
            Box::new(m20261130_000003_create_visitor_pages::Migration),
            Box::new(m20261201_000001_add_session_human_counts::Migration),
            Box::new(m20261202_000001_index_account_humans::Migration),
            Box::new(m20261203_000001_create_visitor_touch_hours::Migration),
            Box::new(m20261203_000002_add_visitor_page_bots::Migration),
            Box::new(m20261204_000001_create_visitor_links::Migration),
            Box::new(m20261205_000001_create_value_rollups::Migration),
            Box::new(m20261205_000002_create_value_visitor_hours::Migration),
            Box::new(m20261206_000001_create_active_hours::Migration),
            Box::new(m20261206_000002_index_revenue_events::Migration),
            Box::new(m20261207_000001_index_custom_events::Migration),
            Box::new(m20261208_000001_fill_custom_event_values::Migration),
            Box::new(m20261209_000001_index_identities_by_site::Migration),
            Box::new(m20261210_000001_add_visit_hours::Migration),
            Box::new(m20261211_000001_fill_visit_page_values::Migration),
            Box::new(m20261212_000001_fill_visitor_dimension_values::Migration),
            Box::new(m20261213_000001_index_active_hour_counts::Migration),
            Box::new(m20261214_000001_create_value_days::Migration),
            Box::new(m20261215_000001_create_page_days::Migration),
            Box::new(m20261216_000001_index_visits_by_visitor_with_origin::Migration),
            Box::new(m20261217_000001_index_visits_by_link::Migration),
            Box::new(m20261218_000001_create_credit_days::Migration),
            Box::new(m20261219_000001_index_events_by_time_with_visit::Migration),
            Box::new(m20261220_000001_index_visits_by_start_with_end::Migration),
            Box::new(m20261221_000001_add_settled_generation::Migration),
            Box::new(m20261222_000001_index_identified_visitors::Migration),
            Box::new(m20261223_000001_index_tails_with_id::Migration),
            Box::new(m20261224_000001_create_stored_event_days::Migration),
        ]
    }
}

/// A foreign key that deletes the child rows with their parent.
/// Milliseconds in a UTC day: the daily rollups' `day` is `hour / DAY_MS * DAY_MS`.
pub(crate) const DAY_MS: i64 = 86_400_000;

pub(crate) fn cascade(from: (&'static str, &'static str), to: &'static str) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .name(format!("fk_{}_{}", from.0, from.1))
        .from(from.0, from.1)
        .to(to, "id")
        .on_delete(ForeignKeyAction::Cascade)
        .to_owned()
}

/// The name `index` gives an index of `table` on `columns`.
pub(crate) fn index_name(table: &str, columns: &[&str]) -> String {
    format!("idx_{}_{}", table, columns.join("_"))
}

pub(crate) fn index(table: &'static str, columns: &[&'static str]) -> IndexCreateStatement {
    let mut stmt = Index::create();
    stmt.name(index_name(table, columns)).table(table);
    for column in columns {
        stmt.col(*column);
    }
    stmt.to_owned()
}

pub(crate) fn unique_index(table: &'static str, columns: &[&'static str]) -> IndexCreateStatement {
    let mut stmt = index(table, columns);
    stmt.name(format!("uq_{}_{}", table, columns.join("_"))).unique();
    stmt
}

pub(crate) async fn create_indexes(
    manager: &SchemaManager<'_>,
    indexes: Vec<IndexCreateStatement>,
) -> Result<(), DbErr> {
    for stmt in indexes {
        manager.create_index(stmt).await?;
    }
    Ok(())
}

/// Replaces the index `index` made on `table` and `old` with one on `new`,
/// creating the new one first so reads always have one of them.
pub(crate) async fn replace_index(
    manager: &SchemaManager<'_>,
    table: &'static str,
    old: &[&'static str],
    new: &[&'static str],
) -> Result<(), DbErr> {
    manager.create_index(index(table, new)).await?;
    manager.drop_index(Index::drop().name(index_name(table, old)).table(table).to_owned()).await
}

pub(crate) async fn drop_tables(manager: &SchemaManager<'_>, tables: &[&'static str]) -> Result<(), DbErr> {
    for table in tables {
        manager.drop_table(Table::drop().table(*table).if_exists().to_owned()).await?;
    }
    Ok(())
}

/// Counts the visitor rows (`visitor_values`) of one dimension code by
/// their hour into `value_visitor_hours`, as the writer keeps them.
pub(crate) async fn count_visitor_rows(db: &SchemaManagerConnection<'_>, code: i16) -> Result<(), DbErr> {
    db.execute_unprepared(&format!(
        "INSERT INTO value_visitor_hours (site_id, dimension, value, hour, visitors) \
         SELECT site_id, dimension, value, last_hour, COUNT(*) FROM visitor_values \
         WHERE dimension = {code} GROUP BY site_id, dimension, value, last_hour"
    ))
    .await?;
    Ok(())
}

/// Deletes the rollup rows of one dimension code from `tables`.
pub(crate) async fn delete_dimension(
    db: &SchemaManagerConnection<'_>,
    tables: &[&str],
    code: i16,
) -> Result<(), DbErr> {
    for table in tables {
        db.execute_unprepared(&format!("DELETE FROM {table} WHERE dimension = {code}")).await?;
    }
    Ok(())
}
