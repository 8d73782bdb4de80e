//! TLS to PostgreSQL: `sslmode=require` encrypts the connection (the local
//! server has Debian's self-signed certificate), and `verify-full` refuses a
//! certificate no trusted root signed; every connection has `TCP_NODELAY`,
//! without which a multi-row insert over TLS waits some 40 ms on Nagle's
//! algorithm. Runs when TEST_DATABASE_URL is set.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

use leadtrail::{config::SqliteSync, db};
use sea_orm::{ConnectionTrait, DatabaseBackend, Statement};

fn with_sslmode(mode: &str) -> Option<String> {
    let url = std::env::var("TEST_DATABASE_URL").ok().filter(|url| !url.is_empty())?;
    let mut url = url::Url::parse(&url).expect("TEST_DATABASE_URL is a URL");
    url.query_pairs_mut().append_pair("sslmode", mode);
    Some(url.to_string())
}

#[tokio::test]
async fn sslmode_require_encrypts_without_nagle_and_verify_full_checks_the_certificate() {
    let Some(required) = with_sslmode("require") else {
        eprintln!("SKIPPED: the TLS test needs TEST_DATABASE_URL (PostgreSQL)");
        return;
    };
    let conn = match db::connect_url(&required, SqliteSync::Normal).await {
        Ok(conn) => conn,
        Err(err) if err.to_string().contains("does not support SSL") => {
            eprintln!("SKIPPED: this PostgreSQL server has TLS turned off ({err})");
            return;
        }
        Err(err) => panic!("sslmode=require: {err}"),
    };
    let row = conn
        .query_one_raw(Statement::from_string(
            DatabaseBackend::Postgres,
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
        ))
        .await
        .expect("query")
        .expect("a row");
    assert!(row.try_get::<bool>("", "ssl").expect("ssl column"), "the connection is encrypted");
    // The only test in this process, so these are its connections alone.
    let port = url::Url::parse(&required).unwrap().port().unwrap_or(5432);
    let sockets = db::nodelay::tcp_sockets_to(port);
    assert!(!sockets.is_empty(), "the pool's connection is a TCP socket to port {port}");
    for socket in &sockets {
        assert!(rustix::net::sockopt::tcp_nodelay(socket).unwrap(), "TCP_NODELAY is set on every connection");
    }
    conn.close().await.ok();

    let verified = with_sslmode("verify-full").expect("url");
    let refused = db::connect_url(&verified, SqliteSync::Normal).await;
    assert!(refused.is_err(), "a self-signed certificate is not trusted under verify-full");
}
