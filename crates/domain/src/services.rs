//! The use cases, wired over one set of repositories and system ports.

use crate::catalog::CatalogService;
use crate::decks::DeckService;
use crate::decks::export::ExportService;
use crate::formats::FormatService;
use crate::idempotency::IdempotencyService;
use crate::identity::IdentityService;
use crate::oauth::OAuthService;
use crate::ports::{Repositories, SystemPorts};
use crate::settings::ServiceSettings;
use crate::sideboards::SideboardGuideService;

/// Every service the adapters call. Cheap to clone: services hold `Arc`s.
#[derive(Clone)]
pub struct Services {
    pub identity: IdentityService,
    pub oauth: OAuthService,
    pub catalog: CatalogService,
    pub decks: DeckService,
    pub export: ExportService,
    pub formats: FormatService,
    pub sideboard_guides: SideboardGuideService,
    pub idempotency: IdempotencyService,
    pub repositories: Repositories,
    pub system: SystemPorts,
    pub settings: ServiceSettings,
}

impl Services {
    pub fn new(repositories: Repositories, system: SystemPorts, settings: ServiceSettings) -> Self {
        let catalog = CatalogService::new(repositories.catalog.clone());
        let decks = DeckService::new(
            repositories.decks.clone(),
            catalog.clone(),
            system.clone(),
            settings.deck_policy.clone(),
            settings.visitor_key(),
        );
        let sideboard_guides = SideboardGuideService::new(
            repositories.sideboard_guides.clone(),
            repositories.decks.clone(),
            system.clone(),
        );
        Self {
            sideboard_guides,
            idempotency: IdempotencyService::new(
                repositories.idempotency_keys.clone(),
                system.clone(),
            ),
            identity: IdentityService::new(&repositories, system.clone(), settings.clone()),
            oauth: OAuthService::new(&repositories, system.clone(), &settings),
            export: ExportService::new(decks.clone(), catalog.clone()),
            formats: FormatService::new(
                catalog.clone(),
                repositories.catalog.clone(),
                decks.clone(),
                system.clone(),
            ),
            decks,
            catalog,
            repositories,
            system,
            settings,
        }
    }
}
