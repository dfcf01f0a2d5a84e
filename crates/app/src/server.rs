//! `deckhand serve`: wiring the store, the services and the HTTP server.

use std::net::TcpListener;

use actix_web::{HttpServer, web};
use anyhow::Context as _;
use deckhand_domain::Services;
use deckhand_domain::ports::SystemPorts;
use deckhand_http::{HttpConfig, HttpState};

use crate::settings::ServeSettings;

pub async fn serve(settings: ServeSettings) -> anyhow::Result<()> {
    let in_memory = settings.store.database_url.is_none();
    anyhow::ensure!(
        in_memory || settings.secret_key.is_some(),
        "DECKHAND_SECRET_KEY is required with PostgreSQL (base64 of 32 random bytes, e.g. `openssl rand -base64 32`)"
    );
    let repositories = crate::store::open(&settings.store, !settings.no_migrate).await?;
    let services = Services::new(
        repositories,
        SystemPorts::system(),
        settings.service_settings()?,
    );
    let public_url = settings.public_url();
    if in_memory {
        tracing::warn!("no DATABASE_URL: using the in-memory store; nothing persists");
        let demo = crate::demo::seed(&services)
            .await
            .context("seeding the demo data")?;
        println!("{}", crate::demo::banner(&demo, &public_url));
    }
    let listener = TcpListener::bind(settings.bind)
        .with_context(|| format!("cannot listen on {}", settings.bind))?;
    tracing::info!(address = %settings.bind, public_url, "serving");
    let config = HttpConfig {
        public_url,
        rate_limits: settings.rate_limits.0.clone(),
        trusted_proxies: settings.trusted_proxies.clone(),
    };
    spawn_view_pruning(services.clone());
    let state = http_state(services, config)?;
    let shutdown_timeout = std::time::Duration::from_secs(settings.shutdown_timeout_secs.into());
    run(
        state,
        listener,
        settings.workers.map(usize::from),
        shutdown_timeout,
    )?
    .await
    .context("the HTTP server failed")
}

/// How often expired pageview records are deleted.
const VIEW_PRUNING_INTERVAL: std::time::Duration = std::time::Duration::from_secs(600);

/// Deletes view records older than the dedupe window, every few minutes, for the life of the
/// server. A failure is logged and retried at the next tick.
fn spawn_view_pruning(services: Services) {
    actix_web::rt::spawn(async move {
        let mut ticks = actix_web::rt::time::interval(VIEW_PRUNING_INTERVAL);
        loop {
            ticks.tick().await;
            match services.decks.prune_views().await {
                Ok(deleted) => tracing::debug!(deleted, "pruned expired pageview records"),
                Err(error) => tracing::warn!(
                    error = format!("{error:#}"),
                    "pruning pageview records failed"
                ),
            }
        }
    });
}

pub fn http_state(services: Services, config: HttpConfig) -> anyhow::Result<web::Data<HttpState>> {
    Ok(web::Data::new(HttpState::new(services, config)?))
}

/// The HTTP server on `listener`; tests run it on an ephemeral port.
///
/// On SIGTERM or SIGINT (or a graceful stop through its handle) it closes the listener at once,
/// so new connections are refused, lets the requests in flight finish for up to
/// `shutdown_timeout`, then drops whatever is left and resolves.
pub fn run(
    state: web::Data<HttpState>,
    listener: TcpListener,
    workers: Option<usize>,
    shutdown_timeout: std::time::Duration,
) -> anyhow::Result<actix_web::dev::Server> {
    let mut server = HttpServer::new(move || deckhand_http::app(state.clone()))
        .listen(listener)?
        .shutdown_timeout(shutdown_timeout.as_secs());
    if let Some(workers) = workers {
        server = server.workers(workers);
    }
    Ok(server.run())
}
