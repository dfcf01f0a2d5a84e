//! The use cases, wired over one set of repositories and system ports. Each service is given
//! only the ports it uses; the repositories themselves stay here.

use std::sync::Arc;

use crate::authentication::Authenticator;
use crate::catalog::CatalogService;
use crate::collections::CollectionService;
use crate::decks::DeckService;
use crate::decks::export::ExportService;
use crate::events::EventService;
use crate::formats::FormatService;
use crate::idempotency::IdempotencyService;
use crate::identity::{IdentityRepositories, IdentityService};
use crate::oauth::OAuthService;
use crate::ports::Repositories;
use crate::pruning::{PruneService, Retention};
use crate::settings::ServiceSettings;
use crate::sideboards::SideboardGuideService;
use crate::system::{StoreHealth, SystemPorts};
use crate::webhooks::{NoLookups, WebhookService};

/// Every service the adapters call. Cheap to clone: services hold `Arc`s.
#[derive(Clone)]
pub struct Services {
    pub authentication: Authenticator,
    pub identity: IdentityService,
    pub oauth: OAuthService,
    pub catalog: CatalogService,
    pub decks: DeckService,
    pub export: ExportService,
    pub formats: FormatService,
    pub sideboard_guides: SideboardGuideService,
    pub idempotency: IdempotencyService,
    pub events: EventService,
    /// Deletes what no longer matters, in small batches (run on a timer by every instance).
    pub pruning: PruneService,
    pub webhooks: WebhookService,
    /// Users' collections, and what a deck needs from one.
    pub collections: CollectionService,
    /// The store's liveness, for `/readyz` and `/metrics`.
    pub health: Arc<dyn StoreHealth>,
    pub system: SystemPorts,
    pub settings: ServiceSettings,
}

impl Services {
    pub fn new(repositories: Repositories, system: SystemPorts, settings: ServiceSettings) -> Self {
        let Repositories {
            users,
            pats,
            decks,
            sideboard_guides,
            partners,
            api_keys,
            signature_replays,
            oauth,
            health,
            catalog,
            idempotency_keys,
            events,
            prune_jobs,
            webhooks,
            collections,
        } = repositories;
        let catalog_repository = catalog;
        let catalog = CatalogService::new(catalog_repository.clone());
        let deck_service = DeckService::new(
            decks.clone(),
            catalog.clone(),
            system.clone(),
            settings.deck_policy.clone(),
            settings.visitor_key(),
        );
        let identity = IdentityService::new(
            IdentityRepositories {
                users: users.clone(),
                pats,
                partners: partners.clone(),
                api_keys,
                signature_replays,
            },
            system.clone(),
            settings.sealing_key(),
        );
        Self {
            authentication: Authenticator::new(
                identity.clone(),
                oauth.clone(),
                system.clock.clone(),
            ),
            identity,
            oauth: OAuthService::new(
                oauth,
                users,
                partners,
                system.clone(),
                settings.oauth,
                settings.csrf_key(),
            ),
            sideboard_guides: SideboardGuideService::new(sideboard_guides, decks, system.clone()),
            idempotency: IdempotencyService::new(idempotency_keys, system.clone()),
            pruning: PruneService::new(
                prune_jobs,
                system.clock.clone(),
                Retention {
                    pageview_window: settings.deck_policy.pageview_window,
                    sign_in_window: settings.oauth.sign_in.window,
                    event_retention: settings.event_retention,
                },
            ),
            export: ExportService::new(deck_service.clone(), catalog.clone()),
            collections: CollectionService::new(
                collections,
                catalog.clone(),
                deck_service.clone(),
                system.clone(),
            ),
            formats: FormatService::new(
                catalog.clone(),
                catalog_repository,
                deck_service.clone(),
                system.clone(),
            ),
            decks: deck_service,
            webhooks: WebhookService::new(
                webhooks,
                events.clone(),
                // The application gives its DNS with `WebhookService::with_resolver`.
                Arc::new(NoLookups),
                system.clone(),
                settings.sealing_key(),
                settings.webhooks.clone(),
            ),
            events: EventService::new(events, system.clock.clone(), settings.feed_waits),
            catalog,
            health,
            system,
            settings,
        }
    }
}
