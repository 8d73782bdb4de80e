use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Revenue (design §20). A custom event may carry an amount: exact, in the
/// currency's minor units (cents), with its ISO 4217 code. Server-side
/// conversions (a CRM's closed-won deal, a payment) are rows of
/// `conversions`: tied to a visitor, or, for a person not yet identified,
/// kept with their email or user id until identify ties them. The same
/// `external_id` is stored once per site.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table("events").add_column(big_integer_null("revenue_minor")).to_owned())
            .await?;
        manager
            .alter_table(Table::alter().table("events").add_column(text_null("revenue_currency")).to_owned())
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("conversions")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(big_integer_null("visitor_id"))
                    .col(text("name"))
                    .col(big_integer("amount_minor"))
                    .col(text("currency"))
                    .col(big_integer("occurred_at"))
                    .col(text_null("external_id"))
                    // Lowercased; how a conversion for someone not yet
                    // identified finds them later. Cleared once tied.
                    .col(text_null("email"))
                    .col(text_null("user_id"))
                    .col(big_integer("created_at"))
                    .foreign_key(&mut cascade(("conversions", "site_id"), "sites"))
                    .foreign_key(&mut cascade(("conversions", "visitor_id"), "visitors"))
                    .to_owned(),
            )
            .await?;
        create_indexes(
            manager,
            vec![
                unique_index("conversions", &["site_id", "external_id"]),
                index("conversions", &["site_id", "occurred_at"]),
                index("conversions", &["visitor_id"]),
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_tables(manager, &["conversions"]).await?;
        manager.alter_table(Table::alter().table("events").drop_column("revenue_currency").to_owned()).await?;
        manager.alter_table(Table::alter().table("events").drop_column("revenue_minor").to_owned()).await
    }
}
