//! Running local processes for the tasks that drive a real server: PostgreSQL's client, the
//! `deckhand` binary, oha, and the few HTTP requests that tell whether it is up.

use std::fs;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

use crate::pg::{self, Cluster};
use crate::process::{cargo, display};

/// The game the loadtest and the soak drive (`mtg`, which the seed fills), under the API root.
pub const API: &str = "/api/public/v1/games/mtg";

/// A local address no server listens on now: a port the system hands out, so a server left
/// running by an earlier run can never answer for the one being started.
pub fn free_address() -> Result<String> {
    Ok(format!("127.0.0.1:{}", free_port()?))
}

/// A port of 127.0.0.1 that nothing listens on now (see [`free_address`]).
pub fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr()?.port())
}

/// Waits until the server answers `/healthz` at `address`, failing if it stops first.
pub fn wait_for_health(server: &mut Child, address: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = server.try_wait()? {
            bail!("the server stopped at start ({status})");
        }
        if get(address, "/healthz").is_ok_and(|(code, _)| code == 200) {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the server did not answer /healthz within 60 s");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The status code and body of one HTTP/1.1 GET (bodies sent whole, not chunked).
pub fn get(address: &str, path: &str) -> Result<(u16, String)> {
    get_with(address, path, "")
}

/// [`get`] with one more header line (`Name: value`), or none when `header` is empty.
pub fn get_with(address: &str, path: &str, header: &str) -> Result<(u16, String)> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let header = if header.is_empty() {
        String::new()
    } else {
        format!("{header}\r\n")
    };
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\n{header}Connection: close\r\n\r\n"
    )?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let text = String::from_utf8_lossy(&response);
    let code = text
        .get(9..12)
        .and_then(|code| code.parse().ok())
        .context("not an HTTP answer")?;
    let body = text
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, body)| body.to_owned());
    Ok((code, body))
}

/// `deckhand <args>` on the database at `url`, sealing with `secret_key`; returns its stdout.
pub fn deckhand(binary: &Path, url: &str, secret_key: &str, args: &[&str]) -> Result<String> {
    let mut cmd = Command::new(binary);
    cmd.args(args)
        .env("DATABASE_URL", url)
        .env("DECKHAND_SECRET_KEY", secret_key)
        .env("RUST_LOG", "warn");
    output(&mut cmd)
}

pub fn psql(cluster: &Cluster, database: &str, args: &[&str]) -> Result<String> {
    let socket = path_text(&cluster.socket())?;
    let port = cluster.port().to_string();
    output(
        pg::pg_command("psql")?
            .args([
                "-X",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                &socket,
                "-p",
                &port,
                "-U",
                "postgres",
            ])
            .args(["-d", database])
            .args(args),
    )
}

/// Runs `cmd` and returns its stdout; fails with its output when it fails.
pub fn output(cmd: &mut Command) -> Result<String> {
    let result = cmd
        .output()
        .with_context(|| format!("could not start `{}`", display(cmd)))?;
    if !result.status.success() {
        bail!(
            "`{}` failed ({}):\n{}{}",
            display(cmd),
            result.status,
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&result.stdout).into_owned())
}

pub fn path_text(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_owned)
        .with_context(|| format!("{} is not UTF-8", path.display()))
}

/// What oha measured of one request shape.
pub struct Measured {
    /// Requests answered (any status).
    pub requests: f64,
    /// 2xx answers per second.
    pub rate: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub ok_share: f64,
    /// Answers other than 2xx, and requests that got no answer (refused, reset, timed out).
    pub errors: f64,
}

/// Runs oha with `args` and reads its JSON report.
pub fn run_oha(oha: &Path, args: &[String]) -> Result<Measured> {
    let mut cmd = Command::new(oha);
    cmd.args(["--no-tui", "--output-format", "json"]).args(args);
    let text = output(&mut cmd)?;
    let report: Value = serde_json::from_str(&text).context("oha printed no JSON")?;
    let seconds = |pointer: &str| {
        report
            .pointer(pointer)
            .and_then(Value::as_f64)
            .unwrap_or(f64::NAN)
    };
    let count = |key: &str| -> f64 {
        report[key].as_object().map_or(0.0, |counts| {
            counts.values().filter_map(Value::as_f64).sum()
        })
    };
    let statuses = report["statusCodeDistribution"]
        .as_object()
        .context("no status codes in oha's report")?;
    let total: f64 = statuses.values().filter_map(Value::as_f64).sum();
    let ok: f64 = statuses
        .iter()
        .filter(|(code, _)| code.starts_with('2'))
        .filter_map(|(_, count)| count.as_f64())
        .sum();
    Ok(Measured {
        requests: total,
        rate: ok / seconds("/summary/total"),
        p50_ms: seconds("/latencyPercentiles/p50") * 1000.0,
        p99_ms: seconds("/latencyPercentiles/p99") * 1000.0,
        ok_share: if total > 0.0 { ok / total } else { 0.0 },
        errors: total - ok + count("errorDistribution"),
    })
}

/// The rows of `sql` on the `deckhand` database as text, one a line, without headers.
pub fn query(cluster: &Cluster, sql: &str) -> Result<String> {
    Ok(psql(cluster, "deckhand", &["-A", "-t", "-c", sql])?
        .trim()
        .to_owned())
}

/// Writes `line` of each row of `rows` to `path`, one a line; fails when there is none.
pub fn write_lines(path: &Path, rows: &str, line: impl Fn(&str) -> String) -> Result<()> {
    let mut text = String::new();
    for row in rows.lines().filter(|row| !row.is_empty()) {
        text.push_str(&line(row));
        text.push('\n');
    }
    if text.is_empty() {
        bail!("no rows for {}", path.display());
    }
    fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// The URL files, in `work`, that the loadtest and the soak drive over the seeded data (the
/// `mtg` game at `base`): one per request shape, each listing every deck it may be sent to.
pub struct SeededUrls {
    /// The detail of each public, listed deck.
    pub details: PathBuf,
    /// A counted view of each of those decks.
    pub views: PathBuf,
    /// Each deck of the first seeded user, whom the loadtest's PAT is for.
    pub patches: PathBuf,
}

pub fn seeded_urls(cluster: &Cluster, work: &Path, base: &str) -> Result<SeededUrls> {
    let public_decks = query(
        cluster,
        "SELECT id FROM decks WHERE game = 'mtg' AND visibility = 'public' AND NOT is_archived",
    )?;
    let own_decks = query(
        cluster,
        "SELECT id FROM decks WHERE game = 'mtg' AND owner_id = md5('seed-user-1')::uuid",
    )?;
    let urls = SeededUrls {
        details: work.join("detail-urls.txt"),
        views: work.join("view-urls.txt"),
        patches: work.join("patch-urls.txt"),
    };
    let deck = |id: &str| format!("{base}{API}/decks/{id}");
    write_lines(&urls.details, &public_decks, deck)?;
    write_lines(&urls.views, &public_decks, |id| {
        format!("{}/views", deck(id))
    })?;
    write_lines(&urls.patches, &own_decks, deck)?;
    Ok(urls)
}

/// oha from PATH or cargo's bin directory, installed there when missing.
pub fn oha(root: &Path) -> Result<PathBuf> {
    let installed = || {
        let on_path = std::env::var_os("PATH")
            .map(|path| {
                std::env::split_paths(&path)
                    .map(|dir| dir.join("oha"))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
        on_path
            .into_iter()
            .chain(cargo_home.map(|home| home.join("bin/oha")))
            .find(|bin| bin.is_file())
    };
    if let Some(bin) = installed() {
        return Ok(bin);
    }
    println!("oha is missing: installing it");
    cargo(root, &["install", "oha", "--locked"])?;
    installed().context("`cargo install oha` finished but oha is not on PATH or in ~/.cargo/bin")
}

/// How much the benchmark seeds of `crates/testkit/benches` put in the database.
pub struct SeedSizes {
    pub decks: u32,
    /// Sideboard guides on those decks.
    pub guides: u32,
    /// Events about those decks.
    pub events: u32,
}

/// Seeds the migrated `deckhand` database of `cluster` with the benchmark seeds, then analyzes
/// it. Triggers are off while seeding (`session_replication_role = replica`): each seed is one
/// transaction, and `deck_list_changed` would bump one counter row once per deck in it, a chain
/// of row versions each bump walks again (about an hour at 1,000,000 decks). The list counters
/// are set once afterwards; the seeds' keys are consistent by construction.
pub fn seed(cluster: &Cluster, root: &Path, sizes: &SeedSizes) -> Result<()> {
    let benches = root.join("crates/testkit/benches");
    let settings = format!(
        "SET session_replication_role = replica; \
         SET deckhand.seed_decks = {}; SET deckhand.seed_guides = {}; SET deckhand.seed_events = {}",
        sizes.decks, sizes.guides, sizes.events
    );
    psql(
        cluster,
        "deckhand",
        &[
            "-c",
            &settings,
            "-f",
            &path_text(&benches.join("decks_seed.sql"))?,
            "-f",
            &path_text(&benches.join("sideboard_guides_seed.sql"))?,
            "-f",
            &path_text(&benches.join("events_seed.sql"))?,
            "-c",
            &format!("SET session_replication_role = DEFAULT; {DECKS_CHANGED}; {GUIDES_CHANGED}"),
            "-c",
            "VACUUM ANALYZE",
        ],
    )
    .map(|_| ())
}

/// Moves each game's deck list counter by its decks, as the row triggers that a seed written as
/// a replica skips would have: a remembered total trusts each change to move one deck at most
/// (docs/operations.md, "Totals across instances").
const DECKS_CHANGED: &str = "INSERT INTO deck_list_changes AS c (game, changes) \
     SELECT game, count(*) FROM decks GROUP BY game \
     ON CONFLICT (game) DO UPDATE SET changes = c.changes + EXCLUDED.changes";

/// [`DECKS_CHANGED`] for the guide list's counter.
const GUIDES_CHANGED: &str = "INSERT INTO guide_list_changes AS c (game, changes) \
     SELECT game, count(*) FROM sideboard_guides GROUP BY game \
     ON CONFLICT (game) DO UPDATE SET changes = c.changes + EXCLUDED.changes";

/// Gives the mtg decks of the seeded `deckhand` database card lists with a realistic popularity
/// curve (`crates/testkit/benches/card_search_seed.sql`); needs the mtg catalog imported.
/// Triggers are off, as in [`seed`]: the seed writes the counted cards a save's trigger keeps,
/// and moves the deck list counters after, as [`seed`] does.
pub fn seed_card_lists(cluster: &Cluster, root: &Path) -> Result<()> {
    let seed = root.join("crates/testkit/benches/card_search_seed.sql");
    psql(
        cluster,
        "deckhand",
        &[
            "-c",
            "SET session_replication_role = replica",
            "-f",
            &path_text(&seed)?,
            "-c",
            DECKS_CHANGED,
        ],
    )
    .map(|_| ())
}
