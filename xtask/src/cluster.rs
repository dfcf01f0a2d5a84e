//! What the load tasks (`loadtest`, `soak`) share to set a run up and tear it down: the server
//! binary they measure, a throwaway PostgreSQL cluster of their own made fresh for the run and
//! stopped after it, the URL of its `deckhand` database, and a server process stopped exactly.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use anyhow::{Context, Result};

use crate::pg::Cluster;
use crate::process::cargo;

/// The server binary to measure: `given`, or this tree's release build, built now.
pub fn server_binary(root: &Path, target: &Path, given: Option<&PathBuf>) -> Result<PathBuf> {
    match given {
        Some(binary) => Ok(binary.clone()),
        None => {
            cargo(root, &["build", "--release", "--locked", "-p", "deckhand"])?;
            Ok(target.join("release/deckhand"))
        }
    }
}

/// Runs `body` on `cluster` made afresh (whatever an earlier run left in its directory is
/// stopped and removed), started with `options` appended to the harness's server options, and
/// stops it afterwards, whatever `body` returns. `what` names it in the warning printed when
/// it cannot be stopped.
pub fn on_fresh_cluster<T>(
    cluster: &Cluster,
    options: &str,
    what: &str,
    body: impl FnOnce(&Cluster) -> Result<T>,
) -> Result<T> {
    let dir = cluster.dir();
    cluster.stop()?;
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    cluster.start_with(options)?;
    let result = body(cluster);
    if let Err(err) = cluster.stop() {
        eprintln!("warning: could not stop the {what} cluster: {err:#}");
    }
    result
}

/// The URL of the cluster's `deckhand` database, over its Unix socket.
pub fn database_url(cluster: &Cluster) -> String {
    format!(
        "postgresql:///deckhand?host={}&port={}&user=postgres",
        cluster.socket().display(),
        cluster.port()
    )
}

/// Starts `command` (a server) with its stderr in `log`, runs `body` on the process, and
/// stops exactly that process afterwards, whatever `body` returns.
pub fn with_server<T>(
    mut command: Command,
    log: &Path,
    body: impl FnOnce(&mut Child) -> Result<T>,
) -> Result<T> {
    let mut server = command
        .stderr(fs::File::create(log)?)
        .spawn()
        .context("starting the server")?;
    let result = body(&mut server);
    // The server is ours: stop exactly it.
    let _ = server.kill();
    let _ = server.wait();
    result
}
