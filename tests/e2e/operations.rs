use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{assert_envelope, send};

#[tokio::test]
async fn health_readiness_and_metrics_answer() {
    let app = TestApp::postgres().await;
    let (status, _, body) = send(app.client.get(app.url("/healthz"))).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"status": "ok"})));
    let (status, _, body) = send(app.client.get(app.url("/readyz"))).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"status": "ready"})));

    let response = app.client.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    assert!(
        text.contains(
            "deckhand_http_requests_total{method=\"GET\",route=\"/readyz\",status=\"200\"} 1"
        ),
        "{text}"
    );
    assert!(
        text.contains("deckhand_http_request_duration_seconds_bucket"),
        "{text}"
    );
    assert!(
        text.contains("deckhand_db_pool_connections{state=\"max\"}"),
        "{text}"
    );
}

#[tokio::test]
async fn unknown_routes_and_methods_get_the_envelope() {
    let app = TestApp::memory().await;
    let (status, _, body) = send(app.client.get(app.api("/no/such/route"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_envelope(&body, "SERVICE_NOT_FOUND");

    let (status, headers, body) = send(app.client.delete(app.api("/_probe/user"))).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_envelope(&body, "SERVICE_METHOD_NOT_ALLOWED");
    assert_eq!(headers["allow"], "GET, HEAD");
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let app = TestApp::memory().await;
    let (_, headers, _) = send(app.client.get(app.api("/_probe/public"))).await;
    let generated = headers["x-request-id"].to_str().unwrap();
    assert!(uuid::Uuid::parse_str(generated).is_ok(), "{generated}");

    let (_, headers, _) = send(
        app.client
            .get(app.api("/_probe/public"))
            .header("x-request-id", "trace-42"),
    )
    .await;
    assert_eq!(headers["x-request-id"], "trace-42");

    let (_, headers, _) = send(
        app.client
            .get(app.api("/nowhere"))
            .header("x-request-id", "bad id with spaces"),
    )
    .await;
    assert_ne!(headers["x-request-id"], "bad id with spaces");
}

#[tokio::test]
async fn the_openapi_document_lists_the_operations() {
    let app = TestApp::memory().await;
    let (status, _, body) = send(app.client.get(app.api("/openapi.json"))).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        body["openapi"]
    );
    let operations = [
        ("get", "/api/public/v1/_probe/public"),
        ("get", "/api/public/v1/_probe/user"),
        ("get", "/api/public/v1/games/{game}/decks"),
        ("post", "/api/public/v1/games/{game}/decks"),
        ("get", "/api/public/v1/games/{game}/decks/{id}"),
        ("patch", "/api/public/v1/games/{game}/decks/{id}"),
        ("get", "/api/public/v1/games/{game}/decks/{id}/versions"),
        (
            "get",
            "/api/public/v1/games/{game}/decks/{id}/versions/{from}/diff/{to}",
        ),
        ("post", "/api/public/v1/games/{game}/decks/{id}/rollback"),
        ("post", "/api/public/v1/games/{game}/decks/{id}/views"),
        ("get", "/api/public/v1/games/{game}/decks/{id}/guide"),
        ("put", "/api/public/v1/games/{game}/decks/{id}/guide"),
        ("delete", "/api/public/v1/games/{game}/decks/{id}/guide"),
        ("post", "/api/public/v1/games/{game}/decks/export/text"),
        ("get", "/api/public/v1/games/{game}/sideboard-guides"),
        ("post", "/api/public/v1/games/{game}/sideboard-guides"),
        ("get", "/api/public/v1/games/{game}/sideboard-guides/my"),
        ("get", "/api/public/v1/games/{game}/sideboard-guides/{id}"),
        ("patch", "/api/public/v1/games/{game}/sideboard-guides/{id}"),
        (
            "post",
            "/api/public/v1/games/{game}/sideboard-guides/{id}/decks",
        ),
        (
            "delete",
            "/api/public/v1/games/{game}/sideboard-guides/{id}/decks/{deck_id}",
        ),
        (
            "post",
            "/api/public/v1/games/{game}/sideboard-guides/{id}/matchups",
        ),
        (
            "patch",
            "/api/public/v1/games/{game}/sideboard-guides/{id}/matchups/{matchup_id}",
        ),
        (
            "delete",
            "/api/public/v1/games/{game}/sideboard-guides/{id}/matchups/{matchup_id}",
        ),
        ("put", "/api/public/v1/games/{game}/decks/{id}/like"),
        ("delete", "/api/public/v1/games/{game}/decks/{id}/like"),
        (
            "put",
            "/api/public/v1/games/{game}/sideboard-guides/{id}/like",
        ),
        (
            "delete",
            "/api/public/v1/games/{game}/sideboard-guides/{id}/like",
        ),
    ];
    for (method, path) in operations {
        assert!(
            body["paths"][path][method].is_object(),
            "{method} {path} missing"
        );
    }
    // Guide operations name their path parameters and answer with documented shapes.
    let detail = &body["paths"]["/api/public/v1/games/{game}/sideboard-guides/{id}"]["get"];
    let parameters: Vec<&str> = detail["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|parameter| parameter["name"].as_str().unwrap())
        .collect();
    assert_eq!(parameters, ["game", "id", "If-None-Match"]);
    assert!(body["components"]["schemas"]["GuideDetailDto"].is_object());
    assert!(body["components"]["schemas"]["MatchupBody"].is_object());

    // Partner sync: every creating POST takes `Idempotency-Key` and documents its outcomes
    // with the envelope; conditional reads take `If-None-Match` and answer 304.
    for path in [
        "/api/public/v1/games/{game}/decks",
        "/api/public/v1/games/{game}/decks/{id}/rollback",
        "/api/public/v1/games/{game}/sideboard-guides",
        "/api/public/v1/games/{game}/sideboard-guides/{id}/matchups",
    ] {
        let operation = &body["paths"][path]["post"];
        let names: Vec<&str> = operation["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|parameter| parameter["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"Idempotency-Key"), "{path}: {names:?}");
        for status in ["409", "422"] {
            assert_eq!(
                operation["responses"][status]["content"]["application/json"]["schema"]["$ref"],
                "#/components/schemas/Error",
                "{path} {status}"
            );
        }
        let success = operation["responses"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(status, _)| status.starts_with('2'))
            .unwrap()
            .1;
        assert!(
            success["headers"]["Idempotent-Replayed"].is_object(),
            "{path}"
        );
    }
    for path in [
        "/api/public/v1/games/{game}/decks",
        "/api/public/v1/games/{game}/decks/{id}",
        "/api/public/v1/games/{game}/decks/{id}/versions",
        "/api/public/v1/games/{game}/decks/{id}/guide",
        "/api/public/v1/games/{game}/sideboard-guides",
        "/api/public/v1/games/{game}/sideboard-guides/my",
        "/api/public/v1/games/{game}/sideboard-guides/{id}",
    ] {
        let operation = &body["paths"][path]["get"];
        assert!(operation["responses"]["304"].is_object(), "{path}");
        assert!(
            operation["responses"]["200"]["headers"]["ETag"].is_object(),
            "{path}"
        );
    }
}
