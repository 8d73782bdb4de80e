//! Write statements whose results a batch does not read, collected and then
//! sent together. On SQLite they go as one multi-statement call: every call
//! is a round trip to the connection's thread, and on a busy machine the wait
//! to be scheduled, not the SQL, is most of a batch's time. PostgreSQL's
//! extended protocol takes one statement per call, so there they run in turn.

use std::{future::poll_fn, pin::pin, task::Poll};

use sea_orm::{
    ActiveModelTrait, ConnAcquireErr, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, QueryTrait, RuntimeErr,
    Statement, TransactionTrait, Value, Values, sqlx,
};
use sea_query_sqlx::SqlxValues;
use serde::Serialize;

use super::json_rows;

pub(crate) struct Writes {
    backend: DbBackend,
    statements: Vec<Statement>,
    /// Rows that could not be encoded: reported when the writes are sent.
    unencodable: Option<serde_json::Error>,
}

impl Writes {
    pub(crate) fn new(backend: DbBackend) -> Self {
        Self { backend, statements: Vec::new(), unencodable: None }
    }

    pub(crate) fn backend(&self) -> DbBackend {
        self.backend
    }

    /// Adds `other`'s statements after these.
    pub(crate) fn append(&mut self, mut other: Writes) {
        self.statements.append(&mut other.statements);
        self.unencodable = self.unencodable.take().or(other.unencodable);
    }

    pub(crate) fn add(&mut self, query: &impl QueryTrait) {
        self.statements.push(query.build(self.backend));
    }

    /// Adds `sql`, a statement whose one parameter is `rows` as a JSON array
    /// (see `json_rows`). Nothing is added when there are no rows.
    pub(crate) fn add_json_rows<R: Serialize>(&mut self, sql: String, rows: &[R]) {
        if rows.is_empty() {
            return;
        }
        self.add_encoded(serde_json::to_string(rows).map(|json| Some((sql, json))));
    }

    /// Adds an insert of entity `rows`, which all set the same columns,
    /// followed by `tail` (an `ON CONFLICT` clause, or nothing). The rows go
    /// as one JSON parameter (see `json_rows`), so the statement's text is
    /// the same whatever their number.
    pub(crate) fn add_models<A: ActiveModelTrait>(&mut self, rows: Vec<A>, tail: &str) {
        self.add_encoded(json_rows::insert_models(self.backend, rows, tail));
    }

    fn add_encoded(&mut self, encoded: Result<Option<(String, String)>, serde_json::Error>) {
        match encoded {
            Ok(Some((sql, json))) => {
                self.statements.push(Statement::from_sql_and_values(self.backend, sql, [Value::from(json)]));
            }
            Ok(None) => {}
            Err(err) => self.unencodable = self.unencodable.take().or(Some(err)),
        }
    }

    /// Runs the statements in the order they were added, in the caller's
    /// transaction.
    pub(crate) async fn send(self, db: &impl ConnectionTrait) -> Result<(), DbErr> {
        self.encoded()?;
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

    /// Runs the statements in the caller's transaction and, while the database
    /// runs them, builds what comes next with `next`.
    pub(crate) async fn send_while<T>(self, db: &impl ConnectionTrait, next: impl FnOnce() -> T) -> Result<T, DbErr> {
        overlap(self.send(db), next).await.map(|((), built)| built)
    }

    /// Runs the statements as a transaction of their own. On SQLite, `BEGIN`,
    /// the statements and `COMMIT` are a single call.
    pub(crate) async fn commit(self, db: &DatabaseConnection) -> Result<(), DbErr> {
        self.encoded()?;
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

    /// Fails when some rows could not be encoded, before anything is sent.
    fn encoded(&self) -> Result<(), DbErr> {
        match &self.unencodable {
            Some(err) => Err(DbErr::Custom(format!("rows could not be encoded as JSON: {err}"))),
            None => Ok(()),
        }
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

/// Runs `build` while `work` waits on the database. The first poll of a query
/// hands it to the connection (SQLite's thread, or PostgreSQL's socket), so
/// polling `work` once before building lets the database and the writer work
/// at the same time; on two cores that is most of the gain.
pub(crate) async fn overlap<T, U>(
    work: impl Future<Output = Result<T, DbErr>>,
    build: impl FnOnce() -> U,
) -> Result<(T, U), DbErr> {
    let mut work = pin!(work);
    let started = poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await;
    let built = build();
    let done = match started {
        Poll::Ready(done) => done,
        Poll::Pending => work.await,
    };
    done.map(|done| (done, built))
}

/// Splits rows into multi-row statements of power-of-two sizes up to 128
/// rows, so the database reuses eight prepared statements instead of
/// preparing one for every batch size, and a batch needs few statements.
pub(crate) fn statement_chunks<T>(rows: Vec<T>) -> impl Iterator<Item = Vec<T>> {
    const SIZES: [usize; 8] = [128, 64, 32, 16, 8, 4, 2, 1];
    let mut left = rows.len();
    let mut rows = rows.into_iter();
    std::iter::from_fn(move || {
        let size = SIZES.into_iter().find(|&size| size <= left)?;
        left -= size;
        Some(rows.by_ref().take(size).collect())
    })
}
