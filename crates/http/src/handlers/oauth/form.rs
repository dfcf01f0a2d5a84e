//! Reading the form bodies of the OAuth endpoints and the client authentication they carry.

use std::collections::HashMap;

use actix_web::HttpRequest;
use actix_web::http::StatusCode;
use actix_web::http::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE};
use actix_web::web::{self, Bytes, BytesMut};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use deckhand_domain::oauth::{BasicCredentials, ClientAuthentication};
use futures_util::StreamExt as _;

use crate::oauth_error::OAuthError;
use crate::state::{HttpConfig, HttpState};

/// The largest form body the OAuth endpoints read. Their forms hold a handful of short
/// parameters (the consent form, the longest, well under a kilobyte), so the API's 4 MiB
/// limit would only let a client make the server build a map of megabytes per request.
pub const MAX_FORM_BYTES: usize = 64 * 1024;
/// The most parameters a form body or query of the OAuth endpoints may hold; RFC 6749 lets
/// clients add unknown ones, but no client needs dozens.
pub const MAX_PARAMS: usize = 64;

/// Why a form body could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FormBodyError {
    #[error("the form body is larger than 64 KiB")]
    TooLarge,
    #[error("the request body did not arrive in time")]
    TimedOut,
    #[error("the request body could not be read")]
    Unreadable,
}

impl FormBodyError {
    pub fn status(self) -> StatusCode {
        match self {
            Self::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::TimedOut => StatusCode::REQUEST_TIMEOUT,
            Self::Unreadable => StatusCode::BAD_REQUEST,
        }
    }
}

impl From<FormBodyError> for OAuthError {
    fn from(error: FormBodyError) -> Self {
        Self::new(error.status(), "invalid_request", error.to_string())
    }
}

/// The whole body of an OAuth request, up to [`MAX_FORM_BYTES`] (refused by `Content-Length`
/// before reading, or as soon as the count passes it) and within the body timeout.
pub async fn read_form_body(
    request: &HttpRequest,
    mut payload: web::Payload,
) -> Result<Bytes, FormBodyError> {
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<usize>().ok());
    if declared.is_some_and(|length| length > MAX_FORM_BYTES) {
        return Err(FormBodyError::TooLarge);
    }
    let read = async move {
        let mut body = BytesMut::new();
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|_| FormBodyError::Unreadable)?;
            if body.len() + chunk.len() > MAX_FORM_BYTES {
                return Err(FormBodyError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body.freeze())
    };
    let limit = request
        .app_data::<web::Data<HttpState>>()
        .map_or(HttpConfig::DEFAULT_BODY_TIMEOUT, |state| {
            state.config.body_timeout
        });
    actix_web::rt::time::timeout(limit, read)
        .await
        .unwrap_or(Err(FormBodyError::TimedOut))
}

/// The parameters of a form body or query: each name once (RFC 6749 §3.1: a repeated parameter
/// makes the request invalid).
#[derive(Default)]
pub struct Params(HashMap<String, String>);

impl std::fmt::Debug for Params {
    // Values include passwords, codes, verifiers, tokens and secrets: only names are printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.0.keys().collect();
        names.sort_unstable();
        f.debug_tuple("Params").field(&names).finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamsError {
    #[error("send the parameters as application/x-www-form-urlencoded")]
    NotAForm,
    #[error("the parameter {0} is repeated")]
    Repeated(String),
    #[error("the parameter {0} holds a NUL character")]
    Nul(String),
    #[error("send at most 64 parameters")]
    TooMany,
}

impl Params {
    /// Parameters of a query string or form body (`application/x-www-form-urlencoded`).
    pub fn parse(encoded: &[u8]) -> Result<Self, ParamsError> {
        if form_urlencoded::parse(encoded).nth(MAX_PARAMS).is_some() {
            return Err(ParamsError::TooMany);
        }
        if let Some(name) = crate::nul::field_with_nul(form_urlencoded::parse(encoded)) {
            return Err(ParamsError::Nul(name));
        }
        let mut params = HashMap::new();
        for (name, value) in form_urlencoded::parse(encoded) {
            if params
                .insert(name.to_string(), value.into_owned())
                .is_some()
            {
                return Err(ParamsError::Repeated(name.into_owned()));
            }
        }
        Ok(Self(params))
    }

    /// The parameters of a form body, refusing any other content type.
    pub fn form(request: &HttpRequest, body: &[u8]) -> Result<Self, ParamsError> {
        let is_form = request
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<mime::Mime>().ok())
            .is_some_and(|mime| mime.essence_str() == "application/x-www-form-urlencoded");
        if !is_form {
            return Err(ParamsError::NotAForm);
        }
        Self::parse(body)
    }

    /// The form of a token, introspection or revocation request, read from `payload`; anything
    /// else is `invalid_request` (413 when the body is over [`MAX_FORM_BYTES`]).
    pub async fn token_form(
        request: &HttpRequest,
        payload: web::Payload,
    ) -> Result<Self, OAuthError> {
        let body = read_form_body(request, payload).await?;
        Self::form(request, &body).map_err(|error| OAuthError::invalid_request(error.to_string()))
    }

    /// A parameter; an empty value counts as absent (RFC 6749 §3.1).
    pub fn get(&self, name: &str) -> Option<String> {
        self.0.get(name).filter(|value| !value.is_empty()).cloned()
    }

    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// How the request presents its client: HTTP Basic (RFC 6749 §2.3.1: both parts
    /// form-urlencoded before base64), or `client_id` in the body.
    pub fn client_authentication(&self, request: &HttpRequest) -> ClientAuthentication {
        let (basic, malformed_authorization) = match request.headers().get(AUTHORIZATION) {
            None => (None, false),
            Some(value) => match value.to_str().ok().and_then(decode_basic) {
                Some(basic) => (Some(basic), false),
                None => (None, true),
            },
        };
        ClientAuthentication {
            basic,
            malformed_authorization,
            body_client_id: self.get("client_id"),
            body_client_secret: self.has("client_secret"),
        }
    }
}

fn decode_basic(header: &str) -> Option<BasicCredentials> {
    let (scheme, encoded) = header.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = STANDARD.decode(encoded.trim()).ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (client_id, secret) = decoded.split_once(':')?;
    let unescape = |part: &str| -> Option<String> {
        let plus_as_space = part.replace('+', " ");
        percent_encoding::percent_decode_str(&plus_as_space)
            .decode_utf8()
            .ok()
            .map(|text| text.into_owned())
    };
    Some(BasicCredentials {
        client_id: unescape(client_id)?,
        secret: unescape(secret)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    #[test]
    fn repeated_parameters_are_refused() {
        assert_eq!(
            Params::parse(b"a=1&a=2").unwrap_err(),
            ParamsError::Repeated("a".into())
        );
        let params = Params::parse(b"a=1&b=").unwrap();
        assert_eq!(params.get("a").as_deref(), Some("1"));
        assert_eq!(params.get("b"), None);
        assert!(params.has("b"));
    }

    #[test]
    fn more_than_the_most_parameters_are_refused() {
        let at_most: String = (0..MAX_PARAMS).map(|i| format!("p{i}=x&")).collect();
        assert!(Params::parse(at_most.as_bytes()).is_ok());
        let over = format!("{at_most}one=more");
        assert_eq!(
            Params::parse(over.as_bytes()).unwrap_err(),
            ParamsError::TooMany
        );
    }

    #[test]
    fn debug_prints_parameter_names_only() {
        let params = Params::parse(b"password=hunter2&code=dh_ac_secret&username=alice").unwrap();
        let printed = format!("{params:?}");
        assert_eq!(printed, r#"Params(["code", "password", "username"])"#);
    }

    #[test]
    fn basic_credentials_are_form_decoded() {
        let header = format!("Basic {}", STANDARD.encode("my%20client:s%3Acret"));
        let basic = decode_basic(&header).unwrap();
        assert_eq!(basic.client_id, "my client");
        assert_eq!(basic.secret, "s:cret");
        assert!(decode_basic("Bearer abc").is_none());
        assert!(decode_basic("Basic !!!").is_none());
    }

    #[test]
    fn only_form_bodies_are_read() {
        let json = TestRequest::default()
            .insert_header(("Content-Type", "application/json"))
            .to_http_request();
        assert_eq!(
            Params::form(&json, b"{}").unwrap_err(),
            ParamsError::NotAForm
        );
        let form = TestRequest::default()
            .insert_header((
                "Content-Type",
                "application/x-www-form-urlencoded; charset=utf-8",
            ))
            .to_http_request();
        assert!(Params::form(&form, b"grant_type=x").is_ok());
    }
}
