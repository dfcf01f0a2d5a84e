//! A deck's strategy guide over HTTP: null when absent, create then replace, the premium
//! preview, hasGuide, and owner-only writes.

use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

async fn public_deck(app: &TestApp, token: &str) -> String {
    let (status, _, record) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(token)
            .json(&json!({"name": "Guided", "visibility": ["public"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    record["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn guides_are_null_then_created_then_replaced_and_set_has_guide() {
    let app = TestApp::memory().await;
    let (_, owner) = app.user_with_token("owner", "decks:read decks:write").await;
    let id = public_deck(&app, &owner).await;
    let url = app.api(&format!("/games/mtg/decks/{id}/guide"));

    let (status, _, body) = send(app.client.get(&url)).await;
    assert_eq!((status, body), (StatusCode::OK, Value::Null));

    let guide =
        json!({"content_type": "markdown", "content": "# Plan\nAttack.", "is_premium": false});
    let (status, _, created) = send(app.client.put(&url).bearer_auth(&owner).json(&guide)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["deck_id"], id.as_str());
    assert_eq!(
        (created["content"].clone(), created["is_truncated"].clone()),
        (json!("# Plan\nAttack."), json!(false))
    );

    let (status, _, replaced) = send(
        app.client
            .put(&url)
            .bearer_auth(&owner)
            .json(&json!({"content_type": "text", "content": "Plain."})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        replaced["id"], created["id"],
        "replacing keeps the guide's id"
    );
    assert_eq!(replaced["created_at"], created["created_at"]);
    assert_eq!(replaced["content_type"], "text");

    let (_, _, detail) = send(app.client.get(app.api(&format!("/games/mtg/decks/{id}")))).await;
    assert_eq!(detail["hasGuide"], true);
    let (_, _, with_guides) = send(app.client.get(app.api("/games/mtg/decks?hasGuide=true"))).await;
    assert_eq!(with_guides["pagination"]["total"], 1);
}

#[tokio::test]
async fn premium_guides_are_previews_for_callers_without_content_access() {
    let app = TestApp::memory().await;
    let (_, owner) = app.user_with_token("owner", "decks:read decks:write").await;
    let (_, reader) = app.user_with_token("reader", "decks:read").await;
    app.admin(&["user", "create", "--username", "subscriber", "--premium"])
        .await
        .unwrap();
    let subscriber = app
        .admin(&[
            "pat",
            "create",
            "--user",
            "subscriber",
            "--scopes",
            "decks:read",
        ])
        .await
        .unwrap();
    let subscriber = subscriber["token"].as_str().unwrap();
    let id = public_deck(&app, &owner).await;
    let url = app.api(&format!("/games/mtg/decks/{id}/guide"));
    let content = format!("{}{}", "♠".repeat(150), "x".repeat(100));
    let (status, _, _) = send(
        app.client
            .put(&url)
            .bearer_auth(&owner)
            .json(&json!({"content_type": "markdown", "content": content, "is_premium": true})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);

    for request in [
        app.client.get(&url),
        app.client.get(&url).bearer_auth(&reader),
    ] {
        let (status, _, preview) = send(request).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(preview["is_truncated"], true);
        let expected: String = content.chars().take(200).collect();
        assert_eq!(preview["content"], expected, "200 Unicode scalar values");
    }
    for token in [owner.as_str(), subscriber] {
        let (_, _, full) = send(app.client.get(&url).bearer_auth(token)).await;
        assert_eq!(
            (full["is_truncated"].clone(), full["content"].clone()),
            (json!(false), json!(content))
        );
    }
}

#[tokio::test]
async fn guide_writes_are_owner_only_and_deletes_answer_204_then_404() {
    let app = TestApp::memory().await;
    let (_, owner) = app.user_with_token("owner", "decks:read decks:write").await;
    let (_, other) = app.user_with_token("other", "decks:read decks:write").await;
    let (_, reader) = app.user_with_token("reader", "decks:read").await;
    let id = public_deck(&app, &owner).await;
    let url = app.api(&format!("/games/mtg/decks/{id}/guide"));
    let guide = json!({"content_type": "markdown", "content": "Mine."});

    let (status, _, body) = send(app.client.put(&url).bearer_auth(&other).json(&guide)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_envelope(&body, "SERVICE_NOT_FOUND");
    let (status, _, body) = send(app.client.put(&url).bearer_auth(&reader).json(&guide)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        assert_envelope(&body, "SERVICE_INSUFFICIENT_SCOPE")["required"],
        json!(["decks:write"])
    );
    for invalid in [
        json!({"content_type": "html", "content": "x"}),
        json!({"content_type": "text", "content": "x".repeat(200_001)}),
        json!({"content_type": "text"}),
    ] {
        let (status, _, body) = send(app.client.put(&url).bearer_auth(&owner).json(&invalid)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    }

    let (status, _, body) = send(app.client.delete(&url).bearer_auth(&owner)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "no guide yet");
    assert_envelope(&body, "SERVICE_NOT_FOUND");
    send(app.client.put(&url).bearer_auth(&owner).json(&guide)).await;
    let (status, _, _) = send(app.client.delete(&url).bearer_auth(&other)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a non-owner delete is a 404");
    let response = app
        .client
        .delete(&url)
        .bearer_auth(&owner)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert!(response.bytes().await.unwrap().is_empty());
    let (_, _, detail) = send(app.client.get(app.api(&format!("/games/mtg/decks/{id}")))).await;
    assert_eq!(detail["hasGuide"], false);
}

#[tokio::test]
async fn the_guide_of_a_hidden_deck_is_404_for_others() {
    let app = TestApp::memory().await;
    let (_, owner) = app.user_with_token("owner", "decks:read decks:write").await;
    let (status, _, record) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&owner)
            .json(&json!({"name": "Secret"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let url = app.api(&format!(
        "/games/mtg/decks/{}/guide",
        record["id"].as_str().unwrap()
    ));
    let (status, _, _) = send(app.client.get(&url).bearer_auth(&owner)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, body) = send(app.client.get(&url)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_envelope(&body, "SERVICE_NOT_FOUND");
}
