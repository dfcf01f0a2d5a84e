//! `cargo xtask fuzz`: schemathesis, the OpenAPI fuzzer, against a real `deckhand serve` on
//! PostgreSQL, over every operation of the document the server serves. A step of `ci`.
//!
//! On the test harness's cluster, in a database of its own (made anew each run): migrate,
//! import the bundled catalogs, start the server, make a user with a PAT that holds every scope
//! the server knows (read from its OAuth metadata), then run schemathesis with a fixed seed and
//! a time budget, and its checks for server errors, response schemas, status codes and content
//! types. It fails on any finding, on any 5xx the server counted, and on fewer requests than
//! `min_requests`. Schemathesis comes from `<target>/fuzz-venv`, where `.ci/run` installs the
//! versions pinned in `.ci/fuzz-requirements.txt`; without it the step fails and says how to
//! install it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

use crate::local::{self, free_address, get, path_text, psql, wait_for_health};
use crate::pg::Cluster;
use crate::{cargo, display};

pub struct Options {
    pub seed: u64,
    /// Schemathesis's time budget.
    pub seconds: u32,
    /// Fewer requests than this fail the run (a fuzzer that barely ran found nothing).
    pub min_requests: u64,
}

const REQUIREMENTS: &str = ".ci/fuzz-requirements.txt";
const CONFIG: &str = "xtask/schemathesis.toml";
/// A workaround, loaded into schemathesis, for a CPython thread-safety bug (see the file).
const HOOKS: &str = "xtask/schemathesis_hooks.py";
const DATABASE: &str = "deckhand_fuzz";
/// Base64 of 32 bytes of 9: the run's secret key (the database is thrown away).
const SECRET_KEY: &str = "CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQk=";
const CHECKS: &str = "not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance";

pub fn run(root: &Path, target: &Path, options: &Options) -> Result<()> {
    let started = Instant::now();
    let st = schemathesis(root, target)?;
    cargo(root, &["build", "--locked", "-q", "-p", "deckhand"])?;
    let deckhand = target.join("debug/deckhand");
    let work = target.join("fuzz");
    if work.exists() {
        fs::remove_dir_all(&work).with_context(|| format!("removing {}", work.display()))?;
    }
    fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;

    let cluster = Cluster::in_target(target);
    cluster.start()?;
    psql(
        &cluster,
        "postgres",
        &[
            "-c",
            &format!("DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"),
            "-c",
            &format!("CREATE DATABASE {DATABASE}"),
        ],
    )?;
    let url = format!(
        "postgresql:///{DATABASE}?host={}&user=postgres",
        cluster.socket().display()
    );
    let app = |args: &[&str]| local::deckhand(&deckhand, &url, SECRET_KEY, args);
    app(&["migrate"])?;
    for (game, source, file) in [
        ("mtg", "scryfall", "crates/app/data/mtg-demo.jsonl"),
        ("lorcana", "generic", "crates/app/data/lorcana-demo.jsonl"),
    ] {
        let file = path_text(&root.join(file))?;
        app(&[
            "admin", "catalog", "import", "--game", game, "--source", source, &file,
        ])?;
    }
    app(&[
        "admin",
        "user",
        "create",
        "--username",
        "fuzzer",
        "--premium",
    ])?;

    let address = free_address()?;
    let log = work.join("server.log");
    let mut server = Command::new(&deckhand)
        .arg("serve")
        .env("DATABASE_URL", &url)
        .env("DECKHAND_SECRET_KEY", SECRET_KEY)
        .env("DECKHAND_BIND", &address)
        // Quotas would turn most of the run into 429s; they are tested on their own.
        .env("DECKHAND_RATE_LIMITS", "off")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(fs::File::create(&log)?)
        .spawn()
        .context("starting the server")?;
    let result = wait_for_health(&mut server, &address)
        .and_then(|()| every_scope(&address))
        .and_then(|scopes| {
            let pat: Value = serde_json::from_str(&app(&[
                "admin", "pat", "create", "--user", "fuzzer", "--scopes", &scopes,
            ])?)?;
            let token = pat["token"].as_str().context("no token in the PAT")?;
            fuzz(root, &st, &address, token, &work, options)
        })
        .and_then(|()| counted_requests(&address, options, started));
    // The server is ours: stop exactly it.
    let _ = server.kill();
    let _ = server.wait();
    result.with_context(|| format!("the server's log is {}", log.display()))
}

/// The schemathesis of `<target>/fuzz-venv`, at the pinned version.
fn schemathesis(root: &Path, target: &Path) -> Result<PathBuf> {
    let requirements = fs::read_to_string(root.join(REQUIREMENTS))
        .with_context(|| format!("reading {REQUIREMENTS}"))?;
    let pinned = requirements
        .lines()
        .find_map(|line| line.trim().strip_prefix("schemathesis=="))
        .with_context(|| format!("{REQUIREMENTS} pins no schemathesis version"))?;
    let venv = target.join("fuzz-venv");
    let st = venv.join("bin/st");
    let install = format!(
        "python3 -m venv {venv} && {venv}/bin/pip install -r {REQUIREMENTS} (what .ci/run does)",
        venv = venv.display()
    );
    let version = Command::new(&st)
        .arg("--version")
        .output()
        .with_context(|| {
            format!(
                "schemathesis {pinned} is not installed in {}; install it with: {install}",
                venv.display()
            )
        })?;
    let version = String::from_utf8_lossy(&version.stdout);
    if version.trim() != format!("st, version {pinned}") {
        bail!(
            "{} is `{}`, not schemathesis {pinned}; reinstall it with: {install}",
            st.display(),
            version.trim()
        );
    }
    Ok(st)
}

/// Every scope the server knows, from its OAuth metadata, space-separated.
fn every_scope(address: &str) -> Result<String> {
    let (status, body) = get(address, "/.well-known/oauth-authorization-server")?;
    if status != 200 {
        bail!("the OAuth metadata answered {status}");
    }
    let metadata: Value = serde_json::from_str(&body).context("the OAuth metadata is not JSON")?;
    let scopes: Vec<&str> = metadata["scopes_supported"]
        .as_array()
        .context("no scopes_supported in the OAuth metadata")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    Ok(scopes.join(" "))
}

fn fuzz(
    root: &Path,
    st: &Path,
    address: &str,
    token: &str,
    work: &Path,
    options: &Options,
) -> Result<()> {
    let mut cmd = Command::new(st);
    // Schemathesis keeps a cache of past failures in its working directory: a fresh one each
    // run, so that a run depends on its seed alone.
    cmd.current_dir(work)
        .arg("--config-file")
        .arg(root.join(CONFIG))
        .arg("run")
        .arg(format!("http://{address}/api/public/v1/openapi.json"))
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .args(["--checks", CHECKS])
        .args(["--seed", &options.seed.to_string()])
        .args(["--max-time", &options.seconds.to_string()])
        .args(["--workers", "4", "--report", "json,junit"])
        .arg("--report-dir")
        .arg(work.join("report"))
        .env("NO_COLOR", "1")
        .env("SCHEMATHESIS_HOOKS", root.join(HOOKS));
    println!(
        "$ {} (seed {}, {} s)",
        display(&cmd).replace(token, "dh_pat_..."),
        options.seed,
        options.seconds
    );
    let status = cmd.status().context("could not start schemathesis")?;
    if !status.success() {
        bail!(
            "schemathesis found problems ({status}); reproduce with `cargo xtask fuzz --seed {}` \
             (reports in {})",
            options.seed,
            work.join("report").display()
        );
    }
    Ok(())
}

/// Checks the server's own count of the run: enough requests, and not one 5xx.
fn counted_requests(address: &str, options: &Options, started: Instant) -> Result<()> {
    let (_, metrics) = get(address, "/metrics")?;
    let (mut requests, mut server_errors) = (0u64, 0u64);
    for line in metrics
        .lines()
        .filter(|line| line.starts_with("deckhand_http_requests_total{"))
    {
        let count: u64 = line
            .rsplit(' ')
            .next()
            .and_then(|count| count.parse().ok())
            .with_context(|| format!("unreadable metric line {line:?}"))?;
        requests += count;
        if line.contains("status=\"5") {
            server_errors += count;
            println!("5xx: {line}");
        }
    }
    println!(
        "fuzz: {requests} requests, {server_errors} answered 5xx, seed {}, {:.0} s in all",
        options.seed,
        started.elapsed().as_secs_f64()
    );
    if server_errors > 0 {
        bail!("the server answered {server_errors} requests with a 5xx");
    }
    if requests < options.min_requests {
        bail!(
            "only {requests} requests reached the server (at least {} are required): give the \
             fuzzer more time",
            options.min_requests
        );
    }
    Ok(())
}
