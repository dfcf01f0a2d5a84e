//! `cargo xtask client`: a client generated from the committed `docs/openapi.json` by a
//! mainstream generator (openapi-python-client), driven through a short flow against a real
//! `deckhand serve`. A step of `ci`: what the generator cannot digest, or what the generated
//! client cannot do with the real server, is a defect of the document.
//!
//! The server runs on the in-memory store, so the step needs no database: its demo seed prints
//! a PAT with every scope. The flow (`xtask/client/flow.py`) lists decks, creates one with
//! cards, PATCHes it, reads its versions, exports it and resolves cards, each through the
//! generated models, failing on any status or shape it did not expect. The generator and the
//! client's runtime come from `<target>/client-venv`, where `.ci/run` installs the versions
//! pinned in `.ci/client-requirements.txt`; without them the step fails and says how to install
//! them. It never skips.

use std::fs;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use crate::local::{free_address, wait_for_health};
use crate::process::{cargo, display, run_command};

const REQUIREMENTS: &str = ".ci/client-requirements.txt";
const CONFIG: &str = "xtask/client/config.yml";
const FLOW: &str = "xtask/client/flow.py";
const DOCUMENT: &str = "docs/openapi.json";
/// The package the generator writes (`package_name_override` in [`CONFIG`]).
const PACKAGE: &str = "deckhand_client";
/// Base64 of 32 bytes of 7: the run's secret key (nothing persists).
const SECRET_KEY: &str = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";

pub fn run(root: &Path, target: &Path) -> Result<()> {
    let started = Instant::now();
    let venv = target.join("client-venv");
    let generator = generator(root, &venv)?;
    let work = target.join("client");
    if work.exists() {
        fs::remove_dir_all(&work).with_context(|| format!("removing {}", work.display()))?;
    }
    fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let output = work.join(PACKAGE);
    // The generator formats its output with the venv's ruff, found on PATH.
    let path = std::env::join_paths(
        std::iter::once(venv.join("bin")).chain(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths),
        ),
    )?;
    run_command(
        Command::new(&generator)
            .current_dir(root)
            .env("PATH", path)
            .args(["generate", "--fail-on-warning", "--meta", "none"])
            .arg("--path")
            .arg(root.join(DOCUMENT))
            .arg("--config")
            .arg(root.join(CONFIG))
            .arg("--output-path")
            .arg(&output),
    )
    .context(
        "the generator refused docs/openapi.json: fix the document (the handlers' annotations \
         or crates/http/src/openapi.rs), not the generated code",
    )?;

    cargo(root, &["build", "--locked", "-q", "-p", "deckhand"])?;
    let address = free_address()?;
    let log = work.join("server.log");
    let mut server = Command::new(target.join("debug/deckhand"))
        .arg("serve")
        .env_remove("DATABASE_URL")
        .env("DECKHAND_SECRET_KEY", SECRET_KEY)
        .env("DECKHAND_BIND", &address)
        .env("DECKHAND_PUBLIC_URL", format!("http://{address}"))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(fs::File::create(&log)?)
        .spawn()
        .context("starting the server")?;
    let result = demo_token(&mut server)
        .and_then(|token| wait_for_health(&mut server, &address).map(|()| token))
        .and_then(|token| flow(root, &venv, &work, &address, &token));
    // The server is ours: stop exactly it.
    let _ = server.kill();
    let _ = server.wait();
    result.with_context(|| format!("the server's log is {}", log.display()))?;
    println!(
        "client: generated and exercised in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The `openapi-python-client` of the venv, at the pinned version.
fn generator(root: &Path, venv: &Path) -> Result<PathBuf> {
    let requirements = fs::read_to_string(root.join(REQUIREMENTS))
        .with_context(|| format!("reading {REQUIREMENTS}"))?;
    let pinned = requirements
        .lines()
        .find_map(|line| line.trim().strip_prefix("openapi-python-client=="))
        .with_context(|| format!("{REQUIREMENTS} pins no openapi-python-client version"))?;
    let generator = venv.join("bin/openapi-python-client");
    let install = format!(
        "python3 -m venv {venv} && {venv}/bin/pip install -r {REQUIREMENTS} (what .ci/run does)",
        venv = venv.display()
    );
    let version = Command::new(&generator)
        .arg("--version")
        .output()
        .with_context(|| {
            format!(
                "openapi-python-client {pinned} is not installed in {}; install it with: {install}",
                venv.display()
            )
        })?;
    let version = String::from_utf8_lossy(&version.stdout);
    if version.trim() != format!("openapi-python-client version: {pinned}") {
        bail!(
            "{} is `{}`, not openapi-python-client {pinned}; reinstall it with: {install}",
            generator.display(),
            version.trim()
        );
    }
    Ok(generator)
}

/// The demo PAT the in-memory server prints at start ("Demo token: dh_pat_...").
fn demo_token(server: &mut Child) -> Result<String> {
    let stdout = server.stdout.take().context("the server's stdout")?;
    let (sender, receiver) = mpsc::channel();
    // Reads the banner, then keeps draining stdout so the server never blocks on it.
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if !sent && let Some(token) = line.trim().strip_prefix("Demo token:") {
                sent = sender.send(token.trim().to_owned()).is_ok();
            }
        }
    });
    receiver
        .recv_timeout(Duration::from_secs(60))
        .context("the server printed no demo token within 60 s (is DATABASE_URL set?)")
}

fn flow(root: &Path, venv: &Path, work: &Path, address: &str, token: &str) -> Result<()> {
    let mut cmd = Command::new(venv.join("bin/python"));
    cmd.current_dir(work)
        .arg(root.join(FLOW))
        .env("PYTHONPATH", work)
        .env("DECKHAND_URL", format!("http://{address}"))
        .env("DECKHAND_TOKEN", token);
    println!("$ {}", display(&cmd));
    let status = cmd.status().context("could not start the client flow")?;
    if !status.success() {
        bail!("the generated client's flow failed ({status})");
    }
    Ok(())
}
