use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{assert_envelope, send};

#[tokio::test]
async fn the_public_probe_needs_nothing() {
    let app = TestApp::memory().await;
    let (status, _, body) = send(app.client.get(app.api("/_probe/public"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({"caller": "anonymous", "scopes": []}));
}

#[tokio::test]
async fn the_user_probe_reports_a_pat_user_on_postgres() {
    let app = TestApp::postgres().await;
    let (user_id, token) = app
        .user_with_token("alice", "decks:read, decks:write")
        .await;

    let (status, _, body) = send(app.client.get(app.api("/_probe/user")).bearer_auth(&token)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({
            "caller": format!("user:{user_id}"),
            "user": {"id": user_id, "username": "alice"},
            "scopes": ["decks:read", "decks:write"],
            "tier": "user",
        })
    );

    let (status, _, body) = send(
        app.client
            .get(app.api("/_probe/public"))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["caller"], format!("user:{user_id}"));
}

#[tokio::test]
async fn a_deactivated_users_pat_is_refused_on_postgres() {
    let app = TestApp::postgres().await;
    let (user_id, token) = app.user_with_token("bob", "decks:read").await;
    // Used first, as a client would before its user is deactivated.
    let (status, _, _) = send(app.client.get(app.api("/_probe/user")).bearer_auth(&token)).await;
    assert_eq!(status, StatusCode::OK);
    let deactivated = app
        .admin(&["user", "deactivate", "--user", "bob"])
        .await
        .unwrap();
    assert_eq!(deactivated, json!({"id": user_id, "active": false}));

    let (status, headers, body) =
        send(app.client.get(app.api("/_probe/user")).bearer_auth(&token)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
    assert!(
        !headers.contains_key("www-authenticate"),
        "the Bearer lane sends no challenge"
    );
}

#[tokio::test]
async fn the_user_probe_refuses_missing_and_bad_credentials() {
    let app = TestApp::memory().await;
    let (_, token) = app.user_with_token("carol", "decks:read").await;

    let (status, _, body) = send(app.client.get(app.api("/_probe/user"))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_REQUIRED");

    // Another last character, whatever the real one is.
    let last = if token.ends_with('A') { 'B' } else { 'A' };
    let forged = format!("{}{last}", &token[..token.len() - 1]);
    let bad_credentials = [
        vec![("authorization", format!("Bearer {forged}"))],
        vec![("authorization", "Bearer dh_pat_tooshort".to_owned())],
        vec![("authorization", format!("Basic {token}"))],
        vec![
            ("authorization", format!("Bearer {token}")),
            ("x-api-key", "dh_key_x".to_owned()),
        ],
        vec![("x-partner-id", "acme".to_owned())],
        vec![("x-signature", "v1.1.00".to_owned())],
    ];
    for headers in bad_credentials {
        let mut request = app.client.get(app.api("/_probe/user"));
        for (name, value) in &headers {
            request = request.header(*name, value);
        }
        let (status, _, body) = send(request).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{headers:?}");
        assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
    }
}

#[tokio::test]
async fn admin_commands_report_errors_clearly() {
    let app = TestApp::memory().await;
    app.user_with_token("dave", "decks:read").await;
    let taken = app
        .admin(&["user", "create", "--username", "DAVE"])
        .await
        .unwrap_err();
    assert!(taken.to_string().contains("taken"), "{taken}");
    let unknown_scope = app
        .admin(&["pat", "create", "--user", "dave", "--scopes", "decks:admin"])
        .await
        .unwrap_err();
    assert!(
        unknown_scope.to_string().contains("decks:admin"),
        "{unknown_scope}"
    );
    let nobody = app
        .admin(&[
            "pat",
            "create",
            "--user",
            "nobody",
            "--scopes",
            "decks:read",
        ])
        .await
        .unwrap_err();
    assert!(nobody.to_string().contains("no such user"), "{nobody}");
}

#[tokio::test]
async fn a_users_token_where_a_partner_alone_is_taken_is_told_which_credentials_are() {
    let app = TestApp::memory().await;
    let (_, token) = app.user_with_token("carol", "decks:read").await;
    for (method, path) in [
        (reqwest::Method::GET, "/_probe/partner"),
        (reqwest::Method::GET, "/webhooks"),
        (reqwest::Method::POST, "/webhooks"),
    ] {
        let (status, _, body) = send(
            app.client
                .request(method.clone(), app.api(path))
                .bearer_auth(&token)
                .json(&json!({"url": "https://93.184.216.34/hook"})),
        )
        .await;
        // The contract's status and code, as before; the message and details now guide.
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {path}");
        let details = assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
        assert_eq!(details["reason"], "partner_lane_required", "{body}");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains("X-Api-Key"), "{message}");
        assert!(message.contains("X-Signature"), "{message}");
    }
    // Without credentials: still "needs credentials".
    let (status, _, body) = send(app.client.get(app.api("/webhooks"))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_REQUIRED");
}
