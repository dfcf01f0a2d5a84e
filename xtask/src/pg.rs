//! The throwaway PostgreSQL cluster that the test harness (crates/testkit/src/db/cluster.rs)
//! starts on demand; here it can be started by hand, inspected, and stopped after a run. xtask
//! cannot call the harness, because it must work while the workspace does not compile, so the
//! layout, the lock and the server options below follow it: keep the two in step.
//!
//! PostgreSQL refuses to run as root and CI runs as root, so then every server binary runs as the
//! `postgres` user in directories that user owns.

use std::fs::{self, File};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use std::{env, iter, thread};

use anyhow::{Context, Result, bail};

use crate::process::{display, run_command, run_quietly};

pub struct Cluster {
    dir: PathBuf,
    /// The port of the server's Unix socket, and of its TCP listener on 127.0.0.1 when it has one.
    port: u16,
    /// Whether the server also listens on 127.0.0.1 (`port`), as a deployment's server is
    /// reached: the harness's cluster is on its Unix socket only.
    tcp: bool,
}

/// PostgreSQL's default port: the harness's cluster's (its socket is `.s.PGSQL.5432`).
const DEFAULT_PORT: u16 = 5432;

/// Every place the harness may have put a cluster: `<target>/testkit-pg`, or, when root could not
/// hand that to the postgres user, `<temp dir>/deckhand-testkit-pg`.
fn clusters(target: &Path) -> Vec<Cluster> {
    let fallback = is_root().then(|| Cluster::at(env::temp_dir().join("deckhand-testkit-pg")));
    iter::once(Cluster::in_target(target))
        .chain(fallback)
        .collect()
}

/// Stops every cluster that runs; a no-op when none does.
pub fn stop_all(target: &Path) -> Result<()> {
    let mut stopped = false;
    for cluster in clusters(target) {
        stopped |= cluster.stop()?;
    }
    if !stopped {
        println!("no test cluster running");
    }
    Ok(())
}

pub fn status_all(target: &Path) -> Result<()> {
    let existing: Vec<Cluster> = clusters(target)
        .into_iter()
        .filter(Cluster::exists)
        .collect();
    if existing.is_empty() {
        println!(
            "no cluster in {}: the tests make one on demand (unless DATABASE_URL is set), or run \
             `cargo xtask db start`",
            target.join("testkit-pg").display()
        );
    }
    for cluster in existing {
        let running = cluster.is_running()?;
        let state = if running { "running" } else { "stopped" };
        println!("the cluster in {} is {state}", cluster.dir.display());
        if running {
            println!("{}", cluster.url());
        }
    }
    Ok(())
}

impl Cluster {
    pub fn in_target(target: &Path) -> Self {
        Self::at(target.join("testkit-pg"))
    }

    /// A cluster of its own in `dir` (the load test's, so it never touches the harness's).
    pub fn at(dir: PathBuf) -> Self {
        Self {
            dir,
            port: DEFAULT_PORT,
            tcp: false,
        }
    }

    /// A cluster of its own in `dir` that also listens on `127.0.0.1:<port>` (the load test's,
    /// whose ceiling `pgbench -S` connects over TCP as the server does).
    pub fn at_with_tcp(dir: PathBuf, port: u16) -> Self {
        Self {
            dir,
            port,
            tcp: true,
        }
    }

    /// The directory holding the cluster's data, socket, lock and log (`postgres.log`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The server's port: of its Unix socket (`port=` of a URL, `-p` of the client tools) and,
    /// when it listens on TCP, of `127.0.0.1`.
    pub fn port(&self) -> u16 {
        self.port
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The directory of the server's Unix socket (`host=` of a URL, `-h` of the client tools).
    pub fn socket(&self) -> PathBuf {
        self.dir.join("socket")
    }

    /// The postmaster's process id, while the server runs.
    pub fn postmaster_pid(&self) -> Option<u32> {
        fs::read_to_string(self.data().join("postmaster.pid"))
            .ok()?
            .lines()
            .next()?
            .trim()
            .parse()
            .ok()
    }

    fn exists(&self) -> bool {
        self.data().join("PG_VERSION").is_file()
    }

    fn url(&self) -> String {
        format!(
            "DATABASE_URL=postgresql:///postgres?host={}&port={}&user=postgres",
            self.socket().display(),
            self.port
        )
    }

    /// The harness's lock, so that a test run never sees a half-made or half-stopped cluster.
    fn lock(&self) -> Result<File> {
        let path = self.dir.join("lock");
        let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        file.lock()
            .with_context(|| format!("locking {}", path.display()))?;
        Ok(file)
    }

    pub fn start(&self) -> Result<()> {
        self.start_with("")
    }

    /// Starts the server with `extra` appended to the harness's server options.
    pub fn start_with(&self, extra: &str) -> Result<()> {
        let socket = self.socket();
        fs::create_dir_all(&socket).with_context(|| format!("creating {}", socket.display()))?;
        if is_root() {
            run_command(
                Command::new("chown")
                    .arg("postgres:")
                    .arg(&self.dir)
                    .arg(&socket),
            )?;
        }
        let _lock = self.lock()?;
        if !self.exists() {
            // Made aside and renamed into place, so an interrupted initdb leaves no half-made
            // cluster for the harness to trip over.
            let staging = self.dir.join("data.initdb");
            if staging.exists() {
                fs::remove_dir_all(&staging)
                    .with_context(|| format!("removing {}", staging.display()))?;
            }
            let options = [
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ];
            // Quiet unless it fails: its closing advice names the staging directory.
            run_quietly(pg_command("initdb")?.arg("-D").arg(&staging).args(options))?;
            fs::rename(&staging, self.data()).context("moving the new cluster into place")?;
        }
        if self.is_running()? {
            println!("the cluster in {} is already running", self.dir.display());
        } else {
            let Some(socket) = socket.to_str().filter(|path| !path.contains('\'')) else {
                bail!("{} cannot be quoted for pg_ctl", socket.display());
            };
            // The harness's options: a test run reuses a running server as it finds it.
            let listen = if self.tcp { "127.0.0.1" } else { "" };
            let port = self.port;
            let options = format!(
                "-k '{socket}' -p {port} -c listen_addresses='{listen}' -F \
                 -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 {extra}"
            );
            run_command(
                pg_command("pg_ctl")?
                    .args(["start", "-w", "-t", "60", "-D"])
                    .arg(self.data())
                    .arg("-l")
                    .arg(self.dir.join("postgres.log"))
                    .args(["-o", &options]),
            )?;
        }
        println!("{}", self.url());
        Ok(())
    }

    /// Stops the server when one left its pid file and still runs; says whether it did.
    pub fn stop(&self) -> Result<bool> {
        if !self.data().join("postmaster.pid").exists() {
            return Ok(false);
        }
        let _lock = self.lock()?;
        if !self.is_running()? {
            return Ok(false);
        }
        run_command(
            pg_command("pg_ctl")?
                .args(["stop", "-w", "-m", "fast", "-D"])
                .arg(self.data()),
        )?;
        Ok(true)
    }

    // `pg_ctl status` rather than the pid file, which a crashed server leaves behind.
    fn is_running(&self) -> Result<bool> {
        let mut cmd = pg_command("pg_ctl")?;
        cmd.args(["status", "-D"]).arg(self.data());
        let output = cmd
            .output()
            .with_context(|| format!("could not start `{}`", display(&cmd)))?;
        Ok(output.status.success())
    }
}

/// Where PgBouncer's socket is named from (`.s.PGSQL.<port>`); no TCP listener is opened.
const PGBOUNCER_PORT: u16 = 6432;

/// `DECKHAND_DB_STATEMENT_TIMEOUT_MS`'s default, which a server behind a pooler checks its
/// server sessions have (docs/operations.md, "Connection pooler"): PgBouncer sets it on each.
const STATEMENT_TIMEOUT_MS: u32 = 15_000;

/// A running PgBouncer in transaction pooling mode in front of a [`Cluster`], stopped on drop.
/// The test harness has its own (crates/testkit/src/db/pgbouncer.rs) with the same settings.
pub struct PgBouncer {
    dir: PathBuf,
}

impl Cluster {
    /// Starts PgBouncer (Debian's package; `.ci/run` installs it) in `<cluster>/pgbouncer`, in
    /// front of `database`, with at most `pool_size` server connections.
    pub fn pgbouncer(&self, database: &str, pool_size: u32) -> Result<PgBouncer> {
        let binary = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"]
            .into_iter()
            .map(PathBuf::from)
            .find(|path| path.is_file())
            .context("pgbouncer is missing: install the Debian package `pgbouncer`")?;
        let dir = self.dir.join("pgbouncer");
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        if is_root() {
            run_command(Command::new("chown").arg("postgres:").arg(&dir))?;
        }
        let bouncer = PgBouncer { dir: dir.clone() };
        bouncer.stop();
        let socket = bouncer.socket_file();
        if socket.exists() {
            fs::remove_file(&socket).with_context(|| format!("removing {}", socket.display()))?;
        }
        fs::write(dir.join("userlist.txt"), "\"postgres\" \"\"\n")?;
        let config = dir.join("pgbouncer.ini");
        fs::write(
            &config,
            format!(
                "[databases]\n\
                 {database} = host={server} port={port} dbname={database} \
                 connect_query='SET statement_timeout = {STATEMENT_TIMEOUT_MS}'\n\
                 [pgbouncer]\n\
                 pool_mode = transaction\n\
                 default_pool_size = {pool_size}\n\
                 min_pool_size = 0\n\
                 reserve_pool_size = 0\n\
                 max_client_conn = 1000\n\
                 listen_addr =\n\
                 listen_port = {PGBOUNCER_PORT}\n\
                 unix_socket_dir = {dir}\n\
                 auth_type = trust\n\
                 auth_file = {dir}/userlist.txt\n\
                 logfile = {dir}/pgbouncer.log\n\
                 pidfile = {dir}/pgbouncer.pid\n\
                 server_reset_query =\n",
                server = self.socket().display(),
                port = self.port,
                dir = dir.display(),
            ),
        )?;
        run_command(as_server_user(&binary).arg("-d").arg(&config))?;
        // Ready when it accepts a connection: the socket file appears before `listen`.
        let deadline = Instant::now() + Duration::from_secs(10);
        while UnixStream::connect(&socket).is_err() {
            if Instant::now() > deadline {
                bail!("PgBouncer did not open {} within 10 s", socket.display());
            }
            thread::sleep(Duration::from_millis(20));
        }
        Ok(bouncer)
    }
}

impl PgBouncer {
    fn socket_file(&self) -> PathBuf {
        self.dir.join(format!(".s.PGSQL.{PGBOUNCER_PORT}"))
    }

    /// The URL of `database` through PgBouncer, as the `postgres` user.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgresql:///{database}?host={}&port={PGBOUNCER_PORT}&user=postgres",
            self.dir.display()
        )
    }

    /// PgBouncer's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        fs::read_to_string(self.dir.join("pgbouncer.pid"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    fn stop(&self) {
        let Some(pid) = self.pid() else {
            return;
        };
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .output();
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.dir.join("pgbouncer.pid").exists() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        self.stop();
    }
}

pub fn pg_command(name: &str) -> Result<Command> {
    Ok(as_server_user(&find_bin(name)?))
}

/// `bin` run as the user the server runs as (`postgres` when we are root).
fn as_server_user(bin: &Path) -> Command {
    if is_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(bin);
        cmd
    } else {
        Command::new(bin)
    }
}

/// Debian and Ubuntu keep the server binaries off PATH, in /usr/lib/postgresql/<version>/bin.
/// The path is absolute either way because `runuser` may reset PATH.
fn find_bin(name: &str) -> Result<PathBuf> {
    let on_path = env::var_os("PATH")
        .map(|path| {
            env::split_paths(&path)
                .map(|dir| dir.join(name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .find(|bin| bin.is_file());
    on_path.or_else(|| newest_in(Path::new("/usr/lib/postgresql"), name)).with_context(|| {
        format!("`{name}` is neither on PATH nor in /usr/lib/postgresql/*/bin: install the PostgreSQL server binaries")
    })
}

fn newest_in(base: &Path, name: &str) -> Option<PathBuf> {
    fs::read_dir(base)
        .ok()?
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let version = version_key(&entry.file_name().to_string_lossy())?;
            let bin = entry.path().join("bin").join(name);
            // A newer client-only install has psql there but no server binaries.
            bin.is_file().then_some((version, bin))
        })
        .max()
        .map(|(_, bin)| bin)
}

/// "15" and "9.6" as comparable numbers, so 15 sorts above 9.6.
fn version_key(dir_name: &str) -> Option<Vec<u32>> {
    dir_name.split('.').map(|part| part.parse().ok()).collect()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.status.success() && output.stdout.trim_ascii() == b"0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_numbers() {
        assert!(version_key("15") > version_key("9.6"));
        assert!(version_key("16") > version_key("15"));
        assert_eq!(version_key("main"), None);
    }
}
