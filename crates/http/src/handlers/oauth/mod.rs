//! The OAuth 2.0 authorization server's endpoints. They live under the API base but outside
//! the resource server: no credential lanes, no envelope (RFC 6749 bodies, HTML pages).

pub(crate) mod authorize;
mod form;
pub(crate) mod introspect;
pub(crate) mod metadata;
mod page;
pub(crate) mod revoke;
pub(crate) mod token;
