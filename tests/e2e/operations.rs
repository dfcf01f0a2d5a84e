use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

#[tokio::test]
async fn health_readiness_and_metrics_answer() {
    let app = TestApp::postgres().await;
    let (status, _, body) = send(app.client.get(app.url("/healthz"))).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"status": "ok"})));
    let (status, _, body) = send(app.client.get(app.url("/readyz"))).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::OK,
            json!({"status": "ready", "databases": [{"name": "primary", "status": "up"}]})
        )
    );

    let text = app.metrics_text().await;
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
    // Without replicas every read is the primary's, and no lag is reported.
    assert!(
        text.contains("deckhand_db_reads_total{database=\"primary\"} 0"),
        "{text}"
    );
    assert!(!text.contains("deckhand_db_replica_lag_seconds{"), "{text}");
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
        ("post", "/api/public/v1/games/{game}/decks/{id}/fork"),
        (
            "get",
            "/api/public/v1/games/{game}/decks/{id}/compare/{other_id}",
        ),
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
        ("get", "/api/public/v1/games/{game}/events"),
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

/// Every `$ref` in `value`.
fn references(value: &serde_json::Value, found: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(fields) => {
            for (name, field) in fields {
                match (name.as_str(), field.as_str()) {
                    ("$ref", Some(target)) => found.push(target.to_owned()),
                    _ => references(field, found),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|item| references(item, found)),
        _ => {}
    }
}

#[tokio::test]
async fn the_openapi_document_documents_every_error_and_links() {
    let app = TestApp::memory().await;
    let (_, _, document) = send(app.client.get(app.api("/openapi.json"))).await;

    let mut refs = Vec::new();
    references(&document, &mut refs);
    for target in refs {
        let name = target.trim_start_matches("#/components/schemas/");
        assert!(
            document["components"]["schemas"][name].is_object(),
            "{target} is referenced but not defined"
        );
    }
    assert_eq!(
        document["components"]["schemas"]["Expand"]["enum"],
        json!(["cards"])
    );

    let mut operation_ids = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let responses = &operation["responses"];
            operation_ids.push(operation["operationId"].as_str().unwrap().to_owned());
            let mut expected = vec!["400", "401", "408", "431", "500", "503"];
            if !path.starts_with("/api/public/v1/oauth") {
                expected.push("429");
            }
            if operation["requestBody"].is_object() {
                expected.extend(["413", "415"]);
            }
            if path.contains('{') {
                expected.push("404");
            }
            for status in expected {
                let response = &responses[status];
                assert!(
                    response["content"]["application/json"]["schema"].is_object(),
                    "{method} {path} does not document {status} with a body: {response}"
                );
            }
            if let Some(retry) = responses.get("429") {
                assert!(
                    retry["headers"]["Retry-After"].is_object(),
                    "{method} {path}"
                );
            }
            if !path.starts_with("/api/public/v1/oauth") {
                for status in ["400", "404", "415", "429", "500"] {
                    if let Some(response) = responses.get(status) {
                        assert_eq!(
                            response["content"]["application/json"]["schema"]["$ref"],
                            "#/components/schemas/Error",
                            "{method} {path} {status}"
                        );
                    }
                }
            }
        }
    }

    // Links a client (or a fuzzer) follows from a created resource to the operations on it,
    // each naming an existing operation.
    let created = &document["paths"]["/api/public/v1/games/{game}/decks"]["post"]["responses"]["201"]
        ["links"];
    assert_eq!(
        created["update_deck"],
        json!({"operationId": "update_deck", "parameters": {"game": "$request.path.game", "id": "$response.body#/id"}})
    );
    let guide = &document["paths"]["/api/public/v1/games/{game}/sideboard-guides"]["post"]["responses"]
        ["201"]["links"];
    assert!(guide["create_matchup"].is_object(), "{guide}");
    let games = &document["paths"]["/api/public/v1/games"]["get"]["responses"]["200"]["links"];
    assert_eq!(
        games["create_deck"]["parameters"]["game"],
        "$response.body#/0/slug"
    );
    for (path, item) in document["paths"].as_object().unwrap() {
        for operation in item.as_object().unwrap().values() {
            for response in operation["responses"].as_object().unwrap().values() {
                for link in response["links"]
                    .as_object()
                    .into_iter()
                    .flat_map(|links| links.values())
                {
                    let target = link["operationId"]
                        .as_str()
                        .unwrap_or_else(|| panic!("{path}: {link}"));
                    assert!(
                        operation_ids.iter().any(|id| id == target),
                        "{path}: {target}"
                    );
                }
            }
        }
    }

    // A field the document calls nullable takes `null`; the others are not called nullable.
    let guide_body = &document["components"]["schemas"]["SideboardGuideBody"]["properties"];
    assert_eq!(
        guide_body["name"]["type"], "string",
        "{}",
        guide_body["name"]
    );
    assert_eq!(guide_body["youtube_url"]["type"], json!(["string", "null"]));
}

/// What the tests of the document's bodies start from: a player's token with every deck and
/// guide scope, the served OpenAPI document, and a deck and a guide of that player's.
struct Documented {
    token: String,
    document: Value,
    deck_id: String,
    guide_id: String,
}

async fn documented_with_a_deck_and_a_guide(app: &TestApp, username: &str) -> Documented {
    let (_, token) = app
        .user_with_token(
            username,
            "decks:read decks:write sideboards:read sideboards:write",
        )
        .await;
    let (_, _, document) = send(app.client.get(app.api("/openapi.json"))).await;
    let (status, _, deck) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .json(&json!({"name": "Documented"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{deck}");
    let deck_id = deck["id"].as_str().unwrap().to_owned();
    let (status, _, guide) = send(
        app.client
            .post(app.api("/games/mtg/sideboard-guides"))
            .bearer_auth(&token)
            .json(&json!({"name": "Documented", "deck_id": deck_id})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{guide}");
    Documented {
        token,
        document,
        deck_id,
        guide_id: guide["id"].as_str().unwrap().to_owned(),
    }
}

#[tokio::test]
async fn fields_documented_as_nullable_accept_null() {
    let app = TestApp::memory().await;
    let Documented {
        token,
        document,
        deck_id,
        guide_id,
    } = documented_with_a_deck_and_a_guide(&app, "nula").await;
    for (schema, url) in [
        ("DeckPatchBody", format!("/games/mtg/decks/{deck_id}")),
        (
            "SideboardGuidePatchBody",
            format!("/games/mtg/sideboard-guides/{guide_id}"),
        ),
    ] {
        let properties = document["components"]["schemas"][schema]["properties"]
            .as_object()
            .unwrap();
        for (name, property) in properties {
            let nullable = property["type"]
                .as_array()
                .is_some_and(|types| types.iter().any(|kind| kind == "null"));
            if !nullable {
                continue;
            }
            // With another change, so that a null that means "leave it" still makes a PATCH.
            let mut change = json!({ name.as_str(): null });
            if schema == "DeckPatchBody" {
                change[if name == "legal" { "notes" } else { "legal" }] = if name == "legal" {
                    json!("n")
                } else {
                    json!(true)
                };
            } else {
                change["tags"] = json!(["x"]);
            }
            let (status, _, body) = send(
                app.client
                    .patch(app.api(&url))
                    .bearer_auth(&token)
                    .json(&change),
            )
            .await;
            assert!(
                status.is_success(),
                "{schema}.{name} is documented nullable but null is refused: {body}"
            );
        }
    }
}

#[tokio::test]
async fn the_committed_document_is_the_served_one() {
    let app = TestApp::memory().await;
    let (_, _, served) = send(app.client.get(app.api("/openapi.json"))).await;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/openapi.json");
    let committed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(
        committed == served,
        "docs/openapi.json is out of date: run `cargo xtask openapi`"
    );
}

#[tokio::test]
async fn the_oauth_client_endpoints_document_basic_auth_as_optional() {
    let app = TestApp::memory().await;
    let (_, _, document) = send(app.client.get(app.api("/openapi.json"))).await;
    // Public clients send `client_id` in the form and no `Authorization`: Basic, or nothing
    // (the client authentication of all three endpoints, `OAuthService::authenticate_client`).
    for path in [
        "/api/public/v1/oauth/token",
        "/api/public/v1/oauth/introspect",
        "/api/public/v1/oauth/revoke",
    ] {
        let operation = &document["paths"][path]["post"];
        assert_eq!(
            operation["security"],
            json!([{ "OAuthClientBasic": [] }, {}]),
            "{path}"
        );
        let required_headers: Vec<&Value> = operation["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|parameter| parameter["in"] == "header" && parameter["required"] == true)
            .collect();
        assert!(required_headers.is_empty(), "{path}: {required_headers:?}");
    }
}

/// A create and a PATCH that decode one body type document each what it takes (interface
/// 1.2.2): a guide's PATCH refuses `deck_id` and `matchups`, its create `is_archived`; a guide's
/// create requires `deck_id` and `name`, a matchup's `opponent_deck_name`. Each field a body
/// schema offers is taken (no `unknown_field`), each it leaves out is refused, each it requires
/// is missed.
#[tokio::test]
async fn a_create_and_a_patch_sharing_a_body_type_document_what_each_takes() {
    let app = TestApp::memory().await;
    let Documented {
        token,
        document,
        deck_id,
        guide_id,
    } = documented_with_a_deck_and_a_guide(&app, "narrow").await;
    let guides = "/api/public/v1/games/{game}/sideboard-guides";
    let body_schema = |path: &str, method: &str| {
        let reference =
            document["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
                ["$ref"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path} has no named body"));
        document["components"]["schemas"][reference.rsplit('/').next().unwrap()].clone()
    };
    let sample = |name: &str| match name {
        "deck_id" => json!(deck_id),
        "visibility" => json!(["public"]),
        "tags" | "matchups" | "special_card_overrides" => json!([]),
        "difficulty" => json!("EASY"),
        "is_archived" | "premium" | "is_featured" => json!(false),
        "sort_order" => json!(1),
        _ => json!("Narrow"),
    };
    let codes = |body: &Value| -> Vec<(String, String)> {
        body["details"]["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|field| {
                (
                    field["field"].as_str().unwrap_or_default().to_owned(),
                    field["code"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    };
    let cases = [
        (
            "patch",
            format!("{guides}/{{id}}"),
            format!("/games/mtg/sideboard-guides/{guide_id}"),
            &["deck_id", "matchups"][..],
            &[][..],
        ),
        (
            "post",
            guides.to_owned(),
            "/games/mtg/sideboard-guides".to_owned(),
            &["is_archived"][..],
            &["deck_id", "name"][..],
        ),
        (
            "post",
            format!("{guides}/{{id}}/matchups"),
            format!("/games/mtg/sideboard-guides/{guide_id}/matchups"),
            &[][..],
            &["opponent_deck_name"][..],
        ),
    ];
    for (method, path, url, refused, required) in cases {
        let schema = body_schema(&path, method);
        let documented: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        // An empty `required` is left out of the document.
        let documented_required = schema["required"].as_array().cloned().unwrap_or_default();
        assert_eq!(
            json!(documented_required),
            json!(required),
            "{method} {path}"
        );
        let mut complete = json!({});
        for name in required {
            complete[*name] = sample(name);
        }
        let send_body = |body: Value| {
            let request = match method {
                "patch" => app.client.patch(app.api(&url)),
                _ => app.client.post(app.api(&url)),
            };
            send(request.bearer_auth(&token).json(&body))
        };
        for name in &documented {
            let mut body = complete.clone();
            body[name.as_str()] = sample(name);
            let (_, _, answer) = send_body(body).await;
            assert!(
                !codes(&answer).contains(&(name.to_string(), "unknown_field".to_owned())),
                "{method} {path} documents {name} but refuses it: {answer}"
            );
        }
        for name in refused {
            assert!(
                !documented.contains(&&name.to_string()),
                "{method} {path}: {name}"
            );
            let mut body = complete.clone();
            body[*name] = sample(name);
            let (status, _, answer) = send_body(body).await;
            assert_eq!(
                status,
                StatusCode::BAD_REQUEST,
                "{method} {path} took {name}"
            );
            assert_eq!(
                codes(&answer),
                [(name.to_string(), "unknown_field".to_owned())],
                "{method} {path}"
            );
        }
        for name in required {
            let mut body = complete.clone();
            body.as_object_mut().unwrap().remove(*name);
            let (status, _, answer) = send_body(body).await;
            assert!(
                status.is_client_error() && !status.is_success(),
                "{method} {path} without {name}: {status} {answer}"
            );
        }
    }
}

#[tokio::test]
async fn every_patch_of_a_games_resource_documents_and_enforces_at_least_one_field() {
    let app = TestApp::memory().await;
    let Documented {
        token,
        document,
        deck_id,
        guide_id,
    } = documented_with_a_deck_and_a_guide(&app, "patcher").await;
    let post = |url: &str, body: Value| {
        send(
            app.client
                .post(app.api(url))
                .bearer_auth(&token)
                .json(&body),
        )
    };
    let (status, _, matchup) = post(
        &format!("/games/mtg/sideboard-guides/{guide_id}/matchups"),
        json!({"opponent_deck_name": "Burn"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{matchup}");
    let matchup_id = matchup["id"].as_str().unwrap();
    let mut patches = 0;
    for (path, item) in document["paths"].as_object().unwrap() {
        // A webhook's PATCH takes an empty body (it changes nothing); the game's resources'
        // PATCHes refuse one.
        let Some(operation) = item.get("patch").filter(|_| path.contains("/games/")) else {
            continue;
        };
        let reference = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            .as_str()
            .unwrap_or_else(|| panic!("PATCH {path} has no named body"));
        let schema = &document["components"]["schemas"][reference.rsplit('/').next().unwrap()];
        // A body with a required field (the collection's `changes`) says so by `required`;
        // the others are all optional fields, of which a PATCH needs one.
        if schema["required"]
            .as_array()
            .is_some_and(|required| !required.is_empty())
        {
            continue;
        }
        patches += 1;
        assert_eq!(schema["minProperties"], json!(1), "PATCH {path}");
        let url = path
            .trim_start_matches("/api/public/v1")
            .replace("{game}", "mtg")
            .replace("{matchup_id}", matchup_id)
            .replace(
                "{id}",
                if path.contains("sideboard-guides") {
                    &guide_id
                } else {
                    &deck_id
                },
            );
        let (status, _, body) = send(
            app.client
                .patch(app.api(&url))
                .bearer_auth(&token)
                .json(&json!({})),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "PATCH {url}: {body}");
        assert_eq!(
            body["details"]["fields"][0]["code"],
            json!("empty"),
            "PATCH {url}: {body}"
        );
    }
    assert_eq!(
        patches, 3,
        "the deck, guide and matchup PATCHes, whose fields are all optional"
    );
}
