//! `cargo xtask loadtest`: the HTTP load benchmark of docs/benchmarks.md. Never part of `ci`.
//!
//! In one run, on a throwaway cluster of its own (`<target>/loadtest-pg`, fsync off like the test
//! cluster): seed 100,000 decks (`--decks`), a tenth as many sideboard guides and as many events
//! with the seeds in `crates/testkit/benches/`, import the 2019 catalog, make a PAT with
//! `deckhand admin`; then, for the `--baseline` binary if given and for this tree's release
//! binary, one after the other, each on the seeded database as it was before any server wrote
//! to it: measure `pgbench -n -S -M prepared` over TCP (the cluster also listens on a free port
//! of 127.0.0.1) three times (the median: the database's own ceiling) and
//! `GET /healthz` (the HTTP ceiling), drive every request of the table with oha (installed
//! with `cargo install oha --locked` when missing) and print req/s, p50/p99 and each one's
//! share of that median and of `/healthz`'s rate; then the same binary on its in-memory store
//! (`memory_store`: `/healthz`, the list and a detail, as shares of that `/healthz`). Last,
//! this tree's server answers every
//! list sort and filter, the last page of the result window and feed pages once with
//! auto_explain on, and every plan that scans a large table sequentially is printed; and the
//! greedy-neighbours scenario of issue 41 (`greedy`) runs on it. `--greedy-only` runs that
//! scenario alone, on this tree's server, with neither ceilings nor catalog.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::Value;

mod memory_store;

use crate::chart::{self, BarGroup};
use crate::cluster;
use crate::cpu;
use crate::greedy;
use crate::local::{
    self, API, Measured, free_address, oha, output, path_text, psql, query, run_oha, seeded_urls,
    wait_for_health,
};
use crate::pg::{self, Cluster, PgBouncer};
use crate::process::run_quietly;
use memory_store::MemoryRow;

/// The settings of a run; the defaults are the ones docs/benchmarks.md records.
pub struct Options {
    pub decks: u32,
    /// Sideboard guides to seed on those decks (a tenth of the decks by default).
    pub guides: Option<u32>,
    /// Events to seed about those decks (as many as decks by default).
    pub events: Option<u32>,
    pub connections: u32,
    pub seconds: u32,
    /// A server binary to measure instead of building this tree's (e.g. one built from `main`,
    /// for a before/after comparison).
    pub binary: Option<PathBuf>,
    /// A second server binary (e.g. the release build of an earlier commit), measured first on
    /// the same cluster and data, each beside its own `pgbench -S` ceiling: before and after
    /// in one run.
    pub baseline: Option<PathBuf>,
    /// Only the ceilings and the resolve step.
    pub resolve_only: bool,
    /// Also measure this tree's server through PgBouncer in transaction pooling mode (last,
    /// beside its direct run): what `DECKHAND_DB_POOLER=transaction` costs.
    pub pooler: bool,
    /// Where to draw the chart of the shares (default `<target>/loadtest/loadtest.svg`).
    pub chart: Option<PathBuf>,
    /// Only the greedy-neighbours scenario (`greedy`), on this tree's server.
    pub greedy_only: bool,
}

impl Options {
    fn guides(&self) -> u32 {
        self.guides.unwrap_or(self.decks / 10)
    }

    fn events(&self) -> u32 {
        self.events.unwrap_or(self.decks)
    }

    /// oha's arguments for a load run at this width and length, to which a case adds its own.
    fn load_args(&self) -> Vec<String> {
        self.load_args_for(self.seconds)
    }

    /// [`Self::load_args`] for a run of `seconds`.
    fn load_args_for(&self, seconds: u32) -> Vec<String> {
        args(&[
            "-c",
            &self.connections.to_string(),
            "-z",
            &format!("{seconds}s"),
        ])
    }
}

/// Base64 of 32 bytes of 7: the run's secret key (the data is thrown away afterwards).
pub const SECRET_KEY: &str = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";
const CATALOG: &str = "../shared/data/mtg/default-cards-2019.jsonl.gz";

/// The instance's pool (`DECKHAND_DB_POOL_SIZE`'s default), and PgBouncer's server
/// connections when it is measured: the database sees as many connections either way.
const POOL_SIZE: u32 = 16;

/// One server to measure.
struct Server {
    label: &'static str,
    binary: PathBuf,
    /// Through PgBouncer in transaction mode rather than directly.
    pooled: bool,
}

/// One measured request shape.
struct Case {
    name: &'static str,
    /// The goal as a share of `pgbench -S` (none for the ceilings themselves).
    goal: Option<f64>,
    oha: Vec<String>,
}

pub fn run(root: &Path, target: &Path, options: &Options) -> Result<()> {
    let started = Instant::now();
    let deckhand = cluster::server_binary(root, target, options.binary.as_ref())?;
    let mut servers = Vec::new();
    if let Some(baseline) = &options.baseline
        && !options.greedy_only
    {
        servers.push(Server {
            label: "before",
            binary: baseline.clone(),
            pooled: false,
        });
    }
    let label = match (servers.is_empty(), options.pooler) {
        (_, true) => "direct",
        (true, false) => "this tree",
        (false, false) => "after",
    };
    servers.push(Server {
        label,
        binary: deckhand.clone(),
        pooled: false,
    });
    if options.pooler && !options.greedy_only {
        servers.push(Server {
            label: "PgBouncer",
            binary: deckhand,
            pooled: true,
        });
    }
    for server in &servers {
        if !server.binary.is_file() {
            bail!("{} is missing", server.binary.display());
        }
        println!("measuring {} ({})", server.binary.display(), server.label);
    }
    let oha = if options.greedy_only {
        None
    } else {
        Some(oha(root)?)
    };
    let work = target.join("loadtest");
    fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;

    // It also listens on a free port of 127.0.0.1: the ceiling, `pgbench -S`, reaches it over
    // TCP, as the server reaches its database in a deployment.
    let cluster = Cluster::at_with_tcp(target.join("loadtest-pg"), local::free_port()?);
    // pg_stat_statements counts the statements each request costs the database.
    // auto_explain logs the plans of the list shapes' statements (`check_plans`); it is off
    // (no threshold) until then. Shared buffers of 2 GB hold the hot tables and indexes at
    // every scale, as a deployment sized for its data would: with the default 128 MB, a run
    // at 1,000,000 decks measured copies from the OS cache more than the data's size
    // (docs/benchmarks.md, "Ten times the data").
    let result = cluster::on_fresh_cluster(
        &cluster,
        "-c shared_preload_libraries=pg_stat_statements,auto_explain -c shared_buffers=2GB",
        "load test",
        |cluster| {
            let log = cluster.dir().join("postgres.log");
            measure(
                root,
                cluster,
                &servers,
                oha.as_deref(),
                &work,
                &log,
                options,
            )
        },
    );
    println!("total time {:.0}s", started.elapsed().as_secs_f64());
    result
}

fn measure(
    root: &Path,
    cluster: &Cluster,
    servers: &[Server],
    oha: Option<&Path>,
    work: &Path,
    cluster_log: &Path,
    options: &Options,
) -> Result<()> {
    let url = cluster::database_url(cluster);
    // The last server is this tree's: it migrates, seeds the catalog and mints the PAT, so an
    // older baseline serves a schema it may not have made (its migrations are a prefix).
    let Some(Server {
        binary: deckhand, ..
    }) = servers.last()
    else {
        bail!("no server to measure");
    };
    let app = |args: &[&str]| local::deckhand(deckhand, &url, SECRET_KEY, args);
    prepare(root, cluster, &app, options)?;
    if options.greedy_only {
        let figures = greedy_neighbours(cluster, deckhand, &url, work)?;
        return report(work, &[], Some(&figures));
    }
    let oha = oha.context("oha is needed for the load runs")?;

    // player_1 owns the most decks (the seed's skew): its PAT reads and writes its own.
    let pat: Value = serde_json::from_str(&app(&[
        "admin",
        "pat",
        "create",
        "--user",
        "player_1",
        "--scopes",
        "decks:read decks:write sideboards:read",
    ])?)
    .context("`deckhand admin pat create` printed no JSON")?;
    let token = pat["token"].as_str().context("no token in the PAT")?;
    let bearer = format!("Authorization: Bearer {token}");
    let address = free_address()?;
    let base = format!("http://{address}");
    let own = "md5('seed-user-1')::uuid";
    let detail_id = query(
        cluster,
        &format!(
            "SELECT id FROM decks WHERE game = 'mtg' AND visibility = 'public' \
             AND NOT is_archived AND owner_id = {own} ORDER BY id LIMIT 1"
        ),
    )?;
    let urls = seeded_urls(cluster, work, &base)?;
    let resolve_body = work.join("resolve-1000.json");
    fs::write(&resolve_body, query(cluster, RESOLVE_BODY)?)?;

    let cards = CardPicks::of(cluster)?;
    let targets = Targets {
        cards: &cards,
        address: &address,
        base: &base,
        bearer: &bearer,
        detail_id: &detail_id,
        view_urls: &urls.views,
        patch_urls: &urls.patches,
        resolve_body: &resolve_body,
    };
    // Each server starts from the same data: the writes of one server's run (thousands of
    // new decks at the head of every list, history, events) would otherwise be the next
    // one's starting point, and a name-filtered page would walk past them. The first server
    // has it as seeded; a copy is kept only for those after it.
    if servers.len() > 1 {
        psql(
            cluster,
            "postgres",
            &[
                "-c",
                "CREATE DATABASE deckhand_seeded TEMPLATE deckhand STRATEGY = FILE_COPY",
            ],
        )?;
    }
    let mut runs = Vec::new();
    for (index, server) in servers.iter().enumerate() {
        println!("\n== {}: {}", server.label, server.binary.display());
        if index > 0 {
            restore_seeded(cluster)?;
        }
        let ceiling = pgbench(cluster, options)?;
        let log = work.join(format!("server-{}.log", server.label.replace(' ', "-")));
        // Started after the restore: PgBouncer's server connections would hold the database.
        let pooler = if server.pooled {
            Some(cluster.pgbouncer("deckhand", POOL_SIZE)?)
        } else {
            None
        };
        let rows = serve_and_drive(
            cluster,
            server,
            &url,
            pooler.as_ref(),
            &log,
            oha,
            options,
            ceiling,
            &targets,
        )
        .with_context(|| format!("the server's log is {}", log.display()))?;
        // The store changes nothing through PgBouncer: its rows are measured once a binary.
        let memory = if server.pooled || options.resolve_only {
            Vec::new()
        } else {
            let log = work.join(format!(
                "server-{}-memory.log",
                server.label.replace(' ', "-")
            ));
            memory_store::measure(&server.binary, oha, options, &log)
                .with_context(|| format!("the in-memory server's log is {}", log.display()))?
        };
        runs.push(Run {
            label: server.label,
            pooled: server.pooled,
            ceiling,
            rows,
            memory,
        });
    }
    if options.resolve_only {
        report(work, &runs, None)?;
        return draw_chart(&chart_path(work, options), &runs);
    }
    // Each result is kept until the report is written: a failure of one loses no figure.
    let plans = check_plans(cluster, deckhand, &url, work, cluster_log, &targets);
    let greedy = greedy_neighbours(cluster, deckhand, &url, work);
    report(work, &runs, greedy.as_ref().ok())?;
    draw_chart(&chart_path(work, options), &runs)?;
    plans.and(greedy.map(drop))
}

fn chart_path(work: &Path, options: &Options) -> PathBuf {
    options
        .chart
        .clone()
        .unwrap_or_else(|| work.join("loadtest.svg"))
}

/// Makes the databases, migrates and seeds `deckhand` (the catalog too, unless only the
/// greedy-neighbours scenario runs, which reads no card), and analyzes it.
fn prepare(
    root: &Path,
    cluster: &Cluster,
    app: &dyn Fn(&[&str]) -> Result<String>,
    options: &Options,
) -> Result<()> {
    psql(cluster, "postgres", &["-c", "CREATE DATABASE deckhand"])?;
    psql(cluster, "postgres", &["-c", "CREATE DATABASE pgbench"])?;
    app(&["migrate"])?;
    psql(
        cluster,
        "deckhand",
        &["-c", "CREATE EXTENSION pg_stat_statements"],
    )?;
    let seeding = Instant::now();
    local::seed(
        cluster,
        root,
        &local::SeedSizes {
            decks: options.decks,
            guides: options.guides(),
            events: options.events(),
        },
    )?;
    if !options.greedy_only {
        let catalog = root.join(CATALOG);
        app(&[
            "admin",
            "catalog",
            "import",
            "--game",
            "mtg",
            "--source",
            "scryfall",
            "--as-of",
            "2019-04-01",
            &path_text(&catalog)?,
        ])?;
        local::seed_card_lists(cluster, root)?;
    }
    psql(cluster, "deckhand", &["-c", "VACUUM ANALYZE"])?;
    println!(
        "seeded {} decks, {} guides, {} events{} in {:.0}s",
        options.decks,
        options.guides(),
        options.events(),
        if options.greedy_only {
            ""
        } else {
            " and the 2019 catalog"
        },
        seeding.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The greedy-neighbours scenario (`greedy`) on this tree's server, started as the load runs
/// start theirs.
fn greedy_neighbours(
    cluster: &Cluster,
    binary: &Path,
    url: &str,
    work: &Path,
) -> Result<greedy::Figures> {
    let address = free_address()?;
    let admin = |args: &[&str]| local::deckhand(binary, url, SECRET_KEY, args);
    greedy::run(greedy::Scenario {
        cluster,
        serve: serve_command(binary, url, None, &address),
        address: &address,
        admin: &admin,
        work,
    })
}

/// Puts back the seeded database as it was before any server wrote to it.
fn restore_seeded(cluster: &Cluster) -> Result<()> {
    psql(
        cluster,
        "postgres",
        &[
            "-c",
            "DROP DATABASE IF EXISTS deckhand",
            "-c",
            "CREATE DATABASE deckhand TEMPLATE deckhand_seeded STRATEGY = FILE_COPY",
            "-c",
            "CHECKPOINT",
        ],
    )?;
    Ok(())
}

/// Tables whose sequential scan on a list request means a plan that grows with the data.
const LARGE_TABLES: [&str; 7] = [
    "decks",
    "deck_stats",
    "deck_versions",
    "sideboard_guides",
    "sideboard_guide_decks",
    "sideboard_matchups",
    "events",
];

/// Every sort and filter of the deck and guide lists, the last page of the result window,
/// and feed pages, requested once each by this tree's server with auto_explain logging every
/// plan: any sequential scan of a large table is printed (and lands in `plans.txt`).
fn check_plans(
    cluster: &Cluster,
    binary: &Path,
    url: &str,
    work: &Path,
    cluster_log: &Path,
    targets: &Targets<'_>,
) -> Result<()> {
    let author = query(cluster, "SELECT md5('seed-user-1')::uuid")?;
    let format = query(
        cluster,
        "SELECT format_id FROM decks WHERE format_id IS NOT NULL LIMIT 1",
    )?;
    let middle_cursor = query(
        cluster,
        "SELECT rtrim(translate(encode(convert_to('e1:' || last_sequence / 2, 'UTF8'), 'base64'), '+/', '-_'), '=') FROM event_log",
    )?;
    let decks = format!("{API}/decks?limit=20");
    let guides = format!("{API}/sideboard-guides?limit=20");
    let mut paths: Vec<String> = Vec::new();
    for sort in ["createdAt", "editedAt", "likes", "trending", "views"] {
        for order in ["desc", "asc"] {
            paths.push(format!("{decks}&sort={sort}&order={order}"));
        }
        paths.push(format!("{decks}&sort={sort}&page=500"));
    }
    for filter in [
        format!("authorId={author}"),
        format!("formatId={format}"),
        "hasGuide=true".to_owned(),
        "hasSideboardGuide=true".to_owned(),
        "hasVideo=true".to_owned(),
        "isLegal=true".to_owned(),
        "q=phoenix".to_owned(),
        "q=zz".to_owned(),
        "createdAfter=2025-01-01T00:00:00Z".to_owned(),
        "editedBefore=2024-01-01T00:00:00Z".to_owned(),
        format!("forkedFrom={}", targets.detail_id),
        format!("cards={}", targets.cards.common),
        format!("cards={}", targets.cards.rare),
        format!("cards={}", targets.cards.pair),
        format!(
            "cards={}&excludeCards={}",
            targets.cards.tenth, targets.cards.common
        ),
    ] {
        paths.push(format!("{decks}&{filter}"));
        paths.push(format!("{decks}&{filter}&sort=views"));
    }
    for sort in ["createdAt", "editedAt", "likes", "views"] {
        paths.push(format!("{guides}&sort={sort}"));
        paths.push(format!("{guides}&sort={sort}&page=500"));
    }
    for filter in [
        format!("authorId={author}"),
        "q=control".to_owned(),
        "opponentArchetype=burn".to_owned(),
        format!("deckId={}", targets.detail_id),
        "hasVideo=true".to_owned(),
    ] {
        paths.push(format!("{guides}&{filter}"));
    }
    paths.push(format!("{API}/cards/{}/stats", targets.cards.tenth));
    paths.push(format!("{API}/events?limit=100"));
    paths.push(format!("{API}/events?limit=100&after={middle_cursor}"));
    paths.push(format!("{API}/events?limit=100&types=deck.rolled_back"));

    psql(
        cluster,
        "deckhand",
        &[
            "-c",
            "ALTER DATABASE deckhand SET auto_explain.log_min_duration = 0",
        ],
    )?;
    let logged_from = fs::metadata(cluster_log).map_or(0, |meta| meta.len());
    let log = work.join("server-plans.log");
    // A new server: its connections start with the setting above.
    let mut server = Command::new(binary)
        .args(["serve", "--no-migrate"])
        .env("DATABASE_URL", url)
        .env("DECKHAND_SECRET_KEY", SECRET_KEY)
        .env("DECKHAND_BIND", targets.address)
        .env("DECKHAND_RATE_LIMITS", "off")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(fs::File::create(&log)?)
        .spawn()
        .context("starting the server")?;
    let requested = (|| -> Result<()> {
        wait_for_health(&mut server, targets.address)?;
        for path in &paths {
            // As the PAT's user: the guide list and the feed need credentials.
            let (status, body) = local::get_with(targets.address, path, targets.bearer)?;
            if status != 200 {
                bail!("GET {path} answered {status}: {body}");
            }
        }
        Ok(())
    })();
    let _ = server.kill();
    let _ = server.wait();
    psql(
        cluster,
        "deckhand",
        &[
            "-c",
            "ALTER DATABASE deckhand RESET auto_explain.log_min_duration",
        ],
    )?;
    requested?;

    let text =
        fs::read(cluster_log).with_context(|| format!("reading {}", cluster_log.display()))?;
    let text = String::from_utf8_lossy(&text[usize::try_from(logged_from)?..]);
    let plans = logged_plans(&text);
    let offending: Vec<&String> = plans
        .iter()
        .filter(|plan| {
            LARGE_TABLES
                .iter()
                .any(|table| plan.contains(&format!("Seq Scan on {table} ")))
        })
        .collect();
    let out = work.join("plans.txt");
    fs::write(&out, plans.join("\n\n"))?;
    println!(
        "\nplans of {} list and feed requests: {} statements logged, {} with a sequential scan of a large table{} (all in {})",
        paths.len(),
        plans.len(),
        offending.len(),
        if offending.is_empty() { "" } else { ":" },
        out.display()
    );
    for plan in offending {
        println!("{plan}\n");
    }
    Ok(())
}

/// The plans auto_explain logged in `log`, each from its `plan:` line to its last indented
/// line.
fn logged_plans(log: &str) -> Vec<String> {
    let mut plans = Vec::new();
    let mut current: Option<String> = None;
    for line in log.lines() {
        if line.contains("  plan:") {
            plans.extend(current.take());
            current = Some(String::new());
        } else if let Some(plan) = &mut current {
            if line.starts_with([' ', '\t']) {
                plan.push_str(line);
                plan.push('\n');
            } else {
                plans.extend(current.take());
            }
        }
    }
    plans.extend(current);
    plans
}

/// Starts `server` on the seeded database (through `pooler` when it is pooled), drives every
/// case, and stops it.
#[allow(clippy::too_many_arguments)]
fn serve_and_drive(
    cluster: &Cluster,
    server: &Server,
    url: &str,
    pooler: Option<&PgBouncer>,
    log: &Path,
    oha: &Path,
    options: &Options,
    ceiling: f64,
    targets: &Targets<'_>,
) -> Result<Vec<Row>> {
    let command = serve_command(&server.binary, url, pooler, targets.address);
    cluster::with_server(command, log, |process| {
        let processes = Processes {
            server: process.id(),
            database: cluster
                .postmaster_pid()
                .context("the cluster's postmaster.pid is unreadable")?,
            pooler: pooler.and_then(PgBouncer::pid),
        };
        drive(cluster, process, &processes, oha, options, ceiling, targets)
    })
}

/// `binary serve` on the seeded database at `url` (through `pooler` when given), listening
/// at `address`, as every measured run starts it; its stderr is the caller's to direct.
fn serve_command(binary: &Path, url: &str, pooler: Option<&PgBouncer>, address: &str) -> Command {
    // This tree's `migrate` made the schema; a baseline must not touch it.
    let mut command = Command::new(binary);
    command.args(["serve", "--no-migrate"]);
    match pooler {
        // Requests through the pooler; the listening sessions directly (docs/operations.md).
        Some(pooler) => command
            .env("DATABASE_URL", pooler.url("deckhand"))
            .env("DATABASE_LISTEN_URL", url)
            .env("DECKHAND_DB_POOLER", "transaction"),
        None => command.env("DATABASE_URL", url),
    };
    command
        .env("DECKHAND_DB_POOL_SIZE", POOL_SIZE.to_string())
        .env("DECKHAND_SECRET_KEY", SECRET_KEY)
        .env("DECKHAND_BIND", address)
        .env("DECKHAND_RATE_LIMITS", "off")
        // The shortest dedupe window: with a random deck each time, nearly every view counts,
        // as if each came from a new visitor.
        .env("DECKHAND_PAGEVIEW_DEDUPE_SECS", "1")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null());
    command
}

/// One server's measurements beside its own ceiling.
struct Run {
    label: &'static str,
    /// Whether the server ran through PgBouncer, whose CPU the run then reports too.
    pooled: bool,
    ceiling: f64,
    rows: Vec<Row>,
    /// The same binary on its in-memory store, `/healthz` first (none through PgBouncer).
    memory: Vec<MemoryRow>,
}

impl Run {
    /// The rate of `GET /healthz` in this run: the HTTP ceiling (see [`HEALTHZ`]).
    fn http_ceiling(&self) -> Option<f64> {
        http_ceiling(&self.rows)
    }
}

/// The first case: the server alone, no database. Each rate is also given as a share of it,
/// beside its share of `pgbench -S`: two separate runs on a shared host compare by both, and
/// where the two shares move apart between runs, the host changed between them rather than the
/// request (docs/benchmarks.md, "Reading a run").
const HEALTHZ: &str = "GET /healthz";

fn http_ceiling(rows: &[Row]) -> Option<f64> {
    rows.iter()
        .find(|row| row.name == HEALTHZ)
        .map(|row| row.measured.rate)
}

/// `rate` as a share of `ceiling`, as printed (`-` without a ceiling).
fn share_text(rate: f64, ceiling: Option<f64>) -> String {
    ceiling.map_or("-".to_owned(), |ceiling| format!("{:.3}", rate / ceiling))
}

/// What one request shape gave.
struct Row {
    name: &'static str,
    goal: Option<Goal>,
    measured: Measured,
    /// `pg_stat_statements` calls per request, where counted.
    statements: Option<f64>,
    /// CPU time per request, where counted.
    cpu: Option<CpuPerRequest>,
}

/// The processes whose CPU time a request costs.
struct Processes {
    server: u32,
    /// The postmaster: with its children, the whole database server.
    database: u32,
    pooler: Option<u32>,
}

/// CPU seconds used so far by each of [`Processes`].
#[derive(Clone, Copy)]
struct CpuSeconds {
    server: f64,
    database: f64,
    pooler: f64,
}

impl Processes {
    fn cpu(&self) -> Result<CpuSeconds> {
        Ok(CpuSeconds {
            server: cpu::process_seconds(self.server)?,
            database: cpu::family_seconds(self.database)?,
            pooler: self.pooler.map_or(Ok(0.0), cpu::process_seconds)?,
        })
    }
}

/// CPU milliseconds per request: what sizes instances and the database (docs/operations.md,
/// "How many instances and connections").
#[derive(Clone, Copy)]
struct CpuPerRequest {
    server_ms: f64,
    database_ms: f64,
    pooler_ms: f64,
}

impl CpuPerRequest {
    fn between(before: CpuSeconds, after: CpuSeconds, requests: f64) -> Self {
        let per_request = |before: f64, after: f64| (after - before) * 1000.0 / requests.max(1.0);
        Self {
            server_ms: per_request(before.server, after.server),
            database_ms: per_request(before.database, after.database),
            pooler_ms: per_request(before.pooler, after.pooler),
        }
    }
}

/// A goal of docs/benchmarks.md: a share of `pgbench -S` in the same run, or a latency.
#[derive(Clone, Copy)]
enum Goal {
    Share(f64),
    P99BelowMs(f64),
    MedianBelowMs(f64),
}

impl Goal {
    fn met(self, measured: &Measured, ceiling: f64) -> bool {
        match self {
            Self::Share(share) => measured.rate / ceiling >= share,
            Self::P99BelowMs(ms) => measured.p99_ms < ms,
            Self::MedianBelowMs(ms) => measured.p50_ms < ms,
        }
    }

    fn text(self) -> String {
        match self {
            Self::Share(share) => format!("{share:.2}"),
            Self::P99BelowMs(ms) => format!("p99 < {ms} ms"),
            Self::MedianBelowMs(ms) => format!("p50 < {ms} ms"),
        }
    }
}

/// The cards the card search and statistics rows ask for, picked from the seeded decks by how
/// many public mtg decks hold them (`crates/testkit/benches/card_search_seed.sql`).
struct CardPicks {
    /// The card most decks hold.
    common: String,
    /// A card in about 0.05% of the decks.
    rare: String,
    /// The second and the fifth most common cards, asked for together.
    pair: String,
    /// A card in about a tenth of the decks (100,000 of 1,000,000): the statistics row's.
    tenth: String,
}

impl CardPicks {
    fn of(cluster: &Cluster) -> Result<Self> {
        let picked = query(
            cluster,
            "WITH held AS (
                SELECT card, count(*) AS decks FROM decks d, unnest(d.card_ids) AS card
                WHERE d.game = 'mtg' AND d.visibility = 'public' AND NOT d.is_archived
                GROUP BY card
            ), ranked AS (SELECT card, decks, row_number() OVER (ORDER BY decks DESC, card) AS n
                          FROM held),
            total AS (SELECT count(*) AS decks FROM decks
                      WHERE game = 'mtg' AND visibility = 'public' AND NOT is_archived)
            SELECT (SELECT card FROM ranked WHERE n = 1) || '|' ||
                   (SELECT card FROM ranked, total
                    ORDER BY abs(ranked.decks - total.decks * 0.0005), card LIMIT 1) || '|' ||
                   (SELECT card FROM ranked WHERE n = 2) || ',' ||
                   (SELECT card FROM ranked WHERE n = 5) || '|' ||
                   (SELECT card FROM ranked, total
                    ORDER BY abs(ranked.decks - total.decks * 0.1), card LIMIT 1)",
        )?;
        let mut parts = picked.split('|').map(str::to_owned);
        let mut next = || {
            parts
                .next()
                .filter(|part| !part.is_empty())
                .with_context(|| format!("no card lists seeded: {picked:?}"))
        };
        Ok(Self {
            common: next()?,
            rare: next()?,
            pair: next()?,
            tenth: next()?,
        })
    }
}

struct Targets<'a> {
    cards: &'a CardPicks,
    /// Where the server listens (`host:port`), and the same as a URL prefix.
    address: &'a str,
    base: &'a str,
    bearer: &'a str,
    detail_id: &'a str,
    view_urls: &'a Path,
    patch_urls: &'a Path,
    resolve_body: &'a Path,
}

fn drive(
    cluster: &Cluster,
    server: &mut Child,
    processes: &Processes,
    oha: &Path,
    options: &Options,
    pgbench_rate: f64,
    targets: &Targets<'_>,
) -> Result<Vec<Row>> {
    wait_for_health(server, targets.address)?;
    let cases = cases(targets)?;
    // The ceilings only, when just the resolve step is wanted.
    let measured_cases = if options.resolve_only {
        &cases[..1]
    } else {
        &cases[..]
    };
    print_header(pgbench_rate);
    let mut rows = at_peak(
        cluster,
        processes,
        oha,
        options,
        pgbench_rate,
        measured_cases,
    )?;
    at_half_peak(cluster, oha, options, pgbench_rate, &cases, &mut rows)?;
    resolve_one_at_a_time(cluster, oha, pgbench_rate, targets, &mut rows)?;
    card_stats_one_at_a_time(oha, pgbench_rate, targets, &mut rows)?;
    print_server_memory(server)?;
    Ok(rows)
}

/// `items` as owned arguments of oha.
fn args(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

/// Every measured request shape, `/healthz` (the HTTP ceiling) first.
fn cases(targets: &Targets<'_>) -> Result<Vec<Case>> {
    let Targets {
        base,
        bearer,
        detail_id,
        ..
    } = targets;
    let list = format!("{base}{API}/decks?limit=20");
    let detail = format!("{base}{API}/decks/{detail_id}");
    Ok(vec![
        Case {
            name: HEALTHZ,
            goal: None,
            oha: args(&[&format!("{base}/healthz")]),
        },
        Case {
            name: "list editedAt",
            goal: Some(0.20),
            oha: args(&[&list]),
        },
        Case {
            name: "list views",
            goal: Some(0.20),
            oha: args(&[&format!("{list}&sort=views")]),
        },
        Case {
            name: "list q=phoenix",
            goal: Some(0.12),
            oha: args(&[&format!("{list}&q=phoenix")]),
        },
        Case {
            name: "detail anonymous",
            goal: Some(0.40),
            oha: args(&[&detail]),
        },
        Case {
            name: "detail with a PAT",
            goal: Some(0.40),
            oha: args(&["-H", bearer, &detail]),
        },
        // Before the writes: the decks a create adds (no cards) lead the editedAt list, and a
        // common card's page would walk past them.
        Case {
            name: "list cards= common",
            goal: Some(0.10),
            oha: args(&[&format!("{list}&cards={}", targets.cards.common)]),
        },
        Case {
            name: "list cards= rare",
            goal: Some(0.15),
            oha: args(&[&format!("{list}&cards={}", targets.cards.rare)]),
        },
        Case {
            name: "list cards= two",
            goal: Some(0.05),
            oha: args(&[&format!("{list}&cards={}", targets.cards.pair)]),
        },
        Case {
            name: "card stats (a tenth)",
            goal: None,
            oha: args(&[&format!("{base}{API}/cards/{}/stats", targets.cards.tenth)]),
        },
        Case {
            name: "POST views (counted)",
            goal: Some(0.15),
            oha: args(&[
                "-m",
                "POST",
                "--urls-from-file",
                &path_text(targets.view_urls)?,
            ]),
        },
        Case {
            name: "PATCH notes",
            goal: Some(0.06),
            oha: args(&[
                "-m",
                "PATCH",
                "-H",
                bearer,
                "-T",
                "application/json",
                "-d",
                r#"{"notes":"Load test notes: a new version and history record."}"#,
                "--urls-from-file",
                &path_text(targets.patch_urls)?,
            ]),
        },
        Case {
            name: "POST deck (create)",
            goal: None,
            oha: args(&[
                "-m",
                "POST",
                "-H",
                bearer,
                "-T",
                "application/json",
                "-d",
                // Public, so the new decks lead the lists instead of leaving a run of private
                // ones at the head of the editedAt index for every later list to skip.
                r#"{"name":"Load test deck","visibility":["public"],"notes":"A new deck, its first version and its event."}"#,
                &format!("{base}{API}/decks"),
            ]),
        },
        Case {
            // The guide list and the feed need credentials (contract): the PAT's.
            name: "guide list editedAt",
            goal: None,
            oha: args(&[
                "-H",
                bearer,
                &format!("{base}{API}/sideboard-guides?limit=20"),
            ]),
        },
        Case {
            name: "events feed page",
            goal: None,
            oha: args(&["-H", bearer, &format!("{base}{API}/events?limit=100")]),
        },
    ])
}

/// The head of the printed table, and its first row: the database's own ceiling.
fn print_header(pgbench_rate: f64) {
    println!(
        "\n{:<24} {:>9} {:>9} {:>9} {:>7} {:>6} {:>8} {:>14} {:>10} {}",
        "request",
        "req/s",
        "p50 ms",
        "p99 ms",
        "ok",
        "share",
        "/healthz",
        "goal",
        "stmts/req",
        CPU_HEADER
    );
    println!(
        "{:<24} {:>9.0} {:>9} {:>9} {:>7} {:>6} {:>8} {:>14} {:>10}",
        "pgbench -S", pgbench_rate, "-", "-", "-", "1.00", "-", "-", "1"
    );
}

/// Each case at its peak rate (`--connections` for `--seconds`), with the statements and CPU
/// it costs per request, and the history the write cases add.
fn at_peak(
    cluster: &Cluster,
    processes: &Processes,
    oha: &Path,
    options: &Options,
    pgbench_rate: f64,
    cases: &[Case],
) -> Result<Vec<Row>> {
    let history_before = history(cluster)?;
    let mut rows = Vec::new();
    for case in cases {
        let mut oha_args = options.load_args();
        oha_args.extend(case.oha.iter().cloned());
        statements(cluster)?;
        let cpu_before = processes.cpu()?;
        let measured = run_oha(oha, &oha_args)?;
        let cpu = CpuPerRequest::between(cpu_before, processes.cpu()?, measured.requests);
        let per_request = statements(cluster)? / measured.requests.max(1.0);
        let row = Row {
            name: case.name,
            goal: case.goal.map(Goal::Share),
            measured,
            statements: Some(per_request),
            cpu: Some(cpu),
        };
        // `/healthz` is measured first: its own row is its own ceiling.
        let http = http_ceiling(&rows).or(Some(row.measured.rate));
        print_row(&row, pgbench_rate, http);
        rows.push(row);
    }
    let history_after = history(cluster)?;
    let records = history_after.records - history_before.records;
    if records > 0.0 {
        println!(
            "history written: {records:.0} records, {:.0} bytes each on disk (table, TOAST and indexes)",
            (history_after.bytes - history_before.bytes) / records
        );
    }
    Ok(rows)
}

/// How long each half-peak case runs at its rate before it is measured.
const HALF_PEAK_WARM_UP_SECONDS: u32 = 2;

/// Latency at half the peak rate: what a client sees when the service is not saturated.
fn at_half_peak(
    cluster: &Cluster,
    oha: &Path,
    options: &Options,
    pgbench_rate: f64,
    cases: &[Case],
    rows: &mut Vec<Row>,
) -> Result<()> {
    let half_peak: &[(&str, usize)] = if options.resolve_only {
        &[]
    } else {
        &[("list editedAt", 1), ("detail anonymous", 4)]
    };
    if !half_peak.is_empty() {
        // The write cases leave autovacuum, an analyze and a checkpoint due, which otherwise
        // start during these runs. Settled first, as pgbench vacuums before it measures, so
        // the tails below are the requests' own.
        psql(
            cluster,
            "deckhand",
            &["-c", "VACUUM ANALYZE", "-c", "CHECKPOINT"],
        )?;
        println!("\nat half the peak rate, after VACUUM ANALYZE and CHECKPOINT (goal p99 < 5 ms):");
    }
    for &(_, index) in half_peak {
        let half = (rows[index].measured.rate / 2.0).max(1.0);
        let paced = |seconds: u32| {
            let mut oha_args = options.load_args_for(seconds);
            oha_args.extend(["-q".to_owned(), format!("{half:.0}")]);
            oha_args.extend(cases[index].oha.iter().cloned());
            oha_args
        };
        // The first requests after the write cases recount the list's total (more than a
        // remembered count's surplus of changes) on caches the VACUUM left cold: a one-time
        // wait, not the steady tail a client sees at this rate. Paced unmeasured first.
        run_oha(oha, &paced(HALF_PEAK_WARM_UP_SECONDS))?;
        let oha_args = paced(options.seconds);
        let row = Row {
            name: if index == 1 {
                "list at half peak"
            } else {
                "detail at half peak"
            },
            goal: Some(Goal::P99BelowMs(5.0)),
            measured: run_oha(oha, &oha_args)?,
            statements: None,
            cpu: None,
        };
        print_row(&row, pgbench_rate, http_ceiling(rows));
        rows.push(row);
    }
    Ok(())
}

/// One request at a time: the latency of a resolution of 1000 identifiers (goal < 20 ms).
fn resolve_one_at_a_time(
    cluster: &Cluster,
    oha: &Path,
    pgbench_rate: f64,
    targets: &Targets<'_>,
    rows: &mut Vec<Row>,
) -> Result<()> {
    let base = targets.base;
    statements(cluster)?;
    let resolve = run_oha(
        oha,
        &args(&[
            "-c",
            "1",
            "-n",
            "200",
            "-m",
            "POST",
            "-T",
            "application/json",
            "-D",
            &path_text(targets.resolve_body)?,
            &format!("{base}{API}/cards/resolve"),
        ]),
    )?;
    let per_request = statements(cluster)? / resolve.requests.max(1.0);
    println!("\nresolve 1000 identifiers, one at a time (goal median < 20 ms):");
    let row = Row {
        name: "resolve 1000 ids",
        goal: Some(Goal::MedianBelowMs(20.0)),
        measured: resolve,
        statements: Some(per_request),
        cpu: None,
    };
    print_row(&row, pgbench_rate, http_ceiling(rows));
    rows.push(row);
    Ok(())
}

/// One request at a time: a card's statistics, of a card in a tenth of the decks (goal
/// p99 < 20 ms), with the figures as fresh as the contract asks (at most 60 s old).
fn card_stats_one_at_a_time(
    oha: &Path,
    pgbench_rate: f64,
    targets: &Targets<'_>,
    rows: &mut Vec<Row>,
) -> Result<()> {
    let base = targets.base;
    let stats = run_oha(
        oha,
        &args(&[
            "-c",
            "1",
            "-n",
            "500",
            &format!("{base}{API}/cards/{}/stats", targets.cards.tenth),
        ]),
    )?;
    println!("\ncard statistics, one at a time (goal p99 < 20 ms):");
    let row = Row {
        name: "card stats, one at a time",
        goal: Some(Goal::P99BelowMs(20.0)),
        measured: stats,
        statements: None,
        cpu: None,
    };
    print_row(&row, pgbench_rate, http_ceiling(rows));
    rows.push(row);
    Ok(())
}

/// The server's peak and current resident memory (goal < 150 MB).
fn print_server_memory(server: &Child) -> Result<()> {
    let status = fs::read_to_string(format!("/proc/{}/status", server.id()))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .map_or("?".to_owned(), |value| value.trim().to_owned())
    };
    println!(
        "\nserver memory: peak RSS {} (goal < 150 MB), now {}",
        field("VmHWM:"),
        field("VmRSS:")
    );
    Ok(())
}

/// The CPU columns of the printed table: milliseconds per request of the server, the database
/// server (backends and their helpers) and PgBouncer.
const CPU_HEADER: &str = "cpu ms/req: server / database / pooler";

/// One row of the printed table: its shares of `ceiling` (`pgbench -S`) and of `http_ceiling`.
fn print_row(row: &Row, ceiling: f64, http_ceiling: Option<f64>) {
    let measured = &row.measured;
    let verdict = match row.goal {
        Some(goal) if goal.met(measured, ceiling) => format!("{} ok", goal.text()),
        Some(goal) => format!("{} NO", goal.text()),
        None => "-".to_owned(),
    };
    let statements = row
        .statements
        .map_or("-".to_owned(), |count| format!("{count:.1}"));
    let cpu = row.cpu.map_or(String::new(), |cpu| {
        format!(
            "{:.3} / {:.3} / {:.3}",
            cpu.server_ms, cpu.database_ms, cpu.pooler_ms
        )
    });
    println!(
        "{:<24} {:>9.0} {:>9.2} {:>9.2} {:>6.1}% {:>6.2} {:>8} {:>14} {:>10} {cpu}",
        row.name,
        measured.rate,
        measured.p50_ms,
        measured.p99_ms,
        measured.ok_share * 100.0,
        measured.rate / ceiling,
        share_text(measured.rate, http_ceiling),
        verdict,
        statements
    );
}

/// Draws each request's share of `pgbench -S` in every run, with its goal, as an SVG.
fn draw_chart(path: &Path, runs: &[Run]) -> Result<()> {
    let Some(first) = runs.first() else {
        return Ok(());
    };
    let groups: Vec<BarGroup> = first
        .rows
        .iter()
        .enumerate()
        // The share is what compares across runs; latency rows have goals of their own.
        .filter(|(_, row)| matches!(row.goal, Some(Goal::Share(_)) | None))
        .filter(|(_, row)| row.statements.is_some())
        .map(|(index, row)| BarGroup {
            label: row.name.to_owned(),
            values: runs
                .iter()
                .filter_map(|run| run.rows.get(index))
                .zip(runs)
                .map(|(row, run)| row.measured.rate / run.ceiling)
                .collect(),
            goal: match row.goal {
                Some(Goal::Share(share)) => Some(share),
                _ => None,
            },
        })
        .collect();
    let labels: Vec<&str> = runs.iter().map(|run| run.label).collect();
    chart::write_bars_svg(
        path,
        "cargo xtask loadtest: each request's rate as a share of pgbench -S in the same run",
        "share of pgbench -S",
        &labels,
        &groups,
    )?;
    println!("chart: {}", path.display());
    Ok(())
}

/// Prints the runs side by side as a Markdown table for docs/benchmarks.md, and the
/// greedy-neighbours tables after it, and writes them as JSON (`<work>/report.json`:
/// `{"runs": [...], "greedy_neighbours": {...} | null}`) for the record.
fn report(work: &Path, runs: &[Run], greedy: Option<&greedy::Figures>) -> Result<()> {
    print_runs(runs);
    if let Some(greedy) = greedy {
        println!("\n{}", greedy.markdown());
    }
    let json = serde_json::json!({
        "runs": runs_json(runs),
        "greedy_neighbours": greedy.map(greedy::Figures::json),
    });
    let path = work.join("report.json");
    fs::write(&path, serde_json::to_string_pretty(&json)?)
        .with_context(|| format!("writing {}", path.display()))?;
    println!("\nwritten: {}", path.display());
    Ok(())
}

fn print_runs(runs: &[Run]) {
    let Some(first) = runs.first() else {
        return;
    };
    let mut header = String::from("| request |");
    let mut rule = String::from("|---|");
    for run in runs {
        header.push_str(&format!(
            " {}: req/s (share; of /healthz) | p50 / p99 ms | stmts/req | CPU ms/req server / db{} |",
            run.label,
            if run.pooled { " / pooler" } else { "" }
        ));
        rule.push_str("---|---|---|---|");
    }
    header.push_str(" goal |");
    rule.push_str("---|");
    println!("\n{header}\n{rule}");
    let mut line = String::from("| `pgbench -n -S -M prepared`, TCP (median of 3) |");
    for run in runs {
        line.push_str(&format!(" {:.0} | | 1 | |", run.ceiling));
    }
    println!("{line} |");
    for (index, row) in first.rows.iter().enumerate() {
        let mut line = format!("| {} |", row.name);
        for run in runs {
            let Some(row) = run.rows.get(index) else {
                line.push_str(" | | | |");
                continue;
            };
            let measured = &row.measured;
            let statements = row
                .statements
                .map_or(String::new(), |count| format!("{count:.1}"));
            let cpu = row.cpu.map_or(String::new(), |cpu| {
                let pooler = if run.pooled {
                    format!(" / {:.3}", cpu.pooler_ms)
                } else {
                    String::new()
                };
                format!("{:.3} / {:.3}{pooler}", cpu.server_ms, cpu.database_ms)
            });
            line.push_str(&format!(
                " {:.0} ({:.3}; {}) | {:.1} / {:.1} | {statements} | {cpu} |",
                measured.rate,
                measured.rate / run.ceiling,
                share_text(measured.rate, run.http_ceiling()),
                measured.p50_ms,
                measured.p99_ms
            ));
        }
        line.push_str(&format!(
            " {} |",
            row.goal.map_or(String::new(), Goal::text)
        ));
        println!("{line}");
    }
    print_memory_runs(runs);
}

/// The in-memory store's rows of every run that has them, as a Markdown table.
fn print_memory_runs(runs: &[Run]) {
    let measured: Vec<&Run> = runs.iter().filter(|run| !run.memory.is_empty()).collect();
    let Some(first) = measured.first() else {
        return;
    };
    let mut header = String::from("| in-memory store |");
    let mut rule = String::from("|---|");
    for run in &measured {
        header.push_str(&format!(
            " {}: req/s (of /healthz) | p50 / p99 ms | CPU ms/req server |",
            run.label
        ));
        rule.push_str("---|---|---|");
    }
    println!("\n{header} goal |\n{rule}---|");
    for (index, row) in first.memory.iter().enumerate() {
        let mut line = format!("| {} |", row.name);
        for run in &measured {
            let Some(row) = run.memory.get(index) else {
                line.push_str(" | | |");
                continue;
            };
            let share = row.share_of_healthz(&run.memory).unwrap_or(f64::NAN);
            line.push_str(&format!(
                " {:.0} ({share:.3}) | {:.1} / {:.1} | {:.3} |",
                row.measured.rate, row.measured.p50_ms, row.measured.p99_ms, row.server_cpu_ms
            ));
        }
        let goal = if index == 0 {
            String::new()
        } else {
            format!("≥ {} of /healthz", memory_store::GOAL)
        };
        println!("{line} {goal} |");
    }
}

fn runs_json(runs: &[Run]) -> Vec<Value> {
    runs.iter()
        .map(|run| {
            serde_json::json!({
                "label": run.label,
                "ceiling": run.ceiling,
                "http_ceiling": run.http_ceiling(),
                "rows": run.rows.iter().map(|row| serde_json::json!({
                    "name": row.name,
                    "rate": row.measured.rate,
                    "share": row.measured.rate / run.ceiling,
                    "healthz_share": run.http_ceiling().map(|http| row.measured.rate / http),
                    "p50_ms": row.measured.p50_ms,
                    "p99_ms": row.measured.p99_ms,
                    "statements": row.statements,
                    "cpu_ms_per_request": row.cpu.map(|cpu| serde_json::json!({
                        "server": cpu.server_ms,
                        "database": cpu.database_ms,
                        "pooler": cpu.pooler_ms,
                    })),
                    "goal": row.goal.map(Goal::text),
                })).collect::<Vec<_>>(),
                "memory_store": run.memory.iter().map(|row| serde_json::json!({
                    "name": row.name,
                    "rate": row.measured.rate,
                    "healthz_share": row.share_of_healthz(&run.memory),
                    "p50_ms": row.measured.p50_ms,
                    "p99_ms": row.measured.p99_ms,
                    "server_cpu_ms_per_request": row.server_cpu_ms,
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// The statements the server ran on `deckhand` since the last call (the monitoring's own
/// statements left out), then a reset.
fn statements(cluster: &Cluster) -> Result<f64> {
    let count = query(
        cluster,
        "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements \
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'deckhand') \
         AND query NOT LIKE '%pg_stat_statements%'",
    )?;
    query(cluster, "SELECT pg_stat_statements_reset()")?;
    count
        .parse()
        .with_context(|| format!("pg_stat_statements gave {count:?}"))
}

/// The history's size: records, and bytes on disk with its TOAST and indexes.
struct History {
    records: f64,
    bytes: f64,
}

fn history(cluster: &Cluster) -> Result<History> {
    let row = query(
        cluster,
        "SELECT count(*), pg_total_relation_size('deck_versions') FROM deck_versions",
    )?;
    let parse = |text: Option<&str>| -> Result<f64> {
        text.and_then(|text| text.parse().ok())
            .with_context(|| format!("the history's size query gave {row:?}"))
    };
    let mut fields = row.split('|');
    Ok(History {
        records: parse(fields.next())?,
        bytes: parse(fields.next())?,
    })
}

/// How many times `pgbench -S` runs; its median is the ceiling. On the shared machine one run
/// of it has come out anywhere between 20,000 and 36,000 tps, so one figure is not enough.
const PGBENCH_RUNS: usize = 3;

/// The ceiling: `pgbench -n -S -M prepared -c <connections> -j 2` over TCP to 127.0.0.1 on a
/// scale-10 database of the same cluster, [`PGBENCH_RUNS`] times; returns the median tps and
/// prints every run's. Prepared statements over TCP are how the server itself talks to the
/// database: pgbench's default (simple protocol, Unix socket) answered about a third as much
/// on this machine and made every share look two to three times better (issue 48).
fn pgbench(cluster: &Cluster, options: &Options) -> Result<f64> {
    let socket = path_text(&cluster.socket())?;
    let port = cluster.port().to_string();
    run_quietly(pg::pg_command("pgbench")?.args([
        "-i", "-s", "10", "-q", "-h", &socket, "-p", &port, "-U", "postgres", "pgbench",
    ]))?;
    let clients = options.connections.to_string();
    let seconds = options.seconds.to_string();
    let mut rates: Vec<f64> = (0..PGBENCH_RUNS)
        .map(|_| pgbench_select_only_tps(&port, &clients, &seconds))
        .collect::<Result<_>>()?;
    let runs: Vec<String> = rates.iter().map(|tps| format!("{tps:.0}")).collect();
    println!(
        "pgbench -n -S -M prepared (TCP) runs: {} tps; the median is the ceiling",
        runs.join(", ")
    );
    rates.sort_by(f64::total_cmp);
    Ok(rates[PGBENCH_RUNS / 2])
}

/// One `pgbench -n -S -M prepared` run's transactions per second, over TCP to 127.0.0.1:`port`.
fn pgbench_select_only_tps(port: &str, clients: &str, seconds: &str) -> Result<f64> {
    let text = output(pg::pg_command("pgbench")?.args([
        "-n",
        "-S",
        "-M",
        "prepared",
        "-c",
        clients,
        "-j",
        "2",
        "-T",
        seconds,
        "-h",
        "127.0.0.1",
        "-p",
        port,
        "-U",
        "postgres",
        "pgbench",
    ]))?;
    text.lines()
        .find_map(|line| line.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|tps| tps.parse().ok())
        .with_context(|| format!("no tps in pgbench's output:\n{text}"))
}

/// 1000 identifiers from the imported catalog, cycling through every kind and some misses.
const RESOLVE_BODY: &str = "
SELECT json_build_object('identifiers', json_agg(identifier ORDER BY n))
FROM (
    SELECT n, CASE n % 8
        WHEN 0 THEN json_build_object('variantId', variant_id)
        WHEN 1 THEN json_build_object('catalog_a_id', coalesce(catalog_a_id, name))
        WHEN 2 THEN json_build_object('catalog_b_id', coalesce(catalog_b_id, name))
        WHEN 3 THEN json_build_object('catalog_c_id', coalesce(catalog_c_id, name))
        WHEN 4 THEN json_build_object('set', set, 'collector_number', collector_number)
        WHEN 5 THEN json_build_object('cardId', card_id)
        WHEN 6 THEN json_build_object('name', upper(name))
        ELSE json_build_object('name', 'No Such Card ' || n)
    END AS identifier
    FROM (SELECT row_number() OVER (ORDER BY variant_id) AS n, *
          FROM catalog_printings WHERE game = 'mtg' AND lang = 'en') AS printings
    WHERE n % 45 = 0 LIMIT 1000
) AS picked";
