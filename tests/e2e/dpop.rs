//! DPoP (RFC 9449) over HTTP: proofs minted by a third-party JOSE implementation
//! (`jsonwebtoken`, keys from `ring`), never by the project's own code, on both stores, with
//! every refusal the contract names, and the `jti` replay shared by two instances.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use deckhand_testkit::app::{Store, TestApp};
use deckhand_testkit::db::TestDb;
use jsonwebtoken::jwk::{
    AlgorithmParameters, CommonParameters, EllipticCurve, EllipticCurveKeyParameters,
    EllipticCurveKeyType, Jwk, OctetKeyPairParameters, OctetKeyPairType,
};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::StatusCode;
use reqwest::header::WWW_AUTHENTICATE;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair};
use serde_json::{Value, json};

use crate::oauth_support::*;
use crate::support::{assert_envelope, send};

/// A client's DPoP key: a `jsonwebtoken` signing key and its public JWK.
struct DpopKey {
    algorithm: Algorithm,
    signing: EncodingKey,
    jwk: Jwk,
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn unix_now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

impl DpopKey {
    fn es256() -> Self {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let point = pair.public_key().as_ref();
        Self {
            algorithm: Algorithm::ES256,
            signing: EncodingKey::from_ec_der(pkcs8.as_ref()),
            jwk: Jwk {
                common: CommonParameters::default(),
                algorithm: AlgorithmParameters::EllipticCurve(EllipticCurveKeyParameters {
                    key_type: EllipticCurveKeyType::EC,
                    curve: EllipticCurve::P256,
                    x: b64(&point[1..33]),
                    y: b64(&point[33..65]),
                }),
            },
        }
    }

    fn ed25519() -> Self {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        Self {
            algorithm: Algorithm::EdDSA,
            signing: EncodingKey::from_ed_der(pkcs8.as_ref()),
            jwk: Jwk {
                common: CommonParameters::default(),
                algorithm: AlgorithmParameters::OctetKeyPair(OctetKeyPairParameters {
                    key_type: OctetKeyPairType::OctetKeyPair,
                    curve: EllipticCurve::Ed25519,
                    x: b64(pair.public_key().as_ref()),
                }),
            },
        }
    }

    /// The RFC 7638 thumbprint, computed here from the JWK's required members.
    fn thumbprint(&self) -> String {
        let canonical = match &self.jwk.algorithm {
            AlgorithmParameters::EllipticCurve(ec) => {
                format!(
                    r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
                    ec.x, ec.y
                )
            }
            AlgorithmParameters::OctetKeyPair(okp) => {
                format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{}"}}"#, okp.x)
            }
            other => panic!("not a DPoP key: {other:?}"),
        };
        b64(ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes()).as_ref())
    }

    /// A proof with these claims, its header `typ` dpop+jwt and this key's `jwk`.
    fn sign(&self, claims: &Value) -> String {
        let header = Header {
            typ: Some("dpop+jwt".into()),
            jwk: Some(self.jwk.clone()),
            ..Header::new(self.algorithm)
        };
        jsonwebtoken::encode(&header, claims, &self.signing).unwrap()
    }

    /// A fresh proof for `method` on `url`, bound to `access_token` when one is given.
    fn proof(&self, method: &str, url: &str, access_token: Option<&str>) -> String {
        self.sign(&claims(method, url, access_token))
    }
}

/// The claims of a fresh proof: a random `jti`, `iat` now.
fn claims(method: &str, url: &str, access_token: Option<&str>) -> Value {
    let mut claims = json!({
        "jti": uuid::Uuid::new_v4().to_string(),
        "htm": method,
        "htu": url,
        "iat": unix_now(),
    });
    if let Some(token) = access_token {
        let hash = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
        claims["ath"] = json!(b64(hash.as_ref()));
    }
    claims
}

/// A proof whose header and claims are exactly this JSON, signed by `key` with
/// `jsonwebtoken`'s signing primitive: for headers `Header` cannot express.
fn sign_raw(key: &DpopKey, header: &Value, claims: &Value) -> String {
    let input = format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    );
    let signature =
        jsonwebtoken::crypto::sign(input.as_bytes(), &key.signing, key.algorithm).unwrap();
    format!("{input}.{signature}")
}

fn public_jwk(key: &DpopKey) -> Value {
    serde_json::to_value(&key.jwk).unwrap()
}

fn token_url(app: &TestApp) -> String {
    format!("{}/api/public/v1/oauth/token", app.public_url)
}

fn probe_url(app: &TestApp) -> String {
    format!("{}/api/public/v1/_probe/user", app.public_url)
}

/// POSTs to the token endpoint as the confidential client, with `proof` as `DPoP`.
async fn token_with_proof(
    app: &TestApp,
    world: &OAuthWorld,
    form: &[(&str, &str)],
    proof: Option<&str>,
) -> (StatusCode, Value) {
    let basic = Some((world.client_id.as_str(), world.client_secret.as_str()));
    let headers: Vec<(&str, &str)> = proof.map(|proof| ("DPoP", proof)).into_iter().collect();
    let (status, _, body) = post_form_with(app, "/oauth/token", basic, form, &headers).await;
    (status, body)
}

/// A fresh code of alice for the confidential client.
async fn fresh_code(app: &TestApp, world: &OAuthWorld) -> String {
    approve(
        app,
        &authorize_query(&world.client_id, "decks:read decks:write", "s"),
    )
    .await
}

fn code_form(code: &str) -> [(&str, &str); 4] {
    [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ]
}

/// Tokens bound to `key`, from a fresh code.
async fn bound_tokens(app: &TestApp, world: &OAuthWorld, key: &DpopKey) -> Value {
    let code = fresh_code(app, world).await;
    let proof = key.proof("POST", &token_url(app), None);
    let (status, body) = token_with_proof(app, world, &code_form(&code), Some(&proof)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP", "{body}");
    body
}

/// GETs the user probe with `Authorization: DPoP <token>` and `proof`.
async fn probe_with(
    app: &TestApp,
    token: &str,
    proof: &str,
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    send(
        app.client
            .get(app.api("/_probe/user"))
            .header("Authorization", format!("DPoP {token}"))
            .header("DPoP", proof),
    )
    .await
}

/// Asserts the contract's DPoP refusal: 401, the envelope, and the challenge naming the algs.
fn assert_dpop_refusal(status: StatusCode, headers: &reqwest::header::HeaderMap, body: &Value) {
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_envelope(body, "SERVICE_AUTHENTICATION_FAILED");
    let challenge = headers
        .get(WWW_AUTHENTICATE)
        .unwrap_or_else(|| panic!("no WWW-Authenticate: {body}"))
        .to_str()
        .unwrap();
    assert!(
        challenge.starts_with(r#"DPoP error="invalid_dpop_proof", error_description=""#),
        "{challenge}"
    );
    assert!(
        challenge.ends_with(r#"", algs="ES256 EdDSA""#),
        "{challenge}"
    );
}

async fn dpop_round_trip(store: Store) {
    let app = TestApp::builder(store).start().await;
    let world = world(&app).await;
    let basic = Some((world.client_id.as_str(), world.client_secret.as_str()));
    for key in [DpopKey::es256(), DpopKey::ed25519()] {
        let tokens = bound_tokens(&app, &world, &key).await;
        let access = tokens["access_token"].as_str().unwrap();

        // Introspection shows the binding.
        let (status, _, body) =
            post_form(&app, "/oauth/introspect", basic, &[("token", access)]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["active"], true, "{body}");
        assert_eq!(body["token_type"], "DPoP");
        assert_eq!(body["cnf"], json!({ "jkt": key.thumbprint() }), "{body}");

        // The user probe and a resource endpoint, each with its own proof.
        let proof = key.proof("GET", &probe_url(&app), Some(access));
        let (status, _, body) = probe_with(&app, access, &proof).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(
            body["caller"],
            format!("partner:acme+user:{}", world.user_id)
        );
        let decks = format!("{}/api/public/v1/games/mtg/decks", app.public_url);
        let (status, _, body) = send(
            app.client
                .get(format!("{}?include=summary", app.api("/games/mtg/decks")))
                .header("Authorization", format!("DPoP {access}"))
                .header("DPoP", key.proof("GET", &decks, Some(access))),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body["data"].is_array(), "{body}");
        // A HEAD is answered as its GET, but its proof names the method the client sent.
        let head = |method: &str| {
            app.client
                .head(app.api("/games/mtg/decks"))
                .header("Authorization", format!("DPoP {access}"))
                .header("DPoP", key.proof(method, &decks, Some(access)))
                .send()
        };
        assert_eq!(head("HEAD").await.unwrap().status(), StatusCode::OK);
        assert_eq!(
            head("GET").await.unwrap().status(),
            StatusCode::UNAUTHORIZED
        );

        // Refreshing with the same key keeps the binding; the new token works on the lane.
        let refresh = tokens["refresh_token"].as_str().unwrap();
        let proof = key.proof("POST", &token_url(&app), None);
        let form = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
        let (status, body) = token_with_proof(&app, &world, &form, Some(&proof)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["token_type"], "DPoP");
        let access = body["access_token"].as_str().unwrap();
        let proof = key.proof("GET", &probe_url(&app), Some(access));
        let (status, _, body) = probe_with(&app, access, &proof).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (_, _, metadata) = send(
        app.client
            .get(app.url("/.well-known/oauth-authorization-server")),
    )
    .await;
    assert_eq!(
        metadata["dpop_signing_alg_values_supported"],
        json!(["ES256", "EdDSA"])
    );
}

#[tokio::test]
async fn dpop_bound_tokens_work_end_to_end_on_the_memory_store() {
    dpop_round_trip(Store::Memory).await;
}

#[tokio::test]
async fn dpop_bound_tokens_work_end_to_end_on_postgres() {
    dpop_round_trip(Store::Postgres).await;
}

#[tokio::test]
async fn lanes_refuse_a_bound_token_as_bearer_and_an_unbound_one_as_dpop() {
    let app = TestApp::memory().await;
    let world = world(&app).await;
    let key = DpopKey::es256();
    let bound = bound_tokens(&app, &world, &key).await;
    let bound = bound["access_token"].as_str().unwrap();
    // The downgrade: a bound token without its proof, as Bearer. No challenge.
    let (status, headers, body) =
        send(app.client.get(app.api("/_probe/user")).bearer_auth(bound)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
    assert!(!headers.contains_key(WWW_AUTHENTICATE), "{headers:?}");
    // The DPoP scheme without a proof header: the proof is missing, which is answered with
    // the challenge like any other bad proof (public-api.md 7.1), on the probe and on a
    // resource alike.
    for path in ["/_probe/user", "/games/mtg/decks"] {
        let (status, headers, body) = send(
            app.client
                .get(app.api(path))
                .header("Authorization", format!("DPoP {bound}")),
        )
        .await;
        assert_dpop_refusal(status, &headers, &body);
        let challenge = headers[WWW_AUTHENTICATE].to_str().unwrap();
        assert!(challenge.contains("missing"), "{challenge}");
    }

    // An unbound token with a perfectly good proof.
    let code = fresh_code(&app, &world).await;
    let unbound = exchange(&app, &world, &code).await;
    assert_eq!(unbound["token_type"], "Bearer");
    let unbound = unbound["access_token"].as_str().unwrap();
    let proof = key.proof("GET", &probe_url(&app), Some(unbound));
    let (status, headers, body) = probe_with(&app, unbound, &proof).await;
    assert_dpop_refusal(status, &headers, &body);
}

#[tokio::test]
async fn every_bad_proof_at_a_resource_is_a_401_with_a_dpop_challenge() {
    let app = TestApp::memory().await;
    let world = world(&app).await;
    let key = DpopKey::es256();
    let tokens = bound_tokens(&app, &world, &key).await;
    let access = tokens["access_token"].as_str().unwrap();
    let url = probe_url(&app);
    let good_header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": public_jwk(&key)});
    let good_claims = || claims("GET", &url, Some(access));
    let with_claim = |name: &str, value: Value| {
        let mut claims = good_claims();
        claims[name] = value;
        key.sign(&claims)
    };
    let with_header = |name: &str, value: Value| {
        let mut header = good_header.clone();
        header[name] = value;
        sign_raw(&key, &header, &good_claims())
    };
    let with_jwk = |name: &str, value: Value| {
        let mut header = good_header.clone();
        header["jwk"][name] = value;
        sign_raw(&key, &header, &good_claims())
    };
    let without = |part: &str, name: &str| {
        let (mut header, mut claims) = (good_header.clone(), good_claims());
        let target = if part == "header" {
            &mut header
        } else {
            &mut claims
        };
        target.as_object_mut().unwrap().remove(name);
        sign_raw(&key, &header, &claims)
    };
    let other_key = DpopKey::ed25519();
    let hs256 = jsonwebtoken::encode(
        &Header {
            typ: Some("dpop+jwt".into()),
            ..Header::new(Algorithm::HS256)
        },
        &good_claims(),
        &EncodingKey::from_secret(b"a shared secret"),
    )
    .unwrap();
    let unsigned = format!(
        "{}.{}.",
        b64(
            json!({"typ": "dpop+jwt", "alg": "none", "jwk": public_jwk(&key)})
                .to_string()
                .as_bytes()
        ),
        b64(good_claims().to_string().as_bytes())
    );
    let one = b64(&{
        let mut one = [0_u8; 32];
        one[31] = 1;
        one
    });
    let off_curve = {
        let mut header = good_header.clone();
        header["jwk"]["x"] = json!(one);
        header["jwk"]["y"] = json!(one);
        sign_raw(&key, &header, &good_claims())
    };
    let forger = DpopKey::es256();
    // Each bad proof, and the check its refusal must name.
    let cases: Vec<(&str, String, &str)> = vec![
        ("not a JWT", "not-a-jwt".into(), "compact JWS"),
        (
            "bad base64",
            "%%%.###.$$$".into(),
            "header is not base64url",
        ),
        (
            "padded base64",
            format!("{}=", key.proof("GET", &url, Some(access))),
            "signature is not base64url",
        ),
        (
            "huge",
            format!("{}.e30.AA", "A".repeat(6000)),
            "longer than 4096",
        ),
        (
            "header not JSON",
            format!("{}.e30.AA", b64(b"not json")),
            "header is not a JSON object",
        ),
        ("typ JWT", with_header("typ", json!("JWT")), "typ"),
        ("typ a number", with_header("typ", json!(1)), "typ"),
        ("alg HS256", hs256, "alg"),
        ("alg none", unsigned, "alg"),
        ("alg RS256", with_header("alg", json!("RS256")), "alg"),
        ("no jwk", without("header", "jwk"), "jwk is missing"),
        (
            "jwk a string",
            with_header("jwk", json!("key")),
            "jwk is missing",
        ),
        (
            "private jwk",
            with_jwk("d", json!(b64(&[7; 32]))),
            "private member d",
        ),
        (
            "wrong curve",
            with_jwk("crv", json!("P-384")),
            "P-256 EC key",
        ),
        (
            "short coordinate",
            with_jwk("x", json!(b64(&[1; 31]))),
            "member x",
        ),
        ("coordinate a number", with_jwk("y", json!(5)), "member y"),
        ("off the curve", off_curve, "signature does not verify"),
        (
            "signed by another key",
            sign_raw(&forger, &good_header, &good_claims()),
            "signature does not verify",
        ),
        (
            "htm POST",
            with_claim("htm", json!("POST")),
            "htm does not match",
        ),
        ("htm missing", without("claims", "htm"), "claim htm"),
        (
            "htu elsewhere",
            with_claim(
                "htu",
                json!(format!("{}/api/public/v1/games", app.public_url)),
            ),
            "htu",
        ),
        (
            "htu another host",
            with_claim(
                "htu",
                json!("https://evil.example/api/public/v1/_probe/user"),
            ),
            "htu",
        ),
        ("iat old", with_claim("iat", json!(unix_now() - 120)), "iat"),
        (
            "iat future",
            with_claim("iat", json!(unix_now() + 120)),
            "iat",
        ),
        ("iat a string", with_claim("iat", json!("now")), "claim iat"),
        (
            "ath of another token",
            with_claim("ath", json!(b64(&[0; 32]))),
            "ath",
        ),
        ("ath missing", without("claims", "ath"), "claim ath"),
        ("jti missing", without("claims", "jti"), "claim jti"),
        ("jti empty", with_claim("jti", json!("")), "jti"),
        (
            "another key",
            other_key.proof("GET", &url, Some(access)),
            "not the key the token is bound to",
        ),
    ];
    for (case, proof, check) in cases {
        let (status, headers, body) = probe_with(&app, access, &proof).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{case}: {body}");
        assert_dpop_refusal(status, &headers, &body);
        let challenge = headers[WWW_AUTHENTICATE].to_str().unwrap();
        assert!(challenge.contains(check), "{case}: {challenge}");
    }

    // A refused proof does not spend its jti; an accepted one does, once.
    let mut claims = good_claims();
    claims["ath"] = json!(b64(&[0; 32]));
    let (status, headers, body) = probe_with(&app, access, &key.sign(&claims)).await;
    assert_dpop_refusal(status, &headers, &body);
    let mut good = good_claims();
    good["jti"] = claims["jti"].clone();
    let proof = key.sign(&good);
    let (status, _, body) = probe_with(&app, access, &proof).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, headers, body) = probe_with(&app, access, &proof).await;
    assert_dpop_refusal(status, &headers, &body);
    assert!(
        headers[WWW_AUTHENTICATE].to_str().unwrap().contains("jti"),
        "{headers:?}"
    );

    // A resource write is judged the same way, before anything changes.
    let decks = format!("{}/api/public/v1/games/mtg/decks", app.public_url);
    let (status, headers, body) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .header("Authorization", format!("DPoP {access}"))
            .header("DPoP", key.proof("GET", &decks, Some(access)))
            .json(&json!({"name": "Never made", "format": "standard", "cards": []})),
    )
    .await;
    assert_dpop_refusal(status, &headers, &body);
}

#[tokio::test]
async fn the_token_endpoint_answers_bad_proofs_with_invalid_dpop_proof() {
    let app = TestApp::memory().await;
    let world = world(&app).await;
    let key = DpopKey::ed25519();
    let code = fresh_code(&app, &world).await;
    let form = code_form(&code);
    for bad in [
        key.proof("GET", &token_url(&app), None),
        key.proof("POST", &probe_url(&app), None),
        "garbage".to_owned(),
    ] {
        let (status, body) = token_with_proof(&app, &world, &form, Some(&bad)).await;
        assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_dpop_proof");
    }
    // Two proofs are one too many.
    let basic = Some((world.client_id.as_str(), world.client_secret.as_str()));
    let proof = key.proof("POST", &token_url(&app), None);
    let (status, _, body) = post_form_with(
        &app,
        "/oauth/token",
        basic,
        &form,
        &[("DPoP", &proof), ("DPoP", &proof)],
    )
    .await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_dpop_proof");
    // None of those spent the code: a good proof still binds it.
    let (status, body) = token_with_proof(&app, &world, &form, Some(&proof)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP");
    let refresh = body["refresh_token"].as_str().unwrap().to_owned();
    let refresh_form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh.as_str()),
    ];

    // The proof's jti is spent at the token endpoint too.
    let code_two = fresh_code(&app, &world).await;
    let (status, body) = token_with_proof(&app, &world, &code_form(&code_two), Some(&proof)).await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_dpop_proof");

    // A bound grant refreshes only with a proof by its key, and a refused refresh spends
    // nothing: the refresh token still works with the right key.
    let (status, body) = token_with_proof(&app, &world, &refresh_form, None).await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_dpop_proof");
    let stranger = DpopKey::es256().proof("POST", &token_url(&app), None);
    let (status, body) = token_with_proof(&app, &world, &refresh_form, Some(&stranger)).await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_dpop_proof");
    let proof = key.proof("POST", &token_url(&app), None);
    let (status, body) = token_with_proof(&app, &world, &refresh_form, Some(&proof)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "DPoP");

    // An unbound grant is refreshed without a proof; with one it is refused.
    let unbound = exchange(&app, &world, &code_two).await;
    let refresh = unbound["refresh_token"].as_str().unwrap();
    let refresh_form = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
    let proof = key.proof("POST", &token_url(&app), None);
    let (status, body) = token_with_proof(&app, &world, &refresh_form, Some(&proof)).await;
    assert_oauth_error(status, &body, StatusCode::BAD_REQUEST, "invalid_dpop_proof");
    let (status, body) = token_with_proof(&app, &world, &refresh_form, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "Bearer");
}

/// Two instances behind one public URL on one database: a proof accepted by one is a replay
/// on the other, and one proof sent to both at once is accepted exactly once.
#[tokio::test]
async fn a_proof_is_spent_for_every_instance_on_the_database() {
    let db = TestDb::new().await;
    let public_url = "https://api.deckhand.example";
    let one = TestApp::builder(Store::PostgresAt(db.url().to_owned()))
        .public_url(public_url)
        .start()
        .await;
    let two = TestApp::builder(Store::PostgresAt(db.url().to_owned()))
        .public_url(public_url)
        .start()
        .await;
    let world = world(&one).await;
    let key = DpopKey::es256();
    let tokens = bound_tokens(&one, &world, &key).await;
    let access = tokens["access_token"].as_str().unwrap();

    let proof = key.proof("GET", &probe_url(&one), Some(access));
    let (status, _, body) = probe_with(&one, access, &proof).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, headers, body) = probe_with(&two, access, &proof).await;
    assert_dpop_refusal(status, &headers, &body);

    for round in 0..5 {
        let proof = key.proof("GET", &probe_url(&one), Some(access));
        let (a, b) = tokio::join!(
            probe_with(&one, access, &proof),
            probe_with(&two, access, &proof)
        );
        let accepted = [a.0, b.0]
            .iter()
            .filter(|status| **status == StatusCode::OK)
            .count();
        assert_eq!(accepted, 1, "round {round}: {} {}", a.0, b.0);
        let (status, headers, body) = if a.0 == StatusCode::OK { b } else { a };
        assert_dpop_refusal(status, &headers, &body);
    }
}
