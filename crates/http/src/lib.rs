//! The HTTP adapter: actix-web routes, one handler per operation, request and response DTOs,
//! the authentication extractor, `ApiError` (the only place outcomes become statuses), and the
//! OpenAPI document generated from the handlers.
//!
//! It calls the domain's services and never reaches a store itself: it must not know whether
//! the repositories behind them are PostgreSQL or memory.

mod access;
pub mod auth;
pub mod body;
mod client_ip;
mod conditional;
pub mod connection;
mod created;
pub mod deprecation;
mod dto;
mod error;
mod export_cache;
mod handlers;
mod head;
mod idempotency;
mod metrics;
mod middleware;
mod nul;
mod oauth_error;
mod openapi;
mod pagination;
mod query;
mod rate_limit;
mod revoked_uses;
mod route_index;
mod routes;
mod state;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::{ErrorHandlers, from_fn};
use actix_web::{App, Error, web};
use utoipa::openapi::OpenApi;
use utoipa_actix_web::AppExt as _;

pub use error::ApiError;
pub use state::{HttpConfig, HttpState};

use crate::route_index::RouteIndex;

/// Base path of the public API.
pub const API_BASE: &str = "/api/public/v1";

/// Where the OpenAPI document is served (and where the reference page at `/docs` reads it).
pub(crate) const OPENAPI_PATH: &str = "/api/public/v1/openapi.json";

/// Base path of the OAuth server's endpoints: under the API base, but outside the resource
/// server (no credential lanes, no quotas, no envelope).
pub(crate) const OAUTH_BASE: &str = "/api/public/v1/oauth";

/// The OpenAPI 3.1 document of the public API, from the same route list the server uses.
pub fn document() -> OpenApi {
    let (_, mut document) = App::new()
        .into_utoipa_app()
        .openapi(openapi::base())
        .service(utoipa_actix_web::scope(API_BASE).configure(routes::api))
        .split_for_parts();
    openapi::complete(&mut document);
    document
}

/// The whole application: routes, extractor settings and middleware.
pub fn app(
    state: web::Data<HttpState>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    let (app, mut document) = App::new()
        // Registered before the API scope, which would otherwise take `/api/public/v1/...`.
        .configure(routes::operational)
        .into_utoipa_app()
        .openapi(openapi::base())
        .service(utoipa_actix_web::scope(API_BASE).configure(routes::api))
        .split_for_parts();
    openapi::complete(&mut document);
    with_middleware(with_document(app.app_data(state), document))
}

/// Registers what the app reads from the OpenAPI document its routes were built from: the
/// document itself (served, and rendered by `/docs`), the route index (404 or 405) and the
/// headers of deprecated operations. Shared with tests that build their own routes.
pub fn with_document<T>(app: App<T>, document: OpenApi) -> App<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = Error, InitError = ()>,
{
    let routes = RouteIndex::new(&document, &routes::OPERATIONAL_PATHS);
    let deprecations = deprecation::Deprecations::of(&document);
    app.app_data(web::Data::new(routes))
        .app_data(web::Data::new(deprecations))
        .app_data(web::Data::new(document))
}

/// Extractor settings, the fallback route and the middleware stack, shared with tests that
/// mount extra routes.
pub fn with_middleware<T>(
    app: App<T>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
>
where
    T: ServiceFactory<
            ServiceRequest,
            Config = (),
            Response = ServiceResponse,
            Error = Error,
            InitError = (),
        > + 'static,
{
    app.app_data(web::PayloadConfig::new(body::MAX_BODY_BYTES))
        .app_data(web::PathConfig::default().error_handler(|_, _| ApiError::not_found().into()))
        // Operations decode their queries with `query::Query`, whose errors name the
        // parameter; this is for any `web::Query` still, and never passes on the parser's text.
        .app_data(
            web::QueryConfig::default()
                .error_handler(|_, _| ApiError::bad_request("the query string is invalid").into()),
        )
        .default_service(web::to(route_index::fallback))
        // The last wrap is outermost: the request context sees the final response (and any
        // panic), after bare errors have been given the envelope.
        // Innermost: authentication and rate limits of API requests see the request first and
        // put their headers on every API response, errors included.
        .wrap(from_fn(middleware::api_gate))
        // Outside the gate, so that its refusals of a deprecated operation carry the headers.
        .wrap(from_fn(deprecation::headers))
        .wrap(ErrorHandlers::new().default_handler(middleware::envelope_bare_errors))
        .wrap(from_fn(middleware::request_context))
}
