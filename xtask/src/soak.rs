//! `cargo xtask soak`: a long mixed load at half the peak rate against the release `deckhand
//! serve` on PostgreSQL, watching what must not grow. Never part of `ci` (docs/reliability.md).
//!
//! On a throwaway cluster of its own (`<target>/soak-pg`): seed `--decks` decks and as many
//! events with the seeds in `crates/testkit/benches/`, start the server with the shortest
//! lifetimes its settings allow ([`SETTINGS`]), and make a PAT and OAuth tokens (`lanes`). The
//! peak: each oha lane of [`MIX`] alone at full concurrency for [`PEAK_SECONDS`], the mix's peak
//! being what those shares cost together (unless `--rate`). Then, for `--minutes`, half that rate
//! split as [`MIX`] says: list and detail reads, pageviews and PATCHes (a new version and event
//! each) through oha in windows of [`WINDOW_SECONDS`], and an OAuth refresh chain through the
//! real token endpoint, each refresh spending the last refresh token and reading once with the
//! new access token. Every [`SAMPLE_SECONDS`] it samples the server's RSS and open files (/proc),
//! its database connections (pg_stat_activity) and every table's size with its indexes and TOAST.
//!
//! After the warm-up (the first quarter), each measure must stay flat: over the second half, its
//! mean may exceed its mean over the first post-warm-up window (the next eighth) by no more than
//! its [`Bound`]'s allowance, and its highest sample by no more than twice that. Tables that keep
//! what the load writes for longer than any run can wait ([`KEPT_LONGER`]) are charted and their
//! growth printed, not bounded. Any error of the load fails the run too. The curves go to
//! `<target>/soak/soak.svg`, the samples to `samples.csv` and everything to `soak.json`.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};

use crate::chart::{self, Panel, Series};
use crate::cluster;
use crate::lanes;
use crate::loadtest::SECRET_KEY;
use crate::local::{
    self, API, Measured, free_address, get_with, path_text, psql, query, run_oha, seeded_urls,
    wait_for_health,
};
use crate::pg::Cluster;

pub struct Options {
    pub minutes: u32,
    pub decks: u32,
    /// Concurrent connections of each lane's peak measurement.
    pub connections: u32,
    /// The soak's rate in requests per second, instead of half the measured peak.
    pub rate: Option<f64>,
    /// A server binary instead of this tree's release build.
    pub binary: Option<PathBuf>,
}

const PEAK_SECONDS: u32 = 8;
/// Each oha lane runs in windows this long, so that rate, p99 and errors are known per window.
const WINDOW_SECONDS: u64 = 10;
const SAMPLE_SECONDS: u64 = 5;
/// Connections of each oha lane during the soak: far more than its rate needs at its latency.
const LANE_CONNECTIONS: &str = "16";
/// The shares of the soak's rate: oha lanes, then the refresh chain.
const MIX: [(&str, f64); 5] = [
    ("list", 0.25),
    ("detail", 0.4),
    ("views", 0.2),
    ("patch", 0.1),
    ("refresh", 0.05),
];
/// One chain of refreshes waits on each round trip; it is not asked to go faster than this.
const MAX_REFRESH_RATE: f64 = 5.0;
/// Short lifetimes (docs/operations.md, "Background work"), so that records are pruned within
/// the run where a setting reaches that low: a pageview dedupe window of a minute, the pruning
/// task's period, and the shortest the settings allow for the rest, which are still longer
/// than a run.
const SETTINGS: [(&str, &str); 6] = [
    ("DECKHAND_RATE_LIMITS", "off"),
    ("DECKHAND_PAGEVIEW_DEDUPE_SECS", "60"),
    ("DECKHAND_AUTH_CODE_TTL_SECS", "10"),
    ("DECKHAND_ACCESS_TOKEN_TTL_SECS", "60"),
    ("DECKHAND_REFRESH_TOKEN_TTL_SECS", "3600"),
    ("DECKHAND_EVENT_RETENTION_DAYS", "1"),
];
/// Tables that keep what the load writes for longer than a run: every PATCH is a version
/// (history is kept for good) and an event (a day at least); every refresh an access token
/// (kept 7 days past its expiry) and a refresh token (the spent one until its idle expiry, an
/// hour at least, so that its reuse is caught).
const KEPT_LONGER: [&str; 4] = [
    "deck_versions",
    "events",
    "oauth_access_tokens",
    "oauth_refresh_tokens",
];
/// The tables the pruning task keeps bounded (`postgres::pruning::jobs`) besides those of
/// [`KEPT_LONGER`]: the load writes pageview dedupe rows; the others must stay as they were.
const PRUNED: [&str; 9] = [
    "deck_views",
    "oauth_authorization_codes",
    "oauth_sessions",
    "oauth_grants",
    "dpop_proofs",
    "partner_signature_replays",
    "idempotency_keys",
    "sign_in_failures",
    "webhook_deliveries",
];
/// The share of the run before the first comparison, and the share of the run that the
/// reference window after it spans.
const WARM_UP: f64 = 0.25;
const REFERENCE: f64 = 0.125;

/// How much a measure may grow after the warm-up: `share` of its reference value, or `floor`
/// (in its own unit), whichever is larger, so that a small value's noise is not growth.
struct Bound {
    share: f64,
    floor: f64,
}

const RSS_BOUND: Bound = Bound {
    share: 0.10,
    floor: 8.0,
};
/// Sockets are open files: oha reconnects every window, and the server may still hold the last
/// window's connections for a moment.
const FILES_BOUND: Bound = Bound {
    share: 0.0,
    floor: 24.0,
};
const CONNECTIONS_BOUND: Bound = Bound {
    share: 0.0,
    floor: 3.0,
};
/// Per table, with its indexes and TOAST: room for the dead rows autovacuum has not yet made
/// reusable.
const TABLE_BOUND: Bound = Bound {
    share: 0.25,
    floor: 1.0,
};

const MIB: f64 = 1024.0 * 1024.0;

/// One sample: minutes since the load started, then each measure.
struct Sample {
    minute: f64,
    rss_mib: f64,
    open_files: f64,
    connections: f64,
    tables: Vec<Table>,
}

#[derive(Clone)]
struct Table {
    name: String,
    /// With its indexes and TOAST.
    mib: f64,
    /// Rows deleted since the statistics began (pg_stat_user_tables.n_tup_del).
    deleted: f64,
}

/// What one lane did in one window.
struct Window {
    lane: &'static str,
    /// Minutes since the load started, at the window's end.
    minute: f64,
    measured: Measured,
}

pub fn run(root: &Path, target: &Path, options: &Options) -> Result<()> {
    let started = Instant::now();
    let deckhand = cluster::server_binary(root, target, options.binary.as_ref())?;
    if !deckhand.is_file() {
        bail!("{} is missing", deckhand.display());
    }
    let oha = local::oha(root)?;
    let work = target.join("soak");
    fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let cluster = Cluster::at(target.join("soak-pg"));
    let result = cluster::on_fresh_cluster(&cluster, "", "soak", |cluster| {
        seed_and_serve(root, cluster, &deckhand, &oha, &work, options)
    });
    println!("total time {:.0}s", started.elapsed().as_secs_f64());
    result
}

fn seed_and_serve(
    root: &Path,
    cluster: &Cluster,
    deckhand: &Path,
    oha: &Path,
    work: &Path,
    options: &Options,
) -> Result<()> {
    let url = cluster::database_url(cluster);
    psql(cluster, "postgres", &["-c", "CREATE DATABASE deckhand"])?;
    local::deckhand(deckhand, &url, SECRET_KEY, &["migrate"])?;
    local::seed(
        cluster,
        root,
        &local::SeedSizes {
            decks: options.decks,
            guides: 0,
            events: options.decks,
        },
    )?;
    println!("seeded {0} decks and {0} events", options.decks);
    let address = free_address()?;
    let log = work.join("server.log");
    let mut command = Command::new(deckhand);
    command
        .args(["serve", "--no-migrate"])
        .env("DATABASE_URL", &url)
        .env("DECKHAND_SECRET_KEY", SECRET_KEY)
        .env("DECKHAND_BIND", &address)
        .envs(SETTINGS)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null());
    cluster::with_server(command, &log, |server| {
        wait_for_health(server, &address)?;
        let admin = |args: &[&str]| {
            let mut full = vec!["admin"];
            full.extend_from_slice(args);
            local::deckhand(deckhand, &url, SECRET_KEY, &full)
        };
        soak(cluster, server, oha, work, options, &address, &admin)
    })
    .with_context(|| format!("the server's log is {}", log.display()))
}

/// An oha lane: its name and the arguments that say what it requests.
struct Lane {
    name: &'static str,
    args: Vec<String>,
}

fn share(lane: &str) -> f64 {
    MIX.iter()
        .find(|(name, _)| *name == lane)
        .map_or(0.0, |(_, share)| *share)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

fn soak(
    cluster: &Cluster,
    server: &Child,
    oha: &Path,
    work: &Path,
    options: &Options,
    address: &str,
    admin: &dyn Fn(&[&str]) -> Result<String>,
) -> Result<()> {
    let base = format!("http://{address}");
    // player_1 owns the most decks (the seed's skew): its PAT writes its own.
    let pat: Value = serde_json::from_str(&admin(&[
        "pat",
        "create",
        "--user",
        "player_1",
        "--scopes",
        "decks:read decks:write",
    ])?)
    .context("`deckhand admin pat create` printed no JSON")?;
    let bearer = format!(
        "Authorization: Bearer {}",
        pat["token"].as_str().context("no token in the PAT")?
    );
    let oauth = lanes::make(admin, address, "soaker", "decks:read")?;
    let urls = seeded_urls(cluster, work, &base)?;
    let lanes = [
        Lane {
            name: "list",
            args: strings(&[&format!("{base}{API}/decks?limit=20")]),
        },
        Lane {
            name: "detail",
            args: strings(&["--urls-from-file", &path_text(&urls.details)?]),
        },
        Lane {
            name: "views",
            args: strings(&["-m", "POST", "--urls-from-file", &path_text(&urls.views)?]),
        },
        Lane {
            name: "patch",
            args: strings(&[
                "-m",
                "PATCH",
                "-H",
                &bearer,
                "-T",
                "application/json",
                "-d",
                r#"{"notes":"Soak notes: a new version, history record and event."}"#,
                "--urls-from-file",
                &path_text(&urls.patches)?,
            ]),
        },
    ];
    let (peak, rate) = match options.rate {
        Some(rate) => (None, rate),
        None => {
            let peak = mixed_peak(oha, &lanes, options.connections)?;
            (Some(peak), peak / 2.0)
        }
    };
    let refresh_rate = (rate * share("refresh")).min(MAX_REFRESH_RATE);
    println!(
        "the soak: {rate:.0} req/s for {} min ({})",
        options.minutes,
        MIX.iter()
            .map(|(name, share)| {
                let lane_rate = if *name == "refresh" {
                    refresh_rate
                } else {
                    rate * share
                };
                format!("{name} {lane_rate:.0}/s")
            })
            .collect::<Vec<_>>()
            .join(", ")
    );

    let load_time = Duration::from_secs(u64::from(options.minutes) * 60);
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let (samples, windows) = thread::scope(|scope| {
        let drivers: Vec<_> = lanes
            .iter()
            .map(|lane| {
                let lane_rate = rate * share(lane.name);
                let stop = &stop;
                scope.spawn(move || drive_lane(oha, lane, lane_rate, started, load_time, stop))
            })
            .collect();
        let refreshes = scope.spawn(|| {
            refresh_chain(
                address,
                &oauth.public_client_id,
                oauth.refresh_token.clone(),
                refresh_rate,
                started,
                load_time,
                &stop,
            )
        });
        let samples = sample(cluster, server.id(), started, load_time);
        // A server gone or a database unreachable ends the load early.
        stop.store(true, Ordering::Relaxed);
        let mut windows = Vec::new();
        let mut failures = Vec::new();
        for driver in drivers.into_iter().chain([refreshes]) {
            match driver.join() {
                Ok(Ok(mut lane)) => windows.append(&mut lane),
                Ok(Err(err)) => failures.push(format!("{err:#}")),
                Err(_) => failures.push("a load thread panicked".to_owned()),
            }
        }
        (samples, (windows, failures))
    });
    let samples = samples?;
    let (windows, mut failures) = windows;

    write_csv(&work.join("samples.csv"), &samples)?;
    let svg = work.join("soak.svg");
    draw(&svg, &samples, &windows, options, rate)?;
    println!("chart: {}", svg.display());
    failures.extend(load_verdicts(&windows, rate, refresh_rate, options));
    failures.extend(verdicts(&samples, f64::from(options.minutes)));
    let report = json!({
        "minutes": options.minutes,
        "decks": options.decks,
        "peak_rps": peak,
        "rate_rps": rate,
        "refresh_rps": refresh_rate,
        "settings": SETTINGS.iter().map(|(name, value)| format!("{name}={value}")).collect::<Vec<_>>(),
        "samples": samples.iter().map(Sample::to_json).collect::<Vec<_>>(),
        "windows": windows.iter().map(Window::to_json).collect::<Vec<_>>(),
        "failures": failures,
    });
    let path = work.join("soak.json");
    fs::write(&path, serde_json::to_string_pretty(&report)?)
        .with_context(|| format!("writing {}", path.display()))?;
    println!(
        "samples: {} and {}",
        work.join("samples.csv").display(),
        path.display()
    );
    if !failures.is_empty() {
        bail!("the soak failed:\n  {}", failures.join("\n  "));
    }
    println!("\nsoak: everything stayed within its bound after the warm-up, and no request failed");
    Ok(())
}

/// Each lane alone at full concurrency; the mix's peak is the rate at which its shares cost the
/// server as much time as one lane's peak does (a harmonic mean weighted by the shares).
fn mixed_peak(oha: &Path, lanes: &[Lane], connections: u32) -> Result<f64> {
    let mut cost = 0.0;
    let mut shares = 0.0;
    for lane in lanes {
        let mut args = strings(&[
            "-c",
            &connections.to_string(),
            "-z",
            &format!("{PEAK_SECONDS}s"),
        ]);
        args.extend(lane.args.iter().cloned());
        let measured = run_oha(oha, &args)?;
        if measured.ok_share < 0.99 || measured.rate <= 0.0 {
            bail!(
                "the {} lane's peak: only {:.1}% of its requests answered 2xx",
                lane.name,
                measured.ok_share * 100.0
            );
        }
        println!(
            "peak of {:<8} {:>7.0} req/s (p99 {:.1} ms, {connections} connections, {PEAK_SECONDS} s)",
            lane.name, measured.rate, measured.p99_ms
        );
        cost += share(lane.name) / measured.rate;
        shares += share(lane.name);
    }
    let peak = shares / cost;
    println!("peak of the mix: {peak:.0} req/s");
    Ok(peak)
}

/// Runs `lane` at `rate` in windows of [`WINDOW_SECONDS`] until `time` after `started`.
fn drive_lane(
    oha: &Path,
    lane: &Lane,
    rate: f64,
    started: Instant,
    time: Duration,
    stop: &AtomicBool,
) -> Result<Vec<Window>> {
    let mut windows = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let left = time.saturating_sub(started.elapsed()).as_secs();
        if left == 0 {
            break;
        }
        let seconds = left.min(WINDOW_SECONDS);
        // -w: a request in flight at the window's end is waited for, not counted as aborted.
        let mut args = strings(&[
            "-c",
            LANE_CONNECTIONS,
            "-z",
            &format!("{seconds}s"),
            "-w",
            "-q",
            &format!("{:.0}", rate.max(1.0)),
        ]);
        args.extend(lane.args.iter().cloned());
        let measured = run_oha(oha, &args).with_context(|| format!("the {} lane", lane.name))?;
        windows.push(Window {
            lane: lane.name,
            minute: minutes(started),
            measured,
        });
    }
    Ok(windows)
}

fn minutes(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() / 60.0
}

/// Refreshes at `rate` a second until `time` after `started`, each refresh spending the last
/// refresh token and reading a deck list with the new access token once; a failure ends the
/// chain. Its windows count the refreshes.
fn refresh_chain(
    address: &str,
    client_id: &str,
    mut refresh_token: String,
    rate: f64,
    started: Instant,
    time: Duration,
    stop: &AtomicBool,
) -> Result<Vec<Window>> {
    let mut windows = Vec::new();
    let mut latencies: Vec<f64> = Vec::new();
    let mut window_start = Instant::now();
    let mut count = 0u64;
    while started.elapsed() < time && !stop.load(Ordering::Relaxed) {
        let sent = Instant::now();
        let tokens = lanes::refresh(address, client_id, &refresh_token)
            .with_context(|| format!("OAuth refresh {} failed", count + 1))?;
        latencies.push(sent.elapsed().as_secs_f64() * 1000.0);
        refresh_token = tokens.refresh;
        let (status, body) = get_with(
            address,
            &format!("{API}/decks?limit=1"),
            &format!("Authorization: Bearer {}", tokens.access),
        )?;
        if status != 200 {
            bail!("a read with the access token of refresh {count} answered {status}: {body}");
        }
        count += 1;
        if window_start.elapsed() >= Duration::from_secs(WINDOW_SECONDS) {
            windows.push(refresh_window(&mut latencies, window_start, started));
            window_start = Instant::now();
        }
        let due = started + Duration::from_secs_f64(count as f64 / rate);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
    }
    if !latencies.is_empty() {
        windows.push(refresh_window(&mut latencies, window_start, started));
    }
    Ok(windows)
}

/// The refreshes of one window (every one answered, or the chain would have ended).
fn refresh_window(latencies: &mut Vec<f64>, window_start: Instant, started: Instant) -> Window {
    latencies.sort_by(f64::total_cmp);
    let at = |quantile: f64| {
        let index = ((latencies.len() as f64 - 1.0) * quantile).round() as usize;
        latencies.get(index).copied().unwrap_or(f64::NAN)
    };
    let requests = latencies.len() as f64;
    let window = Window {
        lane: "refresh",
        minute: minutes(started),
        measured: Measured {
            requests,
            rate: requests / window_start.elapsed().as_secs_f64(),
            p50_ms: at(0.5),
            p99_ms: at(0.99),
            ok_share: 1.0,
            errors: 0.0,
        },
    };
    latencies.clear();
    window
}

/// Samples every [`SAMPLE_SECONDS`] until `time` after `started`.
fn sample(cluster: &Cluster, pid: u32, started: Instant, time: Duration) -> Result<Vec<Sample>> {
    let mut samples = Vec::new();
    let mut next = Instant::now();
    while started.elapsed() <= time {
        let status =
            fs::read_to_string(format!("/proc/{pid}/status")).context("the server is gone")?;
        let rss_kib: f64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
            .context("no VmRSS in /proc/<pid>/status")?;
        let open_files = fs::read_dir(format!("/proc/{pid}/fd"))?.count();
        let connections: f64 = query(
            cluster,
            "SELECT count(*) FROM pg_stat_activity WHERE datname = 'deckhand' \
             AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
        )?
        .parse()?;
        let tables = query(
            cluster,
            "SELECT relname || '|' || pg_total_relation_size(relid) || '|' || n_tup_del \
             FROM pg_stat_user_tables WHERE schemaname = 'public' ORDER BY relname",
        )?
        .lines()
        .filter_map(|line| {
            let mut fields = line.split('|');
            let name = fields.next()?.to_owned();
            let bytes: f64 = fields.next()?.parse().ok()?;
            let deleted: f64 = fields.next()?.parse().ok()?;
            Some(Table {
                name,
                mib: bytes / MIB,
                deleted,
            })
        })
        .collect();
        samples.push(Sample {
            minute: minutes(started),
            rss_mib: rss_kib / 1024.0,
            open_files: open_files as f64,
            connections,
            tables,
        });
        next += Duration::from_secs(SAMPLE_SECONDS);
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
    }
    Ok(samples)
}

impl Sample {
    fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|table| table.name == name)
    }

    fn table_mib(&self, name: &str) -> f64 {
        self.table(name).map_or(f64::NAN, |table| table.mib)
    }

    fn to_json(&self) -> Value {
        json!({
            "minute": self.minute,
            "rss_mib": self.rss_mib,
            "open_files": self.open_files,
            "db_connections": self.connections,
            "tables": self.tables.iter().map(|table| {
                json!({"name": table.name, "mib": table.mib, "deleted_rows": table.deleted})
            }).collect::<Vec<_>>(),
        })
    }
}

impl Window {
    fn to_json(&self) -> Value {
        let measured = &self.measured;
        json!({
            "lane": self.lane,
            "minute": self.minute,
            "requests": measured.requests,
            "rps": measured.rate,
            "p50_ms": measured.p50_ms,
            "p99_ms": measured.p99_ms,
            "errors": measured.errors,
        })
    }
}

/// Errors of any lane fail the run; rates and latencies are printed.
fn load_verdicts(
    windows: &[Window],
    rate: f64,
    refresh_rate: f64,
    options: &Options,
) -> Vec<String> {
    let warm = f64::from(options.minutes) * WARM_UP;
    println!(
        "\n{:<8} {:>9} {:>9} {:>13} {:>9} {:>8}",
        "lane", "goal/s", "req/s", "p99 ms (max)", "requests", "errors"
    );
    let mut failures = Vec::new();
    for (name, lane_share) in MIX {
        let lane: Vec<&Window> = windows.iter().filter(|w| w.lane == name).collect();
        let after: Vec<&&Window> = lane.iter().filter(|w| w.minute > warm).collect();
        let requests: f64 = lane.iter().map(|w| w.measured.requests).sum();
        let errors: f64 = lane.iter().map(|w| w.measured.errors).sum();
        let mean = |values: Vec<f64>| values.iter().sum::<f64>() / values.len().max(1) as f64;
        let achieved = mean(after.iter().map(|w| w.measured.rate).collect());
        let p99 = mean(after.iter().map(|w| w.measured.p99_ms).collect());
        let p99_max = after.iter().map(|w| w.measured.p99_ms).fold(0.0, f64::max);
        let goal = if name == "refresh" {
            refresh_rate
        } else {
            rate * lane_share
        };
        println!(
            "{name:<8} {goal:>9.0} {achieved:>9.1} {:>13} {requests:>9.0} {errors:>8.0}",
            format!("{p99:.1} ({p99_max:.0})")
        );
        if errors > 0.0 {
            failures.push(format!(
                "the {name} lane had {errors:.0} errors in {requests:.0} requests"
            ));
        }
    }
    failures
}

/// The measures after the warm-up, each printed; the ones that grew past their bound come back
/// as failures.
fn verdicts(samples: &[Sample], minutes: f64) -> Vec<String> {
    let warm = minutes * WARM_UP;
    let reference_end = warm + minutes * REFERENCE;
    let half = minutes / 2.0;
    let window = |from: f64, to: f64| -> Vec<&Sample> {
        samples
            .iter()
            .filter(|s| s.minute >= from && s.minute < to)
            .collect()
    };
    let reference = window(warm, reference_end);
    let late = window(half, f64::INFINITY);
    if reference.is_empty() || late.len() < 2 {
        return vec![format!(
            "too few samples to judge: {} after the warm-up, {} in the second half",
            reference.len(),
            late.len()
        )];
    }
    println!(
        "\nflat after the warm-up? The mean of {warm:.1}-{reference_end:.1} min against the \
         second half's ({half:.1}-{minutes:.0} min) mean and highest sample:"
    );
    let mut failures = Vec::new();
    let mut unchanged = 0;
    let mut check = |name: &str, unit: &str, bound: &Bound, measure: &dyn Fn(&Sample) -> f64| {
        let mean = |window: &[&Sample]| {
            window.iter().map(|s| measure(s)).sum::<f64>() / window.len() as f64
        };
        let then = mean(&reference);
        let now = mean(&late);
        let highest = late.iter().map(|s| measure(s)).fold(f64::MIN, f64::max);
        let allowed = (then * bound.share).max(bound.floor);
        let ok = now <= then + allowed && highest <= then + 2.0 * allowed;
        let pruned = PRUNED.iter().any(|table| name.ends_with(table));
        // Tables the load does not touch (the catalog, partners) are only counted.
        if ok && !pruned && name.starts_with("table ") && then == highest && now == then {
            unchanged += 1;
            return;
        }
        println!(
            "  {name:<34} {then:>9.2} -> {now:>9.2} (max {highest:>9.2}) {unit:<4} \
             allowance {allowed:.1}: {}",
            if ok { "flat" } else { "GREW" }
        );
        if !ok {
            failures.push(format!(
                "{name} grew after the warm-up: {then:.2} {unit} then, {now:.2} on average and \
                 {highest:.2} at most in the second half (allowed: {allowed:.2} more on average, \
                 twice that at most)"
            ));
        }
    };
    check("server RSS", "MiB", &RSS_BOUND, &|s| s.rss_mib);
    check("server open files", "", &FILES_BOUND, &|s| s.open_files);
    check("database connections", "", &CONNECTIONS_BOUND, &|s| {
        s.connections
    });
    let names: Vec<String> = samples
        .last()
        .map(|s| s.tables.iter().map(|table| table.name.clone()).collect())
        .unwrap_or_default();
    for name in names
        .iter()
        .filter(|name| !KEPT_LONGER.contains(&name.as_str()))
    {
        check(&format!("table {name}"), "MiB", &TABLE_BOUND, &|s| {
            s.table(name).map_or(0.0, |table| table.mib)
        });
    }
    println!("  {unchanged} other tables: unchanged");
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return failures;
    };
    println!("kept longer than a run by design (not bounded), over the whole load:");
    for name in KEPT_LONGER {
        let (start, end) = (first.table_mib(name), last.table_mib(name));
        println!(
            "  {name:<22} {start:>8.2} -> {end:>8.2} MiB, {:.2} MiB a minute",
            (end - start) / (last.minute - first.minute).max(f64::EPSILON)
        );
    }
    println!("rows pruned during the load (pg_stat_user_tables.n_tup_del):");
    for table in &last.tables {
        let before = first.table(&table.name).map_or(0.0, |t| t.deleted);
        let deleted = table.deleted - before;
        if deleted > 0.0 {
            println!("  {:<22} {deleted:>9.0}", table.name);
        }
    }
    failures
}

fn write_csv(path: &Path, samples: &[Sample]) -> Result<()> {
    let mut text = String::from("minute,rss_mib,open_files,db_connections");
    let names: Vec<String> = samples
        .first()
        .map(|s| s.tables.iter().map(|table| table.name.clone()).collect())
        .unwrap_or_default();
    for name in &names {
        write!(text, ",{name}_mib,{name}_deleted_rows")?;
    }
    text.push('\n');
    for sample in samples {
        write!(
            text,
            "{:.3},{:.2},{},{}",
            sample.minute, sample.rss_mib, sample.open_files, sample.connections
        )?;
        for name in &names {
            let (mib, deleted) = sample
                .table(name)
                .map_or((f64::NAN, f64::NAN), |table| (table.mib, table.deleted));
            write!(text, ",{mib:.3},{deleted}")?;
        }
        text.push('\n');
    }
    fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

fn draw(
    path: &Path,
    samples: &[Sample],
    windows: &[Window],
    options: &Options,
    rate: f64,
) -> Result<()> {
    let line = |name: &str, measure: &dyn Fn(&Sample) -> f64| Series {
        name: name.to_owned(),
        points: samples.iter().map(|s| (s.minute, measure(s))).collect(),
    };
    let lane_line = |name: &'static str, measure: &dyn Fn(&Measured) -> f64| Series {
        name: name.to_owned(),
        points: windows
            .iter()
            .filter(|w| w.lane == name)
            .map(|w| (w.minute, measure(&w.measured)))
            .collect(),
    };
    // The largest of the other bounded tables by their last size: those the load rewrites.
    let mut rewritten: Vec<Table> = samples.last().map(|s| s.tables.clone()).unwrap_or_default();
    rewritten.retain(|table| {
        !KEPT_LONGER.contains(&table.name.as_str()) && !PRUNED.contains(&table.name.as_str())
    });
    rewritten.sort_by(|a, b| b.mib.total_cmp(&a.mib));
    let tables = |names: &mut dyn Iterator<Item = &str>| -> Vec<Series> {
        names
            .map(|name| line(name, &|s| s.table_mib(name)))
            .collect()
    };
    let mut errors: Vec<(f64, f64)> = Vec::new();
    for window in windows {
        match errors
            .iter_mut()
            .find(|(minute, _)| (*minute - window.minute).abs() < 0.05)
        {
            Some((_, count)) => *count += window.measured.errors,
            None => errors.push((window.minute, window.measured.errors)),
        }
    }
    errors.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rates: Vec<Series> = MIX
        .iter()
        .map(|(name, _)| lane_line(name, &|m| m.rate))
        .collect();
    rates.push(Series {
        name: "errors (all lanes, per window)".to_owned(),
        points: errors,
    });
    chart::write_lines_svg(
        path,
        &format!(
            "cargo xtask soak: {} min at {rate:.0} req/s, {} decks (PostgreSQL)",
            options.minutes, options.decks
        ),
        "minutes since the load started",
        &[
            Panel {
                title: "Server memory (RSS)".to_owned(),
                unit: "MiB".to_owned(),
                series: vec![line("RSS", &|s| s.rss_mib)],
            },
            Panel {
                title: "Server open files, and its database connections".to_owned(),
                unit: "count".to_owned(),
                series: vec![
                    line("open files", &|s| s.open_files),
                    line("database connections", &|s| s.connections),
                ],
            },
            Panel {
                title: "Tables the pruning task keeps bounded (with indexes and TOAST)".to_owned(),
                unit: "MiB".to_owned(),
                series: tables(&mut PRUNED.into_iter()),
            },
            Panel {
                title: "The largest other tables: rows the load rewrites in place".to_owned(),
                unit: "MiB".to_owned(),
                series: tables(&mut rewritten.iter().take(3).map(|t| t.name.as_str())),
            },
            Panel {
                title: "Tables that keep what the load writes longer than a run".to_owned(),
                unit: "MiB".to_owned(),
                series: tables(&mut KEPT_LONGER.into_iter()),
            },
            Panel {
                title: format!("Requests answered 2xx per second, per {WINDOW_SECONDS} s window"),
                unit: "req/s".to_owned(),
                series: rates,
            },
            Panel {
                title: "p99 latency per window".to_owned(),
                unit: "ms".to_owned(),
                series: MIX
                    .iter()
                    .map(|(name, _)| lane_line(name, &|m| m.p99_ms))
                    .collect(),
            },
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Twenty minutes sampled every five seconds, with `rss` over time and `views` as the
    /// size of deck_views.
    fn run(rss: impl Fn(f64) -> f64, views: impl Fn(f64) -> f64) -> Vec<Sample> {
        (0..=240)
            .map(|step| {
                let minute = f64::from(step) / 12.0;
                let table = |name: &str, mib: f64| Table {
                    name: name.to_owned(),
                    mib,
                    deleted: 0.0,
                };
                Sample {
                    minute,
                    rss_mib: rss(minute),
                    open_files: 40.0 + f64::from(step % 3) * 10.0,
                    connections: 11.0,
                    tables: vec![
                        table("decks", 30.0),
                        table("deck_versions", 10.0 + minute),
                        table("deck_views", views(minute)),
                    ],
                }
            })
            .collect()
    }

    #[test]
    fn flat_measures_pass_and_tables_kept_longer_may_grow() {
        assert_eq!(
            verdicts(&run(|_| 60.0, |_| 0.5), 20.0),
            Vec::<String>::new()
        );
    }

    #[test]
    fn memory_growing_after_the_warm_up_fails() {
        let failures = verdicts(&run(|minute| 60.0 + minute, |_| 0.5), 20.0);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].starts_with("server RSS grew"), "{failures:?}");
    }

    #[test]
    fn a_small_table_growing_fails_on_its_own() {
        let failures = verdicts(&run(|_| 60.0, |minute| 0.5 + minute / 4.0), 20.0);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(
            failures[0].starts_with("table deck_views grew"),
            "{failures:?}"
        );
    }

    #[test]
    fn a_spike_in_the_second_half_fails_even_if_the_mean_holds() {
        let spike = |minute: f64| {
            if (15.0..15.1).contains(&minute) {
                90.0
            } else {
                60.0
            }
        };
        let failures = verdicts(&run(spike, |_| 0.5), 20.0);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].starts_with("server RSS grew"), "{failures:?}");
    }

    #[test]
    fn growth_within_the_warm_up_is_not_counted() {
        let rss = |minute: f64| {
            if minute < 5.0 {
                20.0 + 8.0 * minute
            } else {
                60.0
            }
        };
        assert_eq!(verdicts(&run(rss, |_| 0.5), 20.0), Vec::<String>::new());
    }

    #[test]
    fn a_run_too_short_to_judge_fails() {
        let samples = run(|_| 60.0, |_| 0.5);
        let failures = verdicts(&samples[..10], 20.0);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].starts_with("too few samples"), "{failures:?}");
    }
}
