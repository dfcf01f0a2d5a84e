//! The real binary as operators run it: `deckhand serve` as a child process on PostgreSQL, its
//! credentials made with `deckhand admin`. Graceful shutdown on SIGTERM, and two instances on one
//! database behaving as one.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a panic is a failure with a message.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use deckhand_testkit::db::TestDb;
use deckhand_testkit::db::direct::{backend_pid, connect, select_json, sessions_waiting_on};
use diesel_async::{AsyncPgConnection, SimpleAsyncConnection as _};
use reqwest::StatusCode;
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_deckhand");
/// Base64 of 32 bytes: every process of a test shares it, as instances of one deployment do.
const SECRET_KEY: &str = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";
const SCOPES: &str = "decks:read decks:write";

/// A `deckhand serve` child process, killed if the test ends before it exits.
struct Server {
    child: Child,
    address: SocketAddr,
    log: PathBuf,
}

impl Server {
    /// Starts `deckhand serve` on `database_url` with `env` on a free port, and waits until it
    /// answers `/healthz`.
    async fn start(name: &str, database_url: &str, env: &[(&str, &str)]) -> Self {
        let address = free_address();
        let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.log"));
        let child = Command::new(BINARY)
            .arg("serve")
            .env("DATABASE_URL", database_url)
            .env("DECKHAND_SECRET_KEY", SECRET_KEY)
            .env("DECKHAND_BIND", address.to_string())
            .env("DECKHAND_RATE_LIMITS", "off")
            .env("DECKHAND_WORKERS", "2")
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start deckhand serve");
        let server = Self {
            child,
            address,
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(response) = reqwest::get(server.url("/healthz")).await
                && response.status() == StatusCode::OK
            {
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "deckhand serve never answered; its log: {}",
                server.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    fn api(&self, path: &str) -> String {
        self.url(&format!("/api/public/v1{path}"))
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn terminate(&self) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }

    /// Its exit status, once it exits within `within`.
    async fn exited(&mut self, within: Duration) -> ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "still running after {within:?}; its log: {}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.running() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// An address nothing listens on (the OS's next ephemeral port, released at once).
fn free_address() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// `deckhand admin <args>` on `database_url`, and the JSON it prints.
fn admin(database_url: &str, args: &[&str]) -> Value {
    let output = Command::new(BINARY)
        .arg("admin")
        .args(args)
        .env("DATABASE_URL", database_url)
        .env("DECKHAND_SECRET_KEY", SECRET_KEY)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "deckhand admin {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A new user with a PAT holding [`SCOPES`]; returns the token.
fn user_with_token(database_url: &str, username: &str) -> String {
    admin(database_url, &["user", "create", "--username", username]);
    let pat = admin(
        database_url,
        &["pat", "create", "--user", username, "--scopes", SCOPES],
    );
    pat["token"].as_str().unwrap().to_owned()
}

async fn json_of(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn create_deck(server: &Server, token: &str, name: &str) -> String {
    let response = reqwest::Client::new()
        .post(server.api("/games/mtg/decks"))
        .bearer_auth(token)
        .json(&json!({"name": name, "visibility": ["public"]}))
        .send()
        .await
        .unwrap();
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_str().unwrap().to_owned()
}

/// (version number, history type) of each history record of deck `id`, as `server` reads it.
async fn history(server: &Server, id: &str) -> Vec<(i64, String)> {
    let response = reqwest::get(server.api(&format!("/games/mtg/decks/{id}/versions")))
        .await
        .unwrap();
    let (status, versions) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{versions}");
    versions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["version_number"].as_i64().unwrap(),
                v["history_type"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A `deckhand serve` with one PATCH in flight: it renames a deck and waits on the deck's row
/// lock, which `blocker`, a transaction of the test's own, holds.
///
/// Fields drop in order: the blocker's transaction ends before a failed test drops the schema.
struct HeldPatch {
    blocker: AsyncPgConnection,
    server: Server,
    patch: tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>,
    id: String,
    db: TestDb,
}

impl HeldPatch {
    async fn start(name: &str, shutdown_timeout_secs: &str, renamed: &str) -> Self {
        let db = TestDb::new().await;
        let server = Server::start(
            name,
            db.url(),
            &[("DECKHAND_SHUTDOWN_TIMEOUT_SECS", shutdown_timeout_secs)],
        )
        .await;
        let token = user_with_token(db.url(), name);
        let id = create_deck(&server, &token, "Before").await;
        let mut blocker = connect(db.url()).await;
        let blocker_pid = backend_pid(&mut blocker).await;
        blocker
            .batch_execute(&format!(
                "BEGIN; SELECT 1 FROM decks WHERE id = '{id}' FOR UPDATE"
            ))
            .await
            .unwrap();
        let patch = tokio::spawn(
            reqwest::Client::new()
                .patch(server.api(&format!("/games/mtg/decks/{id}")))
                .bearer_auth(&token)
                .json(&json!({"name": renamed}))
                .send(),
        );
        let mut observer = connect(db.url()).await;
        sessions_waiting_on(&mut observer, blocker_pid, Duration::from_secs(10)).await;
        Self {
            db,
            server,
            id,
            blocker,
            patch,
        }
    }

    /// The deck as stored: `{name, version, records}` (records: its history records).
    async fn stored(&self) -> Value {
        let mut reader = connect(self.db.url()).await;
        select_json(
            &mut reader,
            &format!(
                "SELECT json_build_object('name', name, 'version', version, 'records', \
                 (SELECT count(*) FROM deck_versions WHERE deck_id = decks.id))::text AS json \
                 FROM decks WHERE id = '{}'",
                self.id
            ),
        )
        .await
        .unwrap()
    }
}

/// Refused: nothing listens any more (the listener is closed, not merely not accepting).
fn refuses_connections(address: SocketAddr) -> bool {
    matches!(
        TcpStream::connect_timeout(&address, Duration::from_millis(500)),
        Err(error) if error.kind() == std::io::ErrorKind::ConnectionRefused
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sigterm_a_request_in_flight_finishes_new_connections_are_refused_and_it_exits() {
    let mut held = HeldPatch::start("graceful", "10", "Finished").await;

    let signalled = Instant::now();
    held.server.terminate();
    let deadline = Instant::now() + Duration::from_secs(3);
    while !refuses_connections(held.server.address) {
        assert!(
            Instant::now() < deadline,
            "still accepting connections after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let refused_after = signalled.elapsed();

    // The PATCH is still waiting, and the process waits for it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(held.server.running(), "exited with a request in flight");
    held.blocker.batch_execute("COMMIT").await.unwrap();
    let (status, body) = json_of((&mut held.patch).await.unwrap().unwrap()).await;
    assert_eq!(
        (status, &body["version"], &body["name"]),
        (StatusCode::OK, &json!(2), &json!("Finished")),
        "{body}"
    );
    let exit = held.server.exited(Duration::from_secs(10)).await;
    let exited_after = signalled.elapsed();
    assert!(exit.success(), "{exit:?}; its log: {}", held.server.log());
    assert_eq!(
        held.stored().await,
        json!({"name": "Finished", "version": 2, "records": 2})
    );
    eprintln!(
        "shutdown: connections refused {refused_after:?} after SIGTERM; exited {exited_after:?} \
         after it, with the request in flight answered 200"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sigterm_a_request_outliving_the_shutdown_timeout_is_dropped_and_leaves_nothing() {
    let mut held = HeldPatch::start("impatient", "2", "Never").await;

    let signalled = Instant::now();
    held.server.terminate();
    let exit = held.server.exited(Duration::from_secs(6)).await;
    let exited_after = signalled.elapsed();
    let answer = (&mut held.patch).await.unwrap();
    // Early, the process could only have exited because the PATCH ended some other way: the
    // answer and the log say which.
    assert!(
        exited_after >= Duration::from_secs(2),
        "exited {exited_after:?} after SIGTERM, before the shutdown timeout ({exit:?}); the \
         PATCH got {answer:?}; its log: {}",
        held.server.log()
    );
    assert!(
        answer.is_err(),
        "the dropped request got an answer: {answer:?}"
    );

    // Its transaction never commits: the deck stays whole at version 1.
    held.blocker.batch_execute("ROLLBACK").await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        held.stored().await,
        json!({"name": "Before", "version": 1, "records": 1})
    );
    eprintln!(
        "shutdown: with a request stuck, exited {exited_after:?} after SIGTERM (timeout 2 s)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_database_agree_on_replays_views_and_versions() {
    let db = TestDb::new().await;
    let instances = [
        Server::start("instance-a", db.url(), &[]).await,
        Server::start("instance-b", db.url(), &[]).await,
    ];
    let token = user_with_token(db.url(), "shared");
    let partner = admin(
        db.url(),
        &[
            "partner",
            "create",
            "--slug",
            "acme",
            "--owner",
            "shared",
            "--scopes",
            "decks:read,decks:write",
            "--game-scopes",
            "mtg",
        ],
    );
    let client = reqwest::Client::new();

    // One signed POST sent 10 times at once over both instances: one deck, nine refusals.
    let decks_path = "/api/public/v1/games/mtg/decks";
    let body = r#"{"name":"Signed once","visibility":["public"]}"#;
    let signed = admin(
        db.url(),
        &[
            "sign",
            "--partner",
            "acme",
            "--secret",
            partner["secret"].as_str().unwrap(),
            "--method",
            "POST",
            "--path",
            decks_path,
            "--body",
            body,
        ],
    );
    let replays = (0..10).map(|n| {
        let mut request = client
            .post(instances[n % 2].url(decks_path))
            .header("content-type", "application/json")
            .body(body);
        for (name, value) in signed["headers"].as_object().unwrap() {
            request = request.header(name.as_str(), value.as_str().unwrap());
        }
        async move { json_of(request.send().await.unwrap()).await }
    });
    let mut answers = futures_util::future::join_all(replays).await;
    answers.sort_by_key(|(status, _)| *status);
    assert_eq!(answers[0].0, StatusCode::CREATED, "{:?}", answers[0]);
    for (status, body) in &answers[1..] {
        assert_eq!(*status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(body["error"], "SERVICE_AUTHENTICATION_FAILED", "{body}");
    }
    let mut reader = connect(db.url()).await;
    let signed_decks = select_json(
        &mut reader,
        "SELECT count(*)::text AS json FROM decks WHERE name = 'Signed once'",
    )
    .await
    .unwrap();
    assert_eq!(signed_decks, json!(1));

    // 20 first views of one deck by one visitor at once over both instances: +1.
    let id = create_deck(&instances[0], &token, "Viewed and edited").await;
    let views = (0..20).map(|n| {
        let request = client
            .post(instances[n % 2].api(&format!("/games/mtg/decks/{id}/views")))
            .bearer_auth(&token);
        async move { json_of(request.send().await.unwrap()).await }
    });
    let views = futures_util::future::join_all(views).await;
    let counted = views
        .iter()
        .filter(|(status, body)| {
            assert_eq!(*status, StatusCode::OK, "{body}");
            body["incremented"] == true
        })
        .count();
    assert_eq!(counted, 1, "{views:?}");
    let stored_views = select_json(
        &mut reader,
        &format!("SELECT pageviews::text AS json FROM deck_stats WHERE deck_id = '{id}'"),
    )
    .await
    .unwrap();
    assert_eq!(stored_views, json!(1));

    // 20 PATCHes without If-Match at once over both instances: 20 contiguous versions.
    let patches = (0..20).map(|n| {
        let request = client
            .patch(instances[n % 2].api(&format!("/games/mtg/decks/{id}")))
            .bearer_auth(&token)
            .json(&json!({"notes": format!("edit {n}")}));
        async move { json_of(request.send().await.unwrap()).await }
    });
    let mut versions: Vec<i64> = futures_util::future::join_all(patches)
        .await
        .into_iter()
        .map(|(status, body)| {
            assert_eq!(status, StatusCode::OK, "{body}");
            body["version"].as_i64().unwrap()
        })
        .collect();
    versions.sort_unstable();
    assert_eq!(versions, (2..=21).collect::<Vec<_>>());

    let expected_history: Vec<(i64, String)> = std::iter::once((1, "create".to_owned()))
        .chain((2..=21).map(|version| (version, "update".to_owned())))
        .collect();
    for instance in &instances {
        assert_eq!(history(instance, &id).await, expected_history);
        let response = client
            .get(instance.api(&format!("/games/mtg/decks/{id}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.headers()["etag"], "\"21\"");
        let (_, deck) = json_of(response).await;
        assert_eq!(deck["views"], 1, "{deck}");
    }
}

/// Pretty logs are coloured only on a terminal: written to a file, as here (or a pipe, or a
/// log collector), they carry no escape codes.
#[tokio::test]
async fn pretty_logs_written_to_a_file_carry_no_colour_codes() {
    let address = free_address();
    let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pretty-uncoloured.log");
    let child = Command::new(BINARY)
        .arg("serve")
        .env_remove("DATABASE_URL")
        .env_remove("NO_COLOR")
        .env("DECKHAND_BIND", address.to_string())
        .env("DECKHAND_LOG_FORMAT", "pretty")
        .env("DECKHAND_WORKERS", "1")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start deckhand serve");
    // On the memory store: no database needed; `Server` only adds the wait and the kill.
    let mut server = Server {
        child,
        address,
        log,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !reqwest::get(server.url("/healthz"))
        .await
        .is_ok_and(|response| response.status() == StatusCode::OK)
    {
        assert!(
            Instant::now() < deadline,
            "deckhand serve never answered; its log: {}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.terminate();
    server.exited(Duration::from_secs(30)).await;
    let text = server.log();
    assert!(text.contains("in-memory store"), "{text}");
    assert!(!text.contains('\u{1b}'), "escape codes in a file: {text:?}");
}

/// A webhook receiver on loopback in a thread of its own: answers every request 204 and keeps
/// its request line.
fn plain_receiver() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream);
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut length = 0;
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = header.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            kept.lock().unwrap().push(request_line.trim().to_owned());
            let _ = reader
                .into_inner()
                .write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
        }
    });
    (url, received)
}

/// The webhook sender trusts nothing of its environment (contract "Webhooks"): with every
/// proxy variable reqwest reads pointing at a listener of ours, a ping still goes straight to
/// its receiver, and the listener is never connected to. A proxy would look the host up again,
/// behind the address check, and reach whatever that lookup says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_webhook_sender_ignores_the_proxy_settings_of_its_environment() {
    let db = TestDb::new().await;
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    proxy.set_nonblocking(true).unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let (receiver_url, received) = plain_receiver();
    let mut env = vec![
        ("DECKHAND_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("NO_PROXY", ""),
        ("no_proxy", ""),
    ];
    for name in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        env.push((name, proxy_url.as_str()));
    }
    let server = Server::start("proxied", db.url(), &env).await;
    admin(db.url(), &["user", "create", "--username", "owner"]);
    admin(
        db.url(),
        &[
            "partner",
            "create",
            "--slug",
            "acme",
            "--owner",
            "owner",
            "--scopes",
            "decks:read",
            "--game-scopes",
            "mtg",
        ],
    );
    let key = admin(db.url(), &["api-key", "create", "--partner", "acme"]);
    let key = key["key"].as_str().unwrap();
    let client = reqwest::Client::new();
    let (status, webhook) = json_of(
        client
            .post(server.api("/webhooks"))
            .header("x-api-key", key)
            .json(&json!({"url": receiver_url}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{webhook}");
    let id = webhook["id"].as_str().unwrap();
    let (status, ping) = json_of(
        client
            .post(server.api(&format!("/webhooks/{id}/ping")))
            .header("x-api-key", key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{ping}");

    let deadline = Instant::now() + Duration::from_secs(15);
    while received.lock().unwrap().is_empty() {
        assert!(
            Instant::now() < deadline,
            "the ping never reached its receiver; its log: {}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(*received.lock().unwrap(), ["POST /hook HTTP/1.1"]);
    assert!(
        matches!(proxy.accept(), Err(error) if error.kind() == std::io::ErrorKind::WouldBlock),
        "the proxy was connected to"
    );
}
