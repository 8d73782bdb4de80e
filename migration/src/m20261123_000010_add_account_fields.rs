use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The fields Better Auth clients read: a user's `image` (null until set) and
/// when a session last changed (`updatedAt`: sign-in, or the daily slide).
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        manager.alter_table(Table::alter().table("users").add_column(text_null("image")).to_owned()).await?;
        manager
            .alter_table(
                Table::alter().table("auth_sessions").add_column(big_integer("updated_at").default(0)).to_owned(),
            )
            .await?;
        // Sessions started before this migration last changed when they began,
        // as far as anyone can tell.
        manager.get_connection().execute_unprepared("UPDATE auth_sessions SET updated_at = created_at").await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table("auth_sessions").drop_column("updated_at").to_owned()).await?;
        manager.alter_table(Table::alter().table("users").drop_column("image").to_owned()).await
    }
}
