//! Query parameters: an error on one names it in `details.fields`, as body errors name their
//! field, with a message of ours (never a parser's own text), for every query parameter of
//! every operation of the OpenAPI document.

use deckhand_testkit::app::{Store, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

/// The schema `schema` stands for: a `$ref` looked up in the document, the non-null
/// alternative of a nullable `oneOf`.
fn resolved<'a>(document: &'a Value, schema: &'a Value) -> &'a Value {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.trim_start_matches("#/components/schemas/");
        return resolved(document, &document["components"]["schemas"][name]);
    }
    if let Some(alternatives) = schema["oneOf"].as_array()
        && let Some(alternative) = alternatives.iter().find(|a| a["type"] != "null")
    {
        return resolved(document, alternative);
    }
    schema
}

/// A value the parameter's schema refuses, when the schema constrains its values.
fn refused_by_schema(schema: &Value) -> Option<&'static str> {
    let is = |kind: &str| match &schema["type"] {
        Value::String(type_name) => type_name == kind,
        Value::Array(types) => types.iter().any(|type_name| type_name == kind),
        _ => false,
    };
    if schema["enum"].is_array() {
        Some("xml")
    } else if is("boolean") {
        Some("maybe")
    } else if is("integer") {
        Some("many")
    } else if schema["format"] == "uuid" {
        Some("not-a-uuid")
    } else if schema["format"] == "date-time" {
        Some("yesterday")
    } else {
        None
    }
}

/// Values the handlers refuse for text parameters whose constraint the description states.
fn refused_by_description(name: &str) -> Option<&'static str> {
    match name {
        "authorId" | "deckId" | "formatId" | "forkedFrom" => Some("not-a-uuid"),
        "createdAfter" | "createdBefore" | "editedAfter" | "editedBefore" | "as_of" => {
            Some("yesterday")
        }
        "include" | "sort" | "order" => Some("everything"),
        "after" | "types" => Some("..."),
        _ => None,
    }
}

fn concrete(pattern: &str, deck: &str, webhook: &str) -> String {
    let id = if pattern.contains("/webhooks/") {
        webhook
    } else {
        deck
    };
    pattern
        .split('/')
        .map(|segment| match segment {
            "{game}" => "mtg",
            "{id}" | "{other_id}" => id,
            s if s.starts_with('{') => "0190b7a2-6d55-7c1e-9a3b-2f4c5d6e7f80",
            s => s,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test]
async fn every_query_parameter_error_names_the_parameter() {
    let app = TestApp::builder(Store::Memory)
        .rate_limits(None)
        .start()
        .await;
    let (_, token) = app
        .user_with_token(
            "walker",
            "decks:read decks:write sideboards:read collection:read collection:write",
        )
        .await;
    app.admin(&[
        "partner",
        "create",
        "--slug",
        "walk",
        "--owner",
        "walker",
        "--scopes",
        "decks:read",
        "--game-scopes",
        "mtg",
    ])
    .await
    .unwrap();
    let key = app
        .admin(&["api-key", "create", "--partner", "walk"])
        .await
        .unwrap()["key"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _, deck) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .json(&json!({"name": "Walk", "visibility": ["public"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{deck}");
    let (status, _, webhook) = send(
        app.client
            .post(app.api("/webhooks"))
            .header("x-api-key", &key)
            .json(&json!({"url": "https://93.184.216.34/hook"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{webhook}");
    let (deck, webhook) = (
        deck["id"].as_str().unwrap(),
        webhook["id"].as_str().unwrap(),
    );
    let (_, _, document) = send(app.client.get(app.api("/openapi.json"))).await;

    let mut walked = 0;
    for (pattern, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let parameters = operation["parameters"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let path = app.url(&concrete(pattern, deck, webhook));
            for parameter in parameters.iter().filter(|p| p["in"] == "query") {
                let name = parameter["name"].as_str().unwrap();
                let schema = resolved(&document, &parameter["schema"]);
                let bad = refused_by_schema(schema).or_else(|| refused_by_description(name));
                // A repeated parameter is refused whatever its type; a bad value where one exists.
                let queries = std::iter::once(vec![(name, "1"), (name, "1")])
                    .chain(bad.map(|bad| vec![(name, bad)]));
                for query in queries {
                    let mut request = app
                        .client
                        .request(
                            Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(),
                            &path,
                        )
                        .query(&query);
                    request = if pattern.contains("/webhooks") {
                        request.header("x-api-key", &key)
                    } else {
                        request.bearer_auth(&token)
                    };
                    if method == "post" {
                        request = request.json(&json!({"identifiers": []}));
                    }
                    let (status, _, body) = send(request).await;
                    let what = format!("{method} {pattern} ?{query:?}");
                    assert_eq!(status, StatusCode::BAD_REQUEST, "{what}: {body}");
                    let details = assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
                    let fields = details["fields"]
                        .as_array()
                        .unwrap_or_else(|| panic!("{what}: no details.fields: {body}"));
                    assert!(
                        fields.iter().any(|field| field["field"] == name),
                        "{what}: {name} is not named: {body}"
                    );
                    let text = body.to_string();
                    for parser_word in ["deserialize", "variant", "invalid digit", "`"] {
                        assert!(!text.contains(parser_word), "{what}: {body}");
                    }
                    walked += 1;
                }
            }
        }
    }
    assert!(walked > 60, "only {walked} queries walked");

    // The report of issue 47: `format=xml` on a compare.
    let (status, _, body) = send(
        app.client
            .get(app.api(&format!(
                "/games/mtg/decks/{deck}/compare/{deck}?format=xml"
            )))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body,
        json!({"error": "SERVICE_VALIDATION_ERROR", "message": "format: must be one of: json, text",
            "details": {"fields": [{"field": "format", "code": "invalid", "message": "must be one of: json, text"}]}})
    );
}
