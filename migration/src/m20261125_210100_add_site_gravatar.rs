use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Whether the site's pages show Gravatar images (design §19). Off by
/// default: an avatar is the person's initials, and no hash of a lead's
/// email leaves for a third party unless the site turns it on.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table("sites").add_column(boolean("gravatar").default(false)).to_owned())
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table("sites").drop_column("gravatar").to_owned()).await
    }
}
