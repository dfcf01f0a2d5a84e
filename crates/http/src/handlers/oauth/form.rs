//! Reading the form bodies of the OAuth endpoints and the client authentication they carry.

use std::collections::HashMap;

use actix_web::HttpRequest;
use actix_web::http::header::{AUTHORIZATION, CONTENT_TYPE};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use deckhand_domain::oauth::{BasicCredentials, ClientAuthentication};

use crate::oauth_error::OAuthError;

/// The parameters of a form body or query: each name once (RFC 6749 §3.1: a repeated parameter
/// makes the request invalid).
#[derive(Debug, Default)]
pub struct Params(HashMap<String, String>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamsError {
    #[error("send the parameters as application/x-www-form-urlencoded")]
    NotAForm,
    #[error("the parameter {0} is repeated")]
    Repeated(String),
    #[error("the parameter {0} holds a NUL character")]
    Nul(String),
}

impl Params {
    /// Parameters of a query string or form body (`application/x-www-form-urlencoded`).
    pub fn parse(encoded: &[u8]) -> Result<Self, ParamsError> {
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

    /// The form of a token, introspection or revocation request; anything else is
    /// `invalid_request`.
    pub fn token_form(request: &HttpRequest, body: &[u8]) -> Result<Self, OAuthError> {
        Self::form(request, body).map_err(|error| OAuthError::invalid_request(error.to_string()))
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
