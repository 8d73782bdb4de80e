use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Sign-in sessions used to keep the client's IP address. Design §14 promises
/// that no table holds one, so the addresses already stored are forgotten; the
/// column stays (always null) because the Better Auth session shape names it.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let forget = Query::update().table("auth_sessions").value("ip", Option::<String>::None).to_owned();
        manager.exec_stmt(forget).await
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        // The addresses are gone; there is nothing to restore.
        Ok(())
    }
}
