//! The route table. Public API operations are registered through utoipa-actix-web, so the
//! OpenAPI document and the router come from the same list and cannot drift apart.

use actix_web::dev::HttpServiceFactory;
use actix_web::web;
use utoipa_actix_web::OpenApiFactory;
use utoipa_actix_web::service_config::ServiceConfig;

use crate::{OPENAPI_PATH, handlers};

/// What the route list registers its operations with: the router (with the document beside
/// it), or a test that reads every operation's own schemas before the document merges them.
pub(crate) trait Operations {
    fn service<F: HttpServiceFactory + OpenApiFactory + 'static>(
        &mut self,
        factory: F,
    ) -> &mut Self;
}

impl Operations for ServiceConfig<'_> {
    fn service<F: HttpServiceFactory + OpenApiFactory + 'static>(
        &mut self,
        factory: F,
    ) -> &mut Self {
        ServiceConfig::service(self, factory)
    }
}

/// Every operation of the public API, relative to [`crate::API_BASE`].
pub(crate) fn api(config: &mut ServiceConfig) {
    operations(config);
}

/// The route list itself. The router tries the routes in this order, matching a regular
/// expression for each route with a `{parameter}` until one matches, so the most requested
/// reads (the deck list and a deck's detail) come first; the document's order is its own.
pub(crate) fn operations<O: Operations>(config: &mut O) {
    config
        .service(handlers::decks::list::list_decks)
        // Before `{id}`, which "check" would otherwise reach as a malformed id.
        .service(handlers::decks::check_list::check_list)
        .service(handlers::decks::detail::deck_detail)
        .service(handlers::decks::create::create_deck)
        .service(handlers::probes::partner::probe_partner)
        .service(handlers::probes::public::probe_public)
        .service(handlers::probes::user::probe_user)
        .service(handlers::games::list::list_games)
        .service(handlers::games::formats::list_formats)
        .service(handlers::cards::resolve::resolve_cards)
        .service(handlers::cards::stats::card_stats)
        .service(handlers::decks::check::check_deck)
        .service(handlers::decks::update::update_deck)
        .service(handlers::decks::versions::deck_versions)
        .service(handlers::decks::diff::version_diff)
        .service(handlers::decks::compare::compare_decks)
        .service(handlers::decks::rollback::rollback_deck)
        .service(handlers::decks::fork::fork_deck)
        .service(handlers::decks::views::register_view)
        .service(handlers::likes::like_deck)
        .service(handlers::likes::unlike_deck)
        .service(handlers::decks::guide::read::read_guide)
        .service(handlers::decks::guide::put::put_guide)
        .service(handlers::decks::guide::delete::delete_guide)
        .service(handlers::decks::export::export_text)
        .service(handlers::decks::needs::deck_needs)
        .service(handlers::collections::list::list_collection)
        .service(handlers::collections::patch::patch_collection)
        .service(handlers::collections::import::import_collection)
        .service(handlers::collections::export::export_collection)
        .service(handlers::oauth::token::token)
        .service(handlers::oauth::introspect::introspect)
        .service(handlers::oauth::revoke::revoke)
        .service(handlers::sideboards::list::list_guides)
        .service(handlers::sideboards::create::create_guide)
        // Before `{id}`, which "my" would otherwise reach as a malformed id.
        .service(handlers::sideboards::my::my_guides)
        .service(handlers::sideboards::detail::guide_detail)
        .service(handlers::sideboards::update::update_guide)
        .service(handlers::sideboards::attach::attach_deck)
        .service(handlers::sideboards::detach::detach_deck)
        .service(handlers::likes::like_guide)
        .service(handlers::likes::unlike_guide)
        .service(handlers::sideboards::matchups::create::create_matchup)
        .service(handlers::sideboards::matchups::update::update_matchup)
        .service(handlers::sideboards::matchups::delete::delete_matchup)
        .service(handlers::events::feed::list_events)
        .service(handlers::webhooks::create::create_webhook)
        .service(handlers::webhooks::list::list_webhooks)
        .service(handlers::webhooks::detail::webhook_detail)
        .service(handlers::webhooks::update::update_webhook)
        .service(handlers::webhooks::delete::delete_webhook)
        .service(handlers::webhooks::rotate_secret::rotate_webhook_secret)
        .service(handlers::webhooks::ping::ping_webhook)
        .service(handlers::webhooks::deliveries::list_deliveries)
        .service(handlers::webhooks::retry::retry_delivery);
}

/// Operational routes, outside the public API document.
pub(crate) fn operational(config: &mut web::ServiceConfig) {
    config
        .route("/healthz", web::get().to(handlers::health::healthz))
        .route("/readyz", web::get().to(handlers::health::readyz))
        .route("/metrics", web::get().to(handlers::health::metrics))
        .route(OPENAPI_PATH, web::get().to(handlers::health::openapi_json))
        .route(
            handlers::docs::DOCS_PATH,
            web::get().to(handlers::docs::reference_page),
        )
        .route(
            handlers::docs::REDOC_PATH,
            web::get().to(handlers::docs::redoc_bundle),
        )
        .route(
            handlers::oauth::metadata::METADATA_PATH,
            web::get().to(handlers::oauth::metadata::metadata),
        )
        .service(
            web::resource(AUTHORIZE_PATH)
                .route(web::get().to(handlers::oauth::authorize::authorize_page))
                .route(web::post().to(handlers::oauth::authorize::authorize_decision))
                // A resource's own 405 has no `Allow`; the fallback's has.
                .default_service(web::to(crate::route_index::fallback)),
        );
}

/// The consent page, an HTML endpoint outside the OpenAPI document.
pub(crate) const AUTHORIZE_PATH: &str = "/api/public/v1/oauth/authorize";

/// The operational paths and their methods, for the route index.
pub(crate) const OPERATIONAL_PATHS: [(&str, &[&str]); 8] = [
    ("/healthz", &["GET"]),
    ("/readyz", &["GET"]),
    ("/metrics", &["GET"]),
    (OPENAPI_PATH, &["GET"]),
    (handlers::docs::DOCS_PATH, &["GET"]),
    (handlers::docs::REDOC_PATH, &["GET"]),
    (handlers::oauth::metadata::METADATA_PATH, &["GET"]),
    (AUTHORIZE_PATH, &["GET", "POST"]),
];
