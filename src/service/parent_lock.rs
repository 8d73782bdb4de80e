//! Changes that count a parent's rows and then add or remove one: at most so
//! many sites an organization or destinations a site, at least one owner an
//! organization. Counting and writing in one transaction is not enough: two
//! requests could both count and both write, past the limit. So each such
//! transaction first takes a lock that every other one for the same parent
//! also takes: SQLite's write lock, at `BEGIN`, or PostgreSQL's lock on the
//! parent's row.

use sea_orm::{
    ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr, EntityTrait, PrimaryKeyTrait,
    QuerySelect, SqliteTransactionMode, TransactionOptions, TransactionTrait, sea_query::LockType,
};

/// Begins a transaction in which the rows under parent `id` of `E` can be
/// counted and then changed without another request doing the same between.
pub(crate) async fn begin<E>(db: &DatabaseConnection, id: i64) -> Result<DatabaseTransaction, DbErr>
where
    E: EntityTrait,
    <E::PrimaryKey as PrimaryKeyTrait>::ValueType: From<i64>,
{
    let options =
        TransactionOptions { sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate), ..Default::default() };
    let txn = db.begin_with_options(options).await?;
    lock::<E>(&txn, id).await?;
    Ok(txn)
}

/// Takes the same lock inside a transaction already open, for a change that
/// counts under several parents (lock them in id order). On SQLite the
/// pool's one connection already keeps other transactions out.
pub(crate) async fn lock<E>(txn: &DatabaseTransaction, id: i64) -> Result<(), DbErr>
where
    E: EntityTrait,
    <E::PrimaryKey as PrimaryKeyTrait>::ValueType: From<i64>,
{
    if txn.get_database_backend() == DbBackend::Postgres {
        // Not FOR UPDATE: that would also hold up every insert whose foreign
        // key names the parent (the batch writer's, on every instance).
        E::find_by_id(id).lock(LockType::NoKeyUpdate).one(txn).await?;
    }
    Ok(())
}
