//! The webhook worker of one instance: the HTTP client that sends (reqwest over rustls, no
//! redirects, a timeout, at most 1 KiB of an answer read), the DNS lookup, and the loop that
//! fans events out, claims due deliveries and attempts each in a task of its own.
//!
//! The loop sleeps until the store says there may be work (a new event or a queued delivery,
//! heard over LISTEN in PostgreSQL, a notifier in memory) or the next retry falls due: idle, it
//! does nothing. Attempts run in their own tasks, at most `concurrency` at once, so a slow
//! receiver holds one slot and never the loop, other endpoints or the HTTP workers.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::web;
use async_trait::async_trait;
use deckhand_domain::Services;
use deckhand_domain::webhooks::ports::{
    AddressResolver, ClaimedDelivery, OutgoingWebhook, WebhookTransport,
};
use deckhand_domain::webhooks::{
    AttemptOutcome, DeliveryResult, MAX_RESPONSE_CAPTURE, WebhookService, capture,
};
use deckhand_http::HttpState;
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinHandle;

/// Events read per dispatch transaction.
const DISPATCH_BATCH: u32 = 500;
/// The longest the loop sleeps with nothing due: a safety net for a missed wake-up.
const IDLE_WAKE: Duration = Duration::from_secs(60);
/// After a store error, before trying again.
const ERROR_BACKOFF: Duration = Duration::from_secs(1);

/// The services with the system's DNS for webhook targets.
pub fn with_dns(mut services: Services) -> Services {
    services.webhooks = services.webhooks.with_resolver(Arc::new(SystemResolver));
    services
}

/// Starts this instance's worker, its outcomes counted in the state's metrics.
pub fn start(state: &web::Data<HttpState>, concurrency: usize) -> Worker {
    let service = state.services.webhooks.clone();
    let transport = Arc::new(HttpTransport::new(service.policy().timeout));
    let metrics = state.clone();
    spawn_worker(
        service,
        transport,
        concurrency,
        Arc::new(move |result| metrics.metrics.webhook_delivery(result)),
    )
}

/// `tokio::net::lookup_host`: the system resolver, off the runtime's threads.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

#[async_trait]
impl AddressResolver for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> anyhow::Result<Vec<IpAddr>> {
        let addresses = tokio::net::lookup_host((host, port)).await?;
        Ok(addresses.map(|address| address.ip()).collect())
    }
}

/// Sends webhooks with reqwest.
#[derive(Debug, Clone)]
pub struct HttpTransport {
    timeout: Duration,
}

impl HttpTransport {
    pub fn new(timeout: Duration) -> Self {
        Self { timeout }
    }

    fn client(&self, request: &OutgoingWebhook) -> reqwest::Result<reqwest::Client> {
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(self.timeout)
            .connect_timeout(self.timeout)
            .user_agent("Deckhand-Webhooks/1");
        if request.host.parse::<IpAddr>().is_err() {
            // Connect only to the addresses that were checked: a second lookup by the client
            // could answer differently (DNS rebinding). TLS still verifies the host name.
            builder = builder.resolve_to_addrs(&request.host, &request.addresses);
        }
        builder.build()
    }

    async fn send_once(&self, request: OutgoingWebhook) -> Result<(u16, String), String> {
        let client = self.client(&request).map_err(|error| describe(&error))?;
        let mut response = client
            .post(&request.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("webhook-id", &request.webhook_id)
            .header("webhook-timestamp", request.timestamp.to_string())
            .header("webhook-signature", &request.signature)
            .body(request.body)
            .send()
            .await
            .map_err(|error| describe(&error))?;
        let status = response.status().as_u16();
        // Read at most what is kept, then drop the connection: a receiver that answers with
        // an endless body costs one kibibyte.
        let mut kept = Vec::with_capacity(MAX_RESPONSE_CAPTURE);
        while kept.len() < MAX_RESPONSE_CAPTURE {
            match response.chunk().await {
                Ok(Some(chunk)) => kept.extend_from_slice(&chunk),
                Ok(None) | Err(_) => break,
            }
        }
        Ok((status, capture(&kept)))
    }
}

/// A transport error without its URL (the query string could carry a receiver's token).
fn describe(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else if error.is_request() {
        "the request failed"
    } else if error.is_body() {
        "sending the body failed"
    } else {
        "the request failed"
    };
    let cause = std::error::Error::source(error)
        .map(|source| format!(": {source}"))
        .unwrap_or_default();
    format!("{kind}{cause}")
}

#[async_trait]
impl WebhookTransport for HttpTransport {
    async fn send(&self, request: OutgoingWebhook) -> AttemptOutcome {
        let started = Instant::now();
        // The timeout covers the whole attempt, the capture of the answer included.
        let sent = tokio::time::timeout(self.timeout, self.send_once(request)).await;
        let duration = started.elapsed();
        match sent {
            Ok(Ok((status, body))) => AttemptOutcome::Answered {
                status,
                body,
                duration,
            },
            Ok(Err(error)) => AttemptOutcome::NoAnswer { error, duration },
            Err(_) => AttemptOutcome::NoAnswer {
                error: "timed out".to_owned(),
                duration,
            },
        }
    }
}

/// What the worker reports each attempt to (the metrics).
pub type OnDelivery = Arc<dyn Fn(DeliveryResult) + Send + Sync>;

/// The running worker; aborting it stops the loop and every attempt in flight (what a killed
/// process does: leased deliveries are attempted again once their lease ends).
pub struct Worker {
    handle: JoinHandle<()>,
}

impl Worker {
    pub fn abort(&self) {
        self.handle.abort();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// Starts the worker of this instance.
pub fn spawn_worker(
    service: WebhookService,
    transport: Arc<dyn WebhookTransport>,
    concurrency: usize,
    on_delivery: OnDelivery,
) -> Worker {
    let handle = tokio::spawn(run(service, transport, concurrency.max(1), on_delivery));
    Worker { handle }
}

async fn run(
    service: WebhookService,
    transport: Arc<dyn WebhookTransport>,
    concurrency: usize,
    on_delivery: OnDelivery,
) {
    let slots = Arc::new(Semaphore::new(concurrency));
    let freed = Arc::new(Notify::new());
    let mut attempts = tokio::task::JoinSet::new();
    loop {
        while attempts.try_join_next().is_some() {}
        let pause = match round(
            &service,
            &transport,
            &slots,
            &freed,
            &mut attempts,
            &on_delivery,
        )
        .await
        {
            Ok(pause) => pause,
            Err(error) => {
                tracing::warn!(
                    error = format!("{error:#}"),
                    "the webhook worker failed a round; trying again"
                );
                ERROR_BACKOFF
            }
        };
        if pause.is_zero() {
            continue;
        }
        tokio::select! {
            waited = service.wait_for_work(pause) => {
                if let Err(error) = waited {
                    tracing::warn!(error = format!("{error:#}"), "waiting for webhook work failed");
                    tokio::time::sleep(ERROR_BACKOFF).await;
                }
            }
            () = freed.notified() => {}
        }
    }
}

/// One round: fan out what is new, claim what is due into free slots; how long to sleep.
async fn round(
    service: &WebhookService,
    transport: &Arc<dyn WebhookTransport>,
    slots: &Arc<Semaphore>,
    freed: &Arc<Notify>,
    attempts: &mut tokio::task::JoinSet<()>,
    on_delivery: &OnDelivery,
) -> anyhow::Result<Duration> {
    while service.dispatch(DISPATCH_BATCH).await? == DISPATCH_BATCH {}
    let free = slots.available_permits();
    if free > 0 {
        let claimed_at = Instant::now();
        let claimed = service
            .claim(u32::try_from(free).unwrap_or(u32::MAX))
            .await?;
        let full = claimed.len() == free;
        for delivery in claimed {
            let Ok(slot) = slots.clone().acquire_owned().await else {
                break;
            };
            let service = service.clone();
            let transport = transport.clone();
            let freed = freed.clone();
            let on_delivery = on_delivery.clone();
            attempts.spawn(async move {
                if let Some(result) =
                    attempt_while_leased(&service, transport.as_ref(), delivery, claimed_at).await
                {
                    on_delivery(result);
                }
                drop(slot);
                freed.notify_one();
            });
        }
        if full {
            // There may be more due: claim again as soon as a slot is free.
            return Ok(if slots.available_permits() > 0 {
                Duration::ZERO
            } else {
                IDLE_WAKE
            });
        }
    }
    let now = service.now();
    Ok(match service.next_due().await? {
        Some(due) if due <= now => {
            if slots.available_permits() > 0 {
                // Due but not claimable yet (a lease ends within the clock's rounding).
                Duration::from_millis(50)
            } else {
                IDLE_WAKE
            }
        }
        Some(due) => Duration::try_from(due - now)
            .unwrap_or(IDLE_WAKE)
            .min(IDLE_WAKE),
        None => IDLE_WAKE,
    })
}

/// Attempts a claimed delivery; when the store fails the attempt (a database restart), tries
/// again while the claim is surely still this worker's, so a short outage delays deliveries by
/// moments rather than by a lease. After that the lease runs out and any instance claims it.
async fn attempt_while_leased(
    service: &WebhookService,
    transport: &dyn WebhookTransport,
    delivery: ClaimedDelivery,
    claimed_at: Instant,
) -> Option<DeliveryResult> {
    loop {
        match service.attempt(transport, delivery.clone()).await {
            Ok(result) => return Some(result),
            Err(error) => {
                let again = service
                    .policy()
                    .may_attempt_again(claimed_at.elapsed() + ERROR_BACKOFF);
                tracing::warn!(
                    error = format!("{error:#}"),
                    again,
                    "a webhook attempt failed in the store; it is tried again, by this worker \
                     now or by any once its lease ends"
                );
                if !again {
                    return None;
                }
                tokio::time::sleep(ERROR_BACKOFF).await;
            }
        }
    }
}
