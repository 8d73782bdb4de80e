//! The real binary as a separate process, for crash and restart tests.
#![allow(dead_code)]

use std::{
    process::{Child, Command, Stdio},
    time::Duration,
};

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// The real binary, serving `database_url` on a free port, once it is ready.
pub async fn launch(database_url: &str) -> (Child, String) {
    launch_with(database_url, &[]).await
}

/// `launch` with more environment variables.
pub async fn launch_with(database_url: &str, env: &[(&str, &str)]) -> (Child, String) {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_leadtrail"))
        .env("DATABASE_URL", database_url)
        .env("HOST", "127.0.0.1")
        .env("PORT", port.to_string())
        .env("BASE_URL", &base)
        .env("COLLECT_RATE_LIMIT_PER_SECOND", "1000000")
        .env("COLLECT_SITE_RATE_LIMIT_PER_SECOND", "1000000")
        .env("AUTH_RATE_LIMIT_PER_MINUTE", "1000000")
        .env("RUST_LOG", "warn")
        .env_remove("TRUST_PROXY")
        .env_remove("GEOIP_DB_PATH")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .spawn()
        .expect("start the binary");
    for _ in 0..200 {
        if let Ok(reply) = reqwest::get(format!("{base}/health/ready")).await
            && reply.status().is_success()
        {
            return (child, base);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().ok();
    child.wait().ok();
    panic!("the binary did not become ready at {base}");
}

/// Sends a signal (`TERM`, `KILL`) to the process.
pub fn signal(child: &Child, name: &str) {
    let status = Command::new("kill").args([format!("-{name}"), child.id().to_string()]).status().expect("kill");
    assert!(status.success());
}

/// Waits for the process to exit.
pub async fn wait(mut child: Child) -> std::process::ExitStatus {
    tokio::task::spawn_blocking(move || child.wait()).await.expect("join").expect("wait")
}
