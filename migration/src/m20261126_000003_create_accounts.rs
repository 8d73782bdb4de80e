use sea_orm_migration::{prelude::*, schema::*};

use crate::{cascade, create_indexes, drop_tables, index, unique_index};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Accounts (design §18) as the batch writer keeps them: one row per site
/// and account with its visitors' figures, so the accounts list and an
/// account page read a few rows instead of every visitor; and what admins
/// decide about an account. Visitors stored before this migration are
/// counted here, one statement for all sites.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("accounts")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(text("account_key"))
                    .col(text("name"))
                    .col(big_integer("visitors").default(0))
                    .col(big_integer("people").default(0))
                    .col(big_integer("sessions").default(0))
                    .col(big_integer("pageviews").default(0))
                    .col(big_integer("engaged_seconds").default(0))
                    .col(big_integer("high_value_views").default(0))
                    .col(big_integer("form_submits").default(0))
                    .col(big_integer("first_seen"))
                    .col(big_integer("last_seen"))
                    .foreign_key(&mut cascade(("accounts", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("account_settings")
                    .col(big_pk_auto("id"))
                    .col(big_integer("site_id"))
                    .col(text("account_key"))
                    .col(text_null("display_name"))
                    .col(boolean("excluded").default(false))
                    .col(text_null("merged_into"))
                    .col(big_integer("updated_at"))
                    .foreign_key(&mut cascade(("account_settings", "site_id"), "sites"))
                    .to_owned(),
            )
            .await?;
        create_indexes(
            manager,
            vec![
                unique_index("accounts", &["site_id", "account_key"]),
                index("accounts", &["site_id", "last_seen"]),
                unique_index("account_settings", &["site_id", "account_key"]),
            ],
        )
        .await?;
        manager
            .get_connection()
            .execute_unprepared(
                "INSERT INTO accounts (site_id, account_key, name, visitors, people, sessions, pageviews, engaged_seconds, \
                 high_value_views, form_submits, first_seen, last_seen) \
                 SELECT site_id, account_key, MAX(COALESCE(account_name, account_key)), COUNT(*), \
                 SUM(CASE WHEN status = 'identified' THEN 1 ELSE 0 END), SUM(total_sessions), SUM(total_pageviews), \
                 SUM(total_time_seconds), SUM(high_value_views), SUM(form_submits), MIN(first_seen), MAX(last_seen) \
                 FROM visitors WHERE account_key IS NOT NULL AND is_bot = false GROUP BY site_id, account_key",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_tables(manager, &["account_settings", "accounts"]).await
    }
}
