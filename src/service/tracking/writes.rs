//! Write statements whose results a batch does not read, collected and then
//! sent together. On SQLite they go as one multi-statement call: every call
//! is a round trip to the connection's thread, and on a busy machine the wait
//! to be scheduled, not the SQL, is most of a batch's time. PostgreSQL's
//! extended protocol takes one statement per call, so there they run in turn.

use sea_orm::{
    ConnAcquireErr, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, QueryTrait, RuntimeErr, Statement,
    TransactionTrait, Value, Values, sqlx,
};
use sea_query_sqlx::SqlxValues;

pub(crate) struct Writes {
    backend: DbBackend,
    statements: Vec<Statement>,
}

impl Writes {
    pub(crate) fn new(backend: DbBackend) -> Self {
        Self { backend, statements: Vec::new() }
    }

    pub(crate) fn add(&mut self, query: &impl QueryTrait) {
        self.statements.push(query.build(self.backend));
    }

    /// Runs the statements in the order they were added, in the caller's
    /// transaction.
    pub(crate) async fn send(self, db: &impl ConnectionTrait) -> Result<(), DbErr> {
        if self.backend != DbBackend::Sqlite || self.statements.len() < 2 {
            for statement in self.statements {
                db.execute_raw(statement).await?;
            }
            return Ok(());
        }
        let (sql, values) = self.joined("", "");
        db.execute_raw(Statement::from_sql_and_values(DbBackend::Sqlite, sql, values)).await?;
        Ok(())
    }

    /// Runs the statements as a transaction of their own. On SQLite, `BEGIN`,
    /// the statements and `COMMIT` are a single call.
    pub(crate) async fn commit(self, db: &DatabaseConnection) -> Result<(), DbErr> {
        if self.statements.is_empty() {
            return Ok(());
        }
        if self.backend != DbBackend::Sqlite {
            let txn = db.begin().await?;
            self.send(&txn).await?;
            return txn.commit().await;
        }
        // IMMEDIATE takes the write lock up front, as the writer's other
        // transactions get it at their first write.
        let (sql, values) = self.joined("BEGIN IMMEDIATE;\n", "COMMIT;");
        let mut conn = db.get_sqlite_connection_pool().acquire().await.map_err(|err| match err {
            sqlx::Error::PoolTimedOut => DbErr::ConnectionAcquire(ConnAcquireErr::Timeout),
            sqlx::Error::PoolClosed => DbErr::ConnectionAcquire(ConnAcquireErr::ConnectionClosed),
            err => DbErr::Conn(RuntimeErr::SqlxError(err.into())),
        })?;
        let outcome = sqlx::query_with(sqlx::AssertSqlSafe(sql), SqlxValues(Values(values))).execute(&mut *conn).await;
        if let Err(err) = outcome {
            // The transaction may still be open on this connection. Closing
            // it rolls the transaction back, and the pool opens a fresh one.
            conn.close_on_drop();
            return Err(DbErr::Exec(RuntimeErr::SqlxError(err.into())));
        }
        Ok(())
    }

    /// The statements as one SQL text between `head` and `tail`, with their
    /// values in order: SQLite's `?` placeholders are unnumbered, and the
    /// driver binds each statement's from where the previous one's ended.
    fn joined(self, head: &str, tail: &str) -> (String, Vec<Value>) {
        let mut sql = String::from(head);
        let mut values: Vec<Value> = Vec::new();
        for statement in self.statements {
            sql.push_str(&statement.sql);
            sql.push_str(";\n");
            if let Some(Values(more)) = statement.values {
                values.extend(more);
            }
        }
        sql.push_str(tail);
        (sql, values)
    }
}
