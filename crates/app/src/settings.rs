//! Every setting, read from the command line or the environment and validated before anything
//! starts: a bad value stops the process with a message naming the setting.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use clap::{Args, ValueEnum};
use deckhand_domain::decks::{DEFAULT_SOURCE_PROVIDERS, DeckPolicy};
use deckhand_domain::events::WaitLimits;
use deckhand_domain::oauth::{OAuthPolicy, SignInThrottle};
use deckhand_domain::settings::ServiceSettings;
use deckhand_domain::webhooks::{DeliveryPolicy, RetrySchedule, TargetPolicy};

/// Where data lives.
#[derive(Debug, Clone, Args)]
pub struct StoreSettings {
    /// PostgreSQL URL (postgres://...). Without it: the embedded in-memory store.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, value_parser = parse_database_url)]
    pub database_url: Option<String>,

    /// Connections in the PostgreSQL pool.
    #[arg(long, env = "DECKHAND_DB_POOL_SIZE", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub db_pool_size: u32,

    /// Milliseconds one statement may run before PostgreSQL cancels it (then 503).
    #[arg(long, env = "DECKHAND_DB_STATEMENT_TIMEOUT_MS", default_value_t = 15_000,
          value_parser = clap::value_parser!(u32).range(100..=600_000))]
    pub db_statement_timeout_ms: u32,

    /// What DATABASE_URL points at: PostgreSQL itself, or a pooler in transaction mode
    /// (PgBouncer's `pool_mode = transaction`), through which nothing is left on a session.
    #[arg(long, env = "DECKHAND_DB_POOLER", value_enum, default_value_t = DbPooler::None)]
    pub db_pooler: DbPooler,

    /// PostgreSQL itself, for what needs a session of its own: LISTEN and migrations (default:
    /// DATABASE_URL).
    #[arg(long, env = "DATABASE_LISTEN_URL", hide_env_values = true, value_parser = parse_database_url)]
    pub database_listen_url: Option<String>,
}

/// `DECKHAND_DB_POOLER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DbPooler {
    None,
    Transaction,
}

impl StoreSettings {
    pub fn statement_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::from(self.db_statement_timeout_ms))
    }

    /// The URL of PostgreSQL itself (`DATABASE_LISTEN_URL`, else `DATABASE_URL`).
    pub fn direct_url(&self) -> Option<&str> {
        self.database_listen_url
            .as_deref()
            .or(self.database_url.as_deref())
    }
}

/// Settings of `deckhand serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeSettings {
    #[command(flatten)]
    pub store: StoreSettings,

    /// Address and port to listen on.
    #[arg(long, env = "DECKHAND_BIND", default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,

    /// Externally visible base URL (default http://<bind>).
    #[arg(long, env = "DECKHAND_PUBLIC_URL", value_parser = parse_public_url)]
    pub public_url: Option<String>,

    /// Base64 of 32 bytes; encrypts partner secrets at rest. Required with PostgreSQL.
    #[arg(long, env = "DECKHAND_SECRET_KEY", hide_env_values = true, value_parser = parse_secret_key)]
    pub secret_key: Option<SecretKey>,

    #[arg(long, env = "DECKHAND_ACCESS_TOKEN_TTL_SECS", default_value_t = 3600,
          value_parser = clap::value_parser!(u32).range(60..=86_400))]
    pub access_token_ttl_secs: u32,

    #[arg(long, env = "DECKHAND_AUTH_CODE_TTL_SECS", default_value_t = 600,
          value_parser = clap::value_parser!(u32).range(10..=3600))]
    pub auth_code_ttl_secs: u32,

    #[arg(long, env = "DECKHAND_REFRESH_TOKEN_TTL_SECS", default_value_t = 2_592_000,
          value_parser = clap::value_parser!(u32).range(3600..=31_536_000))]
    pub refresh_token_ttl_secs: u32,

    /// The first delay of sign-in throttling, doubled with each further failure up to 15 min.
    #[arg(long, env = "DECKHAND_SIGN_IN_DELAY_SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(1..=900))]
    pub sign_in_delay_secs: u32,

    #[arg(long, env = "DECKHAND_PAGEVIEW_DEDUPE_SECS", default_value_t = 3600,
          value_parser = clap::value_parser!(u32).range(1..=604_800))]
    pub pageview_dedupe_secs: u32,

    /// How many days events stay in the feed before they are pruned.
    #[arg(long, env = "DECKHAND_EVENT_RETENTION_DAYS", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(1..=3650))]
    pub event_retention_days: u32,

    /// How many held feed requests (`wait`) one instance keeps at once; past it, and past 4 of
    /// one caller, a feed request is answered at once.
    #[arg(long, env = "DECKHAND_FEED_MAX_WAITERS", default_value_t = deckhand_domain::events::DEFAULT_MAX_WAITERS,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub feed_max_waiters: u32,

    /// Requests per minute per tier (`anonymous=120,user=1200,partner=6000`), or `off`.
    #[arg(long, env = "DECKHAND_RATE_LIMITS", default_value = "anonymous=120,user=1200,partner=6000",
          value_parser = parse_rate_limits)]
    pub rate_limits: RateLimits,

    /// Comma-separated proxy addresses or CIDR ranges whose X-Forwarded-For is believed.
    #[arg(long, env = "DECKHAND_TRUSTED_PROXIES", value_delimiter = ',', value_parser = parse_proxy)]
    pub trusted_proxies: Vec<ipnet::IpNet>,

    /// Comma-separated deck-site codes accepted as `source_provider` (besides `manual`).
    #[arg(long, env = "DECKHAND_SOURCE_PROVIDERS", value_delimiter = ',',
          default_value = DEFAULT_SOURCE_PROVIDERS, value_parser = parse_provider_code)]
    pub source_providers: Vec<String>,

    /// Skip applying pending migrations at start (PostgreSQL only).
    #[arg(long)]
    pub no_migrate: bool,

    /// HTTP worker threads (default: one per core).
    #[arg(long, env = "DECKHAND_WORKERS", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: Option<u16>,

    /// On SIGTERM or SIGINT, how long requests in flight may take to finish before the process
    /// exits anyway. New connections are refused from the signal on.
    #[arg(long, env = "DECKHAND_SHUTDOWN_TIMEOUT_SECS", default_value_t = DEFAULT_SHUTDOWN_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u16).range(1..=3600))]
    pub shutdown_timeout_secs: u16,

    #[command(flatten)]
    pub limits: ConnectionLimits,

    #[command(flatten)]
    pub webhooks: WebhookSettings,

    #[command(flatten)]
    pub replicas: ReplicaSettings,
}

/// Streaming replicas of `DATABASE_URL` that anonymous and partner-only reads may use
/// (docs/operations.md, "Scaling out").
#[derive(Debug, Clone, Args)]
pub struct ReplicaSettings {
    /// Comma-separated postgres:// URLs of streaming replicas of DATABASE_URL.
    #[arg(long = "database-replica-url", env = "DATABASE_REPLICA_URL", hide_env_values = true,
          value_delimiter = ',', value_parser = parse_database_url)]
    pub urls: Vec<String>,

    /// Milliseconds of replay lag past which a replica serves no reads.
    #[arg(long = "replica-max-lag-ms", env = "DECKHAND_REPLICA_MAX_LAG_MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u32).range(10..=3_600_000))]
    pub max_lag_ms: u32,
}

impl ReplicaSettings {
    pub fn max_lag(&self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::from(self.max_lag_ms))
    }
}

/// How this instance delivers webhooks.
#[derive(Debug, Clone, Args)]
pub struct WebhookSettings {
    /// Milliseconds one webhook attempt may take, the answer included.
    #[arg(long = "webhook-timeout-ms", env = "DECKHAND_WEBHOOK_TIMEOUT_MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u32).range(100..=120_000))]
    pub timeout_ms: u32,

    /// Delays before each retry of a failed delivery (`5s,5m,30m,2h`), each jittered by 10%.
    #[arg(long = "webhook-retry-schedule", env = "DECKHAND_WEBHOOK_RETRY_SCHEDULE",
          default_value = RetrySchedule::DEFAULT_TEXT, value_parser = parse_retry_schedule)]
    pub retry_schedule: RetrySchedule,

    /// Let webhooks target `http://` and private addresses (tests, private deployments).
    #[arg(long = "webhook-allow-private", env = "DECKHAND_WEBHOOK_ALLOW_PRIVATE",
          default_value_t = false, action = clap::ArgAction::Set)]
    pub allow_private: bool,

    /// Webhook attempts this instance runs at once.
    #[arg(long = "webhook-concurrency", env = "DECKHAND_WEBHOOK_CONCURRENCY", default_value_t = 32,
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub concurrency: u16,
}

impl WebhookSettings {
    pub fn policy(&self) -> DeliveryPolicy {
        DeliveryPolicy {
            targets: TargetPolicy {
                allow_private: self.allow_private,
            },
            schedule: self.retry_schedule.clone(),
            timeout: std::time::Duration::from_millis(u64::from(self.timeout_ms)),
        }
    }
}

fn parse_retry_schedule(value: &str) -> Result<RetrySchedule, String> {
    RetrySchedule::parse(value).map_err(|error| error.to_string())
}

/// How long and how many: what keeps slow, idle and excess clients from holding the server.
#[derive(Debug, Clone, Copy, Args)]
pub struct ConnectionLimits {
    /// Milliseconds a client has to send a request's head (then 408), and again its body.
    #[arg(long, env = "DECKHAND_CLIENT_REQUEST_TIMEOUT_MS", default_value_t = 5000,
          value_parser = clap::value_parser!(u32).range(100..=300_000))]
    pub client_request_timeout_ms: u32,

    /// Milliseconds a connection being closed waits for the client to take the last bytes.
    #[arg(long, env = "DECKHAND_CLIENT_DISCONNECT_TIMEOUT_MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u32).range(0..=60_000))]
    pub client_disconnect_timeout_ms: u32,

    /// Seconds an idle keep-alive connection stays open (0: one request per connection).
    #[arg(long, env = "DECKHAND_KEEP_ALIVE_SECS", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(0..=3600))]
    pub keep_alive_secs: u32,

    /// Open connections per worker; past it, new connections wait in the listen backlog.
    #[arg(long, env = "DECKHAND_MAX_CONNECTIONS", default_value_t = 25_000,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            client_request_timeout_ms: 5000,
            client_disconnect_timeout_ms: 1000,
            keep_alive_secs: 5,
            max_connections: 25_000,
        }
    }
}

impl ConnectionLimits {
    pub fn client_request_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::from(self.client_request_timeout_ms))
    }

    pub fn client_disconnect_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::from(self.client_disconnect_timeout_ms))
    }

    pub fn keep_alive(&self) -> std::time::Duration {
        std::time::Duration::from_secs(u64::from(self.keep_alive_secs))
    }
}

/// Above the 5 s a request may wait for a connection plus the 15 s one statement may run, below
/// the 30 s Kubernetes waits by default before it kills.
pub const DEFAULT_SHUTDOWN_TIMEOUT_SECS: u16 = 25;

impl ServeSettings {
    /// What the domain services are configured with. Without a configured secret key (the
    /// in-memory store only) a random one per process is used.
    pub fn service_settings(&self) -> anyhow::Result<ServiceSettings> {
        let mut settings = crate::service_settings(self.secret_key.as_ref())?;
        settings.deck_policy = DeckPolicy {
            source_providers: self.source_providers.iter().cloned().collect(),
            pageview_window: time::Duration::seconds(i64::from(self.pageview_dedupe_secs)),
        };
        settings.webhooks = self.webhooks.policy();
        settings.oauth = OAuthPolicy {
            access_token_ttl: time::Duration::seconds(i64::from(self.access_token_ttl_secs)),
            auth_code_ttl: time::Duration::seconds(i64::from(self.auth_code_ttl_secs)),
            refresh_token_ttl: time::Duration::seconds(i64::from(self.refresh_token_ttl_secs)),
            sign_in: SignInThrottle {
                first_delay: time::Duration::seconds(i64::from(self.sign_in_delay_secs)),
                ..SignInThrottle::default()
            },
            ..OAuthPolicy::default()
        };
        settings.event_retention = time::Duration::days(i64::from(self.event_retention_days));
        settings.feed_waits = WaitLimits {
            per_instance: self.feed_max_waiters,
            ..WaitLimits::default()
        };
        Ok(settings)
    }

    pub fn public_url(&self) -> String {
        self.public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.bind))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LogFormat {
    #[default]
    Pretty,
    Json,
}

/// The 32-byte key that encrypts secrets at rest. Never printed.
#[derive(Clone)]
pub struct SecretKey(pub [u8; 32]);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

/// Per-tier quotas in requests per minute; `None` when limits are off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimits(pub Option<BTreeMap<String, u32>>);

fn parse_database_url(value: &str) -> Result<String, String> {
    if value.starts_with("postgres://") || value.starts_with("postgresql://") {
        Ok(value.to_owned())
    } else {
        Err("must be a postgres:// or postgresql:// URL".into())
    }
}

fn parse_public_url(value: &str) -> Result<String, String> {
    let trimmed = value.trim_end_matches('/');
    let has_scheme = trimmed.starts_with("http://") || trimmed.starts_with("https://");
    let host_part = trimmed.split_once("://").map_or("", |(_, rest)| rest);
    if !has_scheme || host_part.is_empty() || trimmed.contains(['?', '#', ' ']) {
        return Err("must be an http:// or https:// URL without query or fragment".into());
    }
    Ok(trimmed.to_owned())
}

pub fn parse_secret_key(value: &str) -> Result<SecretKey, String> {
    let bytes = STANDARD
        .decode(value.trim())
        .map_err(|_| "must be standard base64".to_owned())?;
    <[u8; 32]>::try_from(bytes.as_slice())
        .map(SecretKey)
        .map_err(|_| format!("must decode to 32 bytes, not {}", bytes.len()))
}

fn parse_rate_limits(value: &str) -> Result<RateLimits, String> {
    if value.trim().eq_ignore_ascii_case("off") {
        return Ok(RateLimits(None));
    }
    let mut quotas = BTreeMap::new();
    for entry in value
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
    {
        let (tier, quota) = entry
            .split_once('=')
            .ok_or_else(|| format!("`{entry}` is not tier=requests_per_minute"))?;
        let quota: u32 = quota
            .trim()
            .parse()
            .ok()
            .filter(|quota| *quota > 0)
            .ok_or_else(|| format!("`{entry}`: the quota must be a positive whole number"))?;
        quotas.insert(tier.trim().to_owned(), quota);
    }
    for tier in ["anonymous", "user", "partner"] {
        if !quotas.contains_key(tier) {
            return Err(format!(
                "a quota for the `{tier}` tier is required (or use `off`)"
            ));
        }
    }
    Ok(RateLimits(Some(quotas)))
}

fn parse_proxy(value: &str) -> Result<ipnet::IpNet, String> {
    let value = value.trim();
    value
        .parse::<ipnet::IpNet>()
        .or_else(|_| value.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("`{value}` is not an IP address or CIDR range"))
}

fn parse_provider_code(value: &str) -> Result<String, String> {
    let value = value.trim();
    let valid = (1..=32).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if valid {
        Ok(value.to_owned())
    } else {
        Err(format!("`{value}` is not a lower-case provider code"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limits_parse_quotas_or_off() {
        let limits = parse_rate_limits("anonymous=1, user=2,partner=3,gold=9").unwrap();
        assert_eq!(limits.0.unwrap()["gold"], 9);
        assert_eq!(parse_rate_limits("OFF").unwrap(), RateLimits(None));
        assert!(parse_rate_limits("anonymous=1,user=2").is_err());
        assert!(parse_rate_limits("anonymous=0,user=2,partner=3").is_err());
        assert!(parse_rate_limits("anonymous").is_err());
    }

    #[test]
    fn secret_keys_must_be_32_bytes_of_base64() {
        assert!(parse_secret_key(&STANDARD.encode([1u8; 32])).is_ok());
        assert!(parse_secret_key(&STANDARD.encode([1u8; 31])).is_err());
        assert!(parse_secret_key("not base64!").is_err());
        assert_eq!(
            format!(
                "{:?}",
                parse_secret_key(&STANDARD.encode([1u8; 32])).unwrap()
            ),
            "SecretKey(..)"
        );
    }

    #[test]
    fn public_urls_lose_trailing_slashes_and_need_a_scheme() {
        assert_eq!(
            parse_public_url("https://api.example.com/").unwrap(),
            "https://api.example.com"
        );
        assert!(parse_public_url("api.example.com").is_err());
        assert!(parse_public_url("https://").is_err());
        assert!(parse_public_url("https://x?y=1").is_err());
    }

    #[test]
    fn proxies_accept_addresses_and_ranges() {
        assert!(parse_proxy("10.0.0.0/8").is_ok());
        assert!(parse_proxy("::1").is_ok());
        assert!(parse_proxy("proxy.local").is_err());
    }
}
