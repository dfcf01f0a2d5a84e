//! Query strings: [`Query`] decodes one into an operation's query DTO as actix's `web::Query`
//! does, and when that fails answers the contract's field errors, naming each parameter that
//! is at fault (with what it must be, from its schema), never the parser's own text, which
//! names neither the parameter nor, often, the problem.

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};
use futures_util::future::{Ready, ready};
use serde::de::DeserializeOwned;
use serde_json::Value;
use utoipa::IntoParams;
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::ParameterIn;

use crate::error::{ApiError, FieldError};

/// An operation's query parameters, as DTO `T` (every field optional: unknown parameters are
/// ignored, absent ones are `None`).
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T> Query<T> {
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> std::ops::Deref for Query<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: DeserializeOwned + IntoParams> FromRequest for Query<T> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let document = request.app_data::<web::Data<OpenApi>>();
        ready(decode(request.query_string(), document.map(|data| data.get_ref())).map(Query))
    }
}

/// `query` as a `T`, or a 400 naming every parameter of `T` that made it fail; `document`
/// resolves the schemas its parameters refer to.
pub(crate) fn decode<T: DeserializeOwned + IntoParams>(
    query: &str,
    document: Option<&OpenApi>,
) -> Result<T, ApiError> {
    match web::Query::<T>::from_query(query) {
        Ok(decoded) => Ok(decoded.into_inner()),
        Err(_) => Err(faults::<T>(query, document)),
    }
}

/// Each parameter of `T` that is given more than once, or whose value alone does not decode.
fn faults<T: DeserializeOwned + IntoParams>(query: &str, document: Option<&OpenApi>) -> ApiError {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let mut fields = Vec::new();
    for parameter in T::into_params(|| Some(ParameterIn::Query)) {
        let name = parameter.name.as_str();
        let values: Vec<&str> = pairs
            .iter()
            .filter(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
            .collect();
        let fault = match values.as_slice() {
            [] => continue,
            [value] => {
                let alone = form_urlencoded::Serializer::new(String::new())
                    .append_pair(name, value)
                    .finish();
                if web::Query::<T>::from_query(&alone).is_ok() {
                    continue;
                }
                let schema = serde_json::to_value(&parameter.schema).unwrap_or(Value::Null);
                ("invalid", expectation(&schema, document))
            }
            _ => ("repeated", "must be given at most once".to_owned()),
        };
        fields.push(FieldError {
            field: name.to_owned(),
            code: fault.0.to_owned(),
            message: fault.1,
        });
    }
    if fields.is_empty() {
        // Every parameter decodes alone and none repeats; nothing is known to fail this way.
        return ApiError::bad_request("the query string is invalid");
    }
    ApiError::validation(fields)
}

/// What a value of `schema` (JSON of an OpenAPI schema) must be, as a field error says it.
fn expectation(schema: &Value, document: Option<&OpenApi>) -> String {
    if let Some(reference) = schema["$ref"].as_str() {
        let resolved = reference
            .strip_prefix("#/components/schemas/")
            .and_then(|name| document?.components.as_ref()?.schemas.get(name))
            .and_then(|schema| serde_json::to_value(schema).ok());
        return match resolved {
            Some(schema) => expectation(&schema, document),
            None => "is not a valid value".to_owned(),
        };
    }
    if let Some(alternatives) = schema["oneOf"].as_array() {
        return alternatives
            .iter()
            .find(|alternative| alternative["type"] != "null")
            .map_or_else(
                || "is not a valid value".to_owned(),
                |alternative| expectation(alternative, document),
            );
    }
    if let Some(values) = schema["enum"].as_array() {
        let values: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
        return format!("must be one of: {}", values.join(", "));
    }
    let is = |kind: &str| match &schema["type"] {
        Value::String(type_name) => type_name == kind,
        Value::Array(types) => types.iter().any(|type_name| type_name == kind),
        _ => false,
    };
    if is("boolean") {
        "must be true or false".to_owned()
    } else if is("integer") {
        match schema["minimum"].as_i64() {
            Some(minimum) => format!("must be a whole number, at least {minimum}"),
            None => "must be a whole number".to_owned(),
        }
    } else if schema["format"] == "uuid" {
        "must be a UUID".to_owned()
    } else {
        "is not a valid value".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use utoipa::ToSchema;

    use super::*;

    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(rename_all = "lowercase")]
    enum Shape {
        Round,
        Square,
    }

    #[derive(Debug, Deserialize, IntoParams)]
    #[serde(rename_all = "camelCase")]
    #[into_params(parameter_in = Query)]
    #[allow(
        dead_code,
        reason = "decoded to see which parameters fail, not all read"
    )]
    struct Sample {
        has_video: Option<bool>,
        limit: Option<i64>,
        count: Option<u32>,
        after: Option<uuid::Uuid>,
        #[param(inline)]
        shape: Option<Shape>,
        q: Option<String>,
    }

    fn fields(query: &str) -> Value {
        let error = decode::<Sample>(query, None).unwrap_err();
        assert_eq!(error.code(), "SERVICE_VALIDATION_ERROR");
        error.body()["details"]["fields"].clone()
    }

    #[test]
    fn a_valid_query_decodes_and_unknown_parameters_are_ignored() {
        let sample = decode::<Sample>("hasVideo=true&limit=5&shape=round&other=x", None).unwrap();
        assert_eq!(sample.has_video, Some(true));
        assert_eq!(sample.limit, Some(5));
        assert!(matches!(sample.shape, Some(Shape::Round)));
    }

    #[test]
    fn each_bad_parameter_is_named_with_what_it_must_be() {
        assert_eq!(
            fields("hasVideo=maybe&limit=many&count=-1&after=x&shape=oval&q=fine&other=%ZZ"),
            serde_json::json!([
                {"field": "hasVideo", "code": "invalid", "message": "must be true or false"},
                {"field": "limit", "code": "invalid", "message": "must be a whole number"},
                {"field": "count", "code": "invalid", "message": "must be a whole number, at least 0"},
                {"field": "after", "code": "invalid", "message": "must be a UUID"},
                {"field": "shape", "code": "invalid", "message": "must be one of: round, square"},
            ])
        );
    }

    #[test]
    fn a_repeated_parameter_is_named() {
        assert_eq!(
            fields("q=a&q=b"),
            serde_json::json!([
                {"field": "q", "code": "repeated", "message": "must be given at most once"},
            ])
        );
    }

    #[test]
    fn the_message_is_never_the_parsers() {
        let error = decode::<Sample>("shape=xml", None).unwrap_err();
        let body = error.body().to_string();
        assert!(!body.contains("variant"), "{body}");
        assert!(!body.contains("deserialize"), "{body}");
        assert_eq!(
            error.body()["message"],
            "shape: must be one of: round, square"
        );
    }
}
