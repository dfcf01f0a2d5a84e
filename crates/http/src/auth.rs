//! The request authenticator: copies the credential headers into the domain's
//! `PresentedCredentials`, and what a signature covers into `RequestFacts`, and lets the
//! identity service decide. The API gate (`middleware::api_gate`) authenticates every API
//! request once; handlers take [`Caller`], which reuses that result.

use std::sync::LazyLock;

use actix_web::dev::Payload;
use actix_web::http::header::{AUTHORIZATION, HeaderMap};
use actix_web::{FromRequest, HttpMessage as _, HttpRequest, web};
use deckhand_domain::identity::{
    AccessDenied, AuthorizationHeader, Lane, PartnerRef, PresentedCredentials, Principal,
    RequestFacts,
};
use futures_util::future::LocalBoxFuture;

use crate::error::ApiError;
use crate::head;
use crate::state::HttpState;

/// The authenticated principal of a request (anonymous when no credentials were sent).
#[derive(Debug, Clone)]
pub struct Caller(pub Principal);

/// The caller string, left in the request's extensions for the request log.
#[derive(Debug, Clone)]
pub struct CallerName(pub String);

/// SHA-256 of the request body, left in the extensions by the API gate when a signature came
/// with the request (the body is read, hashed and put back for the handler).
#[derive(Debug, Clone, Copy)]
pub struct BodyDigest(pub [u8; 32]);

/// The header that carries a partner signature.
pub const X_SIGNATURE: &str = "x-signature";

/// The partner behind a request on a partner lane without a user (its signature alone, or
/// one of its API keys), which the partner probe and the webhook endpoints take. Any other
/// credentials are a 401 as before, saying which credentials these endpoints take: a user's
/// token is accepted, just not here, and "not accepted" alone sent callers to check a token
/// that was fine.
pub(crate) fn partner_alone(principal: &Principal) -> Result<&PartnerRef, ApiError> {
    match principal.require_lane(&[Lane::PartnerSignature, Lane::PartnerApiKey]) {
        Ok(()) => principal
            .partner
            .as_ref()
            .ok_or_else(ApiError::authentication_failed),
        Err(AccessDenied::LaneNotAccepted) => Err(ApiError::partner_lane_required()),
        Err(denied) => Err(denied.into()),
    }
}

/// A credential header that cannot be read as one value: it fails authentication.
pub(crate) struct Unreadable;

fn single_header(headers: &HeaderMap, name: &str) -> Result<Option<String>, Unreadable> {
    let mut values = headers.get_all(name);
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Unreadable);
    }
    first
        .to_str()
        .map(|value| Some(value.to_owned()))
        .map_err(|_| Unreadable)
}

/// The `DPoP` proof header, if there is exactly one readable value (RFC 9449 §4.3: more than
/// one is an error).
pub(crate) fn dpop_header(headers: &HeaderMap) -> Result<Option<String>, Unreadable> {
    single_header(headers, DPOP)
}

/// The header that carries a DPoP proof (RFC 9449).
const DPOP: &str = "dpop";

fn presented_credentials(headers: &HeaderMap) -> Result<PresentedCredentials, Unreadable> {
    Ok(PresentedCredentials {
        authorization: single_header(headers, AUTHORIZATION.as_str())?
            .map(|value| AuthorizationHeader::parse(&value)),
        dpop_proof: dpop_header(headers)?,
        partner_id: single_header(headers, "x-partner-id")?,
        signature: single_header(headers, X_SIGNATURE)?,
        api_key: single_header(headers, "x-api-key")?,
    })
}

/// What a signature covers and what a DPoP proof names. The path and query come from the
/// request line exactly as sent (percent-encoding kept); the public URI is
/// `DECKHAND_PUBLIC_URL` + that path. Without a digest from the gate the body counts as empty,
/// which fails closed: a signature over a real body will not verify.
fn request_facts(request: &HttpRequest, public_url: &str) -> RequestFacts {
    static EMPTY_BODY_SHA256: LazyLock<[u8; 32]> = LazyLock::new(|| deckhand_auth::sha256(b""));
    let body_sha256 = request
        .extensions()
        .get::<BodyDigest>()
        .map_or(*EMPTY_BODY_SHA256, |digest| digest.0);
    RequestFacts {
        method: head::sent_method(request).to_owned(),
        path: request.uri().path().to_owned(),
        query: request.uri().query().unwrap_or("").to_owned(),
        body_sha256,
        public_uri: public_uri(request, public_url),
    }
}

/// The URI a client addressed `request` to: `DECKHAND_PUBLIC_URL` + the path as sent. The
/// host a proxy forwarded is never trusted for it.
pub(crate) fn public_uri(request: &HttpRequest, public_url: &str) -> String {
    format!("{public_url}{}", request.uri().path())
}

/// Authenticates `request` and leaves the [`Caller`] (and its name, for the log) in its
/// extensions.
pub async fn authenticate(request: &HttpRequest, state: &HttpState) -> Result<Caller, ApiError> {
    if let Some(caller) = request.extensions().get::<Caller>() {
        return Ok(caller.clone());
    }
    let credentials = presented_credentials(request.headers())
        .map_err(|Unreadable| ApiError::authentication_failed())?;
    let facts = request_facts(request, &state.config.public_url);
    let principal = state
        .services
        .authentication
        .authenticate(&credentials, &facts)
        .await?;
    let caller = Caller(principal);
    request
        .extensions_mut()
        .insert(CallerName(caller.0.caller()));
    request.extensions_mut().insert(caller.clone());
    Ok(caller)
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let request = request.clone();
        Box::pin(async move {
            if let Some(caller) = request.extensions().get::<Caller>() {
                return Ok(caller.clone());
            }
            let state = request.app_data::<web::Data<HttpState>>().ok_or_else(|| {
                ApiError::unexpected(anyhow::anyhow!("HttpState is not registered"))
            })?;
            authenticate(&request, state).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    #[test]
    fn duplicated_credential_headers_are_unreadable() {
        let request = TestRequest::default()
            .append_header(("X-Api-Key", "a"))
            .append_header(("X-Api-Key", "b"))
            .to_http_request();
        assert!(presented_credentials(request.headers()).is_err());
    }

    #[test]
    fn headers_are_copied_as_sent() {
        let request = TestRequest::default()
            .insert_header(("Authorization", "Bearer dh_pat_x"))
            .insert_header(("X-Partner-Id", "acme"))
            .to_http_request();
        let credentials = presented_credentials(request.headers()).ok().unwrap();
        assert_eq!(
            credentials.authorization,
            Some(AuthorizationHeader::Bearer("dh_pat_x".into()))
        );
        assert_eq!(credentials.partner_id.as_deref(), Some("acme"));
        assert_eq!(credentials.signature, None);
    }
}
