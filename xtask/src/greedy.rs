//! The greedy-neighbours scenario of `cargo xtask loadtest` (issue 41; contract "Events" and
//! "Webhooks", the "Fair share" bullets): what 600 held feed waits and a hanging webhook
//! endpoint cost everyone else, on this tree's server. Run alone on a small seed with
//! `cargo xtask loadtest --decks 10000 --greedy-only`, and last in a full load test.
//!
//! One server, as the load test starts it, with loopback webhook targets allowed and a 3 s
//! attempt timeout. Users and credentials are made with `deckhand admin`, as an operator would.
//! Then, each phase 15 s long and framed by 11 s of quiet so that PostgreSQL has flushed every
//! backend's transaction counts (`pg_stat_database` lags up to 10 s behind an idle backend):
//! - **no waits**: a writer PATCHes its public deck 10 times a second; a reader reads that
//!   deck's detail 50 times a second, at a fixed pace so that both phases make as many reads
//!   and their transactions per PATCH compare;
//! - **600 waits**: the same, beside 150 users holding 4 feed waits each (`wait=30`, polling
//!   again with each page's cursor: every PATCH wakes every wait);
//! - **webhooks**: a partner whose endpoint accepts connections and never answers gets 400
//!   deliveries queued; another partner pings its own endpoint, which answers at once: how long
//!   each ping takes to arrive, and beforehand the same without the hanging endpoint.
//!
//! Everything listens and connects on 127.0.0.1 only.

mod hooks;
mod load;

use std::fs;
use std::path::Path;
use std::process::{Child, Command};
use std::thread;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use serde_json::{Value, json};

use crate::local::{API, psql, wait_for_health};
use crate::pg::Cluster;

pub use hooks::Hooks;
pub use load::Phase;

/// `deckhand <args>` on the scenario's database; its stdout.
pub type Admin<'a> = dyn Fn(&[&str]) -> Result<String> + Sync + 'a;

/// What the load test hands over: its cluster, and its server not yet started.
pub struct Scenario<'a> {
    pub cluster: &'a Cluster,
    /// `deckhand serve` as the load test starts it, on the seeded database.
    pub serve: Command,
    /// Where `serve` listens (`host:port`).
    pub address: &'a str,
    pub admin: &'a Admin<'a>,
    /// Where the server's log (`server-greedy.log`) and the statements of each phase
    /// (`greedy-statements-*.txt`) go.
    pub work: &'a Path,
}

/// The API's root, where the webhooks live (games are below it: [`API`]).
const ROOT: &str = "/api/public/v1";
/// One webhook attempt's time (`DECKHAND_WEBHOOK_TIMEOUT_MS`).
const ATTEMPT_TIMEOUT_MS: u64 = 3000;
/// The contract's goals.
const DETAIL_MEDIAN_FACTOR: f64 = 2.0;
const EXTRA_TRANSACTIONS_PER_PATCH: f64 = 1.0;
const PING_ARRIVAL_MS: f64 = 1000.0;
const IN_FLIGHT_PER_ENDPOINT: usize = 2;

/// The running scenario's server and database.
struct Ctx<'a> {
    cluster: &'a Cluster,
    admin: &'a Admin<'a>,
    address: &'a str,
    work: &'a Path,
    /// `http://<address>`.
    base: String,
    server: u32,
    postmaster: u32,
}

impl Ctx<'_> {
    /// The URL of `path` under the game's API ([`API`]).
    fn game_url(&self, path: &str) -> String {
        format!("{}{API}{path}", self.base)
    }

    fn root_url(&self, path: &str) -> String {
        format!("{}{ROOT}{path}", self.base)
    }
}

/// The scenario's users: their PATs, and the writer's public deck.
struct People {
    writer: String,
    reader: String,
    waiters: Vec<String>,
    deck: String,
}

const WRITER: &str = "greedy_writer";
const READER: &str = "greedy_reader";
const WAITING_USERS: usize = 150;
/// Threads making the waiting users, each a few `deckhand admin` runs.
const ADMIN_THREADS: usize = 4;

/// Every figure of one run.
pub struct Figures {
    pub quiet: Phase,
    pub waiting: Phase,
    pub hooks: Hooks,
}

pub fn run(scenario: Scenario<'_>) -> Result<Figures> {
    let Scenario {
        cluster,
        mut serve,
        address,
        admin,
        work,
    } = scenario;
    let log = work.join("server-greedy.log");
    let mut server = serve
        .env("DECKHAND_WEBHOOK_ALLOW_PRIVATE", "true")
        .env(
            "DECKHAND_WEBHOOK_TIMEOUT_MS",
            ATTEMPT_TIMEOUT_MS.to_string(),
        )
        .stderr(fs::File::create(&log)?)
        .spawn()
        .context("starting the server")?;
    let result = started(&mut server, cluster, admin, address, work);
    // The server is ours: stop exactly it.
    let _ = server.kill();
    let _ = server.wait();
    result.with_context(|| format!("the server's log is {}", log.display()))
}

fn started(
    server: &mut Child,
    cluster: &Cluster,
    admin: &Admin<'_>,
    address: &str,
    work: &Path,
) -> Result<Figures> {
    wait_for_health(server, address)?;
    let ctx = Ctx {
        cluster,
        admin,
        address,
        work,
        base: format!("http://{address}"),
        server: server.id(),
        postmaster: cluster
            .postmaster_pid()
            .context("the cluster's postmaster.pid is unreadable")?,
    };
    drive(&ctx)
}

fn drive(ctx: &Ctx<'_>) -> Result<Figures> {
    println!("\n== greedy neighbours (issue 41)");
    // Statements are counted from the `postgres` database, so counting adds no transaction
    // to the one measured.
    psql(
        ctx.cluster,
        "postgres",
        &["-c", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"],
    )?;
    let people = people(ctx)?;
    let quiet = load::phase(ctx, &people, None)?;
    let waiters = load::Waiters::start(ctx, &people)?;
    let waiting = load::phase(ctx, &people, Some(&waiters));
    let stopped = waiters.stop(ctx, &people);
    let waiting = waiting?;
    stopped?;
    let hooks = hooks::measure(ctx, &people)?;
    // The load test's report prints the tables.
    Ok(Figures {
        quiet,
        waiting,
        hooks,
    })
}

fn people(ctx: &Ctx<'_>) -> Result<People> {
    let writer = user_with_pat(ctx.admin, WRITER, "decks:read decks:write")?;
    let reader = user_with_pat(ctx.admin, READER, "decks:read")?;
    let waiters = waiting_users(ctx.admin)?;
    let deck = http::expect(
        &http::agent(http::SHORT),
        "POST",
        &ctx.game_url("/decks"),
        &http::bearer(&writer),
        Some(r#"{"name":"Greedy neighbours","visibility":["public"]}"#),
        201,
    )?;
    let deck = http::text(&deck, "id")?;
    println!(
        "made a writer, a reader and {} waiting users with PATs; the writer's public deck is {deck}",
        waiters.len()
    );
    Ok(People {
        writer,
        reader,
        waiters,
        deck,
    })
}

/// Makes user `name` and a PAT of `scopes` for it; the token.
fn user_with_pat(admin: &Admin<'_>, name: &str, scopes: &str) -> Result<String> {
    admin(&["admin", "user", "create", "--username", name])?;
    let pat = admin(&["admin", "pat", "create", "--user", name, "--scopes", scopes])?;
    let pat: Value = serde_json::from_str(&pat).context("`admin pat create` printed no JSON")?;
    http::text(&pat, "token")
}

/// The waiting users' tokens (`decks:read`), made a few at once.
fn waiting_users(admin: &Admin<'_>) -> Result<Vec<String>> {
    let names: Vec<String> = (0..WAITING_USERS)
        .map(|n| format!("greedy_waiter_{n:03}"))
        .collect();
    let chunk = WAITING_USERS.div_ceil(ADMIN_THREADS);
    thread::scope(|scope| {
        let makers: Vec<_> = names
            .chunks(chunk)
            .map(|names| {
                scope.spawn(move || {
                    names
                        .iter()
                        .map(|name| user_with_pat(admin, name, "decks:read"))
                        .collect::<Result<Vec<_>>>()
                })
            })
            .collect();
        let mut tokens = Vec::with_capacity(WAITING_USERS);
        for maker in makers {
            tokens.extend(
                maker
                    .join()
                    .map_err(|_| anyhow!("making users panicked"))??,
            );
        }
        Ok(tokens)
    })
}

/// `sql` on the `postgres` database (never the measured one), as one number.
fn number(cluster: &Cluster, sql: &str) -> Result<f64> {
    let text = psql(cluster, "postgres", &["-A", "-t", "-c", sql])?;
    text.trim()
        .parse()
        .with_context(|| format!("{sql} gave {text:?}"))
}

/// A sleep that says why the run is quiet.
fn quiet(why: &str, time: Duration) {
    println!("  quiet {} s: {why}", time.as_secs());
    thread::sleep(time);
}

impl Figures {
    fn detail_met(&self) -> bool {
        self.waiting.detail.p50_ms <= self.quiet.detail.p50_ms * DETAIL_MEDIAN_FACTOR
    }

    fn transactions_met(&self) -> bool {
        self.waiting.transactions_per_patch()
            <= self.quiet.transactions_per_patch() + EXTRA_TRANSACTIONS_PER_PATCH
    }

    /// The tables of the report, in Markdown.
    pub fn markdown(&self) -> String {
        let mut text = load::markdown(
            &self.quiet,
            &self.waiting,
            self.detail_met(),
            self.transactions_met(),
        );
        text.push('\n');
        text.push_str(&self.hooks.markdown());
        text
    }

    pub fn json(&self) -> Value {
        json!({
            "no_waits": self.quiet.json(),
            "waits": self.waiting.json(),
            "webhooks": self.hooks.json(),
            "goals_met": {
                "detail_median": self.detail_met(),
                "transactions_per_patch": self.transactions_met(),
                "ping_arrival": self.hooks.arrival_met(),
                "in_flight": self.hooks.in_flight_met(),
            },
        })
    }
}

/// `yes` or `NO`, as the tables say whether a goal is met.
fn verdict(met: bool) -> &'static str {
    if met { "yes" } else { "NO" }
}

/// Latencies of a set of requests, in milliseconds.
#[derive(Clone, Copy)]
pub struct Latency {
    pub count: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl Latency {
    fn of(mut samples: Vec<Duration>) -> Self {
        samples.sort();
        // Nearest rank: the smallest sample with at least that share at or below it.
        let rank = |share: f64| {
            let at = (share * samples.len() as f64).ceil() as usize;
            samples
                .get(at.saturating_sub(1))
                .map_or(f64::NAN, |sample| sample.as_secs_f64() * 1000.0)
        };
        Self {
            count: samples.len(),
            p50_ms: rank(0.5),
            p99_ms: rank(0.99),
        }
    }

    fn text(self) -> String {
        format!("{:.2} / {:.2}", self.p50_ms, self.p99_ms)
    }

    fn json(self) -> Value {
        json!({"count": self.count, "p50_ms": self.p50_ms, "p99_ms": self.p99_ms})
    }
}

/// The few HTTP calls of the scenario, over ureq (blocking, one agent per thread).
mod http {
    use std::time::Duration;

    use anyhow::{Context, Result, bail};
    use serde_json::Value;

    /// The read timeout of every call but a held feed request.
    pub const SHORT: Duration = Duration::from_secs(10);

    pub fn agent(read_timeout: Duration) -> ureq::Agent {
        ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(5))
            .timeout_write(Duration::from_secs(5))
            .timeout_read(read_timeout)
            .redirects(0)
            .build()
    }

    /// `Authorization: Bearer <token>` as a header pair.
    pub fn bearer(token: &str) -> (&'static str, String) {
        ("Authorization", format!("Bearer {token}"))
    }

    /// One request with `header` (and a JSON body): the status and body of any answer; an
    /// error only when none came.
    pub fn send(
        agent: &ureq::Agent,
        method: &str,
        url: &str,
        header: &(&str, String),
        body: Option<&str>,
    ) -> Result<(u16, String)> {
        let request = agent.request(method, url).set(header.0, &header.1);
        let answer = match body {
            // ureq is built without its `json` feature: the body is sent as text.
            Some(body) => request
                .set("Content-Type", "application/json")
                .send_string(body),
            None => request.call(),
        };
        match answer {
            Ok(response) => Ok((response.status(), response.into_string()?)),
            Err(ureq::Error::Status(status, response)) => Ok((status, response.into_string()?)),
            Err(err) => Err(err).with_context(|| format!("{method} {url}")),
        }
    }

    /// [`send`], failing unless the answer is `status`; its JSON body.
    pub fn expect(
        agent: &ureq::Agent,
        method: &str,
        url: &str,
        header: &(&str, String),
        body: Option<&str>,
        status: u16,
    ) -> Result<Value> {
        let (answered, text) = send(agent, method, url, header, body)?;
        if answered != status {
            bail!("{method} {url} answered {answered}, not {status}: {text}");
        }
        serde_json::from_str(&text).with_context(|| format!("{method} {url} answered {text:?}"))
    }

    /// The text field `key` of `value`.
    pub fn text(value: &Value, key: &str) -> Result<String> {
        value[key]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("no {key} in {value}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let samples = (1..=200).map(Duration::from_millis).collect();
        let latency = Latency::of(samples);
        assert_eq!(latency.count, 200);
        assert!((latency.p50_ms - 100.0).abs() < 1e-9);
        assert!((latency.p99_ms - 198.0).abs() < 1e-9);
        assert!(Latency::of(Vec::new()).p50_ms.is_nan());
    }
}
