//! The webhook worker of one instance: the HTTP client that sends (reqwest over rustls, no
//! redirects, a timeout, at most 1 KiB of an answer read), the DNS lookup, and the loop that
//! fans events out, claims due deliveries and attempts each in a task of its own.
//!
//! The loop sleeps until the store says there may be work (a new event or a queued delivery,
//! heard over LISTEN in PostgreSQL, a notifier in memory) or the next retry falls due: idle, it
//! does nothing. Attempts run in their own tasks, at most `concurrency` at once and at most two
//! of one endpoint (the store's claim keeps to that across instances, [`Attempts`] within
//! this one), so a slow or hanging receiver holds two slots at most and never the loop, other
//! endpoints or the HTTP workers.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use actix_web::web;
use async_trait::async_trait;
use deckhand_domain::Services;
use deckhand_domain::webhooks::ports::{
    AddressResolver, ClaimedDelivery, OutgoingWebhook, WebhookTransport,
};
use deckhand_domain::webhooks::{
    AttemptOutcome, DeliveryResult, MAX_IN_FLIGHT_PER_ENDPOINT, MAX_RESPONSE_CAPTURE, WebhookId,
    WebhookService, capture,
};
use deckhand_http::HttpState;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
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
    #[tracing::instrument(level = "debug", skip_all)]
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
            // Never through a proxy of the environment (`HTTPS_PROXY`, `ALL_PROXY`, ...): a
            // proxy would look the host up again, behind the address check, and reach
            // whatever it resolves to.
            .no_proxy()
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
    #[tracing::instrument(level = "debug", skip_all)]
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
    let mut attempts = Attempts::new(concurrency, service.clone(), transport, on_delivery);
    loop {
        attempts.reap();
        let pause = match round(&service, &mut attempts).await {
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
            () = attempts.freed.notified() => {}
        }
    }
}

/// One round: fan out what is new, claim what is due into free slots; how long to sleep.
async fn round(service: &WebhookService, attempts: &mut Attempts) -> anyhow::Result<Duration> {
    while service.dispatch(DISPATCH_BATCH).await? == DISPATCH_BATCH {}
    attempts.start_waiting();
    let free = attempts.free();
    if free > 0 {
        let claimed_at = Instant::now();
        let claimed = service
            .claim(u32::try_from(free).unwrap_or(u32::MAX))
            .await?;
        let full = claimed.len() == free;
        for delivery in claimed {
            attempts.start(delivery, claimed_at);
        }
        if full {
            // There may be more due: claim again as soon as a slot is free.
            return Ok(if attempts.free() > 0 {
                Duration::ZERO
            } else {
                IDLE_WAKE
            });
        }
    }
    let now = service.now();
    Ok(match service.next_due().await? {
        Some(due) if due <= now => {
            if attempts.free() > 0 {
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

/// This instance's attempts: at most `concurrency` at once (the slots), and at most
/// [`MAX_IN_FLIGHT_PER_ENDPOINT`] of one endpoint among them. The store already leases no
/// more than that per endpoint; this holds it for the slots too, where a lease and a slot end
/// at different moments (an attempt's record ends its lease a moment before its task gives
/// the slot back, and a claim in that moment may bring the endpoint's next delivery): such a
/// delivery waits, without a slot, until an attempt of its endpoint ends.
struct Attempts {
    slots: Arc<Semaphore>,
    running: Arc<Mutex<HashMap<WebhookId, usize>>>,
    /// Claimed deliveries whose endpoint has no room yet, with when they were claimed.
    waiting: VecDeque<(ClaimedDelivery, Instant)>,
    tasks: tokio::task::JoinSet<()>,
    /// Notified whenever an attempt ends.
    freed: Arc<Notify>,
    service: WebhookService,
    transport: Arc<dyn WebhookTransport>,
    on_delivery: OnDelivery,
}

/// An attempt's hold on a slot and on its endpoint's share, both given back when it ends.
struct Hold {
    endpoint: WebhookId,
    running: Arc<Mutex<HashMap<WebhookId, usize>>>,
    _slot: OwnedSemaphorePermit,
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut running = lock(&self.running);
        if let Some(count) = running.get_mut(&self.endpoint) {
            *count -= 1;
            if *count == 0 {
                running.remove(&self.endpoint);
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Attempts {
    fn new(
        concurrency: usize,
        service: WebhookService,
        transport: Arc<dyn WebhookTransport>,
        on_delivery: OnDelivery,
    ) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(concurrency)),
            running: Arc::default(),
            waiting: VecDeque::new(),
            tasks: tokio::task::JoinSet::new(),
            freed: Arc::new(Notify::new()),
            service,
            transport,
            on_delivery,
        }
    }

    fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }

    /// How many more deliveries to claim: the free slots not promised to waiting ones.
    fn free(&self) -> usize {
        self.slots
            .available_permits()
            .saturating_sub(self.waiting.len())
    }

    /// Starts the waiting deliveries whose endpoint has room now, oldest claim first.
    fn start_waiting(&mut self) {
        for _ in 0..self.waiting.len() {
            if let Some((delivery, claimed_at)) = self.waiting.pop_front() {
                self.start(delivery, claimed_at);
            }
        }
    }

    /// Starts an attempt of `delivery` in a task of its own, or keeps it waiting when its
    /// endpoint has no room or no slot is free.
    fn start(&mut self, delivery: ClaimedDelivery, claimed_at: Instant) {
        let endpoint = delivery.endpoint.id;
        let hold = {
            let mut running = lock(&self.running);
            let room = running.get(&endpoint).copied().unwrap_or(0) < MAX_IN_FLIGHT_PER_ENDPOINT;
            let slot = room
                .then(|| self.slots.clone().try_acquire_owned().ok())
                .flatten();
            slot.map(|slot| {
                *running.entry(endpoint).or_default() += 1;
                Hold {
                    endpoint,
                    running: self.running.clone(),
                    _slot: slot,
                }
            })
        };
        let Some(hold) = hold else {
            self.waiting.push_back((delivery, claimed_at));
            return;
        };
        let service = self.service.clone();
        let transport = self.transport.clone();
        let freed = self.freed.clone();
        let on_delivery = self.on_delivery.clone();
        self.tasks.spawn(async move {
            if let Some(result) =
                attempt_while_leased(&service, transport.as_ref(), delivery, claimed_at).await
            {
                on_delivery(result);
            }
            drop(hold);
            freed.notify_one();
        });
    }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Test code: a panic is a failure with a message.

    use std::collections::HashMap;

    use deckhand_auth::SealingKey;
    use deckhand_domain::events::EventId;
    use deckhand_domain::identity::{GameScopes, Scopes, UserId};
    use deckhand_domain::system::SystemPorts;
    use deckhand_domain::webhooks::ports::WebhookOwner;
    use deckhand_domain::webhooks::{
        Delivery, DeliveryId, DeliveryPolicy, Endpoint, GameSelection, NoLookups, TypeSelection,
    };
    use uuid::Uuid;

    use super::*;

    const KEY: [u8; 32] = [9; 32];

    /// A receiver that holds every request until released, counting those it holds per URL.
    #[derive(Default)]
    struct Gate {
        held: Mutex<HashMap<String, (usize, usize)>>,
        releases: Mutex<HashMap<String, Arc<Semaphore>>>,
    }

    impl Gate {
        /// (held now, most held at once) for `url`.
        fn held(&self, url: &str) -> (usize, usize) {
            lock(&self.held).get(url).copied().unwrap_or_default()
        }

        fn releases(&self, url: &str) -> Arc<Semaphore> {
            lock(&self.releases)
                .entry(url.to_owned())
                .or_insert_with(|| Arc::new(Semaphore::new(0)))
                .clone()
        }

        /// Lets `count` requests to `url` be answered.
        fn release(&self, url: &str, count: usize) {
            self.releases(url).add_permits(count);
        }
    }

    #[async_trait]
    impl WebhookTransport for Gate {
        async fn send(&self, request: OutgoingWebhook) -> AttemptOutcome {
            {
                let mut held = lock(&self.held);
                let (now, most) = held.entry(request.url.clone()).or_default();
                *now += 1;
                *most = (*most).max(*now);
            }
            self.releases(&request.url)
                .acquire()
                .await
                .unwrap()
                .forget();
            lock(&self.held).entry(request.url).or_default().0 -= 1;
            AttemptOutcome::Answered {
                status: 204,
                body: String::new(),
                duration: Duration::from_millis(1),
            }
        }
    }

    fn endpoint(url: &str) -> Endpoint {
        let id = WebhookId(Uuid::now_v7());
        Endpoint {
            id,
            partner: "acme".into(),
            url: url.into(),
            types: TypeSelection::all(),
            games: GameSelection(GameScopes::All),
            description: None,
            enabled: true,
            disabled_reason: None,
            consecutive_failures: 0,
            sealed_secret: deckhand_auth::seal(
                &SealingKey(KEY),
                [1; 12],
                id.0.as_bytes(),
                &[3; 32],
            )
            .unwrap(),
            previous_secret: None,
            created_at: time::OffsetDateTime::now_utc(),
        }
    }

    fn claimed(endpoint: &Endpoint) -> ClaimedDelivery {
        ClaimedDelivery {
            delivery: Delivery::ping(
                DeliveryId(Uuid::now_v7()),
                EventId(Uuid::now_v7()),
                endpoint,
                "acme",
                time::OffsetDateTime::now_utc(),
            ),
            endpoint: endpoint.clone(),
            owner: WebhookOwner {
                created_by: UserId(Uuid::now_v7()),
                scopes: Scopes::default(),
                game_scopes: GameScopes::All,
                active: true,
            },
        }
    }

    async fn until(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The store leases at most two deliveries of an endpoint at a time, but a lease ends a
    /// moment before its attempt gives its slot back: a delivery claimed in that moment (here:
    /// five of one endpoint at once) waits, without a slot, so the endpoint never holds more
    /// than two of the instance's slots; other endpoints' deliveries start meanwhile.
    #[tokio::test]
    async fn one_endpoint_never_holds_more_than_two_slots() {
        let repos = deckhand_memory::repositories();
        let service = WebhookService::new(
            repos.webhooks,
            repos.events,
            Arc::new(NoLookups),
            SystemPorts::system(),
            SealingKey(KEY),
            DeliveryPolicy::default(),
        );
        let gate = Arc::new(Gate::default());
        let mut attempts = Attempts::new(8, service, gate.clone(), Arc::new(|_| {}));
        let (busy, other) = (
            endpoint("https://93.184.216.34/busy"),
            endpoint("https://93.184.216.34/other"),
        );
        let claimed_at = Instant::now();
        for _ in 0..5 {
            attempts.start(claimed(&busy), claimed_at);
        }
        attempts.start(claimed(&other), claimed_at);
        until("three attempts held", || {
            gate.held(&busy.url).0 == 2 && gate.held(&other.url).0 == 1
        })
        .await;
        assert_eq!(attempts.waiting.len(), 3);
        // Eight slots: three attempts, three promised to the waiting deliveries.
        assert_eq!(attempts.free(), 2);

        // Each attempt of the endpoint that ends lets one waiting delivery start, no more.
        for waiting in (0..3).rev() {
            let freed = attempts.freed.clone();
            let notified = freed.notified();
            gate.release(&busy.url, 1);
            notified.await;
            attempts.reap();
            attempts.start_waiting();
            assert_eq!(attempts.waiting.len(), waiting);
        }
        gate.release(&busy.url, 10);
        gate.release(&other.url, 1);
        until("every attempt to end", || {
            attempts.reap();
            attempts.tasks.is_empty()
        })
        .await;
        assert_eq!(gate.held(&busy.url), (0, 2));
        assert_eq!(attempts.free(), 8);
        assert!(lock(&attempts.running).is_empty());
    }
}
