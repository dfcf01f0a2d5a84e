//! The OAuth 2.0 authorization server's endpoints. They live under the API base but outside
//! the resource server: no credential lanes, no envelope (RFC 6749 bodies, HTML pages).

pub mod authorize;
mod form;
pub mod introspect;
pub mod metadata;
mod page;
pub mod revoke;
pub mod token;

/// Path prefix of the OAuth endpoints, which the API gate leaves alone.
pub const OAUTH_PREFIX: &str = "/api/public/v1/oauth/";
