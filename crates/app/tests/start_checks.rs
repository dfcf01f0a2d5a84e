//! Settings mistakes `deckhand serve` can see at start stop it, with the message and its fix,
//! instead of a server that answers 503 to every request: through PgBouncer in transaction
//! mode, a server `statement_timeout` other than `DECKHAND_DB_STATEMENT_TIMEOUT_MS`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a panic is a failure with a message.

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use deckhand_testkit::db::OwnCluster;
use deckhand_testkit::db::direct::connect;
use diesel_async::SimpleAsyncConnection as _;

const BINARY: &str = env!("CARGO_BIN_EXE_deckhand");
const SECRET_KEY: &str = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";

/// The server's own statement timeout, as an operator sets it for every session.
async fn set_server_statement_timeout(url: &str, ms: u32) {
    let mut conn = connect(url).await;
    // One statement per call: ALTER SYSTEM may not run in a transaction block.
    conn.batch_execute(&format!("ALTER SYSTEM SET statement_timeout = {ms}"))
        .await
        .unwrap();
    conn.batch_execute("SELECT pg_reload_conf()").await.unwrap();
}

/// `deckhand serve` through `bouncer_url`, LISTEN and migrations on `direct_url`.
fn serve(bouncer_url: &str, direct_url: &str) -> std::process::Child {
    let address = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    Command::new(BINARY)
        .arg("serve")
        .env("DATABASE_URL", bouncer_url)
        .env("DATABASE_LISTEN_URL", direct_url)
        .env("DECKHAND_DB_POOLER", "transaction")
        .env("DECKHAND_DB_STATEMENT_TIMEOUT_MS", "15000")
        .env("DECKHAND_SECRET_KEY", SECRET_KEY)
        .env("DECKHAND_BIND", address.to_string())
        .env("DECKHAND_WORKERS", "1")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start deckhand serve")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_statement_timeout_other_than_the_setting_stops_the_start_through_a_pooler() {
    let cluster = OwnCluster::start("start-timeout").expect("a cluster of our own");
    set_server_statement_timeout(&cluster.url(), 5000).await;
    let bouncer = cluster.pgbouncer(2).expect("PgBouncer in front of it");

    let mut child = serve(&bouncer.url(), &cluster.url());
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!(
                "deckhand serve still runs with a statement_timeout of 5000 ms behind the pooler"
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("statement_timeout is 5000 ms, not the 15000 ms"),
        "the message names both values: {stderr}"
    );
    assert!(
        stderr.contains("ALTER ROLE <user> SET statement_timeout = 15000"),
        "the message says the fix: {stderr}"
    );

    // With the fix, the same command starts.
    set_server_statement_timeout(&cluster.url(), 15000).await;
    let mut child = serve(&bouncer.url(), &cluster.url());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let exited = child.try_wait().unwrap();
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    assert!(
        exited.is_none(),
        "it stopped ({exited:?}): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    drop(bouncer);
}
