use sea_orm_migration::{
    prelude::*,
    schema::*,
    sea_orm::{ConnectionTrait, Statement, TransactionSession, TransactionTrait},
};

#[path = "../../src/enrich/account.rs"]
// The migration needs only the identify rule, not the network one.
#[allow(dead_code)]
mod account;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Identify calls read per statement.
const CHUNK: i64 = 2_000;

/// The account (design §18) kept on the visitor, as the lead desk's other
/// columns are, so the list shows and filters it without reading
/// identities. Existing identified visitors take it from their identify
/// calls, oldest first, so the latest call that names a company wins, as it
/// does in the batch writer.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        for column in ["account_key", "account_name", "account_source"] {
            manager.alter_table(Table::alter().table("visitors").add_column(string_null(column)).to_owned()).await?;
        }
        backfill_visitor_accounts(manager.get_connection()).await?;
        crate::create_indexes(manager, vec![crate::index("visitors", &["site_id", "account_key", "last_seen"])]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name("idx_visitors_site_id_account_key_last_seen").table("visitors").to_owned())
            .await?;
        for column in ["account_key", "account_name", "account_source"] {
            manager.alter_table(Table::alter().table("visitors").drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}

/// Sets every identified visitor's account from its identify calls, oldest
/// first, a chunk at a time; what the batch writer would have stored.
pub async fn backfill_visitor_accounts(db: &(impl ConnectionTrait + TransactionTrait)) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let mut after = 0_i64;
    loop {
        let rows = db
            .query_all_raw(Statement::from_string(
                backend,
                format!(
                    "SELECT id, visitor_id, email, company, traits FROM identities \
                     WHERE id > {after} ORDER BY id LIMIT {CHUNK}"
                ),
            ))
            .await?;
        let Some(last) = rows.last() else { break };
        after = last.try_get::<i64>("", "id")?;
        let tx = db.begin().await?;
        for row in &rows {
            let email: Option<String> = row.try_get("", "email")?;
            let company: Option<String> = row.try_get("", "company")?;
            let traits: String = row.try_get("", "traits")?;
            let Some(found) = account::from_identity(email.as_deref(), company.as_deref(), &traits) else { continue };
            let update = Query::update()
                .table("visitors")
                .values([
                    (Alias::new("account_key"), found.key.into()),
                    (Alias::new("account_name"), found.name.into()),
                    (Alias::new("account_source"), found.source.as_str().into()),
                ])
                .and_where(Expr::col("id").eq(row.try_get::<i64>("", "visitor_id")?))
                .to_owned();
            tx.execute_raw(backend.build(&update)).await?;
        }
        tx.commit().await?;
    }
    Ok(())
}
