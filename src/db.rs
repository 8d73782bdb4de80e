//! Database connection and migrations.

use std::time::Duration;

use migration::{Migrator, MigratorTrait};
use sea_orm::{ConnectOptions, Database, DatabaseConnection, DbErr};

pub async fn connect(url: &str) -> Result<DatabaseConnection, DbErr> {
    let mut opts = ConnectOptions::new(url.to_owned());
    opts.sqlx_logging(false).acquire_timeout(Duration::from_secs(5));
    if url.starts_with("sqlite") {
        use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
        // WAL lets readers run beside the batch writer; NORMAL sync is durable
        // across process crashes, which is what a 2xx promises.
        opts.map_sqlx_sqlite_opts(|sqlite| {
            sqlite
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(Duration::from_secs(5))
                .foreign_keys(true)
                // Analytics reads scan indexes of a few hundred MB: keep hot
                // pages in memory and map the file instead of copying pages.
                .pragma("cache_size", "-32768")
                .pragma("mmap_size", "268435456")
        });
    }
    Database::connect(opts).await
}

pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbErr> {
    Migrator::up(db, None).await
}
