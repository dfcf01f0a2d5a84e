//! Who is calling: users, personal access tokens, partners and their API keys and signatures,
//! scopes, and the principal a request acts as.

mod credentials;
mod partner;
mod partner_service;
mod principal;
mod scope;
mod service;
mod user;

pub mod ports;

pub use credentials::{
    AuthorizationHeader, LaneCredentials, PresentedCredentials, RejectedCombination,
};
pub use partner::{
    ApiKey, ApiKeyId, InvalidGameScopes, InvalidPartnerSlug, InvalidTier, Partner, PartnerSlug,
    RequestFacts,
};
pub use partner_service::{
    CreateApiKeyError, CreatePartnerError, NewPartnerRequest, PartnerLookupError, RevokeApiKeyError,
};
pub use principal::{
    AccessDenied, AccessRule, GameScopes, Lane, PartnerRef, Principal, PrincipalUser, Tier,
};
pub use scope::{Scope, Scopes, UnknownScope};
pub(crate) use service::find_usable;
pub use service::{
    AuthError, CreatePatError, CreateUserError, IdentityRepositories, IdentityService,
    LookupUserError, NewPatRequest,
};
pub use user::{
    InvalidUsername, NewUser, PatId, PersonalAccessToken, User, UserId, UserLookup, Username,
};
