//! OAuth fixtures over HTTP: a user with a password, a partner, clients made through the admin
//! command, and a browserless walk through the consent form (the browser test drives the real
//! page).

use deckhand_testkit::app::TestApp;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use reqwest::{Client, StatusCode};
use serde_json::Value;

pub const PASSWORD: &str = "correct horse battery";
pub const REDIRECT: &str = "https://app.example/cb";
/// RFC 7636 appendix B.
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

pub struct OAuthWorld {
    pub user_id: String,
    pub client_id: String,
    pub client_secret: String,
    pub public_client_id: String,
    /// A client of another partner.
    pub other_client_id: String,
    pub other_client_secret: String,
}

/// A client that does not follow redirects, so tests see the 303s.
pub fn browserless() -> Client {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

pub async fn admin(app: &TestApp, args: &[&str]) -> Value {
    app.admin(args)
        .await
        .unwrap_or_else(|error| panic!("admin {args:?}: {error:#}"))
}

/// alice (password [`PASSWORD`]) owns partner acme (decks:read decks:write sideboards:read,
/// game mtg, tier gold) with a confidential and a public client, and partner other with a
/// confidential client.
pub async fn world(app: &TestApp) -> OAuthWorld {
    let user = admin(
        app,
        &[
            "user",
            "create",
            "--username",
            "alice",
            "--password",
            PASSWORD,
        ],
    )
    .await;
    admin(
        app,
        &[
            "partner",
            "create",
            "--slug",
            "acme",
            "--owner",
            "alice",
            "--scopes",
            "decks:read decks:write sideboards:read",
            "--game-scopes",
            "mtg",
            "--tier",
            "gold",
        ],
    )
    .await;
    admin(
        app,
        &[
            "partner",
            "create",
            "--slug",
            "other",
            "--owner",
            "alice",
            "--scopes",
            "decks:read",
            "--game-scopes",
            "*",
        ],
    )
    .await;
    let confidential = admin(
        app,
        &[
            "oauth-client",
            "create",
            "--partner",
            "acme",
            "--name",
            "Deck Tracker",
            "--redirect-uri",
            REDIRECT,
            "--redirect-uri",
            "http://127.0.0.1:9/cb",
            "--scopes",
            "decks:read,decks:write",
        ],
    )
    .await;
    let public = admin(
        app,
        &[
            "oauth-client",
            "create",
            "--partner",
            "acme",
            "--name",
            "Deck Tracker Mobile",
            "--redirect-uri",
            REDIRECT,
            "--scopes",
            "decks:read",
            "--public",
        ],
    )
    .await;
    assert_eq!(public["client_secret"], Value::Null);
    let other = admin(
        app,
        &[
            "oauth-client",
            "create",
            "--partner",
            "other",
            "--name",
            "Other App",
            "--redirect-uri",
            REDIRECT,
            "--scopes",
            "decks:read",
        ],
    )
    .await;
    let text = |value: &Value, key: &str| value[key].as_str().unwrap().to_owned();
    OAuthWorld {
        user_id: text(&user, "id"),
        client_id: text(&confidential, "client_id"),
        client_secret: text(&confidential, "client_secret"),
        public_client_id: text(&public, "client_id"),
        other_client_id: text(&other, "client_id"),
        other_client_secret: text(&other, "client_secret"),
    }
}

/// The query of an authorization request for `client_id` (PKCE with [`CHALLENGE`]).
pub fn authorize_query(client_id: &str, scope: &str, state: &str) -> Vec<(String, String)> {
    [
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("scope", scope),
        ("state", state),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]
    .iter()
    .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
    .collect()
}

/// The value of cookie `name` among a response's `Set-Cookie` headers.
pub fn set_cookie(headers: &reqwest::header::HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find_map(|value| value.strip_prefix(&format!("{name}=")).map(str::to_owned))
        .map(|rest| rest.split(';').next().unwrap_or_default().to_owned())
}

/// The value of a hidden input in the consent page.
pub fn hidden_input(page: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = page
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name} in {page}"))
        + marker.len();
    page[start..].split('"').next().unwrap().to_owned()
}

/// A browser's session with the consent page: its cookies and the page's CSRF token.
pub struct ConsentForm {
    pub csrf_cookie: String,
    pub csrf_token: String,
    pub page: String,
}

/// GETs the consent page of `query` and returns what posting its form needs.
pub async fn open_consent(app: &TestApp, query: &[(String, String)]) -> ConsentForm {
    let response = browserless()
        .get(app.api("/oauth/authorize"))
        .query(query)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let csrf_cookie = set_cookie(response.headers(), csrf_cookie_name(app)).expect("a CSRF cookie");
    let page = response.text().await.unwrap();
    ConsentForm {
        csrf_token: hidden_input(&page, "csrf_token"),
        csrf_cookie,
        page,
    }
}

/// The name of the consent page's CSRF cookie: `__Host-` prefixed on an https public URL.
pub fn csrf_cookie_name(app: &TestApp) -> &'static str {
    if app.public_url.starts_with("https://") {
        "__Host-deckhand_csrf"
    } else {
        "deckhand_csrf"
    }
}

/// The consent page of `query` as a browser holding `cookies` sees it.
pub async fn consent_page_with(app: &TestApp, query: &[(String, String)], cookies: &str) -> String {
    browserless()
        .get(app.api("/oauth/authorize"))
        .query(query)
        .header(COOKIE, cookies)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// POSTs the consent form of `query` with `extra` fields and `cookies`.
pub async fn post_consent(
    app: &TestApp,
    query: &[(String, String)],
    cookies: &str,
    extra: &[(&str, &str)],
) -> reqwest::Response {
    let mut form: Vec<(String, String)> = query.to_vec();
    form.extend(
        extra
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned())),
    );
    browserless()
        .post(app.api("/oauth/authorize"))
        .header(COOKIE, cookies)
        .form(&form)
        .send()
        .await
        .unwrap()
}

/// The query parameters of a redirect's `Location`.
pub fn location_params(response: &reqwest::Response) -> Vec<(String, String)> {
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "{response:?}");
    let location = response.headers()[LOCATION].to_str().unwrap();
    let url = reqwest::Url::parse(location).unwrap();
    url.query_pairs()
        .map(|(n, v)| (n.into_owned(), v.into_owned()))
        .collect()
}

pub fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Signs in as alice and approves `query`; returns the code from the redirect.
pub async fn approve(app: &TestApp, query: &[(String, String)]) -> String {
    let form = open_consent(app, query).await;
    let response = post_consent(
        app,
        query,
        &format!("{}={}", csrf_cookie_name(app), form.csrf_cookie),
        &[
            ("csrf_token", &form.csrf_token),
            ("username", "alice"),
            ("password", PASSWORD),
            ("decision", "approve"),
        ],
    )
    .await;
    let params = location_params(&response);
    assert_eq!(param(&params, "iss"), Some(app.public_url.as_str()));
    param(&params, "code").expect("a code").to_owned()
}

/// POSTs a form to the token endpoint, with HTTP Basic when `basic` is given.
pub async fn token_request(
    app: &TestApp,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    post_form(app, "/oauth/token", basic, form).await
}

pub async fn post_form(
    app: &TestApp,
    path: &str,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    post_form_with(app, path, basic, form, &[]).await
}

/// [`post_form`] with extra headers (a `DPoP` proof, say).
pub async fn post_form_with(
    app: &TestApp,
    path: &str,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
    headers: &[(&str, &str)],
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let mut request = browserless().post(app.api(path)).form(form);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some((id, secret)) = basic {
        request = request.basic_auth(id, Some(secret));
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
    };
    (status, headers, body)
}

/// Exchanges a code for tokens as the confidential client.
pub async fn exchange(app: &TestApp, world: &OAuthWorld, code: &str) -> Value {
    let (status, _, body) = token_request(
        app,
        Some((&world.client_id, &world.client_secret)),
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// Asserts an RFC 6749 error body (never the resource-server envelope).
pub fn assert_oauth_error(
    status: StatusCode,
    body: &Value,
    expected_status: StatusCode,
    error: &str,
) {
    assert_eq!(status, expected_status, "{body}");
    assert_eq!(body["error"], error, "{body}");
    assert!(body["error_description"].is_string(), "{body}");
    assert!(
        body.get("message").is_none() && body.get("details").is_none(),
        "{body}"
    );
}
