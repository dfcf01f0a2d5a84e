//! `deckhand serve`: wiring the store, the services and the HTTP server.

use std::net::TcpListener;

use actix_http::HttpService;
use actix_service::{IntoServiceFactory as _, ServiceFactoryExt as _, fn_service, map_config};
use actix_web::dev::AppConfig;
use actix_web::rt::net::TcpStream;
use actix_web::web;
use anyhow::Context as _;
use deckhand_domain::Services;
use deckhand_domain::routing::ReadRouter;
use deckhand_http::connection::EnvelopedIo;
use deckhand_http::{HttpConfig, HttpState};

use crate::settings::{ConnectionLimits, ServeSettings};

pub async fn serve(settings: ServeSettings) -> anyhow::Result<()> {
    // This thread opens the store and runs the background tasks; the HTTP workers are others.
    deckhand_postgres::set_this_thread_apart();
    let in_memory = settings.store.database_url.is_none();
    anyhow::ensure!(
        in_memory || settings.secret_key.is_some(),
        "DECKHAND_SECRET_KEY is required with PostgreSQL (base64 of 32 random bytes, e.g. `openssl rand -base64 32`)"
    );
    let opened =
        crate::store::open_serving(&settings.store, &settings.replicas, !settings.no_migrate)
            .await?;
    let router = opened.into_router(
        crate::passwords::server_system_ports(),
        settings.service_settings()?,
    );
    let services = router.primary().clone();
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
        body_timeout: settings.limits.client_request_timeout(),
    };
    spawn_pruning(services.clone());
    let state = http_state(router, config)?;
    // Runs beside the HTTP server for the life of the process.
    let _webhooks = crate::webhooks::start(&state, usize::from(settings.webhooks.concurrency));
    let options = ServerOptions {
        workers: settings.workers.map(usize::from),
        limits: settings.limits,
        shutdown_timeout: std::time::Duration::from_secs(settings.shutdown_timeout_secs.into()),
    };
    run(state, listener, options)?
        .await
        .context("the HTTP server failed")
}

/// How often each instance runs a prune round.
const PRUNING_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);
/// Records one batch deletes: small, so a batch holds its row locks for milliseconds.
const PRUNE_BATCH: u32 = 500;
/// Batches per job and round: what is left over waits a minute, so a backlog (after downtime,
/// say) drains without one round monopolising a connection.
const PRUNE_BATCHES_PER_ROUND: u32 = 20;

/// Runs a prune round (`deckhand_domain::pruning`) every minute for the life of the server, on
/// every instance: batches skip rows others hold (`FOR UPDATE SKIP LOCKED`), so instances
/// never wait on each other or on requests. A failed job is logged and tried next round.
fn spawn_pruning(services: Services) {
    actix_web::rt::spawn(async move {
        let mut ticks = actix_web::rt::time::interval(PRUNING_INTERVAL);
        loop {
            ticks.tick().await;
            let round = services
                .pruning
                .prune_round(PRUNE_BATCH, PRUNE_BATCHES_PER_ROUND)
                .await;
            for pruned in round {
                match pruned.deleted {
                    Ok(0) => {}
                    Ok(deleted) => tracing::debug!(job = pruned.name, deleted, "pruned"),
                    Err(error) => tracing::warn!(
                        job = pruned.name,
                        error = format!("{error:#}"),
                        "pruning failed"
                    ),
                }
            }
        }
    });
}

pub fn http_state(router: ReadRouter, config: HttpConfig) -> anyhow::Result<web::Data<HttpState>> {
    Ok(web::Data::new(HttpState::routed(router, config)?))
}

/// How the server runs: workers, the connection limits and the grace period on shutdown.
#[derive(Debug, Clone, Copy)]
pub struct ServerOptions {
    /// HTTP worker threads; `None`: one per core.
    pub workers: Option<usize>,
    pub limits: ConnectionLimits,
    /// How long requests in flight may take to finish once a shutdown begins.
    pub shutdown_timeout: std::time::Duration,
}

/// The HTTP server on `listener`; tests run it on an ephemeral port.
///
/// Built from actix's parts rather than `HttpServer` for one reason: each connection is
/// wrapped in [`EnvelopedIo`], so that the refusals actix-http writes before any middleware
/// runs (malformed HTTP, oversized heads, slow clients) carry the envelope too.
///
/// On SIGTERM or SIGINT (or a graceful stop through its handle) it closes the listener at once,
/// so new connections are refused, lets the requests in flight finish for up to
/// `options.shutdown_timeout`, then drops whatever is left and resolves.
pub fn run(
    state: web::Data<HttpState>,
    listener: TcpListener,
    options: ServerOptions,
) -> anyhow::Result<actix_web::dev::Server> {
    let limits = options.limits;
    let local_addr = listener.local_addr()?;
    listener.set_nonblocking(true)?;
    let mut builder = actix_server::Server::build()
        .max_concurrent_connections(limits.max_connections as usize)
        .shutdown_timeout(options.shutdown_timeout.as_secs());
    if let Some(workers) = options.workers {
        builder = builder.workers(workers);
    }
    let server = builder
        .listen("deckhand", listener, move || {
            let app = deckhand_http::app(state.clone())
                .into_factory()
                .map_err(|error: actix_web::Error| error.error_response());
            // The app builds its URLs from DECKHAND_PUBLIC_URL, never from this config.
            let http = HttpService::build()
                .keep_alive(limits.keep_alive())
                .client_request_timeout(limits.client_request_timeout())
                .client_disconnect_timeout(limits.client_disconnect_timeout())
                .local_addr(local_addr)
                // Each request can learn that its client has gone (a held feed request ends).
                .on_connect_ext(|io: &EnvelopedIo<TcpStream>, data| {
                    data.insert(io.peer());
                })
                .h1(map_config(app, |_| AppConfig::default()));
            fn_service(|stream: TcpStream| async move {
                let peer = stream.peer_addr().ok();
                // As actix's own TCP service does: responses go out without delay.
                let _ = stream.set_nodelay(true);
                Ok::<_, actix_http::error::DispatchError>((EnvelopedIo::new(stream), peer))
            })
            .and_then(http)
        })?
        .run();
    Ok(server)
}
