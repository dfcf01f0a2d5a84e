//! The two feed phases: a writer and a reader, alone and then beside 600 held feed waits, with
//! what the database did meanwhile (transactions, statements) and the CPU each process spent.

use std::fs;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

use super::{Ctx, Latency, People, http, number, quiet, verdict};
use crate::cpu;
use crate::local::{self, psql, query};

/// How long the writer and the reader run in each phase.
const PHASE: Duration = Duration::from_secs(15);
/// Ten PATCHes a second.
const PATCH_EVERY: Duration = Duration::from_millis(100);
/// Fifty reads a second, the same number in both phases.
const READ_EVERY: Duration = Duration::from_millis(20);
/// Long enough for every backend of the server to have flushed its transaction counts to
/// `pg_stat_database` (PostgreSQL 15 flushes an idle backend's after 10 s).
const SETTLE: Duration = Duration::from_secs(11);
/// Held feed requests per waiting user: the most one caller may hold.
const WAITS_PER_USER: usize = 4;
/// The feed's longest wait, in seconds; the client waits a little longer for the answer.
const FEED_WAIT: u32 = 30;
const FEED_READ_TIMEOUT: Duration = Duration::from_secs(35);
/// An empty feed answer quicker than this was not held: a wait refused past a bound.
const ANSWERED_AT_ONCE: Duration = Duration::from_secs(1);
/// How long all waits may take to be held, as the server's `/metrics` counts them.
const HELD_WITHIN: Duration = Duration::from_secs(60);
/// The stack of a waiting thread: a blocking call and a small JSON page.
const WAITER_STACK: usize = 256 * 1024;

/// One phase's figures.
pub struct Phase {
    pub patches: usize,
    pub detail: Latency,
    pub patch: Latency,
    /// Requests of the writer and the reader that failed or answered other than expected.
    pub failed: usize,
    /// `xact_commit + xact_rollback` of the server's database over the phase, and of those
    /// the rollbacks and the sessions opened.
    pub database: DatabaseCounts,
    /// `pg_stat_statements` calls on the server's database over the phase.
    pub statements: f64,
    pub cpu: CpuSpent,
    /// What the held feed requests were answered over the phase; `None` without waits.
    pub feed: Option<FeedSnapshot>,
    /// Feed waits the server held when the phase started.
    pub held: Option<u64>,
}

impl Phase {
    pub fn transactions_per_patch(&self) -> f64 {
        self.database.transactions() / self.patches.max(1) as f64
    }

    fn statements_per_patch(&self) -> f64 {
        self.statements / self.patches.max(1) as f64
    }

    pub fn json(&self) -> Value {
        json!({
            "patches": self.patches,
            "detail": self.detail.json(),
            "patch": self.patch.json(),
            "failed": self.failed,
            "transactions": self.database.transactions(),
            "rollbacks": self.database.rollbacks,
            "sessions_opened": self.database.sessions,
            "transactions_per_patch": self.transactions_per_patch(),
            "statements": self.statements,
            "statements_per_patch": self.statements_per_patch(),
            "cpu_seconds": {
                "server": self.cpu.server,
                "database": self.cpu.database,
                "load_generator": self.cpu.load,
            },
            "feed_answers": self.feed.map(|feed| json!({
                "with_events": feed.with_events,
                "empty_at_once": feed.empty_at_once,
                "empty_after_waiting": feed.empty_later,
                "failed": feed.failed,
            })),
            "waits_held_at_start": self.held,
        })
    }
}

/// CPU seconds over a phase: the server, the database server (the postmaster and every
/// child), and this process, which plays every client.
#[derive(Clone, Copy)]
pub struct CpuSpent {
    server: f64,
    database: f64,
    load: f64,
}

impl CpuSpent {
    fn now(ctx: &Ctx<'_>) -> Result<Self> {
        Ok(Self {
            server: cpu::process_seconds(ctx.server)?,
            database: cpu::family_seconds(ctx.postmaster)?,
            load: cpu::process_seconds(std::process::id())?,
        })
    }

    fn since(self, before: Self) -> Self {
        Self {
            server: self.server - before.server,
            database: self.database - before.database,
            load: self.load - before.load,
        }
    }
}

/// Quiet, then the writer and the reader for [`PHASE`] (beside `waiters` if any), then quiet
/// again before the database's counts are read.
pub fn phase(ctx: &Ctx<'_>, people: &People, waiters: Option<&Waiters>) -> Result<Phase> {
    let label = if waiters.is_some() {
        "600 waits"
    } else {
        "no waits"
    };
    // Before the quiet: `/metrics` reads the webhook queue, a transaction of its own.
    let held = waiters.map(|_| held_waits(ctx)).transpose()?;
    quiet("before the phase, so the count starts settled", SETTLE);
    let database = DatabaseCounts::now(ctx)?;
    number(ctx.cluster, "SELECT 1 FROM pg_stat_statements_reset()")?;
    let feed = waiters.map(|waiters| waiters.counts.snapshot());
    let cpu = CpuSpent::now(ctx)?;
    println!(
        "  phase \"{label}\": {} s of PATCHes and reads",
        PHASE.as_secs()
    );
    let (writes, reads) = write_and_read(ctx, people, label)?;
    let cpu = CpuSpent::now(ctx)?.since(cpu);
    let feed = waiters
        .zip(feed)
        .map(|(waiters, before)| waiters.counts.snapshot().since(before));
    quiet("after the phase, so every transaction is counted", SETTLE);
    Ok(Phase {
        patches: writes.ok.len(),
        detail: Latency::of(reads.ok),
        patch: Latency::of(writes.ok),
        failed: writes.failed + reads.failed,
        database: DatabaseCounts::now(ctx)?.since(database),
        statements: statements(ctx, label)?,
        cpu,
        feed,
        held,
    })
}

/// What `pg_stat_database` counts of the server's database.
#[derive(Clone, Copy)]
pub struct DatabaseCounts {
    commits: f64,
    rollbacks: f64,
    sessions: f64,
}

impl DatabaseCounts {
    fn now(ctx: &Ctx<'_>) -> Result<Self> {
        let row = psql(
            ctx.cluster,
            "postgres",
            &[
                "-A",
                "-t",
                "-c",
                "SELECT xact_commit, xact_rollback, sessions FROM pg_stat_database \
                 WHERE datname = 'deckhand'",
            ],
        )?;
        let fields: Vec<f64> = row
            .trim()
            .split('|')
            .filter_map(|field| field.parse().ok())
            .collect();
        match fields[..] {
            [commits, rollbacks, sessions] => Ok(Self {
                commits,
                rollbacks,
                sessions,
            }),
            _ => bail!("pg_stat_database gave {row:?}"),
        }
    }

    fn since(self, before: Self) -> Self {
        Self {
            commits: self.commits - before.commits,
            rollbacks: self.rollbacks - before.rollbacks,
            sessions: self.sessions - before.sessions,
        }
    }

    pub fn transactions(self) -> f64 {
        self.commits + self.rollbacks
    }
}

/// The statements the server's database ran since the last reset, the counting's own left
/// out; each statement's calls go to `<work>/greedy-statements-<label>.txt`, most first.
fn statements(ctx: &Ctx<'_>, label: &str) -> Result<f64> {
    const OF_THE_SERVER: &str = "FROM pg_stat_statements \
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'deckhand') \
         AND query NOT LIKE '%pg_stat_statements%'";
    let each = psql(
        ctx.cluster,
        "postgres",
        &[
            "-A",
            "-t",
            "-c",
            &format!(
                "SELECT calls, regexp_replace(query, '\\s+', ' ', 'g') {OF_THE_SERVER} \
                 ORDER BY calls DESC"
            ),
        ],
    )?;
    let path = ctx
        .work
        .join(format!("greedy-statements-{}.txt", label.replace(' ', "-")));
    fs::write(&path, each).with_context(|| format!("writing {}", path.display()))?;
    number(
        ctx.cluster,
        &format!("SELECT coalesce(sum(calls), 0) {OF_THE_SERVER}"),
    )
}

/// Durations of the requests that answered as expected, and how many did not.
#[derive(Default)]
struct Samples {
    ok: Vec<Duration>,
    failed: usize,
}

impl Samples {
    fn record(&mut self, started: Instant, answered: Result<(u16, String)>, expected: u16) {
        match answered {
            Ok((status, _)) if status == expected => self.ok.push(started.elapsed()),
            _ => self.failed += 1,
        }
    }
}

/// The writer's PATCHes and the reader's reads, side by side, each at its own pace.
fn write_and_read(ctx: &Ctx<'_>, people: &People, label: &str) -> Result<(Samples, Samples)> {
    let start = Instant::now();
    let deck = ctx.game_url(&format!("/decks/{}", people.deck));
    thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let agent = http::agent(http::SHORT);
            let header = http::bearer(&people.writer);
            let mut samples = Samples::default();
            paced(start, PATCH_EVERY, |n| {
                let body = format!(r#"{{"name":"Greedy neighbours, {label} {n}"}}"#);
                let started = Instant::now();
                let answer = http::send(&agent, "PATCH", &deck, &header, Some(&body));
                samples.record(started, answer, 200);
            });
            samples
        });
        let reader = scope.spawn(|| {
            let agent = http::agent(http::SHORT);
            let header = http::bearer(&people.reader);
            let mut samples = Samples::default();
            paced(start, READ_EVERY, |_| {
                let started = Instant::now();
                samples.record(
                    started,
                    http::send(&agent, "GET", &deck, &header, None),
                    200,
                );
            });
            samples
        });
        let joined = |handle: thread::ScopedJoinHandle<'_, Samples>| {
            handle
                .join()
                .map_err(|_| anyhow!("a client thread panicked"))
        };
        Ok((joined(writer)?, joined(reader)?))
    })
}

/// Calls `each` with 0, 1, 2, ... at `start`, `start + every`, ... for [`PHASE`]; when a call
/// runs late, the next one follows at once, so every phase makes the same number.
fn paced(start: Instant, every: Duration, mut each: impl FnMut(u32)) {
    let calls = (PHASE.as_millis() / every.as_millis()) as u32;
    for n in 0..calls {
        if let Some(early) = (start + every * n).checked_duration_since(Instant::now()) {
            thread::sleep(early);
        }
        each(n);
    }
}

/// What the held feed requests were answered, counted as they come.
#[derive(Default)]
pub struct FeedCounts {
    with_events: AtomicU64,
    empty_at_once: AtomicU64,
    empty_later: AtomicU64,
    failed: AtomicU64,
}

#[derive(Clone, Copy)]
pub struct FeedSnapshot {
    pub with_events: u64,
    pub empty_at_once: u64,
    pub empty_later: u64,
    pub failed: u64,
}

impl FeedCounts {
    fn snapshot(&self) -> FeedSnapshot {
        FeedSnapshot {
            with_events: self.with_events.load(Ordering::Relaxed),
            empty_at_once: self.empty_at_once.load(Ordering::Relaxed),
            empty_later: self.empty_later.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
        }
    }

    fn count(&self, answer: Result<(String, usize)>, took: Duration) -> Option<String> {
        let counter = match &answer {
            Ok((_, 0)) if took < ANSWERED_AT_ONCE => &self.empty_at_once,
            Ok((_, 0)) => &self.empty_later,
            Ok(_) => &self.with_events,
            Err(_) => &self.failed,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        answer.ok().map(|(cursor, _)| cursor)
    }
}

impl FeedSnapshot {
    fn since(self, before: Self) -> Self {
        Self {
            with_events: self.with_events - before.with_events,
            empty_at_once: self.empty_at_once - before.empty_at_once,
            empty_later: self.empty_later - before.empty_later,
            failed: self.failed - before.failed,
        }
    }
}

/// 150 users × 4 threads, each holding a feed wait and polling again with every page's cursor.
pub struct Waiters {
    stop: Arc<AtomicBool>,
    counts: Arc<FeedCounts>,
    threads: Vec<JoinHandle<()>>,
}

impl Waiters {
    /// Starts every waiting thread from the feed's head, and returns once the server holds
    /// them all (or after [`HELD_WITHIN`], saying how many it holds).
    pub fn start(ctx: &Ctx<'_>, people: &People) -> Result<Self> {
        let head = head_cursor(ctx)?;
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(FeedCounts::default());
        let mut threads = Vec::new();
        for token in &people.waiters {
            for _ in 0..WAITS_PER_USER {
                let waiter = Waiter {
                    events: ctx.game_url("/events"),
                    header: http::bearer(token),
                    stop: stop.clone(),
                    counts: counts.clone(),
                };
                let head = head.clone();
                threads.push(
                    thread::Builder::new()
                        .stack_size(WAITER_STACK)
                        .spawn(move || waiter.run(&head))
                        .context("starting a waiting thread")?,
                );
            }
        }
        let waiters = Self {
            stop,
            counts,
            threads,
        };
        waiters.until_held(ctx)?;
        Ok(waiters)
    }

    fn until_held(&self, ctx: &Ctx<'_>) -> Result<()> {
        let all = self.threads.len() as u64;
        let deadline = Instant::now() + HELD_WITHIN;
        loop {
            let held = held_waits(ctx)?;
            if held >= all || Instant::now() > deadline {
                println!("  {held} of {all} feed waits held");
                return Ok(());
            }
            thread::sleep(Duration::from_millis(250));
        }
    }

    /// Stops every waiting thread: the flag, then one PATCH that wakes every wait, so each
    /// thread sees the flag at once instead of after its wait's 30 s.
    pub fn stop(mut self, ctx: &Ctx<'_>, people: &People) -> Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        http::expect(
            &http::agent(http::SHORT),
            "PATCH",
            &ctx.game_url(&format!("/decks/{}", people.deck)),
            &http::bearer(&people.writer),
            Some(r#"{"name":"Greedy neighbours, the waits end"}"#),
            200,
        )?;
        for thread in std::mem::take(&mut self.threads) {
            thread
                .join()
                .map_err(|_| anyhow!("a waiting thread panicked"))?;
        }
        Ok(())
    }
}

impl Drop for Waiters {
    /// Waiters dropped on an error stop after their current wait (35 s at most), not never.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// One waiting thread's client.
struct Waiter {
    /// The feed's URL.
    events: String,
    header: (&'static str, String),
    stop: Arc<AtomicBool>,
    counts: Arc<FeedCounts>,
}

impl Waiter {
    fn run(&self, head: &str) {
        let agent = http::agent(FEED_READ_TIMEOUT);
        // The first cursor from a request without `wait`, as a client starts.
        let first = self.page(&agent, &format!("{}?after={head}", self.events));
        let Some(mut cursor) = self.counts.count(first, Duration::MAX) else {
            return;
        };
        while !self.stop.load(Ordering::Relaxed) {
            let started = Instant::now();
            let url = format!("{}?after={cursor}&wait={FEED_WAIT}", self.events);
            let answer = self.page(&agent, &url);
            match self.counts.count(answer, started.elapsed()) {
                Some(next) => cursor = next,
                None => thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    /// One feed page: its `next_cursor` and how many events it listed.
    fn page(&self, agent: &ureq::Agent, url: &str) -> Result<(String, usize)> {
        let page = http::expect(agent, "GET", url, &self.header, None, 200)?;
        let events = page["data"].as_array().map_or(0, Vec::len);
        Ok((http::text(&page, "next_cursor")?, events))
    }
}

/// The cursor of the feed's newest event (the feed's own encoding, as `check_plans` makes
/// one): without it, each client would page through every seeded event first.
fn head_cursor(ctx: &Ctx<'_>) -> Result<String> {
    query(
        ctx.cluster,
        "SELECT rtrim(translate(encode(convert_to('e1:' || last_sequence, 'UTF8'), 'base64'), \
         '+/', '-_'), '=') FROM event_log",
    )
}

/// The feed waits the server holds now (`deckhand_feed_waits_held` of `/metrics`).
fn held_waits(ctx: &Ctx<'_>) -> Result<u64> {
    let (status, body) = local::get(ctx.address, "/metrics")?;
    body.lines()
        .filter(|_| status == 200)
        .find_map(|line| line.strip_prefix("deckhand_feed_waits_held "))
        .and_then(|value| value.trim().parse::<f64>().ok())
        .map(|value| value as u64)
        .with_context(|| format!("no deckhand_feed_waits_held in /metrics ({status})"))
}

/// The table of the two phases, in Markdown.
pub fn markdown(
    quiet: &Phase,
    waiting: &Phase,
    detail_met: bool,
    transactions_met: bool,
) -> String {
    let both = |cell: &dyn Fn(&Phase) -> String| [cell(quiet), cell(waiting)];
    let mut rows: Vec<(String, [String; 2], String)> = vec![
        (
            "PATCHes answered (10 a second, 15 s)".into(),
            both(&|phase| phase.patches.to_string()),
            String::new(),
        ),
        (
            "detail reads (50 a second)".into(),
            both(&|phase| phase.detail.count.to_string()),
            String::new(),
        ),
        (
            "detail p50 / p99 ms".into(),
            both(&|phase| phase.detail.text()),
            format!("median within 2× of no waits: {}", verdict(detail_met)),
        ),
        (
            "transactions per PATCH".into(),
            both(&|phase| format!("{:.2}", phase.transactions_per_patch())),
            format!("within 1 of no waits: {}", verdict(transactions_met)),
        ),
        (
            "rollbacks; sessions opened".into(),
            both(&|phase| {
                format!(
                    "{:.0} / {:.0}",
                    phase.database.rollbacks, phase.database.sessions
                )
            }),
            String::new(),
        ),
        (
            "statements per PATCH".into(),
            both(&|phase| format!("{:.2}", phase.statements_per_patch())),
            String::new(),
        ),
        (
            "PATCH p50 / p99 ms".into(),
            both(&|phase| phase.patch.text()),
            String::new(),
        ),
        (
            "CPU s: server / database / clients".into(),
            both(&|phase| {
                let cpu = phase.cpu;
                format!("{:.1} / {:.1} / {:.1}", cpu.server, cpu.database, cpu.load)
            }),
            String::new(),
        ),
        (
            "failed PATCHes and reads".into(),
            both(&|phase| phase.failed.to_string()),
            String::new(),
        ),
    ];
    rows.push(feed_row(waiting));
    let mut text = "| greedy neighbours: feed waits | no waits | 600 waits held | goal |\n\
                    |---|---|---|---|\n"
        .to_owned();
    for (name, [a, b], goal) in rows {
        text.push_str(&format!("| {name} | {a} | {b} | {goal} |\n"));
    }
    text
}

fn feed_row(waiting: &Phase) -> (String, [String; 2], String) {
    let answers = waiting.feed.map_or("-".to_owned(), |feed| {
        format!(
            "{} / {} / {} / {}",
            feed.with_events, feed.empty_at_once, feed.empty_later, feed.failed
        )
    });
    (
        format!(
            "feed answers: with events / empty at once / empty after waiting / failed \
             (waits held at the start: {})",
            waiting.held.map_or("-".to_owned(), |held| held.to_string())
        ),
        ["-".to_owned(), answers],
        String::new(),
    )
}
