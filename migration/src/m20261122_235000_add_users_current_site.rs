use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The site the web app shows a user, remembered across sign-ins and devices.
/// No foreign key: SQLite cannot add one to an existing table, and the web
/// app falls back to the user's first readable site whenever the remembered
/// one is gone or no longer theirs, so a stale id is harmless.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table("users").add_column(big_integer_null("current_site_id")).to_owned())
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table("users").drop_column("current_site_id").to_owned()).await
    }
}
