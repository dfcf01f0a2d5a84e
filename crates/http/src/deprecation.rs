//! Deprecated operations (contract part 9), declared once in the route list:
//! `.service(deprecated(handler, Deprecation { .. }))`. The declaration marks the operation
//! `deprecated: true` in the OpenAPI document, with the headers its responses carry (also
//! under `x-deprecation`), and [`headers`], a middleware of the stack, reads them back from
//! the document the router was built from and puts them on every response of the operation:
//! `Deprecation: @<unix seconds>` (RFC 9745), `Sunset: <HTTP date>` (RFC 8594) and
//! `Link: <docs>; rel="deprecation"`. Document and headers cannot disagree.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use actix_web::body::MessageBody;
use actix_web::dev::{AppService, HttpServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::header::{HeaderName, HeaderValue, HttpDate};
use actix_web::middleware::Next;
use actix_web::{Error, web};
use utoipa::openapi::path::{Operation, Paths};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{Deprecated as Flag, HeaderBuilder, OpenApi, RefOr};
use utoipa_actix_web::OpenApiFactory;

/// The extension of a deprecated operation that holds its response headers.
const EXTENSION: &str = "x-deprecation";

/// When an operation was deprecated, when it stops being served, and where its replacement
/// is described.
#[derive(Debug, Clone, Copy)]
pub struct Deprecation {
    /// Unix seconds.
    pub since: u64,
    /// Unix seconds; at least 12 months after `since` for `v1` (contract part 9).
    pub sunset: u64,
    /// The documentation of the change, an absolute URL.
    pub link: &'static str,
}

impl Deprecation {
    /// The three response headers, name and value.
    fn headers(&self) -> [(&'static str, String); 3] {
        let sunset = HttpDate::from(SystemTime::UNIX_EPOCH + Duration::from_secs(self.sunset));
        [
            ("Deprecation", format!("@{}", self.since)),
            ("Sunset", sunset.to_string()),
            ("Link", format!("<{}>; rel=\"deprecation\"", self.link)),
        ]
    }

    fn describe(&self, operation: &mut Operation) {
        let headers = self.headers();
        operation.deprecated = Some(Flag::True);
        let note = format!(
            "**Deprecated** (`Deprecation: {}`); served until {} (`Sunset`). See {}.",
            headers[0].1, headers[1].1, self.link
        );
        operation.description = Some(match operation.description.take() {
            Some(description) if !description.is_empty() => format!("{description}\n\n{note}"),
            _ => note,
        });
        let values: serde_json::Map<String, serde_json::Value> = headers
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone().into()))
            .collect();
        operation
            .extensions
            .get_or_insert_with(Default::default)
            .insert(EXTENSION.to_owned(), values.into());
        for response in operation.responses.responses.values_mut() {
            if let RefOr::T(response) = response {
                for (name, value) in &headers {
                    response.headers.insert(
                        (*name).to_owned(),
                        HeaderBuilder::new()
                            .schema(
                                utoipa::openapi::ObjectBuilder::new()
                                    .schema_type(utoipa::openapi::schema::Type::String),
                            )
                            .description(Some(format!("`{value}`")))
                            .build(),
                    );
                }
            }
        }
    }
}

/// An operation of the route list, deprecated: see the module comment.
pub struct Deprecated<F> {
    factory: F,
    deprecation: Deprecation,
}

/// Marks `factory` (a handler of the route list) deprecated.
pub fn deprecated<F>(factory: F, deprecation: Deprecation) -> Deprecated<F> {
    Deprecated {
        factory,
        deprecation,
    }
}

impl<F: HttpServiceFactory> HttpServiceFactory for Deprecated<F> {
    fn register(self, config: &mut AppService) {
        self.factory.register(config);
    }
}

impl<F: OpenApiFactory> OpenApiFactory for Deprecated<F> {
    fn paths(&self) -> Paths {
        let mut paths = self.factory.paths();
        for item in paths.paths.values_mut() {
            for operation in [
                item.get.as_mut(),
                item.post.as_mut(),
                item.put.as_mut(),
                item.patch.as_mut(),
                item.delete.as_mut(),
            ]
            .into_iter()
            .flatten()
            {
                self.deprecation.describe(operation);
            }
        }
        paths
    }

    fn schemas(&self, schemas: &mut Vec<(String, RefOr<Schema>)>) {
        self.factory.schemas(schemas);
    }
}

/// The headers of every deprecated operation of a document, by route pattern and method.
#[derive(Default)]
pub(crate) struct Deprecations(HashMap<(String, Method), Vec<(HeaderName, HeaderValue)>>);

impl Deprecations {
    pub(crate) fn of(document: &OpenApi) -> Self {
        let mut table = HashMap::new();
        for (path, item) in &document.paths.paths {
            for (method, operation) in [
                (Method::GET, &item.get),
                (Method::POST, &item.post),
                (Method::PUT, &item.put),
                (Method::PATCH, &item.patch),
                (Method::DELETE, &item.delete),
            ] {
                let Some(values) = operation
                    .as_ref()
                    .and_then(|operation| operation.extensions.as_ref())
                    .and_then(|extensions| extensions.get(EXTENSION))
                    .and_then(serde_json::Value::as_object)
                else {
                    continue;
                };
                let headers = values
                    .iter()
                    .filter_map(|(name, value)| {
                        Some((
                            HeaderName::try_from(name.as_str()).ok()?,
                            HeaderValue::from_str(value.as_str()?).ok()?,
                        ))
                    })
                    .collect();
                table.insert((path.clone(), method), headers);
            }
        }
        Self(table)
    }
}

/// Puts a deprecated operation's headers on each of its responses, errors included.
pub(crate) async fn headers(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let headers = request
        .app_data::<web::Data<Deprecations>>()
        .filter(|table| !table.0.is_empty())
        .and_then(|table| {
            let pattern = request.match_pattern()?;
            table.0.get(&(pattern, request.method().clone())).cloned()
        });
    let mut response = next.call(request).await?;
    for (name, value) in headers.into_iter().flatten() {
        response.headers_mut().insert(name, value);
    }
    Ok(response)
}
