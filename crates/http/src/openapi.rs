//! The OpenAPI 3.1 document, generated from the handlers' annotations.

use std::sync::OnceLock;

use actix_web::App;
use utoipa::Modify;
use utoipa::OpenApi as _;
use utoipa::openapi::OpenApi;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa_actix_web::AppExt as _;

use crate::routes::{API_BASE, api};

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

/// The document, built once from the same route list the server uses.
pub fn document() -> OpenApi {
    static DOCUMENT: OnceLock<OpenApi> = OnceLock::new();
    DOCUMENT
        .get_or_init(|| {
            let (_, document) = App::new()
                .into_utoipa_app()
                .openapi(ApiDoc::openapi())
                .service(utoipa_actix_web::scope(API_BASE).configure(api))
                .split_for_parts();
            document
        })
        .clone()
}
