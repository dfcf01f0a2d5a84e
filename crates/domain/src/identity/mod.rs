//! Who is calling: users, personal access tokens, scopes, and the principal a request acts as.

mod credentials;
mod principal;
mod scope;
mod service;
mod user;

pub mod ports;

pub use credentials::{
    AuthorizationHeader, LaneCredentials, PresentedCredentials, RejectedCombination,
};
pub use principal::{
    AccessDenied, AccessRule, GameScopes, Lane, PartnerRef, Principal, PrincipalUser, Tier,
};
pub use scope::{Scope, Scopes, UnknownScope};
pub use service::{
    AuthError, CreatePatError, CreateUserError, IdentityService, LookupUserError, NewPatRequest,
};
pub use user::{
    InvalidUsername, NewUser, PatId, PersonalAccessToken, User, UserId, UserLookup, Username,
};
