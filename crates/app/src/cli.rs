//! The command line. With no command, `deckhand` serves (so `cargo run` starts the API).

use clap::{Args, Parser, Subcommand};

use crate::settings::{LogFormat, ServeSettings, StoreSettings};

#[derive(Debug, Parser)]
#[command(name = "deckhand", version, about = "The Deckhand deck-building API")]
#[command(args_conflicts_with_subcommands = true)]
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
    /// The demo data set.
    #[command(subcommand)]
    Demo(DemoCommand),
    /// The card catalog.
    #[command(subcommand)]
    Catalog(CatalogCommand),
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
        file: std::path::PathBuf,
    },
}

#[derive(Debug, Subcommand)]
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
