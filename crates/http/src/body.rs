//! Request bodies: JSON, form and multipart decode into the same DTO.
//!
//! In form and multipart bodies every value is text: a repeated key is an array, `true`/`false`
//! are booleans, and a field holding objects carries JSON text (see [`json_or_text`]).

use actix_multipart::Multipart;
use actix_web::dev::Payload;
use actix_web::web;
use actix_web::web::{Bytes, BytesMut};
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use futures_util::{StreamExt as _, TryStreamExt as _};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use crate::error::{ApiError, FieldError};
use crate::nul;
use crate::state::{HttpConfig, HttpState};

/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// A request body of DTO `T`, from any of the three accepted content types.
#[derive(Debug)]
pub struct Body<T>(pub T);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    Json,
    Form,
    Multipart,
}

fn body_kind(request: &HttpRequest) -> Option<BodyKind> {
    let mime = request
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)?
        .to_str()
        .ok()?
        .parse::<mime::Mime>()
        .ok()?;
    match (mime.type_(), mime.subtype()) {
        (mime::APPLICATION, mime::JSON) => Some(BodyKind::Json),
        (mime::APPLICATION, mime::WWW_FORM_URLENCODED) => Some(BodyKind::Form),
        (mime::MULTIPART, mime::FORM_DATA) => Some(BodyKind::Multipart),
        _ => None,
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for Body<T> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let request = request.clone();
        let mut payload = payload.take();
        Box::pin(async move {
            let kind = body_kind(&request).ok_or_else(ApiError::unsupported_media_type)?;
            let decoded = match kind {
                BodyKind::Json => {
                    let bytes = read_bytes(&request, &mut payload).await?;
                    decode_json(&bytes)?
                }
                BodyKind::Form => {
                    let bytes = read_bytes(&request, &mut payload).await?;
                    decode_form(&bytes)?
                }
                BodyKind::Multipart => {
                    let fields =
                        within_body_timeout(&request, read_multipart(&request, payload)).await?;
                    let encoded = form_urlencoded::Serializer::new(String::new())
                        .extend_pairs(fields)
                        .finish();
                    decode_form(encoded.as_bytes())?
                }
            };
            Ok(Body(decoded))
        })
    }
}

/// `read`, unless the client takes longer than the body timeout to send it: then 408.
pub(crate) async fn within_body_timeout<T>(
    request: &HttpRequest,
    read: impl Future<Output = Result<T, ApiError>>,
) -> Result<T, ApiError> {
    let limit = request
        .app_data::<web::Data<HttpState>>()
        .map_or(HttpConfig::DEFAULT_BODY_TIMEOUT, |state| {
            state.config.body_timeout
        });
    actix_web::rt::time::timeout(limit, read)
        .await
        .unwrap_or_else(|_| Err(ApiError::request_timeout()))
}

/// The whole body: [`read_chunks`] gathered, so every body is read under one limit (413),
/// one timeout (408) and one unreadable answer (400).
pub(crate) async fn read_bytes(
    request: &HttpRequest,
    payload: &mut Payload,
) -> Result<Bytes, ApiError> {
    let mut body = BytesMut::new();
    read_chunks(request, payload, |chunk| {
        body.extend_from_slice(chunk);
        Ok(())
    })
    .await?;
    Ok(body.freeze())
}

/// Hands the body to `take` chunk by chunk as it arrives (decoded as its `Content-Encoding`
/// says), holding none of it: over [`MAX_BODY_BYTES`] (by `Content-Length` before reading, or
/// by counting) a 413, slower than the body timeout a 408, unreadable a 400; a `take` error
/// ends the read at once.
pub(crate) async fn read_chunks(
    request: &HttpRequest,
    payload: &mut Payload,
    mut take: impl FnMut(&[u8]) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    let unreadable = || ApiError::bad_request("the request body could not be read");
    if let Some(length) = request
        .headers()
        .get(actix_web::http::header::CONTENT_LENGTH)
    {
        let length: usize = length
            .to_str()
            .ok()
            .and_then(|length| length.parse().ok())
            .ok_or_else(unreadable)?;
        if length > MAX_BODY_BYTES {
            return Err(ApiError::payload_too_large());
        }
    }
    let mut body = actix_web::dev::Decompress::from_headers(payload.take(), request.headers());
    within_body_timeout(request, async {
        let mut total = 0usize;
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|_| unreadable())?;
            total += chunk.len();
            if total > MAX_BODY_BYTES {
                return Err(ApiError::payload_too_large());
            }
            take(&chunk)?;
        }
        Ok(())
    })
    .await
}

/// A JSON body: one value and nothing after it but whitespace, no string holding a NUL.
fn decode_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if nul::json_may_hold_nul(bytes)
        && let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes)
        && let Some(field) = nul::json_path_with_nul(&value)
    {
        return Err(nul::refused(field));
    }
    let mut json = serde_json::Deserializer::from_slice(bytes);
    let decoded = serde_path_to_error::deserialize(&mut json).map_err(field_error)?;
    json.end()
        .map_err(|error| ApiError::bad_request(format!("the body is not valid: {error}")))?;
    Ok(decoded)
}

fn decode_form<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if let Some(field) = nul::field_with_nul(form_urlencoded::parse(bytes)) {
        return Err(nul::refused(field));
    }
    let form = serde_html_form::Deserializer::new(form_urlencoded::parse(bytes));
    serde_path_to_error::deserialize(form).map_err(field_error)
}

/// Every text part of a multipart body as (name, value), within the body size limit.
async fn read_multipart(
    request: &HttpRequest,
    payload: Payload,
) -> Result<Vec<(String, String)>, ApiError> {
    let mut multipart = Multipart::new(request.headers(), payload);
    let mut fields = Vec::new();
    let mut total = 0usize;
    let malformed = |_| ApiError::bad_request("the multipart body is malformed");
    while let Some(mut field) = multipart.try_next().await.map_err(malformed)? {
        let name = field
            .content_disposition()
            .and_then(|disposition| disposition.get_name())
            .map(str::to_owned)
            .ok_or_else(|| ApiError::bad_request("a multipart part has no name"))?;
        let mut value = BytesMut::new();
        while let Some(chunk) = field.next().await {
            let chunk = chunk.map_err(malformed)?;
            total += chunk.len();
            if total > MAX_BODY_BYTES {
                return Err(ApiError::payload_too_large());
            }
            value.extend_from_slice(&chunk);
        }
        let value = String::from_utf8(value.to_vec()).map_err(|_| {
            ApiError::validation(vec![FieldError {
                field: name.clone(),
                code: "encoding".into(),
                message: "must be UTF-8 text".into(),
            }])
        })?;
        fields.push((name, value));
    }
    Ok(fields)
}

fn field_error<E: std::fmt::Display>(error: serde_path_to_error::Error<E>) -> ApiError {
    let path = error.path().to_string();
    let message = error.inner().to_string();
    let code = if message.starts_with("unknown field") {
        "unknown_field"
    } else if message.starts_with("missing field") {
        "required"
    } else if path == "." {
        "malformed"
    } else {
        "invalid"
    };
    // A missing field is named in the message only; the path is its parent.
    let field = match (code, backticked(&message)) {
        ("required", Some(name)) if path == "." => name.to_owned(),
        ("required", Some(name)) => format!("{path}.{name}"),
        _ => path,
    };
    if code == "malformed" {
        return ApiError::bad_request(format!("the body is not valid: {message}"));
    }
    ApiError::validation(vec![FieldError {
        field,
        code: code.into(),
        message,
    }])
}

fn backticked(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let end = start + message[start..].find('`')?;
    Some(&message[start..end])
}

/// A nullable field: absent stays `None` through `#[serde(default)]`, a present one is
/// `Some`, and `null` (or an empty string, which is how form and multipart bodies say `null`)
/// is `Some(None)`, which [`deckhand_domain::Patch`] reads as a clear. Use with
/// `#[serde(default, deserialize_with = "nullable")]`.
pub fn nullable<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<String>>, D::Error> {
    Ok(Some(
        Option::<String>::deserialize(deserializer)?.filter(|value| !value.is_empty()),
    ))
}

/// A field that may be left out but not sent as `null` (nor, in form and multipart bodies, as
/// an empty value that is not valid for its type): a present value must be a `T`. Use with
/// `#[serde(default, deserialize_with = "present")]`.
pub fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// For DTO fields that hold objects: a native JSON value in JSON bodies, JSON text in form and
/// multipart bodies. Use with `#[serde(default, deserialize_with = "json_or_text")]`.
pub fn json_or_text<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(text) => serde_json::from_str(&text)
            .map_err(|error| serde::de::Error::custom(format!("invalid JSON text: {error}")))?,
        value => value,
    };
    // JSON text inside a form value can carry `\u0000`, which the form check cannot see.
    if let Some(path) = nul::json_path_with_nul(&value) {
        return Err(serde::de::Error::custom(format!(
            "must not contain a NUL character (U+0000){}",
            if path.is_empty() {
                String::new()
            } else {
                format!(" (at {path})")
            }
        )));
    }
    T::deserialize(value)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Sample {
        name: String,
        #[serde(default)]
        visibility: Vec<String>,
        #[serde(default)]
        legal: Option<bool>,
        #[serde(default, deserialize_with = "json_or_text")]
        items: Option<Vec<Item>>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Item {
        n: u32,
    }

    #[test]
    fn forms_decode_repeated_keys_booleans_and_json_text() {
        let sample: Sample = decode_form(
            b"name=x&visibility=public&visibility=b&legal=true&items=%5B%7B%22n%22%3A2%7D%5D",
        )
        .unwrap();
        assert_eq!(
            sample,
            Sample {
                name: "x".into(),
                visibility: vec!["public".into(), "b".into()],
                legal: Some(true),
                items: Some(vec![Item { n: 2 }]),
            }
        );
    }

    #[test]
    fn unknown_and_missing_fields_name_the_field() {
        let error = decode_form::<Sample>(b"name=x&colour=red").unwrap_err();
        assert_eq!(error.body()["details"]["fields"][0]["field"], "colour");
        assert_eq!(
            error.body()["details"]["fields"][0]["code"],
            "unknown_field"
        );
        let error = decode_form::<Sample>(b"legal=true").unwrap_err();
        assert_eq!(error.body()["details"]["fields"][0]["field"], "name");
        assert_eq!(error.body()["details"]["fields"][0]["code"], "required");
    }

    #[test]
    fn wrong_types_name_the_path() {
        let mut json = serde_json::Deserializer::from_str(r#"{"name":"x","items":[{"n":"two"}]}"#);
        let error =
            field_error(serde_path_to_error::deserialize::<_, Sample>(&mut json).unwrap_err());
        // Fields carried as JSON text are decoded in one piece: the path stops at the field,
        // and the message says what is wrong inside it.
        let field = &error.body()["details"]["fields"][0];
        assert_eq!(field["field"], "items");
        assert!(
            field["message"].as_str().unwrap().contains("invalid type"),
            "{field}"
        );
    }

    #[derive(Debug, Default, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Changes {
        #[serde(default, deserialize_with = "present")]
        premium: Option<bool>,
        #[serde(default, deserialize_with = "nullable")]
        format: Option<Option<String>>,
    }

    fn from_json(text: &str) -> Result<Changes, ApiError> {
        let mut json = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut json).map_err(field_error)
    }

    #[test]
    fn absent_keeps_null_clears_a_nullable_field_and_is_refused_elsewhere() {
        assert_eq!(from_json("{}").unwrap(), Changes::default());
        let cleared = Changes {
            format: Some(None),
            ..Changes::default()
        };
        assert_eq!(from_json(r#"{"format":null}"#).unwrap(), cleared);
        assert_eq!(from_json(r#"{"format":""}"#).unwrap(), cleared);
        assert_eq!(decode_form::<Changes>(b"format=").unwrap(), cleared);
        assert_eq!(
            from_json(r#"{"premium":true,"format":"x"}"#).unwrap(),
            Changes {
                premium: Some(true),
                format: Some(Some("x".into())),
            }
        );
        // A field that cannot be null is not kept by `null` (or an empty form value): it is
        // an invalid value, as it would be without the field being optional.
        for error in [
            from_json(r#"{"premium":null}"#).unwrap_err(),
            decode_form::<Changes>(b"premium=").unwrap_err(),
        ] {
            let field = &error.body()["details"]["fields"][0];
            assert_eq!(field["field"], "premium", "{field}");
            assert_eq!(field["code"], "invalid", "{field}");
        }
    }

    #[test]
    fn json_with_trailing_data_is_refused() {
        let error = decode_json::<Sample>(br#"{"name":"u"} xyz"#).unwrap_err();
        assert_eq!(error.status(), actix_web::http::StatusCode::BAD_REQUEST);
        assert!(
            error.body()["message"]
                .as_str()
                .unwrap()
                .contains("trailing"),
            "{}",
            error.body()
        );
        assert!(decode_json::<Sample>(b"{\"name\":\"u\"} \n").is_ok());
    }

    #[test]
    fn nuls_are_refused_naming_the_field_in_every_body_kind() {
        let json =
            decode_json::<Sample>(br#"{"name":"u","items":[{"n":1}],"visibility":["a\u0000"]}"#)
                .unwrap_err();
        let form = decode_form::<Sample>(b"name=u%00").unwrap_err();
        let json_text_in_form = decode_form::<Sample>(
            b"name=u&items=%5B%7B%22n%22%3A1%2C%22x%22%3A%22%5Cu0000%22%7D%5D",
        )
        .unwrap_err();
        for (error, field) in [
            (json, "visibility[0]"),
            (form, "name"),
            (json_text_in_form, "items"),
        ] {
            let detail = &error.body()["details"]["fields"][0];
            assert_eq!(detail["field"], field, "{detail}");
        }
        // An escaped backslash before `u0000` is text, not a NUL.
        assert!(decode_json::<Sample>(br#"{"name":"a\\u0000"}"#).is_ok());
    }
}
