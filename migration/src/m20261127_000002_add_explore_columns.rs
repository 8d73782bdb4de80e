use sea_orm_migration::{
    prelude::*,
    schema::*,
    sea_orm::{ConnectionTrait, Statement, TransactionSession, TransactionTrait},
};

#[path = "../../src/enrich/visit_source.rs"]
mod visit_source;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Sessions read per statement while deriving their source.
const CHUNK: i64 = 5_000;

/// What Explore (design §17) groups by and the rows did not keep: a visit's
/// source (`visit:source`) and an event's hostname (`event:hostname`).
/// Older sessions take their source from their `utm_source` and referrer by
/// the writer's own rule; older events keep no hostname and read as the
/// site's domain.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table("tracked_sessions").add_column(string_null("source")).to_owned())
            .await?;
        manager.alter_table(Table::alter().table("events").add_column(string_null("hostname")).to_owned()).await?;
        backfill_sources(manager.get_connection()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table("events").drop_column("hostname").to_owned()).await?;
        manager.alter_table(Table::alter().table("tracked_sessions").drop_column("source").to_owned()).await
    }
}

async fn backfill_sources(db: &(impl ConnectionTrait + TransactionTrait)) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let mut after = 0_i64;
    loop {
        let rows = db
            .query_all_raw(Statement::from_string(
                backend,
                format!(
                    "SELECT id, utm_source, referrer FROM tracked_sessions \
                     WHERE id > {after} AND (utm_source IS NOT NULL OR referrer IS NOT NULL) ORDER BY id LIMIT {CHUNK}"
                ),
            ))
            .await?;
        let Some(last) = rows.last() else { break };
        after = last.try_get::<i64>("", "id")?;
        let tx = db.begin().await?;
        for row in &rows {
            let utm_source: Option<String> = row.try_get("", "utm_source")?;
            let referrer: Option<String> = row.try_get("", "referrer")?;
            let host = referrer.as_deref().and_then(visit_source::referrer_host);
            let Some(source) = visit_source::visit_source(utm_source.as_deref(), host.as_deref()) else { continue };
            let update = Query::update()
                .table("tracked_sessions")
                .values([(Alias::new("source"), source.into())])
                .and_where(Expr::col("id").eq(row.try_get::<i64>("", "id")?))
                .to_owned();
            tx.execute_raw(backend.build(&update)).await?;
        }
        tx.commit().await?;
    }
    Ok(())
}
