//! `cargo xtask fuzz`: schemathesis, the OpenAPI fuzzer, against a real `deckhand serve` on
//! PostgreSQL, over every operation of the document the server serves. A step of `ci`.
//!
//! On the test harness's cluster, in a database of its own (made anew each run): migrate,
//! import the bundled catalogs, start the server, and make real credentials of every lane for
//! one user holding every scope the server knows (`lanes`: a PAT, a partner's API key, a
//! confidential OAuth client, an OAuth access token from the consent page), and fixtures for
//! every operation on an existing resource (`fixtures`). Schemathesis runs
//! with a seed (random unless `--seed` is given, printed either way so that a failure replays),
//! a time budget, and its checks for server errors, response schemas, status codes and content
//! types; its hook (`xtask/schemathesis_hooks.py`) sends each request on one of the lanes its
//! operation accepts, picked at random, anonymous included where allowed, and puts the
//! operation's fixture ids into half the positive cases outside the stateful phase.
//!
//! It fails on any finding, on any 5xx the server counted, on fewer requests than
//! `min_requests`, and on any operation of the document that never answered a 2xx, as the
//! server's own `/metrics` count them, unless [`NO_2XX_EXPECTED`] says why it cannot. Schemathesis
//! comes from `<target>/fuzz-venv`, where `.ci/run` installs the versions pinned in
//! `.ci/fuzz-requirements.txt`; without it the step fails and says how to install it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

use crate::fixtures;
use crate::lanes::{self, Lanes};
use crate::local::{self, free_address, get, path_text, psql, wait_for_health};
use crate::pg::Cluster;
use crate::process::{cargo, display};

pub struct Options {
    /// The fuzzer's seed; `None` draws one (printed, so the run replays with `--seed`).
    pub seed: Option<u64>,
    /// Schemathesis's time budget.
    pub seconds: u32,
    /// Fewer requests than this fail the run (a fuzzer that barely ran found nothing).
    pub min_requests: u64,
    /// Fail the run when an operation outside [`NO_2XX_EXPECTED`] never answered a 2xx (or one
    /// on it did). On in `ci`; the coverage is printed either way.
    pub require_every_operation: bool,
}

const REQUIREMENTS: &str = ".ci/fuzz-requirements.txt";
const CONFIG: &str = "xtask/schemathesis.toml";
/// A workaround, loaded into schemathesis, for a CPython thread-safety bug (see the file).
const HOOKS: &str = "xtask/schemathesis_hooks.py";
const DATABASE: &str = "deckhand_fuzz";
/// Base64 of 32 bytes of 9: the run's secret key (the database is thrown away).
const SECRET_KEY: &str = "CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQk=";
const CHECKS: &str = "not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance";
const API: &str = "/api/public/v1";
/// The hook's record of every answer, one JSON line each, in the run's directory.
const ANSWERS: &str = "answers.jsonl";

/// The operations that cannot answer a fuzzer 2xx, each with its reason; every other operation
/// of the document must have answered at least one 2xx in the run. Reviewed: an entry here is
/// an operation no generated request can complete, not one the fuzzer merely missed. An entry
/// whose operation did answer a 2xx fails the run too, so the list never outlives its reason.
const NO_2XX_EXPECTED: &[(&str, &str, &str)] = &[(
    "POST",
    "/api/public/v1/oauth/token",
    "a 2xx redeems a live authorization code with its PKCE verifier, or a live refresh token; \
     codes come only from a signed-in user's consent and both are single use and 32 random \
     bytes, which no generated value is",
)];

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
    for (game, source, day, file) in [
        (
            "mtg",
            "scryfall",
            "2019-04-01",
            "crates/app/data/mtg-demo.jsonl",
        ),
        (
            "lorcana",
            "generic",
            "2026-01-01",
            "crates/app/data/lorcana-demo.jsonl",
        ),
    ] {
        let file = path_text(&root.join(file))?;
        app(&[
            "admin", "catalog", "import", "--game", game, "--source", source, "--as-of", day, &file,
        ])?;
    }
    let address = free_address()?;
    let log = work.join("server.log");
    let mut server = Command::new(&deckhand)
        .arg("serve")
        .env("DATABASE_URL", &url)
        .env("DECKHAND_SECRET_KEY", SECRET_KEY)
        .env("DECKHAND_BIND", &address)
        // Quotas would turn most of the run into 429s; they are tested on their own.
        .env("DECKHAND_RATE_LIMITS", "off")
        // Webhook endpoints of the stateful phase point at the hook's loopback receiver.
        .env("DECKHAND_WEBHOOK_ALLOW_PRIVATE", "true")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(fs::File::create(&log)?)
        .spawn()
        .context("starting the server")?;
    let seed = match options.seed {
        Some(seed) => seed,
        None => random_seed()?,
    };
    println!("fuzz seed {seed} (replay with `cargo xtask fuzz --seed {seed}`)");
    let result = wait_for_health(&mut server, &address)
        .and_then(|()| every_scope(&address))
        .and_then(|scopes| {
            let admin = |args: &[&str]| {
                let mut full = vec!["admin"];
                full.extend_from_slice(args);
                app(&full)
            };
            let lanes = lanes::make(&admin, &address, "fuzzer", &scopes)?;
            let fixtures = work.join("fixtures.json");
            fs::write(
                &fixtures,
                serde_json::to_string_pretty(&fixtures::make(&address, &lanes)?)?,
            )
            .with_context(|| format!("writing {}", fixtures.display()))?;
            // What making the credentials and fixtures cost (a consent walk, a code redeemed,
            // the creates) is not the fuzzer's: only requests counted after this point are.
            let (_, metrics) = get(&address, "/metrics")?;
            let before = request_counts(&metrics)?;
            fuzz(root, &st, &address, &lanes, &work, options, seed)?;
            Ok(before)
        })
        .and_then(|before| {
            counted_requests(
                &address,
                &before,
                &work.join(ANSWERS),
                options,
                seed,
                started,
            )
        });
    // The server is ours: stop exactly it.
    let _ = server.kill();
    let _ = server.wait();
    if result.is_err() {
        print_tail(&log, SERVER_LOG_LINES_SHOWN);
    }
    result.with_context(|| format!("the server's log is {}", log.display()))
}

/// How much of the server's log a failed run prints: its errors, for a reader who has only
/// CI's output (a CI machine's log file is gone with it).
const SERVER_LOG_LINES_SHOWN: usize = 40;

/// The last `lines` lines of `log`, on stderr.
fn print_tail(log: &Path, lines: usize) {
    match fs::read_to_string(log) {
        Ok(text) => {
            let all: Vec<&str> = text.lines().collect();
            eprintln!("the server's log, its last {lines} lines at most:");
            for line in &all[all.len().saturating_sub(lines)..] {
                eprintln!("  {line}");
            }
        }
        Err(error) => eprintln!("could not read the server's log {}: {error}", log.display()),
    }
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

/// The share of the budget, in percent, of schemathesis's stateful phase, which follows the
/// document's links out of a create to every operation on what it made. Left to share one run
/// with the fuzzing phase, it got the last 30% of the budget, too little to reach every
/// operation on a created deck or guide; run on its own it gets this share, the other phases
/// (examples, coverage, fuzzing) the rest.
const STATEFUL_PERCENT: u32 = 50;

fn fuzz(
    root: &Path,
    st: &Path,
    address: &str,
    lanes: &Lanes,
    work: &Path,
    options: &Options,
    seed: u64,
) -> Result<()> {
    let stateful = options.seconds * STATEFUL_PERCENT / 100;
    for (phases, seconds) in [
        ("examples,coverage,fuzzing", options.seconds - stateful),
        ("stateful", stateful),
    ] {
        let mut cmd = Command::new(st);
        // Schemathesis keeps a cache of past failures in its working directory: a fresh one
        // each run, so that a run depends on its seed alone.
        cmd.current_dir(work)
            .arg("--config-file")
            .arg(root.join(CONFIG))
            .arg("run")
            .arg(format!("http://{address}{API}/openapi.json"))
            .args(["--phases", phases])
            .args(["--checks", CHECKS])
            .args(["--seed", &seed.to_string()])
            .args(["--max-time", &seconds.to_string()])
            .args(["--workers", "4", "--report", "json,junit"])
            .arg("--report-dir")
            .arg(work.join("report"))
            .env("NO_COLOR", "1")
            .env("SCHEMATHESIS_HOOKS", root.join(HOOKS))
            // The lanes the hook picks from (xtask/schemathesis_hooks.py).
            .env("DECKHAND_FUZZ_SEED", seed.to_string())
            .env("DECKHAND_FUZZ_PAT", &lanes.pat)
            .env("DECKHAND_FUZZ_ACCESS_TOKEN", &lanes.access_token)
            .env("DECKHAND_FUZZ_API_KEY", &lanes.api_key)
            .env("DECKHAND_FUZZ_CLIENT_ID", &lanes.client_id)
            .env("DECKHAND_FUZZ_CLIENT_SECRET", &lanes.client_secret)
            .env("DECKHAND_FUZZ_PUBLIC_CLIENT_ID", &lanes.public_client_id)
            // What the hook substitutes for generated ids (`fixtures`), and where it writes
            // how each request was answered.
            .env("DECKHAND_FUZZ_FIXTURES", work.join("fixtures.json"))
            .env("DECKHAND_FUZZ_ANSWERS", work.join(ANSWERS));
        println!(
            "$ {} (seed {seed}, {seconds} s; credentials in DECKHAND_FUZZ_*)",
            display(&cmd),
        );
        let status = cmd.status().context("could not start schemathesis")?;
        if !status.success() {
            bail!(
                "schemathesis found problems in its {phases} phases ({status}); reproduce with \
                 `cargo xtask fuzz --seed {seed}` (reports in {})",
                work.join("report").display()
            );
        }
    }
    Ok(())
}

/// Eight random bytes from the system, as a seed.
fn random_seed() -> Result<u64> {
    let mut bytes = [0u8; 8];
    fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .context("reading /dev/urandom for a seed")?;
    Ok(u64::from_le_bytes(bytes))
}

/// Checks the server's own count of the run: enough requests, not one 5xx, and a 2xx from
/// every operation of the document but those [`NO_2XX_EXPECTED`] names.
fn counted_requests(
    address: &str,
    before: &Counts,
    answers: &Path,
    options: &Options,
    seed: u64,
    started: Instant,
) -> Result<()> {
    let (_, metrics) = get(address, "/metrics")?;
    let document = ureq::get(&format!("http://{address}{API}/openapi.json"))
        .call()
        .context("reading the OpenAPI document")?
        .into_string()?;
    let document: Value = serde_json::from_str(&document).context("the document is not JSON")?;
    let counts = since(request_counts(&metrics)?, before);
    let (mut requests, mut server_errors) = (0u64, 0u64);
    for ((route, method, status), count) in &counts {
        requests += count;
        if status.starts_with('5') {
            server_errors += count;
            println!("5xx: {method} {route} {status}: {count}");
        }
    }
    let coverage = Coverage::of(&document, &counts)?;
    coverage.print(&refusals(answers)?);
    println!(
        "fuzz: {requests} requests, {server_errors} answered 5xx, {} of {} operations answered \
         a 2xx, seed {seed}, {:.0} s in all",
        coverage.answered.len(),
        coverage.operations,
        started.elapsed().as_secs_f64()
    );
    if server_errors > 0 {
        bail!("the server answered {server_errors} requests with a 5xx (seed {seed})");
    }
    if requests < options.min_requests {
        bail!(
            "only {requests} requests reached the server (at least {} are required): give the \
             fuzzer more time",
            options.min_requests
        );
    }
    match coverage.verdict(seed) {
        Err(gap) if !options.require_every_operation => {
            println!(
                "fuzz coverage gap (not a failure without --require-every-operation): {gap:#}"
            );
            Ok(())
        }
        verdict => verdict,
    }
}

/// Operation (`METHOD /path`) -> how its requests were refused -> requests, from the hook's
/// record of the answers (`xtask/schemathesis_hooks.py`).
type Refusals = BTreeMap<String, BTreeMap<String, u64>>;

/// The refusals of the hook's record `answers`, each described by its status, error code,
/// reason or first field, and whether the request used the operation's fixture.
fn refusals(answers: &Path) -> Result<Refusals> {
    let text = fs::read_to_string(answers)
        .with_context(|| format!("reading the hook's record {}", answers.display()))?;
    let mut refusals = Refusals::new();
    for line in text.lines() {
        let answer: Value =
            serde_json::from_str(line).with_context(|| format!("unreadable answer {line:?}"))?;
        let status = answer["status"].as_u64().unwrap_or_default();
        if status < 300 {
            continue;
        }
        let words: Vec<&str> = ["error", "reason", "field"]
            .into_iter()
            .filter_map(|key| answer[key].as_str())
            .collect();
        let cause = format!(
            "{status} {} ({}, {}{})",
            words.join(" "),
            answer["phase"].as_str().unwrap_or("?"),
            answer["mode"].as_str().unwrap_or("?"),
            if answer["fixture"] == true {
                ", fixture"
            } else {
                ""
            },
        );
        *refusals
            .entry(answer["operation"].as_str().unwrap_or_default().to_owned())
            .or_default()
            .entry(cause)
            .or_default() += 1;
    }
    Ok(refusals)
}

/// (route, method, status) -> requests, from the server's `deckhand_http_requests_total`.
type Counts = BTreeMap<(String, String, String), u64>;

fn request_counts(metrics: &str) -> Result<Counts> {
    let mut counts = Counts::new();
    for line in metrics
        .lines()
        .filter(|line| line.starts_with("deckhand_http_requests_total{"))
    {
        let unreadable = || format!("unreadable metric line {line:?}");
        let (labels, count) = line
            .strip_prefix("deckhand_http_requests_total{")
            .and_then(|rest| rest.rsplit_once("} "))
            .with_context(unreadable)?;
        let label = |name: &str| {
            labels
                .split(&format!("{name}=\""))
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .map(str::to_owned)
                .with_context(unreadable)
        };
        let count: u64 = count.trim().parse().with_context(unreadable)?;
        *counts
            .entry((label("route")?, label("method")?, label("status")?))
            .or_default() += count;
    }
    Ok(counts)
}

/// The requests counted in `now` and not in `before`.
fn since(mut now: Counts, before: &Counts) -> Counts {
    for (key, count) in before {
        if let Some(total) = now.get_mut(key) {
            *total = total.saturating_sub(*count);
        }
    }
    now.retain(|_, count| *count > 0);
    now
}

/// Which operations of the document answered a 2xx, and how the others answered.
struct Coverage {
    operations: usize,
    answered: BTreeSet<(String, String)>,
    /// Operations with no 2xx that the allow-list does not name, with their statuses.
    missing: Vec<(String, String, String)>,
    /// Allow-listed operations, and whether they answered a 2xx after all.
    allowed: Vec<(String, String, bool)>,
}

impl Coverage {
    fn of(document: &Value, counts: &Counts) -> Result<Self> {
        let paths = document["paths"]
            .as_object()
            .context("the document has no paths")?;
        let mut coverage = Coverage {
            operations: 0,
            answered: BTreeSet::new(),
            missing: Vec::new(),
            allowed: Vec::new(),
        };
        for (path, item) in paths {
            let methods = item.as_object().context("a path item is not an object")?;
            for method in ["get", "put", "post", "delete", "patch"]
                .into_iter()
                .filter(|method| methods.contains_key(*method))
            {
                let method = method.to_ascii_uppercase();
                coverage.operations += 1;
                let statuses: Vec<String> = counts
                    .iter()
                    .filter(|((route, verb, _), _)| route == path && *verb == method)
                    .map(|((_, _, status), count)| format!("{status}×{count}"))
                    .collect();
                let ok = counts.keys().any(|(route, verb, status)| {
                    route == path && *verb == method && status.starts_with('2')
                });
                if ok {
                    coverage.answered.insert((method.clone(), path.clone()));
                }
                if NO_2XX_EXPECTED
                    .iter()
                    .any(|(verb, route, _)| *verb == method && route == path)
                {
                    coverage.allowed.push((method, path.clone(), ok));
                } else if !ok {
                    let statuses = if statuses.is_empty() {
                        "never requested".to_owned()
                    } else {
                        statuses.join(" ")
                    };
                    coverage.missing.push((method, path.clone(), statuses));
                }
            }
        }
        Ok(coverage)
    }

    fn print(&self, refusals: &Refusals) {
        for (method, path, ok) in &self.allowed {
            let reason = NO_2XX_EXPECTED
                .iter()
                .find(|(verb, route, _)| verb == method && route == path)
                .map_or("", |(_, _, reason)| reason);
            println!(
                "no 2xx expected: {method} {path}{}: {reason}",
                if *ok { " (but it answered one)" } else { "" }
            );
        }
        for (method, path, statuses) in &self.missing {
            println!("no 2xx: {method} {path}: {statuses}");
            let mut causes: Vec<(&String, &u64)> = refusals
                .get(&format!("{method} {path}"))
                .into_iter()
                .flatten()
                .collect();
            causes.sort_by(|a, b| b.1.cmp(a.1));
            for (cause, count) in causes.into_iter().take(5) {
                println!("    {count}× {cause}");
            }
        }
    }

    fn verdict(&self, seed: u64) -> Result<()> {
        let stale: Vec<String> = self
            .allowed
            .iter()
            .filter(|(_, _, ok)| *ok)
            .map(|(method, path, _)| format!("{method} {path}"))
            .collect();
        if !stale.is_empty() {
            bail!(
                "{} answered a 2xx although NO_2XX_EXPECTED (xtask/src/fuzz.rs) says it cannot: \
                 remove it from the list",
                stale.join(", ")
            );
        }
        if !self.missing.is_empty() {
            let missing: Vec<String> = self
                .missing
                .iter()
                .map(|(method, path, _)| format!("{method} {path}"))
                .collect();
            bail!(
                "{} operations never answered a 2xx (seed {seed}): {}",
                missing.len(),
                missing.join(", ")
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const METRICS: &str = "# HELP deckhand_http_requests_total Requests.
deckhand_http_requests_total{method=\"GET\",route=\"/api/public/v1/games\",status=\"200\"} 7
deckhand_http_requests_total{method=\"POST\",route=\"/api/public/v1/webhooks\",status=\"401\"} 3
deckhand_http_requests_total{method=\"POST\",route=\"/api/public/v1/oauth/token\",status=\"400\"} 2
";

    fn document() -> Value {
        serde_json::json!({"paths": {
            "/api/public/v1/games": {"get": {}, "parameters": []},
            "/api/public/v1/webhooks": {"post": {}, "get": {}},
            "/api/public/v1/oauth/token": {"post": {}},
        }})
    }

    #[test]
    fn an_operation_without_a_2xx_fails_the_run_with_its_statuses() -> Result<()> {
        let counts = request_counts(METRICS)?;
        assert_eq!(counts.values().sum::<u64>(), 12);
        let coverage = Coverage::of(&document(), &counts)?;
        assert_eq!(coverage.operations, 4);
        assert_eq!(coverage.answered.len(), 1);
        assert_eq!(
            coverage.missing,
            [
                (
                    "GET".into(),
                    "/api/public/v1/webhooks".into(),
                    "never requested".into()
                ),
                (
                    "POST".into(),
                    "/api/public/v1/webhooks".into(),
                    "401×3".into()
                ),
            ]
        );
        let error = coverage.verdict(5).unwrap_err().to_string();
        assert!(
            error.contains("2 operations never answered a 2xx (seed 5)"),
            "{error}"
        );
        Ok(())
    }

    #[test]
    fn an_allowed_operation_that_answered_a_2xx_fails_the_run() -> Result<()> {
        let metrics = METRICS.replace("status=\"400\"", "status=\"200\"");
        let document = serde_json::json!({"paths": {"/api/public/v1/oauth/token": {"post": {}}}});
        let coverage = Coverage::of(&document, &request_counts(&metrics)?)?;
        let error = coverage.verdict(1).unwrap_err().to_string();
        assert!(error.contains("remove it from the list"), "{error}");
        Ok(())
    }

    #[test]
    fn requests_before_the_fuzzer_are_not_its_own() -> Result<()> {
        let before = request_counts(
            "deckhand_http_requests_total{method=\"POST\",route=\"/api/public/v1/oauth/token\",status=\"200\"} 1\n",
        )?;
        let metrics = format!(
            "{METRICS}deckhand_http_requests_total{{method=\"POST\",route=\"/api/public/v1/oauth/token\",status=\"200\"}} 1\n"
        );
        let counts = since(request_counts(&metrics)?, &before);
        assert_eq!(counts, request_counts(METRICS)?);
        Ok(())
    }

    #[test]
    fn every_allowed_operation_has_a_reason() {
        for (method, path, reason) in NO_2XX_EXPECTED {
            assert!(path.starts_with(API), "{method} {path}");
            assert!(reason.len() > 40, "{method} {path}: say why");
        }
    }
}
