use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Alerts (design §15): a site's saved destinations, and the outbox of their
/// deliveries, one row per visitor and destination, written in the same
/// transaction as the activity that fired it. Every attempt also goes into
/// the delivery log (`webhook_deliveries`), which learns the delivery, its
/// trigger, the attempt number and when the next attempt is due.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("alert_destinations")
                    .col(big_pk_auto("id"))
                    .col(big_integer("org_id"))
                    .col(big_integer("site_id"))
                    .col(text("name"))
                    .col(text("url"))
                    .col(text("webhook_type"))
                    .col(text("trigger"))
                    .col(boolean("include_journey"))
                    .col(boolean("include_events"))
                    .col(boolean("enabled"))
                    .col(text_null("disabled_reason"))
                    // Start of the current run of failed attempts; null after a success.
                    .col(big_integer_null("failing_since"))
                    // The run's latest failed attempt: a run with a long gap starts again.
                    .col(big_integer_null("last_failed_at"))
                    .col(big_integer("created_at"))
                    .col(big_integer("updated_at"))
                    .foreign_key(&mut cascade(("alert_destinations", "org_id"), "orgs"))
                    .foreign_key(&mut cascade(("alert_destinations", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("alert_deliveries")
                    .col(big_pk_auto("id"))
                    .col(big_integer("org_id"))
                    .col(big_integer("site_id"))
                    .col(big_integer("destination_id"))
                    .col(big_integer("visitor_id"))
                    .col(text("tracker_vid"))
                    .col(text("trigger"))
                    // pending, delivered or failed.
                    .col(text("status"))
                    .col(integer("attempts").default(0))
                    // When a pending delivery is due; while an attempt is in
                    // flight, when its claim lapses.
                    .col(big_integer_null("next_attempt_at"))
                    .col(integer_null("last_status_code"))
                    .col(text_null("last_error"))
                    .col(big_integer("created_at"))
                    .col(big_integer_null("delivered_at"))
                    .foreign_key(&mut cascade(("alert_deliveries", "org_id"), "orgs"))
                    .foreign_key(&mut cascade(("alert_deliveries", "site_id"), "sites"))
                    .foreign_key(&mut cascade(("alert_deliveries", "destination_id"), "alert_destinations"))
                    .foreign_key(&mut cascade(("alert_deliveries", "visitor_id"), "visitors"))
                    .to_owned(),
            )
            .await?;
        create_indexes(
            manager,
            vec![
                index("alert_destinations", &["site_id"]),
                unique_index("alert_deliveries", &["destination_id", "visitor_id"]),
                index("alert_deliveries", &["status", "next_attempt_at"]),
                index("alert_deliveries", &["visitor_id"]),
            ],
        )
        .await?;
        for column in [
            ColumnDef::new("alert_delivery_id").big_integer().null().to_owned(),
            ColumnDef::new("destination_id").big_integer().null().to_owned(),
            ColumnDef::new("trigger").text().null().to_owned(),
            ColumnDef::new("attempt").integer().not_null().default(1).to_owned(),
            ColumnDef::new("next_attempt_at").big_integer().null().to_owned(),
        ] {
            manager.alter_table(Table::alter().table("webhook_deliveries").add_column(column).to_owned()).await?;
        }
        create_indexes(manager, vec![index("webhook_deliveries", &["alert_delivery_id"])]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite refuses to drop a column an index still names.
        manager
            .drop_index(
                Index::drop().name("idx_webhook_deliveries_alert_delivery_id").table("webhook_deliveries").to_owned(),
            )
            .await?;
        for column in ["alert_delivery_id", "destination_id", "trigger", "attempt", "next_attempt_at"] {
            manager.alter_table(Table::alter().table("webhook_deliveries").drop_column(column).to_owned()).await?;
        }
        drop_tables(manager, &["alert_deliveries", "alert_destinations"]).await
    }
}
