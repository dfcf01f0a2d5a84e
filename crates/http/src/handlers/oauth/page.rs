//! The HTML of `/authorize`: the consent page, the error page, their security headers, cookies
//! and the redirects back to the client.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, HttpResponseBuilder};
use askama::Template;
use deckhand_domain::identity::Scope;
use deckhand_domain::oauth::{AuthorizationRequest, AuthorizeErrorCode};

use crate::OAUTH_BASE;

/// The cookies of the consent page, named for the scheme of `DECKHAND_PUBLIC_URL`: on https
/// with the `__Host-` prefix, which browsers accept only from a secure origin, with `Path=/`
/// and no `Domain`, so no sibling subdomain or plain-http page can set or shadow them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cookies {
    https: bool,
}

impl Cookies {
    pub fn for_public_url(public_url: &str) -> Self {
        Self {
            https: public_url.starts_with("https://"),
        }
    }

    /// The cookie holding the sign-in session.
    pub fn session(self) -> &'static str {
        if self.https {
            "__Host-deckhand_session"
        } else {
            "deckhand_session"
        }
    }

    /// The cookie the form's CSRF token is bound to.
    pub fn csrf(self) -> &'static str {
        if self.https {
            "__Host-deckhand_csrf"
        } else {
            "deckhand_csrf"
        }
    }

    /// A cookie of the consent page: HttpOnly, SameSite=Lax; on https Secure and `Path=/` (as
    /// the prefix requires), else scoped to the OAuth paths.
    pub fn cookie(
        self,
        name: &'static str,
        value: String,
        max_age_seconds: i64,
    ) -> Cookie<'static> {
        Cookie::build(name, value)
            .path(if self.https { "/" } else { OAUTH_BASE })
            .http_only(true)
            .same_site(SameSite::Lax)
            .secure(self.https)
            .max_age(actix_web::cookie::time::Duration::seconds(max_age_seconds))
            .finish()
    }
}

/// No caching, no framing, no scripts, no referrer: the page holds a form that grants access.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

pub fn authorize_path() -> String {
    format!("{OAUTH_BASE}/authorize")
}

pub fn secured(status: StatusCode) -> HttpResponseBuilder {
    let mut builder = HttpResponse::build(status);
    builder
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((header::PRAGMA, HeaderValue::from_static("no-cache")))
        .insert_header((header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ))
        .insert_header((
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .insert_header((
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ));
    builder
}

pub struct ScopeLine {
    pub name: &'static str,
    pub description: &'static str,
}

/// What a scope lets an app do, in words a user reads before approving.
fn describe(scope: Scope) -> &'static str {
    match scope {
        Scope::CollectionRead => "See your card collection and what your decks still need from it",
        Scope::CollectionWrite => {
            "Change your card collection: add, remove, import and replace cards"
        }
        Scope::DecksRead => {
            "See your decks, including private and unlisted ones, and their history and guides"
        }
        Scope::DecksWrite => "Create and change your decks, roll them back, and write their guides",
        Scope::SideboardsRead => "See your sideboard guides",
        Scope::SideboardsWrite => "Create and change your sideboard guides",
    }
}

#[derive(Template)]
#[template(path = "oauth/consent.html")]
pub struct ConsentPage {
    action: String,
    client_name: String,
    partner: String,
    client_id: String,
    redirect_uri: String,
    scope: String,
    scopes: Vec<ScopeLine>,
    state: Option<String>,
    code_challenge: String,
    csrf_token: String,
    signed_in_as: Option<String>,
    username: String,
    error: Option<String>,
}

impl ConsentPage {
    pub fn new(request: &AuthorizationRequest, csrf_token: String) -> Self {
        Self {
            action: authorize_path(),
            client_name: request.client.name.clone(),
            partner: request.client.partner.as_str().to_owned(),
            client_id: request.client.id.to_string(),
            redirect_uri: request.redirect_uri.clone(),
            scope: request.scopes.names().join(" "),
            scopes: request
                .scopes
                .iter()
                .map(|scope| ScopeLine {
                    name: scope.as_str(),
                    description: describe(scope),
                })
                .collect(),
            state: request.state.clone(),
            code_challenge: request.code_challenge.clone(),
            csrf_token,
            signed_in_as: None,
            username: String::new(),
            error: None,
        }
    }

    pub fn signed_in_as(mut self, username: Option<String>) -> Self {
        self.signed_in_as = username;
        self
    }

    pub fn with_error(mut self, error: &str, username: Option<String>) -> Self {
        self.error = Some(error.to_owned());
        self.username = username.unwrap_or_default();
        self
    }
}

#[derive(Template)]
#[template(path = "oauth/error.html")]
pub struct ErrorPage {
    pub heading: &'static str,
    pub message: String,
}

/// Renders a template as the body of `builder`.
pub fn html(mut builder: HttpResponseBuilder, template: &impl Template) -> HttpResponse {
    match template.render() {
        Ok(body) => builder.content_type("text/html; charset=utf-8").body(body),
        Err(error) => {
            tracing::error!(%error, "rendering an OAuth page failed");
            secured(StatusCode::INTERNAL_SERVER_ERROR)
                .content_type("text/plain; charset=utf-8")
                .body("internal error")
        }
    }
}

pub fn error_page(
    status: StatusCode,
    heading: &'static str,
    message: impl Into<String>,
) -> HttpResponse {
    html(
        secured(status),
        &ErrorPage {
            heading,
            message: message.into(),
        },
    )
}

/// `redirect_uri` with `pairs` appended to its query, byte for byte otherwise.
pub fn redirect_target(redirect_uri: &str, pairs: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        query.append_pair(name, value);
    }
    let separator = match redirect_uri.split_once('?') {
        Some((_, "")) => "",
        Some(_) => "&",
        None => "?",
    };
    format!("{redirect_uri}{separator}{}", query.finish())
}

/// 303 to the client (RFC 9207: every response carries `iss`).
pub fn redirect_back<'a>(
    redirect_uri: &str,
    mut pairs: Vec<(&'a str, &'a str)>,
    state: Option<&'a str>,
    issuer: &'a str,
) -> HttpResponseBuilder {
    if let Some(state) = state {
        pairs.push(("state", state));
    }
    pairs.push(("iss", issuer));
    let mut builder = secured(StatusCode::SEE_OTHER);
    builder.insert_header((header::LOCATION, redirect_target(redirect_uri, &pairs)));
    builder
}

/// 303 to the client with `error` (RFC 6749 §4.1.2.1).
pub fn redirect_error(
    redirect_uri: &str,
    error: AuthorizeErrorCode,
    description: &str,
    state: Option<&str>,
    issuer: &str,
) -> HttpResponse {
    redirect_back(
        redirect_uri,
        vec![
            ("error", error.as_str()),
            ("error_description", description),
        ],
        state,
        issuer,
    )
    .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_appended_to_the_registered_query() {
        assert_eq!(
            redirect_target("https://a.example/cb", &[("code", "x y")]),
            "https://a.example/cb?code=x+y"
        );
        assert_eq!(
            redirect_target("https://a.example/cb?app=1", &[("code", "c&d")]),
            "https://a.example/cb?app=1&code=c%26d"
        );
        assert_eq!(
            redirect_target("https://a.example/cb?", &[("code", "c")]),
            "https://a.example/cb?code=c"
        );
    }

    #[test]
    fn everything_echoed_into_the_page_is_escaped() {
        let page = ErrorPage {
            heading: "Unknown app",
            message: "<script>alert(1)</script>\"".into(),
        };
        let body = page.render().unwrap();
        assert!(!body.contains("<script>alert"), "{body}");
        assert!(body.contains("&#60;script&#62;"), "{body}");
    }
}
