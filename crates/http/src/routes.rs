//! The route table. Public API operations are registered through utoipa-actix-web, so the
//! OpenAPI document and the router come from the same list and cannot drift apart.

use actix_web::dev::ResourceDef;
use actix_web::{HttpRequest, HttpResponse, web};
use utoipa::openapi::OpenApi;

use crate::error::ApiError;
use crate::handlers;
use crate::state::HttpState;

/// Base path of the public API.
pub const API_BASE: &str = "/api/public/v1";

/// Every operation of the public API, relative to [`API_BASE`].
pub fn api(config: &mut utoipa_actix_web::service_config::ServiceConfig) {
    config
        .service(handlers::probes::partner::probe_partner)
        .service(handlers::probes::public::probe_public)
        .service(handlers::probes::user::probe_user)
        .service(handlers::games::list::list_games)
        .service(handlers::games::formats::list_formats)
        .service(handlers::cards::resolve::resolve_cards)
        .service(handlers::decks::list::list_decks)
        .service(handlers::decks::create::create_deck)
        .service(handlers::decks::detail::deck_detail)
        .service(handlers::decks::update::update_deck)
        .service(handlers::decks::versions::deck_versions)
        .service(handlers::decks::rollback::rollback_deck)
        .service(handlers::decks::views::register_view)
        .service(handlers::decks::guide::read::read_guide)
        .service(handlers::decks::guide::put::put_guide)
        .service(handlers::decks::guide::delete::delete_guide)
        .service(handlers::decks::export::export_text)
        .service(handlers::oauth::token::token)
        .service(handlers::oauth::introspect::introspect)
        .service(handlers::oauth::revoke::revoke);
}

/// Operational routes, outside the public API document.
pub fn operational(config: &mut web::ServiceConfig) {
    config
        .route("/healthz", web::get().to(handlers::health::healthz))
        .route("/readyz", web::get().to(handlers::health::readyz))
        .route("/metrics", web::get().to(handlers::health::metrics))
        .route(
            &format!("{API_BASE}/openapi.json"),
            web::get().to(handlers::health::openapi_json),
        )
        .route(
            handlers::oauth::metadata::METADATA_PATH,
            web::get().to(handlers::oauth::metadata::metadata),
        )
        .service(
            web::resource(format!("{API_BASE}/oauth/authorize"))
                .route(web::get().to(handlers::oauth::authorize::authorize_page))
                .route(web::post().to(handlers::oauth::authorize::authorize_decision)),
        );
}

const OPERATIONAL_PATHS: [(&str, &[&str]); 6] = [
    ("/healthz", &["GET"]),
    ("/readyz", &["GET"]),
    ("/metrics", &["GET"]),
    ("/api/public/v1/openapi.json", &["GET"]),
    ("/.well-known/oauth-authorization-server", &["GET"]),
    ("/api/public/v1/oauth/authorize", &["GET", "POST"]),
];

/// Paths and their methods, to tell "no such path" (404) from "no such method" (405).
pub(crate) struct RouteIndex(Vec<(ResourceDef, Vec<&'static str>)>);

impl RouteIndex {
    pub(crate) fn from_openapi(document: &OpenApi) -> Self {
        let mut routes: Vec<(ResourceDef, Vec<&'static str>)> = document
            .paths
            .paths
            .iter()
            .map(|(path, item)| {
                let operations = [
                    ("GET", item.get.is_some()),
                    ("POST", item.post.is_some()),
                    ("PUT", item.put.is_some()),
                    ("PATCH", item.patch.is_some()),
                    ("DELETE", item.delete.is_some()),
                ];
                let methods = operations
                    .into_iter()
                    .filter_map(|(method, present)| present.then_some(method))
                    .collect();
                (ResourceDef::new(path.as_str()), methods)
            })
            .collect();
        routes.extend(
            OPERATIONAL_PATHS.map(|(path, methods)| (ResourceDef::new(path), methods.to_vec())),
        );
        Self(routes)
    }

    /// The `Allow` header value for `path`, or `None` when no route has that path.
    fn allowed_methods(&self, path: &str) -> Option<String> {
        let mut methods: Vec<&str> = self
            .0
            .iter()
            .filter(|(resource, _)| resource.is_match(path))
            .flat_map(|(_, methods)| methods.iter().copied())
            .collect();
        if methods.is_empty() {
            return None;
        }
        if methods.contains(&"GET") {
            methods.push("HEAD");
        }
        methods.sort_unstable();
        methods.dedup();
        Some(methods.join(", "))
    }
}

/// Every request no route took: 405 with `Allow` when the path exists, else 404.
pub async fn fallback(
    request: HttpRequest,
    state: web::Data<HttpState>,
) -> Result<HttpResponse, ApiError> {
    Err(match state.routes.allowed_methods(request.path()) {
        Some(allowed) => ApiError::method_not_allowed(&allowed),
        None => ApiError::not_found(),
    })
}
