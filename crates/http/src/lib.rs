//! The HTTP adapter: actix-web routes, one handler per operation, request and response DTOs,
//! the authentication extractor, `ApiError` (the only place outcomes become statuses), and the
//! OpenAPI document generated from the handlers.
//!
//! It calls the domain's services and never reaches a store itself: it must not know whether
//! the repositories behind them are PostgreSQL or memory.

pub mod auth;
pub mod body;
pub mod client_ip;
pub mod error;
pub mod export_cache;
pub mod handlers;
pub mod metrics;
pub mod middleware;
pub mod oauth_error;
pub mod openapi;
pub mod pagination;
pub mod rate_limit;
pub mod revoked_uses;
pub mod routes;
pub mod state;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::{ErrorHandlers, from_fn};
use actix_web::{App, Error, web};
use utoipa_actix_web::AppExt as _;

pub use error::ApiError;
pub use state::{HttpConfig, HttpState};

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
    let (app, _document) = App::new()
        // Registered before the API scope, which would otherwise take `/api/public/v1/...`.
        .configure(routes::operational)
        .into_utoipa_app()
        .service(utoipa_actix_web::scope(routes::API_BASE).configure(routes::api))
        .split_for_parts();
    with_middleware(app.app_data(state))
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
        .app_data(
            web::QueryConfig::default()
                .error_handler(|error, _| ApiError::bad_request(error.to_string()).into()),
        )
        .default_service(web::to(routes::fallback))
        // The last wrap is outermost: the request context sees the final response (and any
        // panic), after bare errors have been given the envelope.
        // Innermost: authentication and rate limits of API requests see the request first and
        // put their headers on every API response, errors included.
        .wrap(from_fn(middleware::api_gate))
        .wrap(ErrorHandlers::new().default_handler(middleware::envelope_bare_errors))
        .wrap(from_fn(middleware::request_context))
}
