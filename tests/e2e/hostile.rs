//! Hostile clients over real sockets: oversized, malformed, slow and idle. Each test checks the
//! answer a client can act on (status and envelope) and that the server still serves others
//! afterwards. Timeouts are short here so the tests stay fast; the defaults are in the README.

use std::time::{Duration, Instant};

use deckhand_testkit::app::{ConnectionLimits, Store, TestApp};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::{assert_envelope, send};

/// Short timeouts, so a slow client is cut off in well under a second.
fn short_limits() -> ConnectionLimits {
    ConnectionLimits {
        client_request_timeout_ms: 600,
        client_disconnect_timeout_ms: 200,
        keep_alive_secs: 30,
        ..ConnectionLimits::default()
    }
}

async fn hostile_app(store: Store) -> TestApp {
    TestApp::builder(store)
        .limits(short_limits())
        .rate_limits(None)
        .start()
        .await
}

fn address(app: &TestApp) -> String {
    app.base_url.trim_start_matches("http://").to_owned()
}

/// A response read off a raw socket.
#[derive(Debug)]
struct Raw {
    status: u16,
    head: String,
    body: Value,
}

/// Sends `request` as raw bytes, reading the answer at the same time (the server may answer
/// and close before it has read everything), until the server closes or `wait` passes.
async fn raw(app: &TestApp, request: Vec<u8>, wait: Duration) -> Raw {
    let stream = TcpStream::connect(address(app)).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let writing = tokio::spawn(async move {
        // The server may stop reading (and close) midway: that is its answer, not an error.
        for chunk in request.chunks(64 * 1024) {
            if writer.write_all(chunk).await.is_err() {
                break;
            }
        }
        writer
    });
    let mut answer = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let deadline = Instant::now() + wait;
    while let Ok(Ok(read)) =
        tokio::time::timeout_at(deadline.into(), reader.read(&mut buffer)).await
    {
        if read == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..read]);
        if complete(&answer) {
            break;
        }
    }
    drop(writing);
    parse(&answer)
}

/// Whether `answer` holds a whole response with a `content-length` body.
fn complete(answer: &[u8]) -> bool {
    let text = String::from_utf8_lossy(answer);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return false;
    };
    head.lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_owned)
        })
        .and_then(|length| length.trim().parse::<usize>().ok())
        .is_some_and(|length| body.len() >= length)
}

fn parse(answer: &[u8]) -> Raw {
    let text = String::from_utf8_lossy(answer).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no complete response: {text:?}"));
    let status = head
        .get(9..12)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head:?}"));
    let body = serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON: {text:?}"));
    Raw {
        status,
        head: head.to_ascii_lowercase(),
        body,
    }
}

/// The refusal a client can act on: the status, the envelope, a request id.
fn assert_refused(raw: &Raw, status: u16, code: &str) {
    assert_eq!(raw.status, status, "{raw:?}");
    assert_envelope(&raw.body, code);
    assert!(raw.head.contains("x-request-id: "), "{}", raw.head);
    assert!(
        raw.head.contains("content-type: application/json"),
        "{}",
        raw.head
    );
}

/// The server still answers a plain request promptly.
async fn assert_still_serving(app: &TestApp) {
    let started = Instant::now();
    let (status, _, body) = send(app.client.get(app.api("/_probe/public"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
}

fn get_request(target: &[u8], extra_headers: &[u8]) -> Vec<u8> {
    let mut request = b"GET ".to_vec();
    request.extend_from_slice(target);
    request.extend_from_slice(b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    request.extend_from_slice(extra_headers);
    request.extend_from_slice(b"\r\n");
    request
}

const WAIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn bodies_over_the_limit_are_413_by_length_and_when_chunked() {
    let app = hostile_app(Store::Memory).await;
    let (_, token) = app
        .user_with_token("mallory", "decks:read decks:write")
        .await;
    let head = |framing: &str| {
        format!(
            "POST /api/public/v1/games/mtg/decks HTTP/1.1\r\nHost: localhost\r\n\
             Authorization: Bearer {token}\r\nContent-Type: application/json\r\n{framing}\r\n"
        )
        .into_bytes()
    };
    // Declared: refused before a byte of the body is read.
    let mut declared = head("Content-Length: 5000000\r\n");
    declared.extend_from_slice(&[b' '; 1024]);
    let answer = raw(&app, declared, WAIT).await;
    assert_refused(&answer, 413, "SERVICE_PAYLOAD_TOO_LARGE");

    // Chunked: refused once the count passes 4 MiB.
    let mut chunked = head("Transfer-Encoding: chunked\r\n");
    let chunk = format!("{:x}\r\n{}\r\n", 64 * 1024, " ".repeat(64 * 1024));
    for _ in 0..80 {
        chunked.extend_from_slice(chunk.as_bytes());
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let answer = raw(&app, chunked, WAIT).await;
    assert_refused(&answer, 413, "SERVICE_PAYLOAD_TOO_LARGE");

    let (status, _, body) = send(
        app.client
            .get(app.api("/games/mtg/decks"))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["data"], json!([]), "nothing was created");
    assert_still_serving(&app).await;
}

#[tokio::test]
async fn json_nested_ten_thousand_deep_is_a_400() {
    let app = hostile_app(Store::Memory).await;
    let (_, token) = app
        .user_with_token("mallory", "decks:read decks:write")
        .await;
    let deep = format!(
        "{{\"name\":\"x\",\"cards\":{}{}}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(deep),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    assert_still_serving(&app).await;
}

#[tokio::test]
async fn a_megabyte_query_or_header_is_431_with_the_envelope() {
    let app = hostile_app(Store::Memory).await;
    let megabyte = "a".repeat(1 << 20);
    let query = format!("/api/public/v1/games/mtg/decks?q={megabyte}");
    let answer = raw(&app, get_request(query.as_bytes(), b""), WAIT).await;
    assert_refused(&answer, 431, "SERVICE_VALIDATION_ERROR");

    let header = format!("X-Padding: {megabyte}\r\n");
    let answer = raw(
        &app,
        get_request(b"/api/public/v1/_probe/public", header.as_bytes()),
        WAIT,
    )
    .await;
    assert_refused(&answer, 431, "SERVICE_VALIDATION_ERROR");
    assert_still_serving(&app).await;
}

#[tokio::test]
async fn invalid_utf8_and_control_characters_in_the_request_are_400_with_the_envelope() {
    let app = hostile_app(Store::Memory).await;
    for request in [
        get_request(b"/api/public/v1/games/mtg/decks?q=\xff\xfe", b""),
        get_request(b"/api/public/v1/games/\xc3\x28/decks", b""),
        get_request(b"/api/public/v1/_probe/public", b"If-Match: \"1\x01\"\r\n"),
    ] {
        let answer = raw(&app, request, WAIT).await;
        assert_refused(&answer, 400, "SERVICE_VALIDATION_ERROR");
    }
    // Percent-encoded, invalid UTF-8 is only text that matches nothing.
    let (status, _, body) = send(app.client.get(app.api("/games/mtg/decks?q=%FF%FE"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _, body) = send(app.client.get(app.api("/games/%FF/decks"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_envelope(&body, "SERVICE_NOT_FOUND");
    assert_still_serving(&app).await;
}

/// Every way text reaches the store, with a NUL in it: refused naming the field (or 404 for a
/// path segment), on PostgreSQL, which cannot store one.
#[tokio::test]
async fn nul_characters_are_refused_wherever_text_arrives() {
    let app = hostile_app(Store::Postgres).await;
    let (_, token) = app
        .user_with_token(
            "mallory",
            "decks:read decks:write sideboards:read sideboards:write",
        )
        .await;
    let (status, _, deck) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .json(&json!({"name": "Clean", "visibility": ["public"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{deck}");
    let deck_id = deck["id"].as_str().unwrap().to_owned();

    for path in [
        "/games/mt%00g/decks",
        "/games/mtg%00/formats",
        &format!("/games/mtg/decks/{deck_id}%00"),
    ] {
        let (status, _, body) = send(app.client.get(app.api(path))).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert_envelope(&body, "SERVICE_NOT_FOUND");
    }

    for (path, field) in [
        ("/games/mtg/decks?q=%00", "q"),
        ("/games/mtg/decks?sort=x%00", "sort"),
        ("/games/mtg/sideboard-guides?q=a%00b", "q"),
        ("/games/mtg/sideboard-guides/my?q=%00", "q"),
        (
            &format!("/games/mtg/decks/{deck_id}?expand=%00") as &str,
            "expand",
        ),
    ] {
        for authenticated in [false, true] {
            let mut request = app.client.get(app.api(path));
            if authenticated {
                request = request.bearer_auth(&token);
            }
            let (status, _, body) = send(request).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
            let details = assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
            assert_eq!(details["fields"][0]["field"], field, "{path}: {body}");
            assert_eq!(details["fields"][0]["code"], "nul_byte", "{path}: {body}");
        }
    }

    let bodies = [
        (
            "POST",
            "/games/mtg/decks".to_owned(),
            json!({"name": "a\u{0}b"}),
            "name",
        ),
        (
            "PATCH",
            format!("/games/mtg/decks/{deck_id}"),
            json!({"notes": "x\u{0}"}),
            "notes",
        ),
        (
            "POST",
            "/games/mtg/decks".to_owned(),
            json!({"name": "ok", "cards": [{"section": "mainboard", "quantity": 1, "name": "Isl\u{0}and"}]}),
            "cards[0].name",
        ),
        (
            "POST",
            "/games/mtg/cards/resolve".to_owned(),
            json!({"identifiers": [{"name": "Island"}, {"name": "\u{0}"}]}),
            "identifiers[1].name",
        ),
        (
            "PUT",
            format!("/games/mtg/decks/{deck_id}/guide"),
            json!({"content": "intro\u{0}"}),
            "content",
        ),
        (
            "POST",
            "/games/mtg/decks/export/text".to_owned(),
            json!({"deck_payload": {"text": "1 Island\u{0}"}}),
            "deck_payload.text",
        ),
        (
            "POST",
            "/games/mtg/sideboard-guides".to_owned(),
            json!({"name": "g\u{0}"}),
            "name",
        ),
    ];
    for (method, path, body, field) in bodies {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let (status, _, answer) = send(
            app.client
                .request(method, app.api(&path))
                .bearer_auth(&token)
                .json(&body),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {body}: {answer}");
        let details = assert_envelope(&answer, "SERVICE_VALIDATION_ERROR");
        assert_eq!(details["fields"][0]["field"], field, "{path}: {answer}");
    }
    // Forms say it with %00; multipart parts the same way.
    let (status, _, answer) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .header("content-type", "application/x-www-form-urlencoded")
            .body("name=a%00b"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["details"]["fields"][0]["field"], "name");
    let form = reqwest::multipart::Form::new().text("name", "a\u{0}b");
    let (status, _, answer) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .multipart(form),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["details"]["fields"][0]["field"], "name");

    let (status, _, list) = send(
        app.client
            .get(app.api("/games/mtg/decks"))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        list["data"].as_array().unwrap().len(),
        1,
        "nothing else was created"
    );
    let (_, _, deck) = send(
        app.client
            .get(app.api(&format!("/games/mtg/decks/{deck_id}"))),
    )
    .await;
    assert_eq!(deck["notes"], "", "nothing was changed: {deck}");
    let (_, _, versions) = send(
        app.client
            .get(app.api(&format!("/games/mtg/decks/{deck_id}/versions")))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(versions.as_array().map(Vec::len), Some(1), "{versions}");
    assert_still_serving(&app).await;
}

#[tokio::test]
async fn json_with_trailing_data_creates_nothing() {
    let app = hostile_app(Store::Memory).await;
    let (_, token) = app
        .user_with_token("mallory", "decks:read decks:write")
        .await;
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(r#"{"name":"u"} xyz"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    let (_, _, list) = send(
        app.client
            .get(app.api("/games/mtg/decks"))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(list["data"], json!([]));
}

#[tokio::test]
async fn duplicate_and_conflicting_headers_are_refused() {
    let app = hostile_app(Store::Memory).await;
    let (_, token) = app
        .user_with_token("mallory", "decks:read decks:write")
        .await;
    // Two lengths, or a length and chunking: the body's end is ambiguous (request smuggling).
    for framing in [
        "Content-Length: 2\r\nContent-Length: 20\r\n",
        "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
    ] {
        let request = format!(
            "POST /api/public/v1/games/mtg/decks HTTP/1.1\r\nHost: localhost\r\n\
             Authorization: Bearer {token}\r\nContent-Type: application/json\r\n{framing}\r\n{{}}"
        );
        let answer = raw(&app, request.into_bytes(), WAIT).await;
        assert_refused(&answer, 400, "SERVICE_VALIDATION_ERROR");
    }
    // Two credentials of one kind: neither is believed.
    let (status, _, body) = send(
        app.client
            .get(app.api("/_probe/user"))
            .header("authorization", format!("Bearer {token}"))
            .header("authorization", "Bearer dh_pat_other"),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
    // Two preconditions that disagree: the deck is not changed.
    let (_, _, deck) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .json(&json!({"name": "Guarded"})),
    )
    .await;
    let url = app.api(&format!(
        "/games/mtg/decks/{}",
        deck["id"].as_str().unwrap()
    ));
    let (status, _, body) = send(
        app.client
            .patch(&url)
            .bearer_auth(&token)
            .header("if-match", "\"1\"")
            .header("if-match", "\"7\"")
            .json(&json!({"notes": "changed"})),
    )
    .await;
    assert_eq!(status, StatusCode::PRECONDITION_FAILED, "{body}");
    assert_envelope(&body, "SERVICE_PRECONDITION_FAILED");
    let (_, _, after) = send(app.client.get(&url).bearer_auth(&token)).await;
    assert_eq!(after["notes"], "", "{after}");
    assert_still_serving(&app).await;
}

/// Sends `bytes` one a second, listening for the answer meanwhile; returns how long the server
/// let it go on, and its answer.
async fn dribble(mut stream: TcpStream, bytes: &[u8]) -> (Duration, Raw) {
    let started = Instant::now();
    let mut answer = Vec::new();
    for byte in bytes {
        if stream.write_all(&[*byte]).await.is_err() {
            break;
        }
        let mut buffer = [0u8; 4096];
        if let Ok(Ok(read)) =
            tokio::time::timeout(Duration::from_secs(1), stream.read(&mut buffer)).await
        {
            answer.extend_from_slice(&buffer[..read]);
            if read == 0 || complete(&answer) {
                break;
            }
        }
    }
    (started.elapsed(), parse(&answer))
}

#[tokio::test]
async fn a_client_sending_a_byte_a_second_times_out_without_pinning_the_worker() {
    // One worker: if a slow client held it, nobody else would be served.
    let app = hostile_app(Store::Memory).await;
    let (_, token) = app
        .user_with_token("mallory", "decks:read decks:write")
        .await;
    let slow_head = async {
        let stream = TcpStream::connect(address(&app)).await.unwrap();
        dribble(
            stream,
            b"GET /api/public/v1/_probe/public HTTP/1.1\r\nHost: x\r\n\r\n",
        )
        .await
    };
    let slow_body = async {
        let mut stream = TcpStream::connect(address(&app)).await.unwrap();
        let head = format!(
            "POST /api/public/v1/games/mtg/decks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nContent-Length: 20\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        dribble(stream, br#"{"name":"slowpoke"}"#).await
    };
    let others = async {
        // Meanwhile, other clients are served at once.
        for _ in 0..3 {
            assert_still_serving(&app).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    };
    let ((head_took, head), (body_took, body), ()) = tokio::join!(slow_head, slow_body, others);
    assert_refused(&head, 408, "SERVICE_REQUEST_TIMEOUT");
    assert_refused(&body, 408, "SERVICE_REQUEST_TIMEOUT");
    for took in [head_took, body_took] {
        assert!(
            took < Duration::from_secs(4),
            "the timeout is 0.6 s, took {took:?}"
        );
    }
    let (_, _, list) = send(
        app.client
            .get(app.api("/games/mtg/decks"))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(list["data"], json!([]), "the slow body created nothing");
    assert_still_serving(&app).await;
}

#[tokio::test]
async fn a_thousand_idle_keep_alive_connections_leave_room_for_others() {
    let app = hostile_app(Store::Memory).await;
    let mut idle = Vec::new();
    for _ in 0..1000 {
        let mut stream = TcpStream::connect(address(&app)).await.unwrap();
        // One request each, then silence with the connection kept alive.
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        idle.push(stream);
    }
    for stream in &mut idle {
        let mut buffer = [0u8; 1024];
        let read = stream.read(&mut buffer).await.unwrap();
        assert!(buffer[..read].starts_with(b"HTTP/1.1 200"));
    }
    assert_still_serving(&app).await;
    let (status, _, _) = send(app.client.get(app.api("/games/mtg/decks"))).await;
    assert_eq!(status, StatusCode::OK);
    drop(idle);
    assert_still_serving(&app).await;
}

/// Keep it so: what a hostile client tried that held when the server was first attacked.
#[tokio::test]
async fn traversal_paging_extremes_and_sql_metacharacters_change_nothing() {
    let app = hostile_app(Store::Postgres).await;
    let (_, token) = app
        .user_with_token("mallory", "decks:read decks:write")
        .await;
    for name in [
        "100% Burn",
        "Mono_Red",
        "Back\\slash",
        "Robert'); DROP TABLE decks;--",
    ] {
        let (status, _, body) = send(
            app.client
                .post(app.api("/games/mtg/decks"))
                .bearer_auth(&token)
                .json(&json!({"name": name, "visibility": ["public"]})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    // Metacharacters of LIKE and of SQL match themselves, and only themselves.
    for (q, expected) in [
        ("%25", vec!["100% Burn"]),
        ("_", vec!["Mono_Red"]),
        ("%5C", vec!["Back\\slash"]),
        ("%27)%3B%20DROP", vec!["Robert'); DROP TABLE decks;--"]),
        ("%27%20OR%20%271%27%3D%271", vec![]),
    ] {
        let (status, _, body) =
            send(app.client.get(app.api(&format!("/games/mtg/decks?q={q}")))).await;
        assert_eq!(status, StatusCode::OK, "{q}: {body}");
        let names: Vec<&str> = body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|deck| deck["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, expected, "q={q}");
    }
    for query in [
        "page=0",
        "page=-1",
        "limit=0",
        "limit=101",
        "page=99999999999999999999999",
        "limit=-9223372036854775808",
        "page=10001&limit=1",
        "page=101&limit=100",
        "page=1.5",
    ] {
        let (status, _, body) = send(
            app.client
                .get(app.api(&format!("/games/mtg/decks?{query}"))),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    }
    let (status, _, body) = send(
        app.client
            .get(app.api("/games/mtg/decks?page=100&limit=100")),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the last page of the window: {body}"
    );
    assert_eq!(body["data"], json!([]));
    for path in [
        "/games/mtg/decks/../../../../etc/passwd",
        "/games/mtg/decks/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/games/..%2f..%2fmetrics/decks",
        "/games/mtg/decks/..%5c..%5cwindows",
    ] {
        let (status, _, body) = send(app.client.get(app.api(path))).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert_envelope(&body, "SERVICE_NOT_FOUND");
    }
    let (_, _, list) = send(app.client.get(app.api("/games/mtg/decks"))).await;
    assert_eq!(
        list["data"].as_array().unwrap().len(),
        4,
        "the table is intact"
    );
}

#[tokio::test]
async fn malformed_credentials_are_401_with_the_envelope() {
    let app = hostile_app(Store::Memory).await;
    let long = format!("Bearer dh_pat_{}", "A".repeat(8000));
    for value in [
        "Bearer",
        "Bearer ",
        "Bearer a b c",
        "bearer\tdh_pat_x",
        "Basic !!!",
        "Digest username=x",
        &long,
    ] {
        let (status, _, body) = send(
            app.client
                .get(app.api("/_probe/user"))
                .header("authorization", value),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{value:.40}: {body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .starts_with("SERVICE_AUTHENTICATION"),
            "{body}"
        );
    }
    // Bytes that are not text in a credential: refused, not crashed on.
    let answer = raw(
        &app,
        get_request(
            b"/api/public/v1/_probe/user",
            b"Authorization: Bearer dh_pat_\xff\xfe\r\n",
        ),
        WAIT,
    )
    .await;
    assert_eq!(answer.status, 401, "{answer:?}");
    assert_still_serving(&app).await;
}

#[tokio::test]
async fn a_forwarded_header_from_an_untrusted_peer_does_not_escape_the_ip_quota() {
    let app = TestApp::builder(Store::Memory)
        .rate_limits(Some(&[("anonymous", 3), ("user", 100), ("partner", 100)]))
        .start()
        .await;
    let mut statuses = Vec::new();
    for n in 0..5 {
        let (status, _, _) = send(
            app.client
                .get(app.api("/_probe/public"))
                .header("x-forwarded-for", format!("198.51.100.{n}"))
                .header("forwarded", format!("for=198.51.100.{n}"))
                .header("x-real-ip", format!("198.51.100.{n}")),
        )
        .await;
        statuses.push(status.as_u16());
    }
    assert_eq!(statuses, [200, 200, 200, 429, 429]);
}

#[tokio::test]
async fn oauth_forms_are_capped_in_size_and_parameter_count() {
    let app = hostile_app(Store::Memory).await;
    let world = crate::oauth_support::world(&app).await;
    let assert_oauth_refusal = |raw: &Raw, status: u16| {
        assert_eq!(raw.status, status, "{raw:?}");
        assert_eq!(raw.body["error"], "invalid_request", "{raw:?}");
        assert!(raw.body["error_description"].is_string(), "{raw:?}");
        assert!(raw.head.contains("cache-control: no-store"), "{}", raw.head);
    };
    for endpoint in ["token", "introspect", "revoke"] {
        let head = |framing: &str| {
            format!(
                "POST /api/public/v1/oauth/{endpoint} HTTP/1.1\r\nHost: localhost\r\n\
                 Content-Type: application/x-www-form-urlencoded\r\n{framing}\r\n"
            )
            .into_bytes()
        };
        // Declared over 64 KiB: refused before the body is read.
        let mut declared = head("Content-Length: 70000\r\n");
        declared.extend_from_slice(&[b'a'; 1024]);
        assert_oauth_refusal(&raw(&app, declared, WAIT).await, 413);
        // Chunked: refused once the count passes 64 KiB.
        let mut chunked = head("Transfer-Encoding: chunked\r\n");
        let chunk = format!("{:x}\r\n{}\r\n", 16 * 1024, "a".repeat(16 * 1024));
        for _ in 0..5 {
            chunked.extend_from_slice(chunk.as_bytes());
        }
        chunked.extend_from_slice(b"0\r\n\r\n");
        assert_oauth_refusal(&raw(&app, chunked, WAIT).await, 413);
        // Small, but a hundred parameters: invalid_request.
        let many: String = (0..100).map(|i| format!("p{i}=x&")).collect();
        let (status, headers, body) = send(
            app.client
                .post(app.api(&format!("/oauth/{endpoint}")))
                .basic_auth(&world.client_id, Some(&world.client_secret))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(format!("{many}token=x&grant_type=refresh_token")),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{endpoint}: {body}");
        assert_eq!(body["error"], "invalid_request", "{body}");
        assert_eq!(headers["cache-control"], "no-store");
    }
    // The consent form: an HTML page saying so, not a map of megabytes.
    let response = crate::oauth_support::browserless()
        .post(app.api("/oauth/authorize"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("username=alice&password={}", "a".repeat(70_000)))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    // A token request of ordinary size still works.
    let code = crate::oauth_support::approve(
        &app,
        &crate::oauth_support::authorize_query(&world.client_id, "decks:read", "s"),
    )
    .await;
    crate::oauth_support::exchange(&app, &world, &code).await;
    assert_still_serving(&app).await;
}
