//! The API gate against other spellings of the same path. The router matches a path whose
//! percent-encoded bytes are decoded (all but `%`, `/` and `+`), so every spelling the router
//! serves from the API must meet the gate too: each lane's quota, the `RateLimit-*` headers,
//! 429, authentication, the revoked-token block and the NUL refusal. A partner signature still
//! covers the path exactly as sent.

use std::time::{SystemTime, UNIX_EPOCH};

use deckhand_testkit::app::{Store, TestApp};
use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, StatusCode};
use serde_json::Value;

use crate::oauth_support::{admin, approve, authorize_query, exchange, post_form, world};
use crate::support::{assert_envelope, send};

/// The deck list, spelled as sent by a plain client and by three that percent-encode
/// unreserved characters of it (RFC 3986 says they are equivalent).
const DECK_LISTS: [&str; 4] = [
    "/api/public/v1/games/mtg/decks",
    "/%61pi/public/v1/games/mtg/decks",
    "/api/public/v1/g%61mes/mtg/decks",
    "/api/%70ublic/v%31/games/%6d%74%67/decks",
];

/// `path` under the API with an encoded slash inside a segment: no route has it, but it is
/// still an API path, so the gate answers for it.
const ENCODED_SLASH: &str = "/%61pi/public/v1/games/mtg%2Fdecks";

fn get(app: &TestApp, path: &str) -> RequestBuilder {
    app.client.get(app.url(path))
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .unwrap_or_else(|| panic!("no {name}: {headers:?}"))
        .to_str()
        .unwrap()
        .to_owned()
}

/// Sends the four spellings of the deck list and then the encoded slash, with `credentials`
/// added to each: the quota (4) counts every spelling, with the headers, and the fifth request
/// is a 429 whatever its spelling.
async fn assert_quota_counts_every_spelling(
    app: &TestApp,
    lane: &str,
    credentials: impl Fn(RequestBuilder, &str) -> RequestBuilder,
) {
    for (sent, path) in DECK_LISTS.iter().enumerate() {
        let (status, headers, body) = send(credentials(get(app, path), path)).await;
        assert_eq!(status, StatusCode::OK, "{lane} {path}: {body}");
        assert!(body["data"].is_array(), "{lane} {path}: {body}");
        assert_eq!(header(&headers, "ratelimit-limit"), "4", "{lane} {path}");
        assert_eq!(
            header(&headers, "ratelimit-remaining"),
            (3 - sent).to_string(),
            "{lane} {path}"
        );
    }
    for path in [ENCODED_SLASH, DECK_LISTS[1], DECK_LISTS[0]] {
        let (status, headers, body) = send(credentials(get(app, path), path)).await;
        assert_eq!(
            status,
            StatusCode::TOO_MANY_REQUESTS,
            "{lane} {path}: {body}"
        );
        assert_envelope(&body, "SERVICE_RATE_LIMITED");
        assert_eq!(
            header(&headers, "ratelimit-remaining"),
            "0",
            "{lane} {path}"
        );
        assert!(headers.contains_key("retry-after"), "{lane} {path}");
    }
}

/// `admin sign` headers for a GET of `path` (exactly as it will be sent) by partner `signer`.
async fn signature(app: &TestApp, secret: &str, path: &str) -> Vec<(String, String)> {
    let timestamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .to_string();
    let output = admin(
        app,
        &[
            "sign",
            "--partner",
            "signer",
            "--secret",
            secret,
            "--method",
            "GET",
            "--path",
            path,
            "--query",
            "",
            "--body",
            "",
            "--timestamp",
            &timestamp,
        ],
    )
    .await;
    output["headers"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, value)| (name.clone(), value.as_str().unwrap().to_owned()))
        .collect()
}

fn with_headers(mut request: RequestBuilder, headers: &[(String, String)]) -> RequestBuilder {
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    request
}

#[tokio::test]
async fn every_lane_counts_encoded_paths_against_its_quota() {
    let app = TestApp::builder(Store::Memory)
        .rate_limits(Some(&[("anonymous", 4), ("user", 4), ("partner", 4)]))
        .start()
        .await;
    // alice, partner acme (tier gold, which uses the partner quota) and its OAuth clients.
    let world = world(&app).await;
    let (_, pat) = app.user_with_token("bob", "decks:read").await;
    let key = admin(&app, &["api-key", "create", "--partner", "acme"]).await;
    let key = key["key"].as_str().unwrap().to_owned();
    let signer = admin(
        &app,
        &[
            "partner",
            "create",
            "--slug",
            "signer",
            "--owner",
            "alice",
            "--scopes",
            "decks:read",
            "--game-scopes",
            "mtg",
        ],
    )
    .await;
    let secret = signer["secret"].as_str().unwrap().to_owned();
    let code = approve(&app, &authorize_query(&world.client_id, "decks:read", "s")).await;
    let tokens = exchange(&app, &world, &code).await;
    let access = tokens["access_token"].as_str().unwrap().to_owned();

    assert_quota_counts_every_spelling(&app, "PAT", |request, _| request.bearer_auth(&pat)).await;
    assert_quota_counts_every_spelling(&app, "API key", |request, _| {
        request.header("x-api-key", &key)
    })
    .await;
    assert_quota_counts_every_spelling(&app, "OAuth", |request, _| request.bearer_auth(&access))
        .await;
    // A signature covers the path as sent: each spelling is signed as it goes on the wire.
    let mut signed = Vec::new();
    for path in DECK_LISTS
        .iter()
        .chain([&ENCODED_SLASH, &DECK_LISTS[1], &DECK_LISTS[0]])
    {
        signed.push(((*path).to_owned(), signature(&app, &secret, path).await));
    }
    assert_quota_counts_every_spelling(&app, "signature", |request, path| {
        let headers = &signed.iter().find(|(signed, _)| signed == path).unwrap().1;
        with_headers(request, headers)
    })
    .await;
    // Anonymous last: failed credentials below would count against this IP.
    assert_quota_counts_every_spelling(&app, "anonymous", |request, _| request).await;
}

#[tokio::test]
async fn a_signature_covers_the_path_exactly_as_sent() {
    let app = TestApp::builder(Store::Memory)
        .rate_limits(None)
        .start()
        .await;
    admin(&app, &["user", "create", "--username", "alice"]).await;
    let signer = admin(
        &app,
        &[
            "partner",
            "create",
            "--slug",
            "signer",
            "--owner",
            "alice",
            "--scopes",
            "decks:read",
            "--game-scopes",
            "mtg",
        ],
    )
    .await;
    let secret = signer["secret"].as_str().unwrap().to_owned();
    let encoded = DECK_LISTS[1];
    // Signed as sent: accepted.
    let headers = signature(&app, &secret, encoded).await;
    let (status, _, body) = send(with_headers(get(&app, encoded), &headers)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Signed over the decoded spelling, sent encoded (and the reverse): refused.
    for (signed, sent) in [(DECK_LISTS[0], encoded), (encoded, DECK_LISTS[0])] {
        let headers = signature(&app, &secret, signed).await;
        let (status, _, body) = send(with_headers(get(&app, sent), &headers)).await;
        assert_eq!(
            status,
            StatusCode::UNAUTHORIZED,
            "{signed} sent as {sent}: {body}"
        );
        assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
    }
}

#[tokio::test]
async fn encoded_paths_meet_authentication_and_the_nul_refusal() {
    let app = TestApp::memory().await;
    for path in DECK_LISTS {
        // Credentials are checked by the gate before any handler, with the headers.
        let (status, headers, body) = send(get(&app, path).bearer_auth("dh_pat_nonsense")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}: {body}");
        assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
        assert!(headers.contains_key("ratelimit-limit"), "{path}");
        // A NUL in the query: 400 naming the field.
        let (status, _, body) = send(get(&app, &format!("{path}?q=a%00b"))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        let details = assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
        assert_eq!(details["fields"][0]["field"], "q", "{body}");
        assert_eq!(details["fields"][0]["code"], "nul_byte", "{body}");
    }
    // A NUL in a segment of an encoded path: 404 from the gate.
    for path in [
        "/%61pi/public/v1/games/mt%00g/decks",
        "/api/public/v1/g%61mes/mtg%00/decks",
    ] {
        let (status, headers, body) = send(get(&app, path)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert_envelope(&body, "SERVICE_NOT_FOUND");
        assert!(!headers.contains_key("ratelimit-limit"), "{path}");
    }
    // An encoded slash is no separator: these reach no API route, and serve no list.
    for path in [
        ENCODED_SLASH,
        "/api%2Fpublic%2Fv1%2Fgames%2Fmtg%2Fdecks",
        "/%61pi/public/v1%2Fgames/mtg/decks",
    ] {
        let (status, _, body) = send(get(&app, path)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert_envelope(&body, "SERVICE_NOT_FOUND");
    }
}

#[tokio::test]
async fn revoked_token_abuse_closes_encoded_paths_too() {
    let app = TestApp::memory().await;
    let world = world(&app).await;
    let code = approve(&app, &authorize_query(&world.client_id, "decks:read", "s")).await;
    let tokens = exchange(&app, &world, &code).await;
    let revoked = tokens["access_token"].as_str().unwrap();
    post_form(
        &app,
        "/oauth/revoke",
        Some((&world.client_id, &world.client_secret)),
        &[("token", revoked)],
    )
    .await;
    // Uses through encoded spellings count...
    for n in 0..19 {
        let path = DECK_LISTS[1 + n % 3];
        let (status, _, body) = send(get(&app, path).bearer_auth(revoked)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}: {body}");
        assert_envelope(&body, "SERVICE_OAUTH2_TOKEN_REVOKED");
    }
    let (status, _, body) = send(get(&app, DECK_LISTS[2]).bearer_auth(revoked)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let details = assert_envelope(&body, "SERVICE_RATE_LIMITED");
    assert_eq!(details["window_seconds"], 600);
    // ...and the block holds for every spelling, with no credentials at all.
    for path in DECK_LISTS {
        let (status, _, body): (StatusCode, HeaderMap, Value) = send(get(&app, path)).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{path}: {body}");
    }
}
