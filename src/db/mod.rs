//! Database connection and migrations.

use std::{str::FromStr, time::Duration};

use migration::{Migrator, MigratorTrait};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseBackend, DatabaseConnection, DbErr, SqlxSqliteConnector,
    Statement, TransactionTrait,
    sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
};

use crate::config::{Config, SqliteSync};

pub mod checkpoint;
#[cfg(target_os = "linux")]
pub mod nodelay;
pub mod priority;
pub mod readiness;

/// Pages past which a commit checkpoints on its own connection after all
/// (`checkpoint` does it off the writer's path long before).
/// Under load the task keeps the log well below it (about 1,000 pages in the
/// collect benchmark).
pub const BACKSTOP_PAGES: u32 = 4_000;

/// Any fixed number: every instance asks for the same advisory lock.
const MIGRATION_LOCK: i64 = 0x006c_6561_6474_726c;

/// Connects as the configuration says. A PostgreSQL URL may ask for TLS
/// (`sslmode=require`, `verify-ca`, `verify-full`, with `sslrootcert`), which
/// rustls provides with the Mozilla roots.
pub async fn connect(config: &Config) -> Result<DatabaseConnection, DbErr> {
    connect_url(&config.database_url, config.sqlite_synchronous).await
}

pub async fn connect_url(url: &str, synchronous: SqliteSync) -> Result<DatabaseConnection, DbErr> {
    let mut opts = ConnectOptions::new(url.to_owned());
    opts.sqlx_logging(false).acquire_timeout(Duration::from_secs(5));
    if url.starts_with("sqlite") {
        // A connection to a local file cannot go stale, and the check before
        // each use is a round trip to the connection's thread on the batch
        // writer's path.
        opts.test_before_acquire(false);
        opts.map_sqlx_sqlite_opts(move |sqlite| tune_sqlite(sqlite, synchronous));
    }
    // sqlx 0.9.0 leaves Nagle's algorithm on; see `nodelay`.
    #[cfg(target_os = "linux")]
    if url.starts_with("postgres") {
        let port = url::Url::parse(url).ok().and_then(|url| url.port()).unwrap_or(5432);
        opts.map_sqlx_postgres_pool_opts(move |pool| {
            pool.after_connect(move |_, _| {
                Box::pin(async move {
                    nodelay::set_on_sockets_to(port);
                    Ok(())
                })
            })
        });
    }
    Database::connect(opts).await
}

/// The settings every SQLite connection of the service gets.
fn tune_sqlite(sqlite: SqliteConnectOptions, synchronous: SqliteSync) -> SqliteConnectOptions {
    // WAL lets readers run beside the batch writer. NORMAL sync keeps every
    // commit across a process crash; FULL also across a power loss.
    let synchronous = match synchronous {
        SqliteSync::Normal => SqliteSynchronous::Normal,
        SqliteSync::Full => SqliteSynchronous::Full,
    };
    sqlite
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(synchronous)
        .busy_timeout(Duration::from_secs(5))
        .foreign_keys(true)
        // The connection's thread hands rows over through a channel of this
        // size and waits whenever it is full: at sqlx's 50, a batch's read of
        // a thousand visitors switched threads twenty times.
        .row_buffer_size(1024)
        // Analytics reads scan indexes of a few hundred MB: keep hot pages in
        // memory and map the file instead of copying pages.
        .pragma("cache_size", "-32768")
        .pragma("mmap_size", "268435456")
        // A task checkpoints instead of the committing writer; see `checkpoint`.
        .pragma("wal_autocheckpoint", BACKSTOP_PAGES.to_string())
        // A row rewritten by an update leaves its old bytes in the page's
        // free space; FAST zeroes them whenever the page is written anyway,
        // so an erased person's older copies go too (`privacy::erase`).
        .pragma("secure_delete", "FAST")
}

/// The pool that GraphQL reads use (`graphql::gate`). sea-orm gives an SQLite
/// database one connection, which the batch writer needs between every two
/// batches; reads that queue on it hold up collect. WAL lets readers work
/// beside the writer, so on a database file the reads get `connections` of
/// their own, made read-only (`query_only`): they never take SQLite's write
/// lock, so they can never fail a writer with a busy snapshot. Connections
/// open on first use. On PostgreSQL, or an in-memory SQLite database (which a
/// second pool would not see), reads share `main`.
pub fn read_pool(
    main: &DatabaseConnection,
    url: &str,
    synchronous: SqliteSync,
    connections: u32,
) -> Result<DatabaseConnection, DbErr> {
    let in_memory = url.contains(":memory:") || url.contains("mode=memory");
    if main.get_database_backend() != DatabaseBackend::Sqlite || in_memory {
        return Ok(main.clone());
    }
    let options = SqliteConnectOptions::from_str(url).map_err(|err| DbErr::Custom(err.to_string()))?;
    let options = tune_sqlite(options, synchronous)
        .pragma("query_only", "ON")
        .thread_name(|id| format!("{}{id}", priority::READ_THREAD));
    let pool = SqlitePoolOptions::new()
        .max_connections(connections.max(1))
        .min_connections(0)
        .acquire_timeout(Duration::from_secs(5))
        .test_before_acquire(false)
        // Each connection works on a thread of its own, named above.
        .after_connect(|_, _| {
            Box::pin(async {
                #[cfg(target_os = "linux")]
                priority::lower_read_threads();
                Ok(())
            })
        })
        .connect_lazy_with(options);
    Ok(SqlxSqliteConnector::from_sqlx_sqlite_pool(pool))
}

/// Runs the migrations that have not run. On PostgreSQL the first instance to
/// start takes an advisory lock and migrates; instances started at the same
/// moment wait for it, then find nothing left to do.
pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbErr> {
    if db.get_database_backend() != DatabaseBackend::Postgres {
        return Migrator::up(db, None).await;
    }
    // The lock lives as long as this transaction's connection; the migrations
    // run on other connections of the pool.
    let lock = db.begin().await?;
    lock.execute_raw(Statement::from_sql_and_values(
        DatabaseBackend::Postgres,
        "SELECT pg_advisory_xact_lock($1)",
        [MIGRATION_LOCK.into()],
    ))
    .await?;
    let migrated = Migrator::up(db, None).await;
    lock.commit().await?;
    migrated
}
