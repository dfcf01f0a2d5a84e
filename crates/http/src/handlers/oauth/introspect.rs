use actix_web::{HttpRequest, HttpResponse, post, web};
use deckhand_domain::oauth::Introspection;
use serde::Serialize;
use utoipa::ToSchema;

use super::form::Params;
use crate::oauth_error::{OAuthError, OAuthErrorBody, no_store};
use crate::state::HttpState;

/// The form of `POST /oauth/introspect`.
#[allow(dead_code)] // Documents the form for OpenAPI; the handler reads it through `Params`.
#[derive(ToSchema)]
pub struct IntrospectForm {
    /// An access or refresh token.
    token: String,
    /// Ignored: the token's prefix says what it is.
    token_type_hint: Option<String>,
    /// Public clients only.
    client_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct IntrospectionResponse {
    active: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
    /// The bare user id.
    #[serde(skip_serializing_if = "Option::is_none")]
    username: Option<String>,
    /// Unix seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    exp: Option<i64>,
    /// Unix seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    iat: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    token_type: Option<&'static str>,
    /// `{"jkt": ...}` for tokens bound to a DPoP key.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    cnf: Option<serde_json::Value>,
}

impl From<Introspection> for IntrospectionResponse {
    fn from(introspection: Introspection) -> Self {
        match introspection {
            Introspection::Inactive => Self {
                active: false,
                scope: None,
                client_id: None,
                username: None,
                exp: None,
                iat: None,
                token_type: None,
                cnf: None,
            },
            Introspection::Active {
                scope,
                client_id,
                user_id,
                expires_at,
                issued_at,
                token_type,
                jkt,
            } => Self {
                active: true,
                scope: Some(scope.names().join(" ")),
                client_id: Some(client_id.to_string()),
                username: Some(user_id.to_string()),
                exp: Some(expires_at.unix_timestamp()),
                iat: Some(issued_at.unix_timestamp()),
                token_type: Some(token_type),
                cnf: jkt.map(|jkt| serde_json::json!({ "jkt": jkt })),
            },
        }
    }
}

/// Token introspection (RFC 7662) for the client the token was issued to; any other token,
/// or one that is not live, is `{"active": false}`.
#[utoipa::path(
    tag = "oauth",
    request_body(content = IntrospectForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, body = IntrospectionResponse),
        (status = 400, body = OAuthErrorBody, description = "Not a form body"),
        (status = 401, body = OAuthErrorBody, description = "invalid_client"),
    ),
    security(("OAuthClientBasic" = []), ())
)]
#[post("/oauth/introspect")]
#[tracing::instrument(level = "debug", skip_all)]
pub async fn introspect(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<HttpState>,
) -> Result<HttpResponse, OAuthError> {
    let params = Params::token_form(&request, payload).await?;
    let introspection = state
        .services
        .oauth
        .introspect(
            &params.client_authentication(&request),
            params.get("token").as_deref(),
        )
        .await?;
    Ok(no_store(HttpResponse::Ok()).json(IntrospectionResponse::from(introspection)))
}
