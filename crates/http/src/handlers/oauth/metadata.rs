use actix_web::{HttpResponse, web};
use deckhand_domain::identity::Scope;
use deckhand_domain::oauth::GrantType;
use serde_json::json;

use crate::API_BASE;
use crate::state::HttpState;

/// The path of the authorization server metadata (RFC 8414 §3).
pub const METADATA_PATH: &str = "/.well-known/oauth-authorization-server";

/// Authorization server metadata (RFC 8414), built from the same constants the endpoints use.
#[tracing::instrument(level = "debug", skip_all)]
pub async fn metadata(state: web::Data<HttpState>) -> HttpResponse {
    let issuer = &state.config.public_url;
    let endpoint = |path: &str| format!("{issuer}{API_BASE}/oauth/{path}");
    let client_auth = ["client_secret_basic", "none"];
    HttpResponse::Ok().json(json!({
        "issuer": issuer,
        "authorization_endpoint": endpoint("authorize"),
        "token_endpoint": endpoint("token"),
        "introspection_endpoint": endpoint("introspect"),
        "revocation_endpoint": endpoint("revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": GrantType::ALL.map(GrantType::as_str),
        "code_challenge_methods_supported": ["S256"],
        "scopes_supported": Scope::ALL.map(Scope::as_str),
        "token_endpoint_auth_methods_supported": client_auth,
        "introspection_endpoint_auth_methods_supported": client_auth,
        "revocation_endpoint_auth_methods_supported": client_auth,
        "authorization_response_iss_parameter_supported": true,
        "dpop_signing_alg_values_supported": deckhand_auth::DPOP_ALGS.split(' ').collect::<Vec<_>>(),
        "service_documentation": format!("{issuer}{API_BASE}/openapi.json"),
    }))
}
