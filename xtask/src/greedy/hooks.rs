//! Webhooks beside a hanging neighbour: a partner's endpoint that accepts connections and never
//! answers, 400 deliveries queued for it, and another partner's pings to an endpoint that
//! answers at once: how long each takes to arrive.

use std::io::{self, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

use super::{
    ATTEMPT_TIMEOUT_MS, Ctx, IN_FLIGHT_PER_ENDPOINT, PING_ARRIVAL_MS, People, WRITER, http, verdict,
};
use crate::local::query;

/// Deck events queued for the hanging endpoint before the pings.
const QUEUED: usize = 400;
/// Pings with no hanging endpoint, and beside it.
const PINGS_ALONE: usize = 3;
const PINGS_BESIDE: usize = 5;
const PING_GAP: Duration = Duration::from_secs(3);
/// The longest a ping may take to arrive before the run gives up on it.
const PING_LIMIT: Duration = Duration::from_secs(20);
/// How long the worker may take to queue the deliveries of [`QUEUED`] events.
const QUEUED_WITHIN: Duration = Duration::from_secs(60);
/// How often the loopback listeners look for a new connection.
const LISTEN_POLL: Duration = Duration::from_millis(2);

/// What the webhook part measured.
pub struct Hooks {
    /// Milliseconds from each ping's request to its arrival, with no hanging endpoint.
    alone: Vec<f64>,
    /// The same beside the hanging endpoint, with its pending deliveries at each ping.
    beside: Vec<(f64, u64)>,
    hanging: Hanging,
}

/// What the hanging endpoint saw: connections (attempts) and the most open at once.
#[derive(Clone, Copy, Default)]
struct Hanging {
    accepted: usize,
    most_open: usize,
}

impl Hooks {
    fn worst(&self) -> f64 {
        self.beside.iter().map(|(ms, _)| *ms).fold(0.0, f64::max)
    }

    pub fn arrival_met(&self) -> bool {
        self.worst() <= PING_ARRIVAL_MS
    }

    pub fn in_flight_met(&self) -> bool {
        self.hanging.most_open <= IN_FLIGHT_PER_ENDPOINT
    }

    pub fn json(&self) -> Value {
        json!({
            "ping_ms_alone": self.alone,
            "ping_ms_beside_hanging": self.beside.iter().map(|(ms, _)| ms).collect::<Vec<_>>(),
            "hanging_pending_at_each_ping": self.beside.iter().map(|(_, pending)| pending).collect::<Vec<_>>(),
            "hanging_attempts": self.hanging.accepted,
            "hanging_most_open": self.hanging.most_open,
            "attempt_timeout_ms": super::ATTEMPT_TIMEOUT_MS,
        })
    }

    pub fn markdown(&self) -> String {
        let list = |values: &mut dyn Iterator<Item = f64>| {
            values
                .map(|ms| format!("{ms:.0}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let pending: Vec<String> = self.beside.iter().map(|(_, n)| n.to_string()).collect();
        format!(
            "| greedy neighbours: webhooks | measured | goal |\n|---|---|---|\n\
             | ping to arrival, no hanging endpoint (ms) | {} | |\n\
             | ping to arrival beside a hanging endpoint (ms; its pending deliveries: {}) | {} (max {:.0}) | within 1 s: {} |\n\
             | attempts the hanging endpoint received (most open at once; timeout {} ms) | {} ({}) | at most {}: {} |\n",
            list(&mut self.alone.iter().copied()),
            pending.join(", "),
            list(&mut self.beside.iter().map(|(ms, _)| *ms)),
            self.worst(),
            verdict(self.arrival_met()),
            ATTEMPT_TIMEOUT_MS,
            self.hanging.accepted,
            self.hanging.most_open,
            IN_FLIGHT_PER_ENDPOINT,
            verdict(self.in_flight_met()),
        )
    }
}

pub fn measure(ctx: &Ctx<'_>, people: &People) -> Result<Hooks> {
    let answering = Answering::start()?;
    let hanging = HangingListener::start()?;
    let pings = pings(ctx, people, &answering, &hanging.address);
    let hanging = hanging.stop()?;
    let (alone, beside) = pings?;
    Ok(Hooks {
        alone,
        beside,
        hanging,
    })
}

type Pings = (Vec<f64>, Vec<(f64, u64)>);

fn pings(ctx: &Ctx<'_>, people: &People, answering: &Answering, hanging: &str) -> Result<Pings> {
    let neighbour = Partner::make(ctx, "neighbour")?;
    let greedy = Partner::make(ctx, "greedy")?;
    // Only pings reach the neighbour: no guide changes in this run.
    let quiet_hook = neighbour.register(ctx, &answering.address, "sideboard_guide.*")?;
    println!("  webhooks: {PINGS_ALONE} pings with no hanging endpoint");
    let mut alone = Vec::new();
    for _ in 0..PINGS_ALONE {
        alone.push(neighbour.ping(ctx, &quiet_hook, answering)?);
        thread::sleep(Duration::from_secs(1));
    }
    let greedy_hook = greedy.register(ctx, hanging, "deck.*")?;
    queue_for(ctx, people, &greedy_hook)?;
    let mut beside = Vec::new();
    for n in 0..PINGS_BESIDE {
        if n > 0 {
            thread::sleep(PING_GAP);
        }
        let pending = pending(ctx, &greedy_hook)?;
        beside.push((neighbour.ping(ctx, &quiet_hook, answering)?, pending));
    }
    Ok((alone, beside))
}

/// [`QUEUED`] deck events the hanging endpoint wants, then waits until their deliveries are
/// queued.
fn queue_for(ctx: &Ctx<'_>, people: &People, hook: &str) -> Result<()> {
    let agent = http::agent(http::SHORT);
    let deck = ctx.game_url(&format!("/decks/{}", people.deck));
    let header = http::bearer(&people.writer);
    for n in 0..QUEUED {
        let body = format!(r#"{{"name":"Greedy neighbours, queued {n}"}}"#);
        http::expect(&agent, "PATCH", &deck, &header, Some(&body), 200)?;
    }
    let deadline = Instant::now() + QUEUED_WITHIN;
    loop {
        let pending = pending(ctx, hook)?;
        if pending >= QUEUED as u64 {
            println!("  webhooks: {pending} deliveries pending for the hanging endpoint");
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "only {pending} deliveries queued for the hanging endpoint after {} s",
                QUEUED_WITHIN.as_secs()
            );
        }
        thread::sleep(Duration::from_millis(250));
    }
}

/// The endpoint's pending deliveries (read from the database: the log pages 50 at a time).
fn pending(ctx: &Ctx<'_>, hook: &str) -> Result<u64> {
    let count = query(
        ctx.cluster,
        &format!(
            "SELECT count(*) FROM webhook_deliveries \
             WHERE endpoint_id = '{hook}' AND status = 'pending'"
        ),
    )?;
    count
        .parse()
        .with_context(|| format!("the pending count gave {count:?}"))
}

/// A partner with an API key, owned by the writer: it reads every public deck.
struct Partner {
    key: (&'static str, String),
}

impl Partner {
    fn make(ctx: &Ctx<'_>, slug: &str) -> Result<Self> {
        (ctx.admin)(&[
            "admin",
            "partner",
            "create",
            "--slug",
            slug,
            "--owner",
            WRITER,
            "--scopes",
            "decks:read",
            "--game-scopes",
            "*",
        ])?;
        let key = (ctx.admin)(&["admin", "api-key", "create", "--partner", slug])?;
        let key: Value =
            serde_json::from_str(&key).context("`admin api-key create` printed no JSON")?;
        Ok(Self {
            key: ("X-Api-Key", http::text(&key, "key")?),
        })
    }

    /// Registers an endpoint at `address` for `types`; its id.
    fn register(&self, ctx: &Ctx<'_>, address: &str, types: &str) -> Result<String> {
        let body = json!({"url": format!("http://{address}/hook"), "types": [types]});
        let hook = http::expect(
            &http::agent(http::SHORT),
            "POST",
            &ctx.root_url("/webhooks"),
            &self.key,
            Some(&body.to_string()),
            201,
        )?;
        http::text(&hook, "id")
    }

    /// Pings `hook` and waits for the ping at `receiver`: milliseconds from the request to
    /// its arrival.
    fn ping(&self, ctx: &Ctx<'_>, hook: &str, receiver: &Answering) -> Result<f64> {
        receiver.forget_earlier();
        let sent = Instant::now();
        let url = ctx.root_url(&format!("/webhooks/{hook}/ping"));
        let (status, body) = http::send(&http::agent(http::SHORT), "POST", &url, &self.key, None)?;
        if status != 202 {
            bail!("POST {url} answered {status}: {body}");
        }
        let arrived = receiver.next_ping(PING_LIMIT)?;
        let ms = arrived.duration_since(sent).as_secs_f64() * 1000.0;
        println!("  ping arrived after {ms:.0} ms");
        Ok(ms)
    }
}

/// A loopback receiver that answers every request 200 at once and reports each body with the
/// time it had arrived whole.
struct Answering {
    address: String,
    stop: Arc<AtomicBool>,
    arrivals: mpsc::Receiver<(Instant, String)>,
    thread: Option<JoinHandle<()>>,
}

impl Answering {
    fn start() -> Result<Self> {
        let (listener, address) = listen()?;
        let stop = Arc::new(AtomicBool::new(false));
        let (sender, arrivals) = mpsc::channel();
        let flag = stop.clone();
        let thread = thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let sender = sender.clone();
                        thread::spawn(move || {
                            let _ = answer(stream, &sender);
                        });
                    }
                    Err(_) => thread::sleep(LISTEN_POLL),
                }
            }
        });
        Ok(Self {
            address,
            stop,
            arrivals,
            thread: Some(thread),
        })
    }

    fn forget_earlier(&self) {
        while self.arrivals.try_recv().is_ok() {}
    }

    /// When the next ping arrived, waiting at most `limit` for it.
    fn next_ping(&self, limit: Duration) -> Result<Instant> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (at, body) = self
                .arrivals
                .recv_timeout(left)
                .with_context(|| format!("no ping arrived within {} s", limit.as_secs()))?;
            if body.contains("\"webhook.ping\"") {
                return Ok(at);
            }
        }
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A listener on a port of its own on 127.0.0.1, polled (so its thread can be stopped).
fn listen() -> Result<(TcpListener, String)> {
    let listener = TcpListener::bind("127.0.0.1:0").context("opening a loopback receiver")?;
    listener.set_nonblocking(true)?;
    let address = listener.local_addr()?.to_string();
    Ok((listener, address))
}

/// Reads one request whole, reports its body with the time, answers 200 and closes.
fn answer(mut stream: TcpStream, arrivals: &mpsc::Sender<(Instant, String)>) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut received = Vec::new();
    let mut buffer = [0u8; 8192];
    let body_at = loop {
        let read = stream.read(&mut buffer)?;
        if read == 0 {
            return Ok(());
        }
        received.extend_from_slice(&buffer[..read]);
        if let Some(end) = received.windows(4).position(|four| four == b"\r\n\r\n") {
            break end + 4;
        }
    };
    let head = String::from_utf8_lossy(&received[..body_at]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    while received.len() < body_at + length {
        let read = stream.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        received.extend_from_slice(&buffer[..read]);
    }
    let body = String::from_utf8_lossy(&received[body_at..]).into_owned();
    let _ = arrivals.send((Instant::now(), body));
    stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
}

/// A loopback endpoint that accepts every connection, reads what is sent and never answers:
/// each attempt to it lasts until the sender's timeout.
struct HangingListener {
    address: String,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Hanging>,
}

impl HangingListener {
    fn start() -> Result<Self> {
        let (listener, address) = listen()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = thread::spawn(move || hang(&listener, &flag));
        Ok(Self {
            address,
            stop,
            thread,
        })
    }

    fn stop(self) -> Result<Hanging> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .join()
            .map_err(|_| anyhow!("the hanging endpoint's thread panicked"))
    }
}

/// Holds every connection until its sender closes it, counting them and the most open at once.
fn hang(listener: &TcpListener, stop: &AtomicBool) -> Hanging {
    let mut open: Vec<TcpStream> = Vec::new();
    let mut seen = Hanging::default();
    while !stop.load(Ordering::Relaxed) {
        while let Ok((stream, _)) = listener.accept() {
            if stream.set_nonblocking(true).is_ok() {
                open.push(stream);
                seen.accepted += 1;
            }
        }
        open.retain_mut(still_open);
        seen.most_open = seen.most_open.max(open.len());
        thread::sleep(LISTEN_POLL * 5);
    }
    seen
}

/// Reads what is waiting on `stream` and says whether its sender still holds it open.
fn still_open(stream: &mut TcpStream) -> bool {
    let mut buffer = [0u8; 8192];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return false,
            Ok(_) => {}
            Err(err) => return err.kind() == io::ErrorKind::WouldBlock,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answering_receiver_reports_each_body_when_it_has_arrived_whole() -> Result<()> {
        let receiver = Answering::start()?;
        let body = r#"{"type":"webhook.ping","data":{}}"#;
        let sent = Instant::now();
        let answer = ureq::post(&format!("http://{}/hook", receiver.address))
            .set("Content-Type", "application/json")
            .send_string(body)?;
        assert_eq!(answer.status(), 200);
        assert!(receiver.next_ping(Duration::from_secs(5))? >= sent);
        Ok(())
    }

    #[test]
    fn the_hanging_endpoint_never_answers_and_counts_what_is_open() -> Result<()> {
        let hanging = HangingListener::start()?;
        let mut first = TcpStream::connect(&hanging.address)?;
        let second = TcpStream::connect(&hanging.address)?;
        first.write_all(b"POST /hook HTTP/1.1\r\ncontent-length: 0\r\n\r\n")?;
        first.set_read_timeout(Some(Duration::from_millis(200)))?;
        let mut answer = [0u8; 16];
        assert!(first.read(&mut answer).is_err(), "it answered");
        thread::sleep(Duration::from_millis(100));
        drop((first, second));
        thread::sleep(Duration::from_millis(100));
        let third = TcpStream::connect(&hanging.address)?;
        thread::sleep(Duration::from_millis(100));
        let seen = hanging.stop()?;
        drop(third);
        assert_eq!((seen.accepted, seen.most_open), (3, 2));
        Ok(())
    }
}
