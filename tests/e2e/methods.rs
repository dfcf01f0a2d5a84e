//! `Allow`, on OPTIONS and on every 405, names exactly the methods the OpenAPI document gives
//! the path (plus HEAD with GET), for every documented path and the HTML consent page; every
//! method a path does not take is a 405, also where a `{id}` pattern beside it would match; and
//! a HEAD is answered as the GET of the same resource, without its content.

use std::collections::BTreeSet;

use deckhand_testkit::app::{Store, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::support::{assert_envelope, send};

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/// A concrete path for `pattern`: `{game}` is mtg, any other parameter a UUID (the router
/// matches any segment; which handler would refuse it does not matter here).
fn concrete(pattern: &str) -> String {
    pattern
        .split('/')
        .map(|segment| match segment {
            "{game}" => "mtg",
            s if s.starts_with('{') => "0190b7a2-6d55-7c1e-9a3b-2f4c5d6e7f80",
            s => s,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The methods the document gives each path.
fn documented(document: &Value) -> Vec<(String, BTreeSet<String>)> {
    document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(path, item)| {
            let methods = item
                .as_object()
                .unwrap()
                .keys()
                .map(|key| key.to_ascii_uppercase())
                .filter(|key| METHODS.contains(&key.as_str()))
                .collect();
            (path.clone(), methods)
        })
        .collect()
}

fn allow_value(methods: &BTreeSet<String>) -> String {
    let mut methods = methods.clone();
    if methods.contains("GET") {
        methods.insert("HEAD".to_owned());
    }
    methods.into_iter().collect::<Vec<_>>().join(", ")
}

async fn assert_allow(app: &TestApp, method: &str, path: &str, allow: &str) {
    let (status, headers, body) = send(app.client.request(
        Method::from_bytes(method.as_bytes()).unwrap(),
        app.url(path),
    ))
    .await;
    assert_eq!(
        status,
        StatusCode::METHOD_NOT_ALLOWED,
        "{method} {path}: {body}"
    );
    assert_envelope(&body, "SERVICE_METHOD_NOT_ALLOWED");
    let sent = headers
        .get("allow")
        .unwrap_or_else(|| panic!("{method} {path}: a 405 without Allow"))
        .to_str()
        .unwrap();
    assert_eq!(sent, allow, "{method} {path}");
}

#[tokio::test]
async fn allow_names_the_documented_methods_of_every_path() {
    let app = TestApp::builder(Store::Memory)
        .rate_limits(None)
        .start()
        .await;
    let (status, _, document) = send(app.client.get(app.api("/openapi.json"))).await;
    assert_eq!(status, StatusCode::OK);
    let paths = documented(&document);
    assert!(paths.len() > 20, "{paths:?}");
    for (pattern, methods) in &paths {
        let path = concrete(pattern);
        let allow = allow_value(methods);
        assert_allow(&app, "OPTIONS", &path, &allow).await;
        // Every method the path does not take is a 405 naming the same methods, also where
        // a `{parameter}` pattern beside a fixed segment takes it (`GET .../decks/check`,
        // `PATCH .../sideboard-guides/my`, which once reached the `{id}` routes and got 404).
        for absent in METHODS.iter().filter(|method| !methods.contains(**method)) {
            assert_allow(&app, absent, &path, &allow).await;
        }
        if methods.contains("GET") {
            let status = head(&app, &path, None).await.status();
            assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "HEAD {path}");
        } else {
            let refused = head(&app, &path, None).await;
            assert_eq!(
                refused.status(),
                StatusCode::METHOD_NOT_ALLOWED,
                "HEAD {path}"
            );
            assert_eq!(refused.headers()["allow"], allow.as_str(), "HEAD {path}");
        }
    }
    // The fixed segment answers for its own path, not for the `{id}` beside it, with or
    // without credentials.
    let my = "/api/public/v1/games/mtg/sideboard-guides/my";
    assert_allow(&app, "OPTIONS", my, "GET, HEAD").await;
    assert_allow(&app, "PATCH", my, "GET, HEAD").await;
    let check = "/api/public/v1/games/mtg/decks/check";
    assert_allow(&app, "GET", check, "POST").await;
    let (_, token) = app
        .user_with_token(
            "methods",
            "decks:read decks:write sideboards:read sideboards:write",
        )
        .await;
    for (method, path, allow) in [("PATCH", my, "GET, HEAD"), ("GET", check, "POST")] {
        let (status, headers, body) = send(
            app.client
                .request(
                    Method::from_bytes(method.as_bytes()).unwrap(),
                    app.url(path),
                )
                .bearer_auth(&token),
        )
        .await;
        assert_eq!(
            status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}: {body}"
        );
        assert_eq!(headers["allow"], allow, "{method} {path}");
    }
    // The consent page is outside the document; its 405s carry `Allow` too.
    let authorize = "/api/public/v1/oauth/authorize";
    for method in ["OPTIONS", "PUT", "DELETE", "PATCH"] {
        assert_allow(&app, method, authorize, "GET, HEAD, POST").await;
    }
    for path in [
        "/healthz",
        "/readyz",
        "/metrics",
        "/api/public/v1/openapi.json",
    ] {
        assert_allow(&app, "POST", path, "GET, HEAD").await;
    }
}

/// A HEAD of `path`, with `If-None-Match` when given.
async fn head(app: &TestApp, path: &str, if_none_match: Option<&str>) -> reqwest::Response {
    let mut request = app.client.head(app.url(path));
    if let Some(etag) = if_none_match {
        request = request.header("If-None-Match", etag);
    }
    request
        .send()
        .await
        .expect("the request reaches the server")
}

/// A HEAD answers with the status and header fields of the GET of the same resource and no
/// content (RFC 9110 §9.3.2): monitors and link checkers that probe with HEAD get what a GET
/// would tell them, a conditional HEAD its 304.
#[tokio::test]
async fn a_head_is_answered_as_its_get_without_content() {
    let app = TestApp::builder(Store::Memory)
        .rate_limits(None)
        .start()
        .await;
    let (_, token) = app.user_with_token("header", "decks:write").await;
    let (status, _, created) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .json(&serde_json::json!({"name": "Probed", "visibility": ["public"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let deck = created["id"].as_str().expect("the new deck's id");
    let paths = [
        "/healthz".to_owned(),
        "/api/public/v1/games".to_owned(),
        "/api/public/v1/games/mtg/decks?limit=5".to_owned(),
        format!("/api/public/v1/games/mtg/decks/{deck}"),
        "/api/public/v1/games/mtg/decks/0190b7a2-6d55-7c1e-9a3b-2f4c5d6e7f80".to_owned(),
    ];
    for path in &paths {
        let got = app.client.get(app.url(path)).send().await.unwrap();
        let got_status = got.status();
        let got_headers = got.headers().clone();
        let got_body = got.bytes().await.unwrap();
        let headed = head(&app, path, None).await;
        assert_eq!(headed.status(), got_status, "HEAD {path}");
        for name in ["content-type", "content-length", "etag", "cache-control"] {
            assert_eq!(
                headed.headers().get(name),
                got_headers.get(name),
                "HEAD {path}: {name}"
            );
        }
        assert_eq!(
            headed.headers()["content-length"],
            got_body.len().to_string().as_str(),
            "HEAD {path}"
        );
        assert!(headed.bytes().await.unwrap().is_empty(), "HEAD {path}");
    }
    let detail = format!("/api/public/v1/games/mtg/decks/{deck}");
    let etag = head(&app, &detail, None).await.headers()["etag"]
        .to_str()
        .unwrap()
        .to_owned();
    let revalidated = head(&app, &detail, Some(&etag)).await;
    assert_eq!(revalidated.status(), StatusCode::NOT_MODIFIED);
}
