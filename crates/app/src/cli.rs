//! The command line. With no command, `deckhand` serves (so `cargo run` starts the API).

use std::ffi::OsString;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

use crate::settings::{LogFormat, SecretKey, ServeSettings, StoreSettings, parse_secret_key};

#[derive(Debug, Parser)]
#[command(name = "deckhand", version, about = "The Deckhand deck-building API")]
pub struct Cli {
    /// Log format on stderr.
    #[arg(
        long,
        env = "DECKHAND_LOG_FORMAT",
        value_enum,
        default_value_t,
        global = true
    )]
    pub log_format: LogFormat,

    #[command(subcommand)]
    pub command: Option<Command>,

    /// Settings of `serve`, which runs when no command is given.
    #[command(flatten)]
    pub serve: ServeSettings,
}

impl Cli {
    /// Parses `argv`. Settings of `serve` given before a command are refused (they would be
    /// ignored); global options such as `--log-format` go before or after it.
    pub fn parse_from_args<I, T>(argv: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let matches = Self::command().try_get_matches_from(argv)?;
        if matches.subcommand().is_some()
            && let Some(stray) = stray_serve_setting(&matches)
        {
            return Err(Self::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                format!("`--{stray}` is a setting of `serve`: put it after `serve`, not before another command"),
            ));
        }
        Self::from_arg_matches(&matches)
    }
}

/// A top-level setting of the implicit `serve` that was typed on the command line.
fn stray_serve_setting(matches: &ArgMatches) -> Option<String> {
    Cli::command()
        .get_arguments()
        .filter(|arg| !arg.is_global_set())
        .map(|arg| arg.get_id().as_str().to_owned())
        .find(|id| matches.value_source(id) == Some(ValueSource::CommandLine))
        .map(|id| id.replace('_', "-"))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API (PostgreSQL with DATABASE_URL, else the in-memory store with a demo seed).
    Serve(ServeSettings),
    /// Apply pending database migrations.
    Migrate(StoreSettings),
    /// Print the OpenAPI document.
    Openapi,
    /// Operator commands; each prints one JSON object on stdout.
    Admin(AdminArgs),
}

#[derive(Debug, Args)]
pub struct AdminArgs {
    #[command(flatten)]
    pub store: StoreSettings,
    /// Base64 of 32 bytes; seals partner secrets. Required by `partner create`.
    #[arg(long, env = "DECKHAND_SECRET_KEY", hide_env_values = true, value_parser = parse_secret_key)]
    pub secret_key: Option<SecretKey>,
    #[command(subcommand)]
    pub command: AdminCommand,
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Users.
    #[command(subcommand)]
    User(UserCommand),
    /// Personal access tokens.
    #[command(subcommand)]
    Pat(PatCommand),
    /// Partners.
    #[command(subcommand)]
    Partner(PartnerCommand),
    /// Partner API keys.
    #[command(subcommand)]
    ApiKey(ApiKeyCommand),
    /// OAuth clients.
    #[command(subcommand)]
    OauthClient(OAuthClientCommand),
    /// Partners' webhook endpoints.
    #[command(subcommand)]
    Webhook(WebhookCommand),
    /// Print the signature headers of a request (needs no database), to test a partner's
    /// signing: {"headers", "canonical", "curl"}.
    Sign(SignArgs),
    /// The demo data set.
    #[command(subcommand)]
    Demo(DemoCommand),
    /// The card catalog.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Formats: legality changes.
    #[command(subcommand)]
    Format(FormatCommand),
}

#[derive(Debug, Subcommand)]
pub enum FormatCommand {
    /// Record a card's legality in a format from a date on (a ban, an unban, a restriction),
    /// which format checks with a later `as_of` apply: {"game", "format", "card", "status",
    /// "from"}.
    Legality {
        /// The game's slug.
        #[arg(long, default_value = "mtg")]
        game: String,
        /// The format's slug or id.
        #[arg(long)]
        format: String,
        /// The card's name (full, or its front face's).
        #[arg(long)]
        card: String,
        /// legal, banned, restricted or not_legal.
        #[arg(long, value_parser = ["legal", "banned", "restricted", "not_legal"])]
        status: String,
        /// When it takes effect: an RFC 3339 time or a date (YYYY-MM-DD, midnight UTC);
        /// default now.
        #[arg(long)]
        from: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Import a catalog file (JSON array or JSON Lines, gzipped or not), idempotently:
    /// {"game", "cards", "printings", "read", "skipped"}.
    Import {
        /// The game's slug.
        #[arg(long)]
        game: String,
        #[arg(long, value_enum)]
        source: crate::catalog::Source,
        /// The day the file was made (YYYY-MM-DD): its legalities are recorded as of that day.
        /// Required unless the file's name says it (Scryfall's `default-cards-20240515091234.json`).
        #[arg(long, value_parser = parse_day)]
        as_of: Option<time::Date>,
        file: std::path::PathBuf,
    },
}

/// A day as YYYY-MM-DD.
fn parse_day(text: &str) -> Result<time::Date, String> {
    time::Date::parse(
        text,
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .map_err(|_| format!("{text:?} is not a day (YYYY-MM-DD)"))
}

#[derive(Debug, Subcommand)]
pub enum PartnerCommand {
    /// Create a partner: {"slug", "secret", "created_by"}. The secret is shown once.
    Create {
        /// 2 to 40 of a-z, 0-9 and '-'.
        #[arg(long)]
        slug: String,
        /// The user partner-only calls act as, by id or username.
        #[arg(long)]
        owner: String,
        /// Scopes, separated by spaces or commas.
        #[arg(long)]
        scopes: String,
        /// Game slugs separated by spaces or commas, or `*` for every game.
        #[arg(long)]
        game_scopes: String,
        /// Rate-limit tier (default `partner`).
        #[arg(long)]
        tier: Option<String>,
    },
    /// Every partner: {"partners": [{"slug", "created_by", "scopes", "game_scopes", "tier",
    /// "active", "created_at"}]}.
    List,
    /// Disable a partner, stopping its signatures and API keys at once: {"slug", "active": false}.
    Disable {
        #[arg(long)]
        slug: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ApiKeyCommand {
    /// Create an API key for a partner: {"id", "key"}. The key is shown once.
    Create {
        #[arg(long)]
        partner: String,
    },
    /// API keys (never the keys themselves), of one partner or all: {"api_keys": [{"id",
    /// "partner", "created_at", "revoked_at"}]}.
    List {
        #[arg(long)]
        partner: Option<String>,
    },
    /// Revoke an API key: {"id", "revoked": true}.
    Revoke {
        #[arg(long)]
        id: uuid::Uuid,
    },
}

#[derive(Debug, Subcommand)]
pub enum OAuthClientCommand {
    /// Register an OAuth client of a partner: {"client_id", "client_secret"} (null for public
    /// clients). The secret is shown once.
    Create {
        /// The owning partner's slug.
        #[arg(long)]
        partner: String,
        /// Shown to users on the consent page.
        #[arg(long)]
        name: String,
        /// An exact redirect URI; repeat for more.
        #[arg(long = "redirect-uri", required = true)]
        redirect_uris: Vec<String>,
        /// The scopes the client may ask for (within the partner's), by spaces or commas.
        #[arg(long)]
        scopes: String,
        /// A public client (no secret; native and browser apps, PKCE only).
        #[arg(long)]
        public: bool,
        /// Grant types, by spaces or commas (default: authorization_code refresh_token).
        #[arg(long)]
        grant_types: Option<String>,
    },
    /// OAuth clients (never their secrets), of one partner or all: {"oauth_clients":
    /// [{"client_id", "partner", "name", "public", "redirect_uris", "scopes", "grant_types",
    /// "created_at", "disabled_at"}]}.
    List {
        #[arg(long)]
        partner: Option<String>,
    },
    /// Disable an OAuth client; its tokens stop working at once: {"client_id", "active": false}.
    Disable {
        #[arg(long)]
        id: uuid::Uuid,
    },
}

#[derive(Debug, Subcommand)]
pub enum WebhookCommand {
    /// Webhook endpoints (never their secrets), of one partner or all: {"webhooks": [{"id",
    /// "partner", "url", "types", "games", "description", "enabled", "disabled_reason",
    /// "consecutive_failures", "created_at"}]}.
    List {
        #[arg(long)]
        partner: Option<String>,
    },
    /// Disable a webhook endpoint: no delivery reaches it from now on, pings included, and its
    /// partner cannot enable it again: {"id", "partner", "enabled": false, "disabled_reason":
    /// "operator"}.
    Disable {
        #[arg(long)]
        id: uuid::Uuid,
    },
}

#[derive(Args)]
pub struct SignArgs {
    /// The partner slug.
    #[arg(long)]
    pub partner: String,
    /// The partner secret (dh_ps_...).
    #[arg(long, env = "DECKHAND_PARTNER_SECRET", hide_env_values = true)]
    pub secret: String,
    #[arg(long, default_value = "GET")]
    pub method: String,
    /// The path as it will be sent, percent-encoding kept (e.g. /api/public/v1/_probe/partner).
    #[arg(long)]
    pub path: String,
    /// The raw query as it will be sent, without '?'.
    #[arg(long, default_value = "")]
    pub query: String,
    /// The body as text.
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// A file holding the body bytes.
    #[arg(long)]
    pub body_file: Option<std::path::PathBuf>,
    /// A PAT to send with the signature (acting for its user).
    #[arg(long)]
    pub pat: Option<String>,
    /// Unix seconds to sign with (default: now).
    #[arg(long)]
    pub timestamp: Option<i64>,
    /// Base URL for the curl command.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub base_url: String,
}

impl std::fmt::Debug for SignArgs {
    // The secret and the PAT are credentials: Debug says only whether a PAT was given.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignArgs")
            .field("partner", &self.partner)
            .field("method", &self.method)
            .field("path", &self.path)
            .field("query", &self.query)
            .field("pat", &self.pat.is_some())
            .field("timestamp", &self.timestamp)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Create a user: {"id", "username"}.
    Create {
        #[arg(long)]
        username: String,
        /// Password for the OAuth sign-in page (8 to 256 characters).
        #[arg(long)]
        password: Option<String>,
        /// Grant the premium entitlement (full premium guide content).
        #[arg(long)]
        premium: bool,
    },
    /// Deactivate a user (by id or username): {"id", "active": false}.
    Deactivate {
        #[arg(long)]
        user: String,
    },
}

impl std::fmt::Debug for UserCommand {
    // The password never reaches Debug output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Create {
                username, premium, ..
            } => f
                .debug_struct("Create")
                .field("username", username)
                .field("premium", premium)
                .finish_non_exhaustive(),
            Self::Deactivate { user } => f.debug_struct("Deactivate").field("user", user).finish(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum PatCommand {
    /// Create a personal access token: {"id", "token", "scopes"}. The token is shown once.
    Create {
        /// The owner, by id or username.
        #[arg(long)]
        user: String,
        /// Scopes, separated by spaces or commas.
        #[arg(long)]
        scopes: String,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        expires_days: Option<u32>,
    },
}

#[derive(Debug, Subcommand)]
pub enum DemoCommand {
    /// Create the demo user and token and print them.
    Seed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_limits_default_as_documented() {
        let cli = Cli::try_parse_from(["deckhand", "serve"]).unwrap();
        let Some(Command::Serve(settings)) = cli.command else {
            panic!("not serve")
        };
        assert_eq!(
            settings.limits.client_request_timeout_ms,
            crate::settings::ConnectionLimits::default().client_request_timeout_ms
        );
        assert_eq!(
            settings.limits.keep_alive_secs,
            crate::settings::ConnectionLimits::default().keep_alive_secs
        );
        assert_eq!(
            settings.limits.max_connections,
            crate::settings::ConnectionLimits::default().max_connections
        );
        assert_eq!(
            settings.limits.client_disconnect_timeout_ms,
            crate::settings::ConnectionLimits::default().client_disconnect_timeout_ms
        );
        assert!(
            Cli::try_parse_from(["deckhand", "serve", "--client-request-timeout-ms", "5"]).is_err()
        );
    }

    #[test]
    fn replicas_are_comma_separated_postgres_urls_with_a_bounded_lag() {
        let parse = |args: &[&str]| -> Result<crate::settings::ReplicaSettings, clap::Error> {
            let argv = ["deckhand", "serve"].iter().chain(args);
            match Cli::try_parse_from(argv)?.command {
                Some(Command::Serve(settings)) => Ok(settings.replicas),
                _ => panic!("not serve"),
            }
        };
        let defaults = parse(&[]).unwrap();
        assert!(defaults.urls.is_empty());
        assert_eq!(defaults.max_lag(), std::time::Duration::from_secs(1));
        let two = parse(&[
            "--database-replica-url",
            "postgres://r1/db,postgresql://r2/db",
            "--replica-max-lag-ms",
            "250",
        ])
        .unwrap();
        assert_eq!(two.urls, ["postgres://r1/db", "postgresql://r2/db"]);
        assert_eq!(two.max_lag_ms, 250);
        for bad in [
            &["--database-replica-url", "postgres://r1/db,mysql://r2"][..],
            &["--replica-max-lag-ms", "0"],
            &["--replica-max-lag-ms", "soon"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_log_format_is_global() {
        for argv in [
            &["deckhand", "--log-format", "json", "serve"][..],
            &["deckhand", "serve", "--log-format", "json"],
            &["deckhand", "--log-format", "json", "migrate"],
            &["deckhand", "--log-format", "json"],
        ] {
            let cli =
                Cli::parse_from_args(argv).unwrap_or_else(|error| panic!("{argv:?}: {error}"));
            assert_eq!(cli.log_format, LogFormat::Json, "{argv:?}");
        }
    }

    #[test]
    fn debug_output_holds_no_password_secret_or_token() {
        for argv in [
            &[
                "deckhand",
                "admin",
                "user",
                "create",
                "--username",
                "alice",
                "--password",
                "hunter2-xyzzy",
            ][..],
            &[
                "deckhand",
                "admin",
                "sign",
                "--partner",
                "acme",
                "--secret",
                "dh_ps_xyzzy",
                "--path",
                "/x",
                "--pat",
                "dh_pat_xyzzy",
            ],
        ] {
            let cli =
                Cli::parse_from_args(argv).unwrap_or_else(|error| panic!("{argv:?}: {error}"));
            let printed = format!("{cli:?}");
            assert!(!printed.contains("xyzzy"), "{printed}");
            assert!(
                printed.contains("alice") || printed.contains("acme"),
                "{printed}"
            );
        }
    }

    #[test]
    fn serve_settings_before_a_command_are_refused() {
        let error = Cli::parse_from_args(["deckhand", "--bind", "127.0.0.1:1", "migrate"])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`--bind` is a setting of `serve`"),
            "{error}"
        );
        assert!(Cli::parse_from_args(["deckhand", "--bind", "127.0.0.1:1"]).is_ok());
    }

    #[test]
    fn the_pooler_is_none_or_transaction_and_anything_else_stops_the_start() {
        let pooler = |value: &str| {
            Cli::parse_from_args(["deckhand", "serve", "--db-pooler", value]).map(|cli| {
                match cli.command {
                    Some(Command::Serve(settings)) => settings.store.db_pooler,
                    _ => unreachable!("serve was asked for"),
                }
            })
        };
        assert_eq!(pooler("none").unwrap(), crate::settings::DbPooler::None);
        assert_eq!(
            pooler("transaction").unwrap(),
            crate::settings::DbPooler::Transaction
        );
        let error = pooler("session").unwrap_err().to_string();
        assert!(
            error.contains("invalid value 'session' for '--db-pooler <DB_POOLER>'")
                && error.contains("[possible values: none, transaction]"),
            "{error}"
        );
    }
}
