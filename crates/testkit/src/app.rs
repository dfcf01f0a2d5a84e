#![allow(clippy::expect_used)] // A failure to set up a test app is a failed test.

//! `TestApp`: the real application (services, HTTP stack, server) on an ephemeral port, over
//! the memory store or an isolated PostgreSQL schema, with the operator's admin commands.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::ServerHandle;
use anyhow::Context as _;
use clap::Parser as _;
use deckhand::cli::{Cli, Command};
use deckhand::server::ServerOptions;
pub use deckhand::settings::ConnectionLimits;
use deckhand::store::Opened;
use deckhand_domain::Services;
use deckhand_domain::oauth::OAuthPolicy;
use deckhand_domain::ports::{Clock, Repositories, SystemPorts};
use deckhand_domain::webhooks::DeliveryPolicy;
use deckhand_http::HttpConfig;
use serde_json::Value;

use crate::db::TestDb;

pub struct TestApp {
    /// Where the server listens.
    pub base_url: String,
    /// `DECKHAND_PUBLIC_URL`: the base URL unless the builder set another (instances behind
    /// one load balancer share it).
    pub public_url: String,
    pub client: reqwest::Client,
    pub services: Services,
    server: ServerHandle,
    /// The PostgreSQL URL of the store, for [`TestApp::another_instance`].
    database_url: Option<String>,
    /// The store settings of a [`Store::Pooled`] app, which its other instances open too.
    pooled: Option<deckhand::settings::StoreSettings>,
    /// The OAuth policy the builder set, which [`TestApp::another_instance`] shares.
    oauth: Option<OAuthPolicy>,
    /// This instance's webhook worker, and what it was started with.
    webhooks: Option<deckhand::webhooks::Worker>,
    webhook_policy: DeliveryPolicy,
    /// `DECKHAND_SECRET_KEY`, random per test app and shared with its other instances (they
    /// open the partner and webhook secrets it sealed).
    secret_key: [u8; 32],
    // Dropped after the server handle is told to stop; keeps the schema alive until then.
    _db: Option<TestDb>,
}

/// Which store a `TestApp` runs on.
pub enum Store {
    Memory,
    /// An isolated schema in the shared test cluster.
    Postgres,
    /// The database at this URL, migrated first (e.g. an [`crate::db::OwnCluster`]).
    PostgresAt(String),
    /// `pooler`, a transaction-mode pooler in front of `direct` (`DECKHAND_DB_POOLER=transaction`
    /// with `DATABASE_LISTEN_URL=direct`), opened as `deckhand serve` opens it: migrations and
    /// LISTEN on `direct`, everything else through `pooler`.
    Pooled {
        pooler: String,
        direct: String,
    },
}

/// What the instances of one test app share: the OAuth policy, the webhook policy and the
/// secret key (a new random one for the first instance).
struct Shared {
    oauth: Option<OAuthPolicy>,
    webhook_policy: DeliveryPolicy,
    secret_key: Option<[u8; 32]>,
}

pub struct TestAppBuilder {
    store: Store,
    clock: Option<Arc<dyn Clock>>,
    rate_limits: Option<BTreeMap<String, u32>>,
    public_url: Option<String>,
    limits: ConnectionLimits,
    oauth: Option<OAuthPolicy>,
    statement_timeout: std::time::Duration,
    webhooks: DeliveryPolicy,
    replicas: Vec<String>,
    replica_max_lag: std::time::Duration,
}

impl TestAppBuilder {
    /// Streaming replicas of the store (`DATABASE_REPLICA_URL`), with the most replay lag a
    /// read may see (`DECKHAND_REPLICA_MAX_LAG_MS`); needs a PostgreSQL store.
    pub fn replicas(mut self, urls: &[String], max_lag: std::time::Duration) -> Self {
        self.replicas = urls.to_vec();
        self.replica_max_lag = max_lag;
        self
    }

    /// How webhooks are delivered (default: `deckhand serve`'s, private targets refused).
    pub fn webhooks(mut self, policy: DeliveryPolicy) -> Self {
        self.webhooks = policy;
        self
    }

    /// How long one PostgreSQL statement may run (default: `deckhand serve`'s).
    pub fn statement_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.statement_timeout = timeout;
        self
    }

    /// The OAuth server's lifetimes and sign-in throttling (default: the contract's).
    pub fn oauth_policy(mut self, policy: OAuthPolicy) -> Self {
        self.oauth = Some(policy);
        self
    }

    /// Timeouts and connection limits (default: `deckhand serve`'s).
    pub fn limits(mut self, limits: ConnectionLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Requests per minute by tier (default: the contract's defaults); `None` turns them off.
    pub fn rate_limits(mut self, quotas: Option<&[(&str, u32)]>) -> Self {
        self.rate_limits = quotas.map(|quotas| {
            quotas
                .iter()
                .map(|(tier, quota)| ((*tier).to_owned(), *quota))
                .collect()
        });
        self
    }

    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// `DECKHAND_PUBLIC_URL`, as for several instances behind one load balancer (default: the
    /// server's own address).
    pub fn public_url(mut self, public_url: &str) -> Self {
        self.public_url = Some(public_url.to_owned());
        self
    }

    pub async fn start(self) -> TestApp {
        let unreplicated = |primary| Opened {
            primary,
            replicas: None,
        };
        let mut pooled = None;
        let (opened, db, database_url) = match self.store {
            Store::Memory => (unreplicated(deckhand_memory::repositories()), None, None),
            Store::Pooled { pooler, direct } => {
                let settings = deckhand::settings::StoreSettings {
                    database_url: Some(pooler.clone()),
                    db_pool_size: 4,
                    db_statement_timeout_ms: u32::try_from(self.statement_timeout.as_millis())
                        .expect("a statement timeout in range"),
                    db_pooler: deckhand::settings::DbPooler::Transaction,
                    database_listen_url: Some(direct),
                };
                let repositories = deckhand::store::open(&settings, true)
                    .await
                    .expect("open the store through the pooler");
                pooled = Some(settings);
                (unreplicated(repositories), None, Some(pooler))
            }
            Store::Postgres => {
                assert!(
                    self.replicas.is_empty(),
                    "replicas need a cluster of their own (Store::PostgresAt)"
                );
                let db = TestDb::new().await;
                let url = db.url().to_owned();
                let repositories = if self.statement_timeout == deckhand_postgres::STATEMENT_TIMEOUT
                {
                    db.repositories()
                } else {
                    postgres_repositories(&url, self.statement_timeout).await
                };
                (unreplicated(repositories), Some(db), Some(url))
            }
            Store::PostgresAt(url) => {
                deckhand_postgres::run_migrations(&url)
                    .await
                    .expect("migrate the database");
                let primary = pool(&url, self.statement_timeout).await;
                let opened = if self.replicas.is_empty() {
                    unreplicated(deckhand_postgres::repositories(primary))
                } else {
                    // As `deckhand serve` wires them.
                    let mut replicas = Vec::new();
                    for replica in &self.replicas {
                        replicas.push(pool(replica, self.statement_timeout).await);
                    }
                    Opened::replicated(primary.clone(), &primary, replicas, self.replica_max_lag)
                };
                (opened, None, Some(url))
            }
        };
        let mut system = deckhand::passwords::server_system_ports();
        if let Some(clock) = self.clock {
            system.clock = clock;
        }
        let mut app = TestApp::serve(
            opened,
            system,
            self.rate_limits,
            self.public_url,
            self.limits,
            Shared {
                oauth: self.oauth,
                webhook_policy: self.webhooks,
                secret_key: None,
            },
            db,
        );
        app.database_url = database_url;
        app.pooled = pooled;
        // Both stores start with the catalog `cargo run` has, so tests can use real cards.
        deckhand::catalog::load_bundled(&app.services)
            .await
            .expect("load the bundled catalog");
        app
    }
}

impl TestApp {
    pub fn builder(store: Store) -> TestAppBuilder {
        TestAppBuilder {
            store,
            clock: None,
            rate_limits: Some(HttpConfig::default_rate_limits()),
            public_url: None,
            limits: ConnectionLimits::default(),
            oauth: None,
            statement_timeout: deckhand_postgres::STATEMENT_TIMEOUT,
            webhooks: DeliveryPolicy::default(),
            replicas: Vec::new(),
            replica_max_lag: std::time::Duration::from_secs(1),
        }
    }

    pub async fn memory() -> Self {
        Self::builder(Store::Memory).start().await
    }

    pub async fn postgres() -> Self {
        Self::builder(Store::Postgres).start().await
    }

    fn serve(
        opened: Opened,
        system: SystemPorts,
        rate_limits: Option<BTreeMap<String, u32>>,
        public_url: Option<String>,
        limits: ConnectionLimits,
        Shared {
            oauth,
            webhook_policy,
            secret_key,
        }: Shared,
        db: Option<TestDb>,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
        let address = listener.local_addr().expect("the listener's address");
        let base_url = format!("http://{address}");
        let public_url = public_url.unwrap_or_else(|| base_url.clone());
        let secret_key = match secret_key {
            Some(key) => key,
            None => deckhand_auth::OsRandom::new()
                .bytes32()
                .expect("a random secret key"),
        };
        let mut settings = deckhand_domain::ServiceSettings::new(secret_key);
        settings.webhooks = webhook_policy.clone();
        if let Some(oauth) = oauth {
            settings.oauth = oauth;
        }
        let router = opened.into_router(system, settings);
        let services = router.primary().clone();
        let config = HttpConfig {
            rate_limits,
            body_timeout: limits.client_request_timeout(),
            ..HttpConfig::new(public_url.clone())
        };
        let state = deckhand::server::http_state(router, config).expect("build the HTTP state");
        let options = ServerOptions {
            workers: Some(1),
            limits,
            shutdown_timeout: std::time::Duration::from_secs(
                deckhand::settings::DEFAULT_SHUTDOWN_TIMEOUT_SECS.into(),
            ),
        };
        let webhooks = deckhand::webhooks::start(&state, 8);
        let server = deckhand::server::run(state, listener, options).expect("start the server");
        let handle = server.handle();
        tokio::spawn(server);
        Self {
            base_url,
            public_url,
            client: reqwest::Client::new(),
            services,
            server: handle,
            database_url: None,
            pooled: None,
            oauth,
            webhooks: Some(webhooks),
            webhook_policy,
            secret_key,
            _db: db,
        }
    }

    /// Stops this instance's webhook worker at once, attempts in flight included, as a killed
    /// process would.
    pub fn kill_webhook_worker(&mut self) {
        if let Some(worker) = self.webhooks.take() {
            worker.abort();
        }
    }

    /// A second instance of the service on the same PostgreSQL store (its own pool, services
    /// and per-instance caches), as a load balancer would spread requests over. The first
    /// must outlive it.
    ///
    /// # Panics
    ///
    /// On the memory store, which no second process could share.
    pub async fn another_instance(&self) -> TestApp {
        let url = self
            .database_url
            .clone()
            .expect("a second instance needs a PostgreSQL store");
        let repositories = match &self.pooled {
            Some(settings) => deckhand::store::open(settings, false)
                .await
                .expect("open the store through the pooler"),
            None => postgres_repositories(&url, deckhand_postgres::STATEMENT_TIMEOUT).await,
        };
        let mut app = TestApp::serve(
            Opened {
                primary: repositories,
                replicas: None,
            },
            deckhand::passwords::server_system_ports(),
            Some(HttpConfig::default_rate_limits()),
            Some(self.public_url.clone()),
            ConnectionLimits::default(),
            Shared {
                oauth: self.oauth,
                webhook_policy: self.webhook_policy.clone(),
                secret_key: Some(self.secret_key),
            },
            None,
        );
        app.database_url = Some(url);
        app.pooled.clone_from(&self.pooled);
        app
    }

    /// The absolute URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// This instance's `/metrics` page, which must answer 200.
    pub async fn metrics_text(&self) -> String {
        let response = self
            .client
            .get(self.url("/metrics"))
            .send()
            .await
            .expect("GET /metrics");
        assert_eq!(response.status(), reqwest::StatusCode::OK, "GET /metrics");
        response.text().await.expect("the body of /metrics")
    }

    /// The absolute URL of `path` under the public API base.
    pub fn api(&self, path: &str) -> String {
        format!("{}/api/public/v1{path}", self.base_url)
    }

    /// Runs `deckhand admin <args>` against this app's store, through the real argument parser,
    /// and returns the JSON it would print.
    pub async fn admin(&self, args: &[&str]) -> anyhow::Result<Value> {
        let argv = ["deckhand", "admin"].iter().chain(args.iter());
        let cli = Cli::try_parse_from(argv).context("parsing the admin command line")?;
        match cli.command {
            Some(Command::Admin(admin)) => {
                deckhand::admin::execute(&self.services, admin.command).await
            }
            _ => anyhow::bail!("not an admin command"),
        }
    }

    /// A new user with a PAT holding `scopes`; returns (user id, token).
    pub async fn user_with_token(&self, username: &str, scopes: &str) -> (String, String) {
        let user = self
            .admin(&["user", "create", "--username", username])
            .await
            .expect("create a user");
        let pat = self
            .admin(&["pat", "create", "--user", username, "--scopes", scopes])
            .await
            .expect("create a PAT");
        (
            user["id"].as_str().expect("user id").to_owned(),
            pat["token"].as_str().expect("token").to_owned(),
        )
    }

    /// A new partner `slug` owned by user `owner`, allowed `scopes` in every game, with an API
    /// key; returns the key.
    pub async fn partner_with_key(&self, slug: &str, owner: &str, scopes: &str) -> String {
        self.admin(&[
            "partner",
            "create",
            "--slug",
            slug,
            "--owner",
            owner,
            "--scopes",
            scopes,
            "--game-scopes",
            "*",
        ])
        .await
        .expect("create a partner");
        let key = self
            .admin(&["api-key", "create", "--partner", slug])
            .await
            .expect("create an API key");
        key["key"].as_str().expect("key").to_owned()
    }
}

async fn postgres_repositories(url: &str, statement_timeout: std::time::Duration) -> Repositories {
    deckhand_postgres::repositories(pool(url, statement_timeout).await)
}

async fn pool(url: &str, statement_timeout: std::time::Duration) -> deckhand_postgres::Pool {
    deckhand_postgres::connect_with_timeout(url, 4, statement_timeout)
        .await
        .expect("connect a pool")
}

impl Drop for TestApp {
    fn drop(&mut self) {
        let stop = self.server.stop(false);
        // Inside a runtime, let the stop run in the background; the test is over either way.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(stop);
        }
    }
}
