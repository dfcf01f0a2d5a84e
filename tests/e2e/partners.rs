//! The partner lanes over HTTP, with partners, keys and signatures made through the admin
//! commands (`admin sign` computes signatures exactly as partners are told to).

use std::time::{SystemTime, UNIX_EPOCH};

use deckhand_testkit::app::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

const PROBE: &str = "/api/public/v1/_probe/partner";

struct Partner {
    owner_id: String,
    pat: String,
    secret: String,
    api_key: String,
    api_key_id: String,
}

/// User `alice` (PAT with decks:read and sideboards:read) owning partner `acme` (decks:read,
/// decks:write; game mtg; tier gold) with one API key.
async fn acme(app: &TestApp) -> Partner {
    let (owner_id, pat) = app
        .user_with_token("alice", "decks:read sideboards:read")
        .await;
    let created = app
        .admin(&[
            "partner",
            "create",
            "--slug",
            "acme",
            "--owner",
            "alice",
            "--scopes",
            "decks:read,decks:write",
            "--game-scopes",
            "mtg",
            "--tier",
            "gold",
        ])
        .await
        .unwrap();
    assert_eq!(created["slug"], "acme");
    assert_eq!(created["created_by"], owner_id.as_str());
    let secret = created["secret"].as_str().unwrap().to_owned();
    assert!(
        secret.starts_with("dh_ps_") && secret.len() == 49,
        "{secret}"
    );
    let key = app
        .admin(&["api-key", "create", "--partner", "acme"])
        .await
        .unwrap();
    Partner {
        owner_id,
        pat,
        secret,
        api_key: key["key"].as_str().unwrap().to_owned(),
        api_key_id: key["id"].as_str().unwrap().to_owned(),
    }
}

fn now() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap()
}

/// What to sign; by default a GET of the partner probe, now.
struct Signed<'a> {
    method: &'a str,
    path: &'a str,
    query: &'a str,
    body: &'a str,
    timestamp: i64,
    pat: Option<&'a str>,
}

impl Default for Signed<'_> {
    fn default() -> Self {
        Self {
            method: "GET",
            path: PROBE,
            query: "",
            body: "",
            timestamp: now(),
            pat: None,
        }
    }
}

async fn headers(app: &TestApp, secret: &str, signed: &Signed<'_>) -> Vec<(String, String)> {
    let timestamp = signed.timestamp.to_string();
    let mut args = vec![
        "sign",
        "--partner",
        "acme",
        "--secret",
        secret,
        "--method",
        signed.method,
        "--path",
        signed.path,
        "--query",
        signed.query,
        "--body",
        signed.body,
        "--timestamp",
        &timestamp,
    ];
    if let Some(pat) = signed.pat {
        args.extend(["--pat", pat]);
    }
    let output = app.admin(&args).await.unwrap();
    output["headers"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, value)| (name.clone(), value.as_str().unwrap().to_owned()))
        .collect()
}

/// Sends `method path?query` with `body` and the given headers.
async fn call(
    app: &TestApp,
    method: &str,
    path_and_query: &str,
    body: &str,
    headers: &[(String, String)],
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let mut request = app
        .client
        .request(
            Method::from_bytes(method.as_bytes()).unwrap(),
            app.url(path_and_query),
        )
        .body(body.to_owned());
    if !body.is_empty() {
        request = request.header("content-type", "application/json");
    }
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    send(request).await
}

fn assert_failed(outcome: &(StatusCode, reqwest::header::HeaderMap, Value), case: &str) {
    assert_eq!(outcome.0, StatusCode::UNAUTHORIZED, "{case}: {}", outcome.2);
    assert_envelope(&outcome.2, "SERVICE_AUTHENTICATION_FAILED");
}

#[tokio::test]
async fn signed_requests_and_api_keys_reach_the_partner_probe() {
    let app = TestApp::memory().await;
    let acme = acme(&app).await;
    let expected = json!({
        "caller": "partner:acme",
        "scopes": ["decks:read", "decks:write"],
        "game_scopes": ["mtg"],
        "tier": "gold",
    });

    let key = [("x-api-key".to_owned(), acme.api_key.clone())];
    let (status, _, body) = call(&app, "GET", PROBE, "", &key).await;
    assert_eq!((status, body), (StatusCode::OK, expected.clone()));

    // The same signed GET twice: safe methods may repeat a signature within its window.
    let signed = headers(&app, &acme.secret, &Signed::default()).await;
    for _ in 0..2 {
        let (status, _, body) = call(&app, "GET", PROBE, "", &signed).await;
        assert_eq!((status, body), (StatusCode::OK, expected.clone()));
    }

    // A query is signed as sent, percent-encoding kept.
    let query = "tag=caf%C3%A9&x=1";
    let with_query = headers(
        &app,
        &acme.secret,
        &Signed {
            query,
            ..Signed::default()
        },
    )
    .await;
    let (status, _, _) = call(&app, "GET", &format!("{PROBE}?{query}"), "", &with_query).await;
    assert_eq!(status, StatusCode::OK);

    // Signature + PAT acts for the user with the scopes both hold.
    let with_pat = headers(
        &app,
        &acme.secret,
        &Signed {
            path: "/api/public/v1/_probe/public",
            pat: Some(&acme.pat),
            ..Signed::default()
        },
    )
    .await;
    let (status, _, body) = call(&app, "GET", "/api/public/v1/_probe/public", "", &with_pat).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"caller": format!("partner:acme+user:{}", acme.owner_id), "scopes": ["decks:read"]})
    );
    // ... but the partner probe takes partner-only lanes.
    let with_pat_on_probe = headers(
        &app,
        &acme.secret,
        &Signed {
            pat: Some(&acme.pat),
            ..Signed::default()
        },
    )
    .await;
    assert_failed(
        &call(&app, "GET", PROBE, "", &with_pat_on_probe).await,
        "signature + PAT on the partner probe",
    );
    let pat_only = [("authorization".to_owned(), format!("Bearer {}", acme.pat))];
    assert_failed(
        &call(&app, "GET", PROBE, "", &pat_only).await,
        "PAT on the partner probe",
    );
    let (status, _, body) = call(&app, "GET", PROBE, "", &[]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_REQUIRED");
}

#[tokio::test]
async fn tampered_stale_and_malformed_signatures_are_refused() {
    let app = TestApp::memory().await;
    let acme = acme(&app).await;

    for (offset, case) in [(-301, "301 s old"), (301, "301 s ahead")] {
        let stale = headers(
            &app,
            &acme.secret,
            &Signed {
                timestamp: now() + offset,
                ..Signed::default()
            },
        )
        .await;
        assert_failed(&call(&app, "GET", PROBE, "", &stale).await, case);
    }

    let signed_query = headers(
        &app,
        &acme.secret,
        &Signed {
            query: "page=1",
            ..Signed::default()
        },
    )
    .await;
    assert_failed(
        &call(&app, "GET", &format!("{PROBE}?page=2"), "", &signed_query).await,
        "query changed",
    );
    assert_failed(
        &call(&app, "GET", PROBE, "", &signed_query).await,
        "query dropped",
    );
    let signed_path = headers(&app, &acme.secret, &Signed::default()).await;
    assert_failed(
        &call(
            &app,
            "GET",
            "/api/public/v1/_probe/public",
            "",
            &signed_path,
        )
        .await,
        "path changed",
    );

    // A body changed by one byte. POST has no route on the probe: a request that passes
    // authentication gets 405, one that does not gets 401.
    let body = r#"{"name":"Burn"}"#;
    let signed_post = headers(
        &app,
        &acme.secret,
        &Signed {
            method: "POST",
            body,
            ..Signed::default()
        },
    )
    .await;
    assert_failed(
        &call(&app, "POST", PROBE, r#"{"name":"Burm"}"#, &signed_post).await,
        "body changed",
    );

    let Some((_, good)) = signed_path.iter().find(|(name, _)| name == "X-Signature") else {
        panic!("no signature header");
    };
    let (prefix, hex) = good.rsplit_once('.').unwrap();
    let timestamp = prefix.strip_prefix("v1.").unwrap();
    let malformed = [
        format!("v2.{timestamp}.{hex}"),
        format!("v1.{timestamp}.{}", "zz".repeat(32)),
        format!("v1.{timestamp}.{}", &hex[..62]),
        format!("v1.{timestamp}.{hex}00"),
        format!("v1.{timestamp}.{}", hex.to_uppercase()),
        format!("v1.{hex}"),
        format!("v1..{hex}"),
        format!("{timestamp}.{hex}"),
        "v1".to_owned(),
    ];
    for signature in malformed {
        let sent = [
            ("x-partner-id".to_owned(), "acme".to_owned()),
            ("x-signature".to_owned(), signature.clone()),
        ];
        assert_failed(&call(&app, "GET", PROBE, "", &sent).await, &signature);
    }

    // One header without the other.
    let slug_only = [("x-partner-id".to_owned(), "acme".to_owned())];
    assert_failed(
        &call(&app, "GET", PROBE, "", &slug_only).await,
        "slug alone",
    );
    let signature_only = [("x-signature".to_owned(), good.clone())];
    assert_failed(
        &call(&app, "GET", PROBE, "", &signature_only).await,
        "signature alone",
    );

    // The right signature under another slug: an unknown partner.
    let unknown = [
        ("x-partner-id".to_owned(), "umbrella".to_owned()),
        ("x-signature".to_owned(), good.clone()),
    ];
    assert_failed(
        &call(&app, "GET", PROBE, "", &unknown).await,
        "unknown partner",
    );

    // An API key with a PAT, or with a signature.
    let key_and_pat = [
        ("x-api-key".to_owned(), acme.api_key.clone()),
        ("authorization".to_owned(), format!("Bearer {}", acme.pat)),
    ];
    assert_failed(
        &call(&app, "GET", PROBE, "", &key_and_pat).await,
        "API key + PAT",
    );
    let mut key_and_signature = signed_path.clone();
    key_and_signature.push(("x-api-key".to_owned(), acme.api_key.clone()));
    assert_failed(
        &call(&app, "GET", PROBE, "", &key_and_signature).await,
        "API key + signature",
    );
}

#[tokio::test]
async fn a_signed_post_is_accepted_once_across_the_shared_store_on_postgres() {
    let app = TestApp::postgres().await;
    let acme = acme(&app).await;
    let body = r#"{"name":"Burn"}"#;
    let signed = headers(
        &app,
        &acme.secret,
        &Signed {
            method: "POST",
            body,
            ..Signed::default()
        },
    )
    .await;
    // Authenticated (then 405: the probe has no POST), and recorded.
    let (status, _, first) = call(&app, "POST", PROBE, body, &signed).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{first}");
    // The replay is refused. The record lives in PostgreSQL, which every instance shares.
    let replay = call(&app, "POST", PROBE, body, &signed).await;
    assert_failed(&replay, "replayed POST");
}

#[tokio::test]
async fn revoked_keys_and_disabled_partners_stop_at_once_on_postgres() {
    let app = TestApp::postgres().await;
    let acme = acme(&app).await;
    let second = app
        .admin(&["api-key", "create", "--partner", "acme"])
        .await
        .unwrap();
    let revoked = app
        .admin(&["api-key", "revoke", "--id", &acme.api_key_id])
        .await
        .unwrap();
    assert_eq!(revoked, json!({"id": acme.api_key_id, "revoked": true}));
    let key = [("x-api-key".to_owned(), acme.api_key.clone())];
    assert_failed(&call(&app, "GET", PROBE, "", &key).await, "revoked API key");
    let other_key = [(
        "x-api-key".to_owned(),
        second["key"].as_str().unwrap().to_owned(),
    )];
    assert_eq!(
        call(&app, "GET", PROBE, "", &other_key).await.0,
        StatusCode::OK
    );

    let disabled = app
        .admin(&["partner", "disable", "--slug", "acme"])
        .await
        .unwrap();
    assert_eq!(disabled, json!({"slug": "acme", "active": false}));
    let signed = headers(&app, &acme.secret, &Signed::default()).await;
    assert_failed(
        &call(&app, "GET", PROBE, "", &signed).await,
        "disabled partner, signature",
    );
    assert_failed(
        &call(&app, "GET", PROBE, "", &other_key).await,
        "disabled partner, API key",
    );
}

#[tokio::test]
async fn a_tier_past_its_quota_gets_429_then_recovers() {
    // 60 per minute refills one request a second, so recovery is quick to observe.
    let app = TestApp::builder(deckhand_testkit::app::Store::Memory)
        .rate_limits(Some(&[("anonymous", 5), ("user", 100), ("partner", 60)]))
        .start()
        .await;
    let acme = acme(&app).await;
    let key = [("x-api-key".to_owned(), acme.api_key.clone())];
    // The partner's own tier (gold) has no quota: it uses the partner quota.
    let (status, headers, _) = call(&app, "GET", PROBE, "", &key).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["ratelimit-limit"], "60");
    assert_eq!(headers["ratelimit-remaining"], "59");
    assert_eq!(headers["ratelimit-reset"], "1");
    for _ in 0..59 {
        assert_eq!(call(&app, "GET", PROBE, "", &key).await.0, StatusCode::OK);
    }
    let (status, headers, body) = call(&app, "GET", PROBE, "", &key).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let details = assert_envelope(&body, "SERVICE_RATE_LIMITED");
    assert_eq!(details["limit"], 60);
    assert_eq!(details["window_seconds"], 60);
    let retry_after: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert_eq!(details["retry_after_seconds"], retry_after);
    assert_eq!(retry_after, 1);
    assert_eq!(headers["ratelimit-remaining"], "0");

    // Other callers have their own buckets.
    let (status, headers, _) = call(&app, "GET", "/api/public/v1/_probe/public", "", &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["ratelimit-limit"], "5");

    tokio::time::sleep(std::time::Duration::from_millis(1100 * retry_after)).await;
    let (status, _, _) = call(&app, "GET", PROBE, "", &key).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn anonymous_callers_are_limited_per_ip_and_limits_can_be_off() {
    let app = TestApp::builder(deckhand_testkit::app::Store::Memory)
        .rate_limits(Some(&[("anonymous", 2), ("user", 100), ("partner", 100)]))
        .start()
        .await;
    for _ in 0..2 {
        assert_eq!(
            call(&app, "GET", "/api/public/v1/_probe/public", "", &[])
                .await
                .0,
            StatusCode::OK
        );
    }
    // Failed credentials count against the IP too, and unknown routes carry the headers.
    let (status, headers, body) = call(&app, "GET", "/api/public/v1/nowhere", "", &[]).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert!(headers.contains_key("retry-after"));

    let off = TestApp::builder(deckhand_testkit::app::Store::Memory)
        .rate_limits(None)
        .start()
        .await;
    for _ in 0..3 {
        let (status, headers, _) = call(&off, "GET", "/api/public/v1/_probe/public", "", &[]).await;
        assert_eq!(status, StatusCode::OK);
        assert!(!headers.contains_key("ratelimit-limit"));
    }
    // Operational routes are outside the API and never limited.
    let (status, headers, _) = call(&app, "GET", "/healthz", "", &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!headers.contains_key("ratelimit-limit"));
}

#[tokio::test]
async fn admin_sign_prints_a_ready_request() {
    let app = TestApp::memory().await;
    let output = app
        .admin(&[
            "sign",
            "--partner",
            "acme",
            "--secret",
            "dh_ps_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
            "--method",
            "post",
            "--path",
            "/api/public/v1/games/mtg/decks",
            "--query",
            "include=summary&tag=caf%C3%A9",
            "--body",
            r#"{"name":"Mono-Red Burn","visibility":["public"]}"#,
            "--timestamp",
            "1767225600",
        ])
        .await
        .unwrap();
    // The worked example of docs/partners.md.
    assert_eq!(
        output["headers"],
        json!({
            "X-Partner-Id": "acme",
            "X-Signature": "v1.1767225600.3c0879ced001b31355655cea04308c93facee85546ec622503c4c105fc000129",
        })
    );
    assert!(
        output["curl"]
            .as_str()
            .unwrap()
            .starts_with("curl -sS -X POST")
    );
}

#[tokio::test]
async fn a_partner_whose_owner_is_deactivated_stops_working_alone() {
    let app = TestApp::memory().await;
    app.user_with_token("founder", "decks:read").await;
    app.admin(&[
        "partner",
        "create",
        "--slug",
        "orphan",
        "--owner",
        "founder",
        "--scopes",
        "decks:read",
        "--game-scopes",
        "*",
    ])
    .await
    .unwrap();
    let key = app
        .admin(&["api-key", "create", "--partner", "orphan"])
        .await
        .unwrap();
    let key = key["key"].as_str().unwrap().to_owned();
    let probe = || {
        app.client
            .get(app.api("/_probe/partner"))
            .header("x-api-key", &key)
    };
    assert_eq!(send(probe()).await.0, StatusCode::OK);
    app.admin(&["user", "deactivate", "--user", "founder"])
        .await
        .unwrap();
    let (status, _, body) = send(probe()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
}
