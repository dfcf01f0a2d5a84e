//! The OAuth 2.0 authorization server: clients owned by partners, the authorization code flow
//! with PKCE (S256), grants whose refresh tokens rotate, introspection and revocation, and the
//! Bearer and DPoP (RFC 9449) lanes of the resource server. The grant state machine is pure (`rules`); the service
//! reaches the store only through [`ports::OAuthRepository`].

mod authorize;
mod dpop;
mod lane;
mod model;
mod rules;
mod service;
mod throttle;

pub mod ports;

pub use authorize::{
    AuthorizationParams, AuthorizationRequest, AuthorizeError, AuthorizeErrorCode,
    check_authorization,
};
pub use dpop::{JTI_LIFETIME, PresentedProof, ProofRefused};
pub(crate) use lane::{authenticate_bearer, authenticate_dpop};
pub use model::{
    AccessToken, AuthorizationCode, ClientId, ClientKind, Grant, GrantId, GrantType,
    InvalidRedirectUri, OAuthClient, OAuthPolicy, RedirectUri, RefreshToken, Session,
};
pub use ports::OAuthRepository;
pub use rules::{
    AccessTokenState, CodeState, RefreshTokenState, ScopeRefused, access_token_state, code_state,
    narrowed_scopes, refresh_token_state, requested_scopes,
};
pub use service::{
    BasicCredentials, ClientAuthentication, CreateClientError, Introspection, IssuedTokenResponse,
    NewClientRequest, OAuthService, SignInError, TokenError, TokenRequest,
};
pub use throttle::{FailureCount, SignInThrottle, ThrottleKey};
