//! The OpenAPI 3.1 document, generated from the handlers' annotations.

use utoipa::Modify;
use utoipa::OpenApi as _;
use utoipa::openapi::OpenApi;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Deckhand public API",
        version = "1.0.0",
        description = "Decks, sideboard guides and cards for partners, OAuth clients and players."
    ),
    modifiers(&SecuritySchemes)
)]
struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, document: &mut OpenApi) {
        let components = document.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "PersonalAccessToken",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("dh_pat_...")
                    .description(Some("Authorization: Bearer <personal access token>"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "OAuthClientBasic",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Basic)
                    .description(Some(
                        "A confidential OAuth client: HTTP Basic with client_id and client_secret; public clients send client_id in the form instead",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "DPoP",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "DPoP",
                "A DPoP proof JWT (RFC 9449: typ dpop+jwt, alg ES256 or EdDSA, a public jwk, htm, htu, iat, jti and ath), sent with Authorization: DPoP <access token> for a token bound to the proof's key (see docs/oauth.md)",
            ))),
        );
        components.add_security_scheme(
            "ApiKey",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-Api-Key",
                "A partner API key (dh_key_...)",
            ))),
        );
        components.add_security_scheme(
            "PartnerSignature",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-Signature",
                "v1.<unix_seconds>.<hex HMAC-SHA256>, sent with X-Partner-Id (see docs/partners.md)",
            ))),
        );
    }
}

/// The document's title, version, description and security schemes; the paths come from
/// the route list (see [`crate::document`]).
pub(crate) fn base() -> OpenApi {
    ApiDoc::openapi()
}
