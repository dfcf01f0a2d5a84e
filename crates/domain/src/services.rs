//! The use cases, wired over one set of repositories and system ports.

use crate::catalog::CatalogService;
use crate::identity::IdentityService;
use crate::ports::{Repositories, SystemPorts};

/// Every service the adapters call. Cheap to clone: services hold `Arc`s.
#[derive(Clone)]
pub struct Services {
    pub identity: IdentityService,
    pub catalog: CatalogService,
    pub repositories: Repositories,
    pub system: SystemPorts,
}

impl Services {
    pub fn new(repositories: Repositories, system: SystemPorts) -> Self {
        Self {
            identity: IdentityService::new(
                repositories.users.clone(),
                repositories.pats.clone(),
                system.clone(),
            ),
            catalog: CatalogService::new(repositories.catalog.clone()),
            repositories,
            system,
        }
    }
}
