//! Project tasks, one binary, run as `cargo xtask <task>` so they need nothing but cargo.
//! It builds fast on purpose: anyhow, clap and serde_json, plus ureq (plain HTTP, no TLS) for
//! the few requests that walk the consent page, plotters (its SVG backend alone) for charts,
//! and jsoncompat for the OpenAPI compatibility check.

mod api_compat;
mod chart;
mod client;
mod cluster;
mod cpu;
mod doc_map;
mod fixtures;
mod fuzz;
mod greedy;
mod lanes;
mod loadtest;
mod local;
mod pg;
mod process;
mod soak;
mod spans;
mod tidy;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use process::{cargo, cargo_command, display, run_command, target_dir, workspace_root};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Deckhand project tasks"
)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Everything CI checks, in order: fmt, clippy, tidy, api, test, client, fuzz.
    Ci,
    /// The workspace tests: `cargo test --workspace --locked` plus these arguments (a `-p` here
    /// replaces `--workspace`).
    Test {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// `cargo fmt --check` and clippy with warnings denied.
    Lint,
    /// Architecture rules from `cargo metadata` and source hygiene.
    Tidy,
    /// The throwaway PostgreSQL cluster the test harness uses (target/testkit-pg).
    Db {
        #[command(subcommand)]
        action: DbAction,
    },
    /// `cargo bench --workspace`.
    Bench,
    /// Regenerate docs/openapi.json from the binary.
    Openapi,
    /// Compare docs/openapi.json with the last released document (docs/openapi/releases): a
    /// step of `ci`, failing on anything that breaks clients within a major version.
    ApiCompat,
    /// Record docs/openapi.json as the released document of its version (after `api-compat`).
    ApiRelease,
    /// Generate a Python client from docs/openapi.json (openapi-python-client) and drive a
    /// short flow with it against `deckhand serve` on the in-memory store (a step of `ci`).
    Client,
    /// Schemathesis against `deckhand serve` on PostgreSQL, over every operation of its
    /// OpenAPI document (a step of `ci`; see docs/reliability.md).
    Fuzz {
        /// The fuzzer's seed, to replay a run (it prints its seed); random when not given.
        #[arg(long)]
        seed: Option<u64>,
        /// The fuzzer's time budget in seconds.
        #[arg(long, default_value_t = FUZZ_SECONDS)]
        seconds: u32,
        /// Fail when fewer requests than this reached the server.
        #[arg(long, default_value_t = FUZZ_MIN_REQUESTS)]
        min_requests: u64,
        /// Fail when an operation never answered a 2xx (the gate of issue 31, off in `ci` until
        /// every operation is reached in every run).
        #[arg(long)]
        require_every_operation: bool,
    },
    /// The HTTP load benchmark of docs/benchmarks.md (a few minutes; never part of `ci`).
    Loadtest {
        /// Decks to seed.
        #[arg(long, default_value_t = 100_000)]
        decks: u32,
        /// Sideboard guides to seed (default: a tenth of the decks).
        #[arg(long)]
        guides: Option<u32>,
        /// Events to seed (default: as many as decks).
        #[arg(long)]
        events: Option<u32>,
        /// Concurrent connections of every load run (and pgbench clients).
        #[arg(long, default_value_t = 64)]
        connections: u32,
        /// Seconds each request is driven.
        #[arg(long, default_value_t = 10)]
        seconds: u32,
        /// Measure this server binary instead of building this tree's release binary (e.g. one
        /// built from `main`, for a before/after comparison).
        #[arg(long)]
        binary: Option<PathBuf>,
        /// Also measure this server binary (e.g. a release build of an earlier commit), first,
        /// on the same cluster and data, each beside its own `pgbench -S`: before and after in
        /// one run.
        #[arg(long)]
        baseline: Option<PathBuf>,
        /// Measure only the ceilings (`pgbench -S`, `GET /healthz`) and the resolution of 1000
        /// identifiers, skipping the deck requests (use with a small `--decks`).
        #[arg(long)]
        resolve_only: bool,
        /// Where to draw the SVG chart of the shares (default `target/loadtest/loadtest.svg`;
        /// docs/benchmarks.md shows `docs/benchmarks/loadtest.svg`).
        #[arg(long)]
        chart: Option<PathBuf>,
        /// Also measure this tree's server through PgBouncer in transaction pooling mode,
        /// after its direct run (needs Debian's `pgbouncer`).
        #[arg(long)]
        pooler: bool,
        /// Run only the greedy-neighbours scenario of issue 41 (600 held feed waits and a
        /// hanging webhook endpoint beside other users' requests; docs/benchmarks.md), on this
        /// tree's server, with no ceilings and no catalog (use with a small `--decks`). A full
        /// load test runs it last.
        #[arg(long, conflicts_with_all = ["baseline", "resolve_only", "pooler"])]
        greedy_only: bool,
    },
    /// A mixed load at half the peak rate for a set time on PostgreSQL, failing if the server's
    /// memory, open files, database connections or table sizes grow after the warm-up
    /// (docs/reliability.md, "Soak"; never part of `ci`).
    Soak {
        /// How long the load runs; the first quarter is the warm-up.
        #[arg(long, default_value_t = 20)]
        minutes: u32,
        /// Decks to seed (and as many events).
        #[arg(long, default_value_t = 10_000)]
        decks: u32,
        /// Concurrent connections of each lane's peak measurement.
        #[arg(long, default_value_t = 32)]
        connections: u32,
        /// The soak's rate in requests per second, instead of half the measured peak.
        #[arg(long)]
        rate: Option<f64>,
        /// Soak this server binary instead of building this tree's release binary.
        #[arg(long)]
        binary: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum DbAction {
    /// Create the cluster if needed, start it and print its DATABASE_URL.
    Start,
    /// Stop it if it runs.
    Stop,
    /// Say whether it exists and runs.
    Status,
}

/// The fuzzer's time budget in `ci`: well past [`FUZZ_MIN_REQUESTS`] on a 2-core machine, even
/// a loaded one.
const FUZZ_SECONDS: u32 = 210;
/// The fewest requests a fuzz run must bring to the server: a quiet 2-core machine makes about
/// 10,000 in the budget and one loaded with three builds beside it 4,400; a run that barely
/// reached the server (a refused token, a broken document) makes a few hundred.
const FUZZ_MIN_REQUESTS: u64 = 2000;

fn main() -> ExitCode {
    match run(Cli::parse().task) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(task: Task) -> Result<()> {
    let root = workspace_root();
    match task {
        Task::Ci => with_cluster_stopped(&root, || {
            run_steps(&[
                ("fmt", &|| fmt(&root)),
                ("clippy", &|| clippy(&root)),
                ("tidy", &|| tidy::run(&root)),
                ("api", &|| api_compat::check(&root)),
                ("test", &|| test(&root, &[])),
                ("client", &|| client::run(&root, &target_dir(&root))),
                ("fuzz", &|| {
                    fuzz::run(
                        &root,
                        &target_dir(&root),
                        &fuzz::Options {
                            // A new seed each run, printed: every run fuzzes something new,
                            // and a finding replays with `cargo xtask fuzz --seed`.
                            seed: None,
                            seconds: FUZZ_SECONDS,
                            min_requests: FUZZ_MIN_REQUESTS,
                            require_every_operation: true,
                        },
                    )
                }),
            ])
        }),
        Task::Test { args } => with_cluster_stopped(&root, || test(&root, &args)),
        Task::Lint => run_steps(&[("fmt", &|| fmt(&root)), ("clippy", &|| clippy(&root))]),
        Task::Tidy => tidy::run(&root),
        Task::Db { action } => {
            let target = target_dir(&root);
            match action {
                DbAction::Start => pg::Cluster::in_target(&target).start(),
                DbAction::Stop => pg::stop_all(&target),
                DbAction::Status => pg::status_all(&target),
            }
        }
        Task::Bench => cargo(&root, &["bench", "--workspace"]),
        Task::Openapi => openapi(&root),
        Task::ApiCompat => api_compat::check(&root),
        Task::ApiRelease => api_compat::release(&root),
        Task::Client => client::run(&root, &target_dir(&root)),
        Task::Fuzz {
            seed,
            seconds,
            min_requests,
            require_every_operation,
        } => with_cluster_stopped(&root, || {
            fuzz::run(
                &root,
                &target_dir(&root),
                &fuzz::Options {
                    seed,
                    seconds,
                    min_requests,
                    require_every_operation,
                },
            )
        }),
        Task::Loadtest {
            decks,
            guides,
            events,
            connections,
            seconds,
            binary,
            baseline,
            resolve_only,
            chart,
            pooler,
            greedy_only,
        } => loadtest::run(
            &root,
            &target_dir(&root),
            &loadtest::Options {
                decks,
                guides,
                events,
                connections,
                seconds,
                binary,
                baseline,
                resolve_only,
                chart,
                pooler,
                greedy_only,
            },
        ),
        Task::Soak {
            minutes,
            decks,
            connections,
            rate,
            binary,
        } => soak::run(
            &root,
            &target_dir(&root),
            &soak::Options {
                minutes,
                decks,
                connections,
                rate,
                binary,
            },
        ),
    }
}

fn fmt(root: &Path) -> Result<()> {
    cargo(root, &["fmt", "--all", "--", "--check"])
        .context("code is not formatted: run `cargo fmt --all`")
}

fn clippy(root: &Path) -> Result<()> {
    let args = [
        "clippy",
        "--workspace",
        "--all-targets",
        "--locked",
        "--",
        "-D",
        "warnings",
    ];
    cargo(root, &args)
}

// stdout stays inherited so CI sees libtest's "test result:" lines.
fn test(root: &Path, extra: &[OsString]) -> Result<()> {
    run_command(cargo_command(root).args(test_args(extra)))
}

fn test_args(extra: &[OsString]) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["test".into()];
    // cargo ignores `-p` next to `--workspace`, so a package chosen by hand must drop it.
    let picks_package = extra
        .iter()
        .take_while(|arg| *arg != "--")
        .map(|arg| arg.to_string_lossy())
        .any(|arg| arg.starts_with("-p") || arg.starts_with("--package"));
    if !picks_package {
        args.push("--workspace".into());
    }
    args.push("--locked".into());
    args.extend_from_slice(extra);
    args
}

fn openapi(root: &Path) -> Result<()> {
    let mut cmd = cargo_command(root);
    cmd.args(["run", "-q", "-p", "deckhand", "--", "openapi"]);
    println!("$ {}", display(&cmd));
    let output = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("could not start cargo")?;
    if !output.status.success() {
        bail!(
            "`cargo run -p deckhand -- openapi` failed ({}); docs/openapi.json is unchanged. \
             Does the deckhand binary have an `openapi` subcommand yet, and does it build?",
            output.status
        );
    }
    // Refuse to overwrite the committed spec with something that is not JSON (a log line, say).
    serde_json::from_slice::<serde_json::Value>(&output.stdout).context(
        "`deckhand openapi` printed something that is not JSON; docs/openapi.json is unchanged",
    )?;
    let path = root.join("docs/openapi.json");
    fs::write(&path, &output.stdout).with_context(|| format!("writing {}", path.display()))?;
    println!("wrote {} ({} bytes)", path.display(), output.stdout.len());
    Ok(())
}

/// Runs `body`, then stops the test harness's cluster whatever happened, so a run leaves no
/// server behind. A failed stop is only reported: it says nothing about the code under test.
fn with_cluster_stopped(root: &Path, body: impl FnOnce() -> Result<()>) -> Result<()> {
    let result = body();
    if let Err(err) = pg::stop_all(&target_dir(root)) {
        eprintln!("warning: could not stop the test cluster: {err:#}");
    }
    result
}

type Step<'a> = (&'a str, &'a dyn Fn() -> Result<()>);

fn run_steps(steps: &[Step<'_>]) -> Result<()> {
    let mut done: Vec<(&str, Duration, bool)> = Vec::new();
    let mut failure = None;
    for (name, step) in steps {
        println!("==> {name}");
        let started = Instant::now();
        let result = step();
        let elapsed = started.elapsed();
        println!(
            "<== {name} {} in {}",
            if result.is_ok() { "ok" } else { "FAILED" },
            secs(elapsed)
        );
        done.push((name, elapsed, result.is_ok()));
        if let Err(err) = result {
            failure = Some(err.context(format!("step `{name}` failed")));
            break;
        }
    }
    println!("\nsummary:");
    for (name, elapsed, ok) in &done {
        println!(
            "  {name:<8} {:<7} {:>8}",
            if *ok { "ok" } else { "FAILED" },
            secs(*elapsed)
        );
    }
    for (name, _) in &steps[done.len()..] {
        println!("  {name:<8} skipped");
    }
    failure.map_or(Ok(()), Err)
}

fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn test_passes_trailing_arguments_through() -> Result<()> {
        let cli = Cli::try_parse_from(["xtask", "test", "--", "-p", "deckhand_domain"])?;
        let Task::Test { args } = cli.task else {
            panic!("parsed as another task")
        };
        assert_eq!(args, ["-p", "deckhand_domain"]);
        Ok(())
    }

    #[test]
    fn test_covers_the_workspace_unless_a_package_is_picked() {
        let args =
            |extra: &[&str]| test_args(&extra.iter().map(OsString::from).collect::<Vec<_>>());
        assert_eq!(args(&[]), ["test", "--workspace", "--locked"]);
        assert_eq!(
            args(&["--", "-p"]),
            ["test", "--workspace", "--locked", "--", "-p"]
        );
        assert_eq!(
            args(&["--package=xtask"]),
            ["test", "--locked", "--package=xtask"]
        );
        assert_eq!(
            args(&["-p", "xtask", "tidy"]),
            ["test", "--locked", "-p", "xtask", "tidy"]
        );
    }
}
