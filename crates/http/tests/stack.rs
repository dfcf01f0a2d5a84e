//! The middleware stack and body decoding, exercised through test routes mounted on the real
//! stack (`with_middleware`), so that failures no public endpoint can provoke yet (a panic, a
//! body of each content type) are covered.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a panic is a failure with a message.

use actix_web::http::StatusCode;
use actix_web::test::{TestRequest, call_service, init_service, read_body_json, try_call_service};
use actix_web::{App, HttpResponse, get, web};
use deckhand_auth::CanonicalRequest;
use deckhand_domain::identity::{
    AccessRule, GameScopes, NewPartnerRequest, NewPatRequest, PartnerSlug, Scope, Scopes,
    UserLookup,
};
use deckhand_domain::ports::SystemPorts;
use deckhand_domain::{ServiceSettings, Services};
use deckhand_http::auth::Caller;
use deckhand_http::body::{Body, json_or_text};
use deckhand_http::{ApiError, HttpConfig, HttpState, with_document, with_middleware};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct EchoBody {
    name: String,
    #[serde(default)]
    visibility: Vec<String>,
    #[serde(default)]
    legal: Option<bool>,
    #[serde(default, deserialize_with = "json_or_text")]
    cards: Option<Vec<Value>>,
}

async fn echo(Body(body): Body<EchoBody>) -> HttpResponse {
    HttpResponse::Ok().json(body)
}

async fn panics() -> HttpResponse {
    panic!("a handler bug")
}

async fn needs_read(Caller(principal): Caller) -> Result<HttpResponse, ApiError> {
    principal.authorize(AccessRule::AnonymousOr(Scope::DecksRead), Some("mtg"))?;
    Ok(HttpResponse::NoContent().finish())
}

fn state() -> (web::Data<HttpState>, Services) {
    let services = Services::new(
        deckhand_memory::repositories(),
        SystemPorts::system(),
        ServiceSettings::new([1; 32]),
    );
    let config = HttpConfig::new("http://test");
    (
        web::Data::new(HttpState::new(services.clone(), config).unwrap()),
        services,
    )
}

macro_rules! test_app {
    ($state:expr) => {
        init_service(with_middleware(
            App::new()
                .app_data($state)
                .route("/echo", web::post().to(echo))
                .route("/panic", web::get().to(panics))
                .route("/read", web::get().to(needs_read))
                .route("/api/public/v1/_test/echo", web::post().to(echo)),
        ))
        .await
    };
}

async fn send(
    app: &impl actix_web::dev::Service<
        actix_http::Request,
        Response = actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>,
        Error = actix_web::Error,
    >,
    request: TestRequest,
) -> (StatusCode, Value) {
    let response = call_service(app, request.to_request()).await;
    let status = response.status();
    (status, read_body_json(response).await)
}

#[actix_web::test]
async fn json_form_and_multipart_decode_to_the_same_dto() {
    let app = test_app!(state().0);
    let expected =
        json!({"name": "Burn", "visibility": ["public"], "legal": true, "cards": [{"q": 4}]});

    let json_request = TestRequest::post().uri("/echo").set_json(&expected);
    assert_eq!(
        send(&app, json_request).await,
        (StatusCode::OK, expected.clone())
    );

    let form = TestRequest::post()
        .uri("/echo")
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .set_payload("name=Burn&visibility=public&legal=true&cards=%5B%7B%22q%22%3A4%7D%5D");
    assert_eq!(send(&app, form).await, (StatusCode::OK, expected.clone()));

    let boundary = "XyZ";
    let part = |name: &str, value: &str| {
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        )
    };
    let multipart = format!(
        "{}{}{}{}--{boundary}--\r\n",
        part("name", "Burn"),
        part("visibility", "public"),
        part("legal", "true"),
        part("cards", r#"[{"q":4}]"#)
    );
    let request = TestRequest::post()
        .uri("/echo")
        .insert_header((
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        ))
        .set_payload(multipart);
    assert_eq!(send(&app, request).await, (StatusCode::OK, expected));
}

#[actix_web::test]
async fn bad_bodies_get_the_envelope_and_the_right_status() {
    let app = test_app!(state().0);

    let malformed = TestRequest::post()
        .uri("/echo")
        .insert_header(("content-type", "application/json"))
        .set_payload("{\"name\": ");
    let (status, body) = send(&app, malformed).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "SERVICE_VALIDATION_ERROR");

    let unknown_field = TestRequest::post()
        .uri("/echo")
        .set_json(json!({"name": "x", "colour": 1}));
    let (status, body) = send(&app, unknown_field).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["details"]["fields"][0],
        json!({"field": "colour", "code": "unknown_field", "message": body["details"]["fields"][0]["message"]})
    );

    let wrong_type = TestRequest::post()
        .uri("/echo")
        .set_json(json!({"name": "x", "legal": "yes"}));
    let (status, body) = send(&app, wrong_type).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["details"]["fields"][0]["field"], "legal");

    let text = TestRequest::post()
        .uri("/echo")
        .insert_header(("content-type", "text/plain"))
        .set_payload("name=x");
    let (status, body) = send(&app, text).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(body["error"], "SERVICE_VALIDATION_ERROR");

    let huge = format!("{{\"name\": \"{}\"}}", "x".repeat(4 * 1024 * 1024));
    let oversized = TestRequest::post()
        .uri("/echo")
        .insert_header(("content-type", "application/json"))
        .set_payload(huge);
    let (status, body) = send(&app, oversized).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body["error"], "SERVICE_PAYLOAD_TOO_LARGE");
}

#[actix_web::test]
async fn a_panicking_handler_is_a_500_envelope_with_a_request_id() {
    let app = test_app!(state().0);
    // The panic takes the request with it, so the stack answers with an error that renders
    // itself; the server's dispatcher turns it into the response, as done here.
    let error = try_call_service(&app, TestRequest::get().uri("/panic").to_request())
        .await
        .err()
        .expect("a panic surfaces as an error response");
    let response = error.error_response();
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert!(response.headers().contains_key("x-request-id"));
    let bytes = actix_web::body::to_bytes(response.into_body())
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        body,
        json!({"error": "SERVICE_INTERNAL_ERROR", "message": "internal error", "details": {}})
    );
    // The worker survives: the next request is served.
    let again = call_service(
        &app,
        TestRequest::post()
            .uri("/echo")
            .set_json(json!({"name": "x"}))
            .to_request(),
    )
    .await;
    assert_eq!(again.status(), StatusCode::OK);
}

#[actix_web::test]
async fn a_token_without_the_scope_gets_403_with_required_and_granted() {
    let (state, services) = state();
    let app = test_app!(state);
    services
        .identity
        .create_user("writer", None, false)
        .await
        .unwrap();
    let (_, token) = services
        .identity
        .create_pat(NewPatRequest {
            user: UserLookup::parse("writer").unwrap(),
            scopes: Scopes::parse_list("decks:write").unwrap(),
            name: None,
            expires_in_days: None,
        })
        .await
        .unwrap();
    let request = TestRequest::get()
        .uri("/read")
        .insert_header(("authorization", format!("Bearer {token}")));
    let (status, body) = send(&app, request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        body,
        json!({
            "error": "SERVICE_INSUFFICIENT_SCOPE",
            "message": "this request needs decks:read",
            "details": {"required": ["decks:read"], "granted": ["decks:write"]}
        })
    );
    let anonymous = call_service(&app, TestRequest::get().uri("/read").to_request()).await;
    assert_eq!(anonymous.status(), StatusCode::NO_CONTENT);
}

async fn partner_key(services: &Services, slug: &str, scopes: &str, games: &str) -> String {
    if services
        .identity
        .find_user(&UserLookup::parse("owner").unwrap())
        .await
        .is_err()
    {
        services
            .identity
            .create_user("owner", None, false)
            .await
            .unwrap();
    }
    services
        .identity
        .create_partner(NewPartnerRequest {
            slug: PartnerSlug::parse(slug).unwrap(),
            owner: UserLookup::parse("owner").unwrap(),
            scopes: Scopes::parse_list(scopes).unwrap(),
            game_scopes: GameScopes::parse_list(games).unwrap(),
            tier: None,
        })
        .await
        .unwrap();
    let (_, key) = services
        .identity
        .create_api_key(&PartnerSlug::parse(slug).unwrap())
        .await
        .unwrap();
    key
}

#[actix_web::test]
async fn partners_need_the_scope_and_the_game() {
    let (state, services) = state();
    let app = test_app!(state);
    let writer = partner_key(&services, "writer", "decks:write", "*").await;
    let request = TestRequest::get()
        .uri("/read")
        .insert_header(("x-api-key", writer));
    let (status, body) = send(&app, request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        body["details"],
        json!({"required": ["decks:read"], "granted": ["decks:write"]})
    );

    let elsewhere = partner_key(&services, "lorcana-only", "decks:read", "lorcana").await;
    let request = TestRequest::get()
        .uri("/read")
        .insert_header(("x-api-key", elsewhere));
    let (status, body) = send(&app, request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(body["error"], "SERVICE_INSUFFICIENT_SCOPE");
    assert_eq!(
        body["details"],
        json!({"required": ["game:mtg"], "granted": ["game:lorcana"]})
    );

    let reader = partner_key(&services, "reader", "decks:read", "mtg").await;
    let request = TestRequest::get()
        .uri("/read")
        .insert_header(("x-api-key", reader));
    let response = call_service(&app, request.to_request()).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
}

/// The gate reads a signed body to hash it; the handler must still get every byte.
#[actix_web::test]
async fn a_signed_body_reaches_the_handler_intact() {
    let (state, services) = state();
    let app = test_app!(state);
    services
        .identity
        .create_user("owner", None, false)
        .await
        .unwrap();
    let (_, secret) = services
        .identity
        .create_partner(NewPartnerRequest {
            slug: PartnerSlug::parse("acme").unwrap(),
            owner: UserLookup::parse("owner").unwrap(),
            scopes: Scopes::parse_list("decks:write").unwrap(),
            game_scopes: GameScopes::All,
            tier: None,
        })
        .await
        .unwrap();
    let body = r#"{"name":"Burn","visibility":["public"]}"#;
    let digest = deckhand_auth::sha256(body.as_bytes());
    let timestamp = time::OffsetDateTime::now_utc().unix_timestamp();
    let signature = CanonicalRequest {
        timestamp,
        method: "POST",
        path: "/api/public/v1/_test/echo",
        query: "",
        partner_slug: "acme",
        body_sha256: &digest,
    }
    .sign(secret.as_bytes())
    .render();
    let request = || {
        TestRequest::post()
            .uri("/api/public/v1/_test/echo")
            .insert_header(("content-type", "application/json"))
            .insert_header(("x-partner-id", "acme"))
            .insert_header(("x-signature", signature.clone()))
            .set_payload(body)
    };
    let (status, echoed) = send(&app, request()).await;
    assert_eq!(status, StatusCode::OK, "{echoed}");
    assert_eq!(echoed["name"], "Burn");
    // Single use on POST.
    let (status, replayed) = send(&app, request()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(replayed["error"], "SERVICE_AUTHENTICATION_FAILED");
}

/// The real application with an anonymous quota of `anonymous` a minute.
fn state_with_quota(anonymous: u32) -> web::Data<HttpState> {
    let services = Services::new(
        deckhand_memory::repositories(),
        SystemPorts::system(),
        ServiceSettings::new([1; 32]),
    );
    let config = HttpConfig {
        rate_limits: Some(
            [("anonymous", anonymous), ("user", 100), ("partner", 100)]
                .into_iter()
                .map(|(tier, quota)| (tier.to_owned(), quota))
                .collect(),
        ),
        ..HttpConfig::new("http://test")
    };
    web::Data::new(HttpState::new(services, config).unwrap())
}

#[actix_web::test]
async fn an_ipv6_64_shares_one_anonymous_quota() {
    let app = init_service(deckhand_http::app(state_with_quota(2))).await;
    let from = |peer: &str| {
        TestRequest::get()
            .uri("/api/public/v1/_probe/public")
            .peer_addr(peer.parse().unwrap())
    };
    // Two addresses of one /64 spend its quota; a third address of it is limited...
    for peer in ["[2001:db8:5:6::1]:4000", "[2001:db8:5:6:ffff::2]:4000"] {
        assert_eq!(send(&app, from(peer)).await.0, StatusCode::OK, "{peer}");
    }
    let (status, body) = send(&app, from("[2001:db8:5:6:1:2:3:4]:4000")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"], "SERVICE_RATE_LIMITED");
    // ...while the next /64, and IPv4 addresses each alone, have their own.
    for peer in ["[2001:db8:5:7::1]:4000", "192.0.2.1:4000", "192.0.2.2:4000"] {
        assert_eq!(send(&app, from(peer)).await.0, StatusCode::OK, "{peer}");
    }
    // A dual-stack socket's IPv4-mapped address is that IPv4 address.
    assert_eq!(send(&app, from("192.0.2.3:4000")).await.0, StatusCode::OK);
    let (status, _) = send(&app, from("[::ffff:192.0.2.3]:4000")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = send(&app, from("[::ffff:192.0.2.3]:4000")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
}

/// A deprecated operation, as the route list would declare one.
#[utoipa::path(tag = "test", responses((status = 200)), security(()))]
#[get("/_test/old")]
async fn old_operation() -> HttpResponse {
    HttpResponse::Ok().json(json!({"old": true}))
}

/// A neighbour that is not deprecated.
#[utoipa::path(tag = "test", responses((status = 200)), security(()))]
#[get("/_test/current")]
async fn current_operation() -> HttpResponse {
    HttpResponse::Ok().json(json!({"old": false}))
}

#[actix_web::test]
async fn a_deprecated_operation_says_so_in_the_document_and_every_response() {
    use deckhand_http::deprecation::{Deprecation, deprecated};
    use utoipa_actix_web::AppExt as _;

    let deprecation = Deprecation {
        since: 1_767_225_600,  // 2026-01-01
        sunset: 1_798_761_600, // 2027-01-01
        link: "https://deckhand.example/docs/changelog#old",
    };
    let (app, document) = App::new()
        .into_utoipa_app()
        .service(
            utoipa_actix_web::scope("/api/public/v1")
                .service(deprecated(old_operation, deprecation))
                .service(current_operation),
        )
        .split_for_parts();
    let spec = serde_json::to_value(&document).unwrap();
    let old = &spec["paths"]["/api/public/v1/_test/old"]["get"];
    assert_eq!(old["deprecated"], true);
    assert_eq!(old["x-deprecation"]["Deprecation"], "@1767225600");
    assert_eq!(
        old["responses"]["200"]["headers"]["Sunset"]["description"],
        "`Fri, 01 Jan 2027 00:00:00 GMT`"
    );
    assert!(spec["paths"]["/api/public/v1/_test/current"]["get"]["deprecated"].is_null());

    let app = init_service(with_middleware(with_document(
        app.app_data(state().0),
        document,
    )))
    .await;
    let response = call_service(
        &app,
        TestRequest::get()
            .uri("/api/public/v1/_test/old")
            .to_request(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let header = |name: &str| response.headers().get(name).unwrap().to_str().unwrap();
    assert_eq!(header("deprecation"), "@1767225600");
    assert_eq!(header("sunset"), "Fri, 01 Jan 2027 00:00:00 GMT");
    assert_eq!(
        header("link"),
        "<https://deckhand.example/docs/changelog#old>; rel=\"deprecation\""
    );

    // Refusals of the deprecated operation carry them too.
    let refused = call_service(
        &app,
        TestRequest::get()
            .uri("/api/public/v1/_test/old")
            .insert_header(("authorization", "Bearer dh_pat_nonsense"))
            .to_request(),
    )
    .await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(refused.headers().contains_key("deprecation"));

    let current = call_service(
        &app,
        TestRequest::get()
            .uri("/api/public/v1/_test/current")
            .to_request(),
    )
    .await;
    assert_eq!(current.status(), StatusCode::OK);
    assert!(!current.headers().contains_key("deprecation"));
    assert!(!current.headers().contains_key("sunset"));
}
