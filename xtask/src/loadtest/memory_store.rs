//! The in-memory store's rows of `cargo xtask loadtest` (issue 48): the measured binary again,
//! serving its embedded in-memory demo (no database), answers `GET /healthz`, the demo's deck
//! list and a demo deck's detail. What the list and the detail cost beyond `/healthz` is the
//! HTTP layer around the store (extractors, access, JSON, ETag, headers, metrics) with next to
//! nothing of the store itself, so each rate is read as a share of `/healthz` in the same run:
//! goal ≥ 0.5 (docs/benchmarks.md, "The HTTP layer on the in-memory store").

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result};
use serde_json::Value;

use super::Options;
use crate::cluster;
use crate::cpu;
use crate::local::{API, Measured, free_address, get, run_oha, wait_for_health};

/// The share of `/healthz` the list and the detail are to reach.
pub(super) const GOAL: f64 = 0.5;

/// One request shape on the in-memory store.
pub(super) struct MemoryRow {
    pub(super) name: &'static str,
    pub(super) measured: Measured,
    /// The server's CPU milliseconds per request.
    pub(super) server_cpu_ms: f64,
}

impl MemoryRow {
    /// The request's rate as a share of `/healthz`'s, the first row of `rows`.
    pub(super) fn share_of_healthz(&self, rows: &[Self]) -> Option<f64> {
        rows.first()
            .map(|healthz| self.measured.rate / healthz.measured.rate)
    }
}

/// Serves `binary` on its in-memory store and drives `/healthz`, the deck list and a deck's
/// detail with oha, each as long and as wide as the database rows; prints and returns them.
pub(super) fn measure(
    binary: &Path,
    oha: &Path,
    options: &Options,
    log: &Path,
) -> Result<Vec<MemoryRow>> {
    let address = free_address()?;
    let mut command = Command::new(binary);
    command
        .arg("serve")
        // No database: the embedded in-memory store with its demo seed.
        .env_remove("DATABASE_URL")
        .env_remove("DATABASE_LISTEN_URL")
        .env("DECKHAND_BIND", &address)
        .env("DECKHAND_RATE_LIMITS", "off")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null());
    cluster::with_server(command, log, |server| {
        wait_for_health(server, &address)?;
        let base = format!("http://{address}");
        let list = format!("{base}{API}/decks?limit=20");
        let detail = format!("{base}{API}/decks/{}", first_listed_deck(&address)?);
        let cases = [
            ("memory: GET /healthz", format!("{base}/healthz")),
            ("memory: list editedAt", list),
            ("memory: detail anonymous", detail),
        ];
        println!(
            "\n{:<28} {:>9} {:>9} {:>9} {:>10} {:>9} cpu ms/req: server",
            "in-memory store", "req/s", "p50 ms", "p99 ms", "/healthz", "goal"
        );
        let mut rows = Vec::new();
        for (name, url) in cases {
            let before = cpu::process_seconds(server.id())?;
            let mut oha_args = options.load_args();
            oha_args.push(url);
            let measured = run_oha(oha, &oha_args)?;
            let used = cpu::process_seconds(server.id())? - before;
            let row = MemoryRow {
                name,
                server_cpu_ms: used * 1000.0 / measured.requests.max(1.0),
                measured,
            };
            print_row(&row, &rows);
            rows.push(row);
        }
        Ok(rows)
    })
}

/// The id of the first deck the demo's list shows (a public one: the list is anonymous).
fn first_listed_deck(address: &str) -> Result<String> {
    let (status, body) = get(address, &format!("{API}/decks?limit=20"))?;
    let list: Value = serde_json::from_str(&body)
        .with_context(|| format!("the in-memory deck list answered {status}: {body}"))?;
    list.pointer("/data/0/id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .with_context(|| format!("the in-memory demo lists no mtg deck: {body}"))
}

fn print_row(row: &MemoryRow, before: &[MemoryRow]) {
    let measured = &row.measured;
    // `/healthz` is the first row: its own share is 1.
    let share = row.share_of_healthz(before).unwrap_or(1.0);
    let verdict = if before.is_empty() {
        "-".to_owned()
    } else if share >= GOAL {
        format!("{GOAL:.1} ok")
    } else {
        format!("{GOAL:.1} NO")
    };
    println!(
        "{:<28} {:>9.0} {:>9.2} {:>9.2} {:>10.3} {:>9} {:.3}",
        row.name,
        measured.rate,
        measured.p50_ms,
        measured.p99_ms,
        share,
        verdict,
        row.server_cpu_ms
    );
}
