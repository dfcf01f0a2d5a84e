//! The OAuth 2.0 server over HTTP: the code flow with PKCE driven by the third-party `oauth2`
//! crate, refresh rotation and replay, introspection, revocation, every error of the contract,
//! and the Bearer lane on the resource endpoints.

use std::sync::Arc;

use deckhand_domain::ports::{Clock, FixedClock};
use deckhand_testkit::app::{Store, TestApp};
use deckhand_testkit::db::TestDb;
use oauth2::basic::{BasicClient, BasicErrorResponseType};
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge, RedirectUrl,
    RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use reqwest::StatusCode;
use reqwest::header::{CACHE_CONTROL, LOCATION};
use serde_json::{Value, json};

use crate::oauth_support::*;
use crate::support::{assert_envelope, send};

/// The whole flow through a client library nobody here wrote: authorize with PKCE, exchange,
/// call the API, refresh (narrowing), replay the old refresh token.
async fn the_code_flow_works_with_a_third_party_client(app: TestApp) {
    let world = world(&app).await;
    let client = BasicClient::new(ClientId::new(world.client_id.clone()))
        .set_client_secret(ClientSecret::new(world.client_secret.clone()))
        .set_auth_uri(AuthUrl::new(app.api("/oauth/authorize")).unwrap())
        .set_token_uri(TokenUrl::new(app.api("/oauth/token")).unwrap())
        .set_redirect_uri(RedirectUrl::new(REDIRECT.into()).unwrap());
    let http = oauth2::reqwest::Client::builder()
        .redirect(oauth2::reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (auth_url, csrf_state) = client
        .authorize_url(CsrfToken::new_random)
        .add_scope(Scope::new("decks:read".into()))
        .add_scope(Scope::new("decks:write".into()))
        .set_pkce_challenge(challenge)
        .url();
    let query: Vec<(String, String)> = auth_url
        .query_pairs()
        .map(|(n, v)| (n.into_owned(), v.into_owned()))
        .collect();
    let form = open_consent(&app, &query).await;
    assert!(form.page.contains("Deck Tracker"), "{}", form.page);
    let response = post_consent(
        &app,
        &query,
        &format!("deckhand_csrf={}", form.csrf_cookie),
        &[
            ("csrf_token", &form.csrf_token),
            ("username", "alice"),
            ("password", PASSWORD),
            ("decision", "approve"),
        ],
    )
    .await;
    let params = location_params(&response);
    assert_eq!(param(&params, "state"), Some(csrf_state.secret().as_str()));
    assert_eq!(param(&params, "iss"), Some(app.base_url.as_str()));
    let code = param(&params, "code").unwrap().to_owned();
    assert!(code.starts_with("dh_ac_") && code.len() == 49, "{code}");

    let tokens = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .request_async(&http)
        .await
        .unwrap();
    let access = tokens.access_token().secret().clone();
    assert!(access.starts_with("dh_at_"), "{access}");
    assert_eq!(
        tokens.expires_in(),
        Some(std::time::Duration::from_secs(3600))
    );
    let scopes: Vec<&str> = tokens
        .scopes()
        .unwrap()
        .iter()
        .map(|s| s.as_str())
        .collect();
    assert_eq!(scopes, ["decks:read", "decks:write"]);
    let first_refresh = tokens.refresh_token().unwrap().clone();
    assert!(first_refresh.secret().starts_with("dh_rt_"));

    // The user probe: the partner's tier and the token's scopes, acting for alice.
    let (status, headers, body) =
        send(app.client.get(app.api("/_probe/user")).bearer_auth(&access)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({
            "caller": format!("partner:acme+user:{}", world.user_id),
            "user": {"id": world.user_id, "username": "alice"},
            "scopes": ["decks:read", "decks:write"],
            "tier": "gold",
        })
    );
    assert!(headers.contains_key("ratelimit-limit"));
    // A resource endpoint: writes as alice, in a game the partner may use.
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&access)
            .json(&json!({"name": "OAuth deck"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // A game outside the partner's game scopes.
    let (status, _, body) = send(
        app.client
            .get(app.api("/games/lorcana/decks"))
            .bearer_auth(&access),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(
        assert_envelope(&body, "SERVICE_INSUFFICIENT_SCOPE")["required"],
        json!(["game:lorcana"])
    );

    // Refresh, narrowing to decks:read: a new refresh token, the narrower access token.
    let refreshed = client
        .exchange_refresh_token(&first_refresh)
        .add_scope(Scope::new("decks:read".into()))
        .request_async(&http)
        .await
        .unwrap();
    let narrowed = refreshed.access_token().secret().clone();
    let second_refresh = refreshed.refresh_token().unwrap().clone();
    assert_ne!(second_refresh.secret(), first_refresh.secret());
    let (_, _, body) = send(
        app.client
            .get(app.api("/_probe/user"))
            .bearer_auth(&narrowed),
    )
    .await;
    assert_eq!(body["scopes"], json!(["decks:read"]));
    // The grant keeps its scopes: the next refresh may ask for all of them again.
    let widened_again = client
        .exchange_refresh_token(&second_refresh)
        .request_async(&http)
        .await
        .unwrap();
    let scopes: Vec<&str> = widened_again
        .scopes()
        .unwrap()
        .iter()
        .map(|s| s.as_str())
        .collect();
    assert_eq!(scopes, ["decks:read", "decks:write"]);

    // Replaying a rotated refresh token is invalid_grant and revokes the whole grant.
    let replay = client
        .exchange_refresh_token(&first_refresh)
        .request_async(&http)
        .await;
    match replay {
        Err(RequestTokenError::ServerResponse(error)) => {
            assert_eq!(*error.error(), BasicErrorResponseType::InvalidGrant);
        }
        other => panic!("expected invalid_grant, got {other:?}"),
    }
    let latest = widened_again.access_token().secret();
    let (status, _, body) = send(app.client.get(app.api("/_probe/user")).bearer_auth(latest)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_OAUTH2_TOKEN_REVOKED");
    let newest_refresh = widened_again.refresh_token().unwrap();
    assert!(
        client
            .exchange_refresh_token(newest_refresh)
            .request_async(&http)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn the_code_flow_works_with_a_third_party_client_on_memory() {
    the_code_flow_works_with_a_third_party_client(TestApp::memory().await).await;
}

#[tokio::test]
async fn the_code_flow_works_with_a_third_party_client_on_postgres() {
    the_code_flow_works_with_a_third_party_client(TestApp::postgres().await).await;
}

/// A public client: no secret, `client_id` in the body, PKCE alone binds the code.
async fn a_public_client_uses_pkce_without_a_secret(app: TestApp) {
    let world = world(&app).await;
    let client = BasicClient::new(ClientId::new(world.public_client_id.clone()))
        .set_token_uri(TokenUrl::new(app.api("/oauth/token")).unwrap())
        .set_redirect_uri(RedirectUrl::new(REDIRECT.into()).unwrap());
    let code = approve(
        &app,
        &authorize_query(&world.public_client_id, "decks:read", "s1"),
    )
    .await;
    let http = oauth2::reqwest::Client::new();
    let tokens = client
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(oauth2::PkceCodeVerifier::new(VERIFIER.into()))
        .request_async(&http)
        .await
        .unwrap();
    let refreshed = client
        .exchange_refresh_token(tokens.refresh_token().unwrap())
        .request_async(&http)
        .await
        .unwrap();
    let (status, _, body) = send(
        app.client
            .get(app.api("/_probe/user"))
            .bearer_auth(refreshed.access_token().secret()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A public client cannot use another's tokens even knowing them.
    let (status, _, body) = token_request(
        &app,
        None,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", &world.client_id),
            ("refresh_token", refreshed.refresh_token().unwrap().secret()),
        ],
    )
    .await;
    assert_oauth_error(status, &body, StatusCode::UNAUTHORIZED, "invalid_client");
}

#[tokio::test]
async fn a_public_client_uses_pkce_without_a_secret_on_memory() {
    a_public_client_uses_pkce_without_a_secret(TestApp::memory().await).await;
}

#[tokio::test]
async fn a_public_client_uses_pkce_without_a_secret_on_postgres() {
    a_public_client_uses_pkce_without_a_secret(TestApp::postgres().await).await;
}

#[tokio::test]
async fn authorize_errors_come_as_pages_then_as_redirects_in_the_contracts_order() {
    let app = TestApp::memory().await;
    let world = world(&app).await;
    let narrow = admin(
        &app,
        &[
            "oauth-client",
            "create",
            "--partner",
            "acme",
            "--name",
            "Refresh Only",
            "--redirect-uri",
            REDIRECT,
            "--scopes",
            "decks:read",
            "--grant-types",
            "refresh_token",
        ],
    )
    .await;
    let narrow_id = narrow["client_id"].as_str().unwrap();
    let get = |query: Vec<(String, String)>| {
        let url = app.api("/oauth/authorize");
        async move { browserless().get(url).query(&query).send().await.unwrap() }
    };
    let with = |client: &str, changes: &[(&str, Option<&str>)]| {
        let mut query = authorize_query(client, "decks:read", "xyz");
        for (name, value) in changes {
            query.retain(|(n, _)| n != name);
            if let Some(value) = value {
                query.push(((*name).to_owned(), (*value).to_owned()));
            }
        }
        query
    };

    // No redirect: unknown client, missing or unregistered redirect_uri (even with every
    // other parameter wrong too).
    let all_wrong = [("response_type", Some("token")), ("code_challenge", None)];
    for query in [
        with("00000000-0000-0000-0000-000000000000", &[]),
        with("not-a-uuid", &[]),
        with(&world.client_id, &[("redirect_uri", None)]),
        with(
            &world.client_id,
            &[("redirect_uri", Some("https://evil.example/cb"))],
        ),
        with(
            &world.client_id,
            &[("redirect_uri", Some("https://app.example/cb/"))],
        ),
        with(
            &world.client_id,
            &[
                all_wrong[0],
                all_wrong[1],
                ("redirect_uri", Some("https://evil.example/")),
            ],
        ),
    ] {
        let response = get(query).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert!(!response.headers().contains_key(LOCATION));
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/html")
        );
        assert_eq!(response.headers()[CACHE_CONTROL], "no-store");
        assert_eq!(response.headers()["x-frame-options"], "DENY");
        let page = response.text().await.unwrap();
        assert!(page.contains("<h1>"), "{page}");
    }

    // Redirects with error, state and iss, in the contract's order.
    let cases: Vec<(Vec<(String, String)>, &str)> = vec![
        (
            with(
                &world.client_id,
                &[all_wrong[0], all_wrong[1], ("scope", Some("nope"))],
            ),
            "unsupported_response_type",
        ),
        (
            with(&world.client_id, &[all_wrong[1], ("scope", Some("nope"))]),
            "invalid_request",
        ),
        (
            with(
                &world.client_id,
                &[("code_challenge_method", Some("plain"))],
            ),
            "invalid_request",
        ),
        (
            with(&world.client_id, &[("code_challenge_method", None)]),
            "invalid_request",
        ),
        (with(&world.client_id, &[("scope", None)]), "invalid_scope"),
        (
            with(
                &world.client_id,
                &[("scope", Some("decks:read decks:admin"))],
            ),
            "invalid_scope",
        ),
        (
            with(&world.client_id, &[("scope", Some("sideboards:read"))]),
            "invalid_scope",
        ),
        (with(narrow_id, &[]), "unauthorized_client"),
    ];
    for (query, expected) in cases {
        let response = get(query.clone()).await;
        let params = location_params(&response);
        assert_eq!(param(&params, "error"), Some(expected), "{query:?}");
        assert_eq!(param(&params, "state"), Some("xyz"));
        assert_eq!(param(&params, "iss"), Some(app.base_url.as_str()));
        assert!(param(&params, "error_description").is_some());
        let location = response.headers()[LOCATION].to_str().unwrap();
        assert!(
            location.starts_with("https://app.example/cb?"),
            "{location}"
        );
    }
    // A repeated parameter is refused without a redirect.
    let mut repeated = with(&world.client_id, &[]);
    repeated.push(("scope".into(), "decks:write".into()));
    assert_eq!(get(repeated).await.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn the_consent_page_names_the_client_escapes_everything_and_guards_itself() {
    let app = TestApp::memory().await;
    world(&app).await;
    let sneaky = admin(
        &app,
        &[
            "oauth-client",
            "create",
            "--partner",
            "acme",
            "--name",
            "<script>alert(1)</script>",
            "--redirect-uri",
            REDIRECT,
            "--scopes",
            "decks:read decks:write",
        ],
    )
    .await;
    let query = authorize_query(
        sneaky["client_id"].as_str().unwrap(),
        "decks:write decks:read",
        "\"><b>x",
    );
    let response = browserless()
        .get(app.api("/oauth/authorize"))
        .query(&query)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    assert_eq!(headers[CACHE_CONTROL], "no-store");
    assert_eq!(headers["x-frame-options"], "DENY");
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    let cookie = headers["set-cookie"].to_str().unwrap();
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/api/public/v1/oauth"] {
        assert!(cookie.contains(attribute), "{cookie}");
    }
    assert!(
        !cookie.contains("Secure"),
        "plain http: no Secure flag: {cookie}"
    );
    let page = response.text().await.unwrap();
    assert!(!page.contains("<script>"), "{page}");
    assert!(
        page.contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
        "{page}"
    );
    assert!(!page.contains("\"><b>x"), "{page}");
    for words in [
        "See your decks, including private and unlisted ones",
        "Create and change your decks",
        "acme",
        "name=\"username\"",
        "name=\"password\"",
        "name=\"decision\" value=\"approve\"",
        "name=\"decision\" value=\"deny\"",
        "<form method=\"post\"",
    ] {
        assert!(page.contains(words), "{words}: {page}");
    }
}

#[tokio::test]
async fn sign_in_errors_deny_csrf_and_the_session_cookie() {
    let app = TestApp::memory().await;
    let world = world(&app).await;
    let query = authorize_query(&world.client_id, "decks:read", "st");
    let form = open_consent(&app, &query).await;
    let cookies = format!("deckhand_csrf={}", form.csrf_cookie);

    // Wrong password: the page again, with the error, no redirect.
    for (username, password) in [
        ("alice", "wrong password"),
        ("nobody", PASSWORD),
        ("alice", ""),
    ] {
        let response = post_consent(
            &app,
            &query,
            &cookies,
            &[
                ("csrf_token", &form.csrf_token),
                ("username", username),
                ("password", password),
                ("decision", "approve"),
            ],
        )
        .await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert!(!response.headers().contains_key(LOCATION));
        assert_eq!(response.headers()["x-frame-options"], "DENY");
        let page = response.text().await.unwrap();
        assert!(
            page.contains("The username or password is wrong."),
            "{page}"
        );
    }

    // A missing or foreign CSRF token: refused, no redirect.
    for (cookie, token) in [
        (cookies.as_str(), "0".repeat(64)),
        ("", form.csrf_token.clone()),
    ] {
        let response = post_consent(
            &app,
            &query,
            cookie,
            &[
                ("csrf_token", &token),
                ("username", "alice"),
                ("password", PASSWORD),
                ("decision", "approve"),
            ],
        )
        .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert!(!response.headers().contains_key(LOCATION));
    }

    // Deny: back to the client with access_denied.
    let response = post_consent(
        &app,
        &query,
        &cookies,
        &[("csrf_token", &form.csrf_token), ("decision", "deny")],
    )
    .await;
    let params = location_params(&response);
    assert_eq!(param(&params, "error"), Some("access_denied"));
    assert_eq!(param(&params, "state"), Some("st"));
    assert_eq!(param(&params, "iss"), Some(app.base_url.as_str()));

    // Approve: a session cookie that spares the next sign-in.
    let response = post_consent(
        &app,
        &query,
        &cookies,
        &[
            ("csrf_token", &form.csrf_token),
            ("username", "ALICE"),
            ("password", PASSWORD),
            ("decision", "approve"),
        ],
    )
    .await;
    let session = set_cookie(response.headers(), "deckhand_session").expect("a session cookie");
    assert!(param(&location_params(&response), "code").is_some());
    let both = format!("{cookies}; deckhand_session={session}");
    let page = consent_page_with(&app, &query, &both).await;
    assert!(
        page.contains("Signed in as <strong>alice</strong>"),
        "{page}"
    );
    assert!(!page.contains("name=\"password\""), "{page}");
    // The token of the page shown before signing in belongs to no session: refused.
    let response = post_consent(
        &app,
        &query,
        &both,
        &[("csrf_token", &form.csrf_token), ("decision", "approve")],
    )
    .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let response = post_consent(
        &app,
        &query,
        &both,
        &[
            ("csrf_token", &hidden_input(&page, "csrf_token")),
            ("decision", "approve"),
        ],
    )
    .await;
    assert!(param(&location_params(&response), "code").is_some());
}

/// The consent form's CSRF token is bound to the browser's CSRF cookie, to its sign-in session
/// and to the request it approves: a token from another browser, another session or another
/// authorization request (client, redirect URI, code challenge) is refused.
#[tokio::test]
async fn a_csrf_token_of_another_session_or_request_is_refused() {
    let app = TestApp::memory().await;
    let world = world(&app).await;
    let query = authorize_query(&world.client_id, "decks:read", "st");
    let form = open_consent(&app, &query).await;
    let cookies = format!("deckhand_csrf={}", form.csrf_cookie);
    let sign_in = |token: String| {
        vec![
            ("csrf_token".to_owned(), token),
            ("username".to_owned(), "alice".to_owned()),
            ("password".to_owned(), PASSWORD.to_owned()),
            ("decision".to_owned(), "approve".to_owned()),
        ]
    };
    let post = |query: Vec<(String, String)>, cookies: String, fields: Vec<(String, String)>| {
        let app = &app;
        async move {
            let fields: Vec<(&str, &str)> = fields
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .collect();
            post_consent(app, &query, &cookies, &fields).await
        }
    };

    // Two sessions of alice's, each with its own page and token.
    let mut sessions = Vec::new();
    for _ in 0..2 {
        let response = post(
            query.clone(),
            cookies.clone(),
            sign_in(form.csrf_token.clone()),
        )
        .await;
        let session = set_cookie(response.headers(), "deckhand_session").expect("a session");
        let both = format!("{cookies}; deckhand_session={session}");
        let page = consent_page_with(&app, &query, &both).await;
        sessions.push((both, hidden_input(&page, "csrf_token")));
    }
    let approve = |token: &str| {
        vec![
            ("csrf_token".to_owned(), token.to_owned()),
            ("decision".to_owned(), "approve".to_owned()),
        ]
    };
    // Another session's token: refused; its own: approved.
    let response = post(
        query.clone(),
        sessions[0].0.clone(),
        approve(&sessions[1].1),
    )
    .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(!response.headers().contains_key(LOCATION));
    let page = response.text().await.unwrap();
    assert!(page.contains("did not come from this page"), "{page}");
    let response = post(
        query.clone(),
        sessions[0].0.clone(),
        approve(&sessions[0].1),
    )
    .await;
    assert!(param(&location_params(&response), "code").is_some());

    // The token of this request, posted with another request: refused, whatever differs.
    let other_requests = [
        authorize_query(&world.public_client_id, "decks:read", "st"),
        query
            .iter()
            .map(|(n, v)| {
                let v = if n == "redirect_uri" {
                    "http://127.0.0.1:9/cb"
                } else {
                    v
                };
                (n.clone(), v.to_owned())
            })
            .collect(),
        query
            .iter()
            .map(|(n, v)| {
                let v = if n == "code_challenge" {
                    &VERIFIER[..43]
                } else {
                    v
                };
                (n.clone(), v.to_owned())
            })
            .collect(),
    ];
    for other in other_requests {
        let response = post(
            other.clone(),
            cookies.clone(),
            sign_in(form.csrf_token.clone()),
        )
        .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{other:?}");
        assert!(!response.headers().contains_key(LOCATION), "{other:?}");
        let response = post(
            other.clone(),
            sessions[0].0.clone(),
            approve(&sessions[0].1),
        )
        .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{other:?}");
    }
    // Another browser's cookie with this token: refused.
    let stranger = open_consent(&app, &query).await;
    let response = post(
        query.clone(),
        format!("deckhand_csrf={}", stranger.csrf_cookie),
        sign_in(form.csrf_token.clone()),
    )
    .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
}

/// On an https public URL the consent page's cookies take the `__Host-` prefix (Secure,
/// `Path=/`, no `Domain`), and only those names are read back.
#[tokio::test]
async fn on_https_the_cookies_take_the_host_prefix() {
    let app = TestApp::builder(Store::Memory)
        .public_url("https://deckhand.example")
        .start()
        .await;
    let world = world(&app).await;
    let query = authorize_query(&world.client_id, "decks:read", "st");
    let response = browserless()
        .get(app.api("/oauth/authorize"))
        .query(&query)
        .send()
        .await
        .unwrap();
    let set = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(set.starts_with("__Host-deckhand_csrf="), "{set}");
    for attribute in ["Secure", "Path=/;", "HttpOnly", "SameSite=Lax"] {
        assert!(set.contains(attribute), "{attribute}: {set}");
    }
    assert!(!set.contains("Domain"), "{set}");
    let csrf_cookie = set_cookie(response.headers(), "__Host-deckhand_csrf").unwrap();
    let token = hidden_input(&response.text().await.unwrap(), "csrf_token");
    let fields = [
        ("csrf_token", token.as_str()),
        ("username", "alice"),
        ("password", PASSWORD),
        ("decision", "approve"),
    ];
    // The unprefixed name is not the cookie.
    let response = post_consent(
        &app,
        &query,
        &format!("deckhand_csrf={csrf_cookie}"),
        &fields,
    )
    .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let response = post_consent(
        &app,
        &query,
        &format!("__Host-deckhand_csrf={csrf_cookie}"),
        &fields,
    )
    .await;
    let session = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(session.starts_with("__Host-deckhand_session="), "{session}");
    assert!(
        session.contains("Secure") && session.contains("Path=/;"),
        "{session}"
    );
    assert!(param(&location_params(&response), "code").is_some());
}

#[tokio::test]
async fn the_token_endpoint_answers_rfc_6749_errors_never_the_envelope() {
    let app = TestApp::memory().await;
    let world = world(&app).await;
    let basic = Some((world.client_id.as_str(), world.client_secret.as_str()));
    let code = approve(&app, &authorize_query(&world.client_id, "decks:read", "s")).await;
    let exchange_form = |code: &str, verifier: &str, redirect: &str| {
        vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code.to_owned()),
            ("redirect_uri", redirect.to_owned()),
            ("code_verifier", verifier.to_owned()),
        ]
    };

    // Not a form.
    let response = browserless()
        .post(app.api("/oauth/token"))
        .basic_auth(&world.client_id, Some(&world.client_secret))
        .json(&json!({"grant_type": "authorization_code"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()[CACHE_CONTROL], "no-store");
    let status = response.status();
    assert_oauth_error(
        status,
        &response.json().await.unwrap(),
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );

    let cases: Vec<TokenCase> = vec![
        (basic, vec![], StatusCode::BAD_REQUEST, "invalid_request"),
        (
            basic,
            vec![("grant_type", "password".into())],
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
        ),
        (
            basic,
            vec![("grant_type", "client_credentials".into())],
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
        ),
        (
            None,
            exchange_form(&code, VERIFIER, REDIRECT),
            StatusCode::UNAUTHORIZED,
            "invalid_client",
        ),
        (
            Some((&world.client_id, "dh_cs_wrong")),
            exchange_form(&code, VERIFIER, REDIRECT),
            StatusCode::UNAUTHORIZED,
            "invalid_client",
        ),
        (
            Some(("00000000-0000-0000-0000-000000000000", "x")),
            exchange_form(&code, VERIFIER, REDIRECT),
            StatusCode::UNAUTHORIZED,
            "invalid_client",
        ),
        // A confidential client's secret in the body is the wrong method.
        (
            None,
            [
                exchange_form(&code, VERIFIER, REDIRECT),
                vec![
                    ("client_id", world.client_id.clone()),
                    ("client_secret", world.client_secret.clone()),
                ],
            ]
            .concat(),
            StatusCode::UNAUTHORIZED,
            "invalid_client",
        ),
        (
            None,
            [
                exchange_form(&code, VERIFIER, REDIRECT),
                vec![("client_id", world.client_id.clone())],
            ]
            .concat(),
            StatusCode::UNAUTHORIZED,
            "invalid_client",
        ),
        (
            basic,
            vec![
                ("grant_type", "authorization_code".into()),
                ("redirect_uri", REDIRECT.into()),
                ("code_verifier", VERIFIER.into()),
            ],
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            basic,
            vec![
                ("grant_type", "authorization_code".into()),
                ("code", code.clone()),
                ("code_verifier", VERIFIER.into()),
            ],
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            basic,
            vec![
                ("grant_type", "authorization_code".into()),
                ("code", code.clone()),
                ("redirect_uri", REDIRECT.into()),
            ],
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            basic,
            exchange_form(&code, "short", REDIRECT),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            basic,
            exchange_form(&code, &"x".repeat(43), REDIRECT),
            StatusCode::BAD_REQUEST,
            "invalid_grant",
        ),
        (
            basic,
            exchange_form(&code, VERIFIER, "http://127.0.0.1:9/cb"),
            StatusCode::BAD_REQUEST,
            "invalid_grant",
        ),
        (
            basic,
            exchange_form(
                "dh_ac_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                VERIFIER,
                REDIRECT,
            ),
            StatusCode::BAD_REQUEST,
            "invalid_grant",
        ),
        (
            Some((&world.other_client_id, &world.other_client_secret)),
            exchange_form(&code, VERIFIER, REDIRECT),
            StatusCode::BAD_REQUEST,
            "invalid_grant",
        ),
        (
            basic,
            vec![("grant_type", "refresh_token".into())],
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            basic,
            vec![
                ("grant_type", "refresh_token".into()),
                ("refresh_token", "dh_rt_nope".into()),
            ],
            StatusCode::BAD_REQUEST,
            "invalid_grant",
        ),
    ];
    for (basic, form, expected_status, expected) in cases {
        let (status, headers, body) = post_token(&app, basic, form.clone()).await;
        assert_oauth_error(status, &body, expected_status, expected);
        assert_eq!(headers[CACHE_CONTROL], "no-store", "{form:?}");
        // public-api.md §7.2: invalid_client carries no WWW-Authenticate.
        assert!(!headers.contains_key("www-authenticate"), "{form:?}");
    }

    // None of the failures above used the code up: it still exchanges once.
    let tokens = exchange(&app, &world, &code).await;
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 3600);
    assert_eq!(tokens["scope"], "decks:read");

    // A replay with a wrong verifier: invalid_grant, and nothing revoked (a stolen code alone
    // cannot log the user out).
    let (status, _, body) =
        post_token(&app, basic, exchange_form(&code, &"y".repeat(43), REDIRECT)).await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
    let (status, _, _) = send(app.client.get(app.api("/_probe/user")).bearer_auth(&access)).await;
    assert_eq!(status, StatusCode::OK);
    // The same replay, otherwise valid: invalid_grant, and the code's tokens are revoked.
    let (status, _, body) = post_token(&app, basic, exchange_form(&code, VERIFIER, REDIRECT)).await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
    let (status, _, body) =
        send(app.client.get(app.api("/_probe/user")).bearer_auth(&access)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_OAUTH2_TOKEN_REVOKED");
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let (status, _, body) = post_token(
        &app,
        basic,
        vec![
            ("grant_type", "refresh_token".into()),
            ("refresh_token", refresh.into()),
        ],
    )
    .await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");

    // Scope on refresh may only narrow.
    let code = approve(&app, &authorize_query(&world.client_id, "decks:read", "s")).await;
    let tokens = exchange(&app, &world, &code).await;
    let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
    let (status, _, body) = post_token(
        &app,
        basic,
        vec![
            ("grant_type", "refresh_token".into()),
            ("refresh_token", refresh.clone()),
            ("scope", "decks:read decks:write".into()),
        ],
    )
    .await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_scope");
    // Another client presenting the refresh token: invalid_grant, and the grant survives.
    let (status, _, body) = post_token(
        &app,
        Some((&world.other_client_id, &world.other_client_secret)),
        vec![
            ("grant_type", "refresh_token".into()),
            ("refresh_token", refresh.clone()),
        ],
    )
    .await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
    let (status, _, body) = post_token(
        &app,
        basic,
        vec![
            ("grant_type", "refresh_token".into()),
            ("refresh_token", refresh),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn an_expired_code_and_an_expired_access_token_are_refused() {
    let clock = Arc::new(FixedClock::at(time::OffsetDateTime::now_utc()));
    let app = TestApp::builder(Store::Memory)
        .clock(clock.clone() as Arc<dyn Clock>)
        .start()
        .await;
    let world = world(&app).await;
    let code = approve(&app, &authorize_query(&world.client_id, "decks:read", "s")).await;
    clock.advance(time::Duration::minutes(10));
    let (status, _, body) = token_request(
        &app,
        Some((&world.client_id, &world.client_secret)),
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");

    let code = approve(&app, &authorize_query(&world.client_id, "decks:read", "s")).await;
    let tokens = exchange(&app, &world, &code).await;
    let access = tokens["access_token"].as_str().unwrap();
    clock.advance(time::Duration::minutes(59));
    let (status, _, _) = send(app.client.get(app.api("/_probe/user")).bearer_auth(access)).await;
    assert_eq!(status, StatusCode::OK);
    clock.advance(time::Duration::minutes(1));
    let (status, headers, body) =
        send(app.client.get(app.api("/_probe/user")).bearer_auth(access)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_OAUTH2_TOKEN_EXPIRED");
    assert!(!headers.contains_key("www-authenticate"));
    // The refresh token lives on (idle expiry, 30 days) and each use extends it.
    let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();
    clock.advance(time::Duration::days(29));
    let (status, _, body) = token_request(
        &app,
        Some((&world.client_id, &world.client_secret)),
        &[("grant_type", "refresh_token"), ("refresh_token", &refresh)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let next = body["refresh_token"].as_str().unwrap().to_owned();
    clock.advance(time::Duration::days(29));
    let (status, _, body) = token_request(
        &app,
        Some((&world.client_id, &world.client_secret)),
        &[("grant_type", "refresh_token"), ("refresh_token", &next)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let last = body["refresh_token"].as_str().unwrap().to_owned();
    clock.advance(time::Duration::days(30));
    let (status, _, body) = token_request(
        &app,
        Some((&world.client_id, &world.client_secret)),
        &[("grant_type", "refresh_token"), ("refresh_token", &last)],
    )
    .await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
}

/// Client credentials, form, expected status and `error`.
type TokenCase<'a> = (
    Option<(&'a str, &'a str)>,
    Vec<(&'a str, String)>,
    StatusCode,
    &'a str,
);

async fn post_token(
    app: &TestApp,
    basic: Option<(&str, &str)>,
    form: Vec<(&str, String)>,
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let pairs: Vec<(&str, &str)> = form.iter().map(|(n, v)| (*n, v.as_str())).collect();
    token_request(app, basic, &pairs).await
}

async fn tokens_for_alice(app: &TestApp, world: &OAuthWorld) -> Value {
    let code = approve(
        app,
        &authorize_query(&world.client_id, "decks:read decks:write", "s"),
    )
    .await;
    exchange(app, world, &code).await
}

#[tokio::test]
async fn introspection_and_revocation_follow_rfc_7662_and_7009() {
    let app = TestApp::postgres().await;
    let world = world(&app).await;
    let basic = Some((world.client_id.as_str(), world.client_secret.as_str()));
    let other = Some((
        world.other_client_id.as_str(),
        world.other_client_secret.as_str(),
    ));
    let tokens = tokens_for_alice(&app, &world).await;
    let access = tokens["access_token"].as_str().unwrap();
    let refresh = tokens["refresh_token"].as_str().unwrap();

    let (status, headers, body) =
        post_form(&app, "/oauth/introspect", basic, &[("token", access)]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[CACHE_CONTROL], "no-store");
    assert_eq!(body["active"], true);
    assert_eq!(body["scope"], "decks:read decks:write");
    assert_eq!(body["client_id"], world.client_id);
    assert_eq!(body["username"], world.user_id);
    assert_eq!(body["token_type"], "Bearer");
    let (exp, iat) = (body["exp"].as_i64().unwrap(), body["iat"].as_i64().unwrap());
    assert_eq!(exp - iat, 3600);
    assert!(body.get("cnf").is_none());
    let (_, _, body) = post_form(&app, "/oauth/introspect", basic, &[("token", refresh)]).await;
    assert_eq!(body["active"], true, "{body}");
    assert_eq!(
        body["exp"].as_i64().unwrap() - body["iat"].as_i64().unwrap(),
        30 * 86_400
    );
    // Another client's view, junk, and nothing at all: inactive.
    for (client, token) in [(other, access), (basic, "dh_at_junk"), (basic, "")] {
        let (status, _, body) =
            post_form(&app, "/oauth/introspect", client, &[("token", token)]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, json!({"active": false}));
    }
    // Client authentication failures are the only HTTP errors.
    let (status, _, body) = post_form(&app, "/oauth/introspect", None, &[("token", access)]).await;
    assert_oauth_error(status, &body, StatusCode::UNAUTHORIZED, "invalid_client");
    let (status, _, body) = post_form(
        &app,
        "/oauth/revoke",
        Some((&world.client_id, "dh_cs_x")),
        &[("token", access)],
    )
    .await;
    assert_oauth_error(status, &body, StatusCode::UNAUTHORIZED, "invalid_client");
    let (status, _, body) = post_form(&app, "/oauth/revoke", basic, &[]).await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_request");

    // Another client cannot revoke it (200 all the same); unknown tokens are 200 too.
    for (client, token) in [(other, access), (basic, "dh_at_junk"), (basic, "whatever")] {
        let (status, _, _) = post_form(&app, "/oauth/revoke", client, &[("token", token)]).await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, _, _) = send(app.client.get(app.api("/_probe/user")).bearer_auth(access)).await;
    assert_eq!(status, StatusCode::OK);

    // Revoking the access token stops it alone; the refresh token still works.
    let (status, _, _) = post_form(
        &app,
        "/oauth/revoke",
        basic,
        &[("token", access), ("token_type_hint", "access_token")],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, body) = send(app.client.get(app.api("/_probe/user")).bearer_auth(access)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_OAUTH2_TOKEN_REVOKED");
    let (_, _, body) = post_form(&app, "/oauth/introspect", basic, &[("token", access)]).await;
    assert_eq!(body, json!({"active": false}));
    let (status, _, refreshed) = token_request(
        &app,
        basic,
        &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");

    // Revoking a refresh token revokes its grant: every token of it.
    let new_access = refreshed["access_token"].as_str().unwrap();
    let new_refresh = refreshed["refresh_token"].as_str().unwrap();
    let (status, _, _) = post_form(&app, "/oauth/revoke", basic, &[("token", new_refresh)]).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, body) = send(
        app.client
            .get(app.api("/_probe/user"))
            .bearer_auth(new_access),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_OAUTH2_TOKEN_REVOKED");
    let (status, _, body) = token_request(
        &app,
        basic,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", new_refresh),
        ],
    )
    .await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_grant");
}

#[tokio::test]
async fn the_bearer_lane_fails_for_unknown_tokens_inactive_users_and_disabled_partners() {
    let app = TestApp::postgres().await;
    let world = world(&app).await;
    let tokens = tokens_for_alice(&app, &world).await;
    let access = tokens["access_token"].as_str().unwrap();
    let probe = |token: String| {
        let request = app.client.get(app.api("/_probe/user")).bearer_auth(token);
        async move { send(request).await }
    };
    for unknown in [
        "dh_at_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "dh_at_short",
        "opaque",
    ] {
        let (status, headers, body) = probe(unknown.into()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
        assert!(!headers.contains_key("www-authenticate"));
    }
    // The partner probe does not take OAuth tokens.
    let (status, _, body) = send(
        app.client
            .get(app.api("/_probe/partner"))
            .bearer_auth(access),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");

    admin(&app, &["partner", "disable", "--slug", "acme"]).await;
    let (status, _, body) = probe(access.into()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
    // Its clients cannot use the token endpoint either.
    let (status, _, body) = token_request(
        &app,
        Some((&world.client_id, &world.client_secret)),
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
        ],
    )
    .await;
    assert_oauth_error(status, &body, StatusCode::UNAUTHORIZED, "invalid_client");

    let app = TestApp::memory().await;
    let world = crate::oauth_support::world(&app).await;
    let tokens = tokens_for_alice(&app, &world).await;
    admin(&app, &["user", "deactivate", "--user", "alice"]).await;
    let (status, _, body) = send(
        app.client
            .get(app.api("/_probe/user"))
            .bearer_auth(tokens["access_token"].as_str().unwrap()),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
}

#[tokio::test]
async fn twenty_uses_of_revoked_tokens_close_the_api_to_that_ip() {
    let app = TestApp::memory().await;
    let world = world(&app).await;
    let tokens = tokens_for_alice(&app, &world).await;
    let revoked = tokens["access_token"].as_str().unwrap();
    post_form(
        &app,
        "/oauth/revoke",
        Some((&world.client_id, &world.client_secret)),
        &[("token", revoked)],
    )
    .await;
    for _ in 0..19 {
        let (status, _, body) =
            send(app.client.get(app.api("/_probe/user")).bearer_auth(revoked)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_envelope(&body, "SERVICE_OAUTH2_TOKEN_REVOKED");
    }
    let (status, headers, body) =
        send(app.client.get(app.api("/_probe/user")).bearer_auth(revoked)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let details = assert_envelope(&body, "SERVICE_RATE_LIMITED");
    assert_eq!(details["window_seconds"], 600);
    assert_eq!(headers["retry-after"], "600");
    // Every request of that IP, even with good credentials or none.
    let (_, fresh_user) = app.user_with_token("bob", "decks:read").await;
    let (status, _, _) = send(
        app.client
            .get(app.api("/_probe/user"))
            .bearer_auth(&fresh_user),
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let (status, _, _) = send(app.client.get(app.api("/games"))).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    // The OAuth endpoints are not the resource server: a client can still revoke and refresh.
    let (status, _, _) = post_form(
        &app,
        "/oauth/introspect",
        Some((&world.client_id, &world.client_secret)),
        &[("token", revoked)],
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // DECKHAND_RATE_LIMITS=off turns the rule off.
    let app = TestApp::builder(Store::Memory)
        .rate_limits(None)
        .start()
        .await;
    let world = crate::oauth_support::world(&app).await;
    let tokens = tokens_for_alice(&app, &world).await;
    let revoked = tokens["access_token"].as_str().unwrap();
    post_form(
        &app,
        "/oauth/revoke",
        Some((&world.client_id, &world.client_secret)),
        &[("token", revoked)],
    )
    .await;
    for _ in 0..25 {
        let (status, _, _) =
            send(app.client.get(app.api("/_probe/user")).bearer_auth(revoked)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
}

#[tokio::test]
async fn metadata_describes_what_is_served() {
    let app = TestApp::memory().await;
    let (status, _, body) = send(
        app.client
            .get(app.url("/.well-known/oauth-authorization-server")),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["issuer"], app.base_url);
    assert_eq!(body["authorization_endpoint"], app.api("/oauth/authorize"));
    assert_eq!(body["token_endpoint"], app.api("/oauth/token"));
    assert_eq!(body["introspection_endpoint"], app.api("/oauth/introspect"));
    assert_eq!(body["revocation_endpoint"], app.api("/oauth/revoke"));
    assert_eq!(body["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(
        body["grant_types_supported"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(body["response_types_supported"], json!(["code"]));
    assert_eq!(body["authorization_response_iss_parameter_supported"], true);
    // Each advertised endpoint answers its method (not 404/405).
    for key in [
        "token_endpoint",
        "introspection_endpoint",
        "revocation_endpoint",
    ] {
        let response = app
            .client
            .post(body[key].as_str().unwrap())
            .send()
            .await
            .unwrap();
        assert!(
            [StatusCode::BAD_REQUEST, StatusCode::UNAUTHORIZED].contains(&response.status()),
            "{key}: {}",
            response.status()
        );
    }
    let response = browserless()
        .get(body["authorization_endpoint"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let response = app
        .client
        .delete(app.api("/oauth/authorize"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
}

/// Two instances on one database, a refresh token sent to both at once, many times: exactly
/// one rotation wins each time, and the loser's replay revokes the grant.
#[tokio::test]
async fn concurrent_refreshes_on_two_instances_let_exactly_one_win() {
    let db = TestDb::new().await;
    let one = TestApp::builder(Store::PostgresAt(db.url().to_owned()))
        .start()
        .await;
    let two = TestApp::builder(Store::PostgresAt(db.url().to_owned()))
        .start()
        .await;
    let world = world(&one).await;
    let basic = Some((world.client_id.as_str(), world.client_secret.as_str()));
    for round in 0..5 {
        let tokens = tokens_for_alice(&one, &world).await;
        let refresh = tokens["refresh_token"].as_str().unwrap();
        let form = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
        let (a, b) = tokio::join!(
            token_request(&one, basic, &form),
            token_request(&two, basic, &form)
        );
        let statuses = [a.0, b.0];
        let winners: Vec<&Value> = [&a, &b]
            .into_iter()
            .filter(|(status, _, _)| *status == StatusCode::OK)
            .map(|(_, _, body)| body)
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {statuses:?}");
        let loser = if a.0 == StatusCode::OK { &b } else { &a };
        assert_oauth_error(loser.0, &loser.2, StatusCode::BAD_REQUEST, "invalid_grant");
        // The loser is a replay of a rotated token: the grant is revoked on both instances.
        let winner_access = winners[0]["access_token"].as_str().unwrap();
        for app in [&one, &two] {
            let (status, _, body) = send(
                app.client
                    .get(app.api("/_probe/user"))
                    .bearer_auth(winner_access),
            )
            .await;
            assert_eq!(status, StatusCode::UNAUTHORIZED);
            assert_envelope(&body, "SERVICE_OAUTH2_TOKEN_REVOKED");
        }
    }
    // A code exchanged on both at once: one wins.
    let code = approve(&one, &authorize_query(&world.client_id, "decks:read", "s")).await;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ];
    let (a, b) = tokio::join!(
        token_request(&one, basic, &form),
        token_request(&two, basic, &form)
    );
    assert_eq!(
        [a.0, b.0].iter().filter(|s| **s == StatusCode::OK).count(),
        1
    );
}

#[tokio::test]
async fn admin_oauth_client_create_validates_its_input() {
    let app = TestApp::memory().await;
    world(&app).await;
    let created = admin(
        &app,
        &[
            "oauth-client",
            "create",
            "--partner",
            "acme",
            "--name",
            "Tracker",
            "--redirect-uri",
            REDIRECT,
            "--scopes",
            "decks:read",
        ],
    )
    .await;
    let secret = created["client_secret"].as_str().unwrap();
    assert!(
        secret.starts_with("dh_cs_") && secret.len() == 49,
        "{secret}"
    );
    assert!(uuid::Uuid::parse_str(created["client_id"].as_str().unwrap()).is_ok());
    for (args, expected) in [
        (
            vec![
                "--partner",
                "ghost",
                "--name",
                "X",
                "--redirect-uri",
                REDIRECT,
                "--scopes",
                "decks:read",
            ],
            "no such partner",
        ),
        (
            vec![
                "--partner",
                "acme",
                "--name",
                "X",
                "--redirect-uri",
                "/relative",
                "--scopes",
                "decks:read",
            ],
            "redirect URI",
        ),
        (
            vec![
                "--partner",
                "acme",
                "--name",
                "X",
                "--redirect-uri",
                "https://a.example/#f",
                "--scopes",
                "decks:read",
            ],
            "redirect URI",
        ),
        (
            vec![
                "--partner",
                "acme",
                "--name",
                "X",
                "--redirect-uri",
                REDIRECT,
                "--scopes",
                "sideboards:write",
            ],
            "does not hold sideboards:write",
        ),
        (
            vec![
                "--partner",
                "acme",
                "--name",
                "X",
                "--redirect-uri",
                REDIRECT,
                "--scopes",
                "",
            ],
            "at least one scope",
        ),
        (
            vec![
                "--partner",
                "acme",
                "--name",
                "",
                "--redirect-uri",
                REDIRECT,
                "--scopes",
                "decks:read",
            ],
            "name",
        ),
        (
            vec![
                "--partner",
                "acme",
                "--name",
                "X",
                "--redirect-uri",
                REDIRECT,
                "--scopes",
                "decks:read",
                "--grant-types",
                "password",
            ],
            "unknown grant type",
        ),
    ] {
        let argv: Vec<&str> = ["oauth-client", "create"].into_iter().chain(args).collect();
        let error = app.admin(&argv).await.unwrap_err();
        assert!(
            format!("{error:#}").contains(expected),
            "{argv:?}: {error:#}"
        );
    }
}

/// Operators see what they created and can stop it (contract §7): `admin partner list`,
/// `api-key list`, `oauth-client list` print JSON without secrets, and `oauth-client disable`
/// stops the client's tokens at once (resource lanes, introspection, refresh) and its consent
/// page.
async fn operators_list_and_disable_what_they_created(app: TestApp) {
    let world = world(&app).await;
    let key = admin(&app, &["api-key", "create", "--partner", "acme"]).await;
    admin(&app, &["api-key", "create", "--partner", "other"]).await;

    let partners = admin(&app, &["partner", "list"]).await;
    let slugs: Vec<&str> = partners["partners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|partner| partner["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["acme", "other"], "{partners}");
    assert_eq!(partners["partners"][0]["active"], true);
    assert_eq!(partners["partners"][0]["created_by"], json!(world.user_id));
    assert!(!partners.to_string().contains("dh_ps_"), "{partners}");

    let keys = admin(&app, &["api-key", "list", "--partner", "acme"]).await;
    assert_eq!(keys["api_keys"].as_array().unwrap().len(), 1, "{keys}");
    assert_eq!(keys["api_keys"][0]["id"], key["id"]);
    assert_eq!(keys["api_keys"][0]["revoked_at"], Value::Null);
    assert!(!keys.to_string().contains("dh_key_"), "{keys}");
    let all = admin(&app, &["api-key", "list"]).await;
    assert_eq!(all["api_keys"].as_array().unwrap().len(), 2, "{all}");

    let clients = admin(&app, &["oauth-client", "list", "--partner", "acme"]).await;
    let listed = clients["oauth_clients"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{clients}");
    assert_eq!(listed[0]["client_id"], json!(world.client_id));
    assert_eq!(listed[0]["public"], false);
    assert_eq!(listed[1]["public"], true);
    assert_eq!(listed[0]["disabled_at"], Value::Null);
    assert!(!clients.to_string().contains("dh_cs_"), "{clients}");

    // A live token of the client, then the client disabled: everything stops at once.
    let tokens = tokens_for_alice(&app, &world).await;
    let access = tokens["access_token"].as_str().unwrap();
    let probe = || app.client.get(app.api("/_probe/user")).bearer_auth(access);
    assert_eq!(send(probe()).await.0, StatusCode::OK);
    let disabled = admin(&app, &["oauth-client", "disable", "--id", &world.client_id]).await;
    assert_eq!(
        disabled,
        json!({"client_id": world.client_id, "active": false})
    );
    let (status, _, body) = send(probe()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
    let (status, _, body) = token_request(
        &app,
        Some((&world.client_id, &world.client_secret)),
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
        ],
    )
    .await;
    assert_oauth_error(status, &body, StatusCode::UNAUTHORIZED, "invalid_client");
    let response = browserless()
        .get(app.api("/oauth/authorize"))
        .query(&authorize_query(&world.client_id, "decks:read", "st"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let listed = admin(&app, &["oauth-client", "list", "--partner", "acme"]).await;
    assert!(
        listed["oauth_clients"][0]["disabled_at"].is_string(),
        "{listed}"
    );
    // The partner's other client is untouched.
    assert_eq!(listed["oauth_clients"][1]["disabled_at"], Value::Null);
    let unknown = app
        .admin(&[
            "oauth-client",
            "disable",
            "--id",
            &uuid::Uuid::nil().to_string(),
        ])
        .await;
    assert!(unknown.is_err());
}

#[tokio::test]
async fn operators_list_and_disable_what_they_created_on_memory() {
    operators_list_and_disable_what_they_created(TestApp::memory().await).await;
}

#[tokio::test]
async fn operators_list_and_disable_what_they_created_on_postgres() {
    operators_list_and_disable_what_they_created(TestApp::postgres().await).await;
}
