//! The use cases, wired over one set of repositories and system ports.

use crate::identity::IdentityService;
use crate::ports::{Repositories, SystemPorts};
use crate::settings::ServiceSettings;

/// Every service the adapters call. Cheap to clone: services hold `Arc`s.
#[derive(Clone)]
pub struct Services {
    pub identity: IdentityService,
    pub repositories: Repositories,
    pub system: SystemPorts,
    pub settings: ServiceSettings,
}

impl Services {
    pub fn new(repositories: Repositories, system: SystemPorts, settings: ServiceSettings) -> Self {
        Self {
            identity: IdentityService::new(&repositories, system.clone(), settings.clone()),
            repositories,
            system,
            settings,
        }
    }
}
