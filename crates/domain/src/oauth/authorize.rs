//! The authorization request (`/authorize`): its checks, in the contract's order.

use super::model::{GrantType, OAuthClient};
use super::rules::{ScopeRefused, requested_scopes};
use crate::identity::Scopes;

/// The parameters of `/authorize`, as sent (query of the GET, hidden inputs of the POST).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizationParams {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub scope: Option<String>,
    pub state: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
}

/// A request that passed every check: the page may ask the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationRequest {
    pub client: OAuthClient,
    pub redirect_uri: String,
    pub scopes: Scopes,
    pub state: Option<String>,
    pub code_challenge: String,
}

/// The `error` codes `/authorize` redirects with (RFC 6749 §4.1.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthorizeErrorCode {
    InvalidRequest,
    UnauthorizedClient,
    AccessDenied,
    UnsupportedResponseType,
    InvalidScope,
    ServerError,
    TemporarilyUnavailable,
}

impl AuthorizeErrorCode {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::UnauthorizedClient => "unauthorized_client",
            Self::AccessDenied => "access_denied",
            Self::UnsupportedResponseType => "unsupported_response_type",
            Self::InvalidScope => "invalid_scope",
            Self::ServerError => "server_error",
            Self::TemporarilyUnavailable => "temporarily_unavailable",
        }
    }
}

/// Why an authorization request cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum AuthorizeError {
    /// Unknown or disabled client: shown on a page, never redirected (there is nowhere safe).
    #[error("unknown client")]
    UnknownClient,
    /// `redirect_uri` missing or not registered byte for byte: shown on a page, never redirected.
    #[error("the redirect URI is missing or not registered for this client")]
    InvalidRedirectUri,
    /// Back to the client with `error` (and `state`, and `iss`).
    #[error("{}: {description}", error.as_str())]
    Redirect {
        redirect_uri: String,
        error: AuthorizeErrorCode,
        description: String,
        state: Option<String>,
    },
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

impl AuthorizeError {
    pub(crate) fn redirect(
        request: &AuthorizationParams,
        redirect_uri: &str,
        error: AuthorizeErrorCode,
        description: impl Into<String>,
    ) -> Self {
        Self::Redirect {
            redirect_uri: redirect_uri.to_owned(),
            error,
            description: description.into(),
            state: request.state.clone(),
        }
    }
}

/// Checks `params` for `client` (`None` when unknown or its partner is disabled), in the
/// contract's order: client, redirect URI (both without a redirect), then by redirect
/// `response_type`, PKCE, scope, and whether the client may use the code flow.
pub fn check_authorization(
    client: Option<OAuthClient>,
    params: &AuthorizationParams,
) -> Result<AuthorizationRequest, AuthorizeError> {
    let client = client.ok_or(AuthorizeError::UnknownClient)?;
    let redirect_uri = params
        .redirect_uri
        .as_deref()
        .filter(|uri| client.has_redirect_uri(uri))
        .ok_or(AuthorizeError::InvalidRedirectUri)?;
    let refuse = |error, description: &str| {
        AuthorizeError::redirect(params, redirect_uri, error, description)
    };
    if params.response_type.as_deref() != Some("code") {
        return Err(refuse(
            AuthorizeErrorCode::UnsupportedResponseType,
            "response_type must be code",
        ));
    }
    let code_challenge = match (
        params.code_challenge.as_deref(),
        params.code_challenge_method.as_deref(),
    ) {
        (Some(challenge), Some("S256")) if deckhand_auth::is_valid_s256_challenge(challenge) => {
            challenge.to_owned()
        }
        (None, _) => {
            return Err(refuse(
                AuthorizeErrorCode::InvalidRequest,
                "code_challenge is required (PKCE)",
            ));
        }
        (Some(_), Some("S256")) => {
            return Err(refuse(
                AuthorizeErrorCode::InvalidRequest,
                "code_challenge must be 43 base64url characters",
            ));
        }
        (Some(_), _) => {
            return Err(refuse(
                AuthorizeErrorCode::InvalidRequest,
                "code_challenge_method must be S256",
            ));
        }
    };
    let scopes = requested_scopes(params.scope.as_deref().unwrap_or(""), &client.scopes).map_err(
        |refused| {
            let description = match refused {
                ScopeRefused::Empty => "scope is required".to_owned(),
                other => other.to_string(),
            };
            refuse(AuthorizeErrorCode::InvalidScope, &description)
        },
    )?;
    if !client.allows(GrantType::AuthorizationCode) {
        return Err(refuse(
            AuthorizeErrorCode::UnauthorizedClient,
            "this client may not use the authorization code flow",
        ));
    }
    Ok(AuthorizationRequest {
        redirect_uri: redirect_uri.to_owned(),
        scopes,
        state: params.state.clone(),
        code_challenge,
        client,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::PartnerSlug;
    use crate::oauth::model::{ClientId, ClientKind, RedirectUri};
    use time::macros::datetime;
    use uuid::Uuid;

    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    fn client() -> OAuthClient {
        OAuthClient {
            id: ClientId(Uuid::from_u128(5)),
            partner: PartnerSlug::parse("acme").unwrap(),
            name: "Deck Tracker".into(),
            kind: ClientKind::Public,
            redirect_uris: vec![RedirectUri::parse("https://app.example/cb").unwrap()],
            scopes: Scopes::parse_list("decks:read decks:write").unwrap(),
            grant_types: GrantType::ALL.into_iter().collect(),
            created_at: datetime!(2026-01-01 0:00 UTC),
            disabled_at: None,
        }
    }

    fn params() -> AuthorizationParams {
        AuthorizationParams {
            response_type: Some("code".into()),
            client_id: Some(client().id.to_string()),
            redirect_uri: Some("https://app.example/cb".into()),
            scope: Some("decks:read".into()),
            state: Some("xyz".into()),
            code_challenge: Some(CHALLENGE.into()),
            code_challenge_method: Some("S256".into()),
        }
    }

    fn redirected(result: Result<AuthorizationRequest, AuthorizeError>) -> AuthorizeErrorCode {
        match result {
            Err(AuthorizeError::Redirect { error, state, .. }) => {
                assert_eq!(state.as_deref(), Some("xyz"));
                error
            }
            other => panic!("expected a redirect, got {other:?}"),
        }
    }

    #[test]
    fn a_valid_request_passes_with_its_scopes() {
        let request = check_authorization(Some(client()), &params()).unwrap();
        assert_eq!(request.scopes.names(), ["decks:read"]);
        assert_eq!(request.code_challenge, CHALLENGE);
    }

    #[test]
    fn unknown_clients_and_unregistered_redirects_are_never_redirected() {
        assert!(matches!(
            check_authorization(None, &params()),
            Err(AuthorizeError::UnknownClient)
        ));
        for uri in [
            None,
            Some("https://app.example/cb/"),
            Some("https://APP.example/cb"),
        ] {
            let request = AuthorizationParams {
                redirect_uri: uri.map(str::to_owned),
                // Even with every other parameter wrong, the redirect URI decides first.
                response_type: Some("token".into()),
                ..params()
            };
            assert!(matches!(
                check_authorization(Some(client()), &request),
                Err(AuthorizeError::InvalidRedirectUri)
            ));
        }
    }

    #[test]
    fn redirected_errors_come_in_the_contracts_order() {
        let all_wrong = AuthorizationParams {
            response_type: Some("token".into()),
            code_challenge: None,
            scope: Some("decks:admin".into()),
            ..params()
        };
        let mut narrow_client = client();
        narrow_client.grant_types = [GrantType::RefreshToken].into_iter().collect();
        assert_eq!(
            redirected(check_authorization(Some(narrow_client.clone()), &all_wrong)),
            AuthorizeErrorCode::UnsupportedResponseType
        );
        let request = AuthorizationParams {
            response_type: Some("code".into()),
            ..all_wrong.clone()
        };
        assert_eq!(
            redirected(check_authorization(Some(narrow_client.clone()), &request)),
            AuthorizeErrorCode::InvalidRequest
        );
        let plain = AuthorizationParams {
            code_challenge: Some(CHALLENGE.into()),
            code_challenge_method: Some("plain".into()),
            ..request.clone()
        };
        assert_eq!(
            redirected(check_authorization(Some(narrow_client.clone()), &plain)),
            AuthorizeErrorCode::InvalidRequest
        );
        let request = AuthorizationParams {
            code_challenge: Some(CHALLENGE.into()),
            code_challenge_method: Some("S256".into()),
            ..request
        };
        assert_eq!(
            redirected(check_authorization(Some(narrow_client.clone()), &request)),
            AuthorizeErrorCode::InvalidScope
        );
        let request = AuthorizationParams {
            scope: Some("decks:read".into()),
            ..request
        };
        assert_eq!(
            redirected(check_authorization(Some(narrow_client), &request)),
            AuthorizeErrorCode::UnauthorizedClient
        );
    }

    #[test]
    fn missing_and_disallowed_scopes_are_invalid_scope() {
        for scope in [
            None,
            Some(""),
            Some("sideboards:read"),
            Some("decks:read nope"),
        ] {
            let request = AuthorizationParams {
                scope: scope.map(str::to_owned),
                ..params()
            };
            assert_eq!(
                redirected(check_authorization(Some(client()), &request)),
                AuthorizeErrorCode::InvalidScope
            );
        }
    }

    #[test]
    fn redirect_uris_are_absolute_without_fragments_or_script_schemes() {
        for good in [
            "https://app.example/cb?x=1",
            "http://127.0.0.1:9000/cb",
            "com.example.app:/cb",
        ] {
            assert!(RedirectUri::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "/relative",
            "https://app.example/cb#frag",
            "javascript:alert(1)",
            "https:///nohost",
            "https://app.example/a b",
            "",
        ] {
            assert!(RedirectUri::parse(bad).is_err(), "{bad}");
        }
    }
}
