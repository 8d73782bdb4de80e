use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("sites")
                    .col(big_pk_auto("id"))
                    .col(big_integer("org_id"))
                    .col(text("name"))
                    .col(text("domain"))
                    .col(text_uniq("slug"))
                    .col(text("tracking_mode").default("cookie"))
                    .col(text_null("first_party_domain"))
                    // JSON array of path patterns that count as high-value views.
                    .col(text("high_value_patterns"))
                    .col(integer("hot_threshold").default(70))
                    .col(big_integer("created_at"))
                    .foreign_key(&mut cascade(("sites", "org_id"), "orgs"))
                    .to_owned(),
            )
            .await?;
        // Cookieless tracking hashes visitors with a salt that rotates daily;
        // old salts are deleted so yesterday's ids cannot be recomputed.
        manager
            .create_table(
                Table::create().table("daily_salts").col(big_integer("day").primary_key()).col(text("salt")).to_owned(),
            )
            .await?;
        create_indexes(manager, vec![index("sites", &["org_id"])]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_tables(manager, &["daily_salts", "sites"]).await
    }
}
