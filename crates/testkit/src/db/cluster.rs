//! The throwaway PostgreSQL cluster started when `DATABASE_URL` is unset.
//!
//! One cluster per target directory, in `<target>/testkit-pg/`: data in `data/`, the server log
//! in `postgres.log`, the Unix socket in `socket/` (no TCP listener, so it never clashes with
//! another server). `<target>` is `CARGO_TARGET_DIR` or the workspace's `target/`. Test processes
//! take turns on the file lock `testkit-pg/lock` to create or start it, and every later run
//! reuses it while it runs; [`stop_local_cluster`] (or `pg_ctl stop -D target/testkit-pg/data
//! -m fast`) stops it.
//!
//! PostgreSQL refuses to run as root, and CI runs as root: then `initdb` and `pg_ctl` run as the
//! `postgres` system user (`runuser -u postgres --`) in a directory that user owns. When that user
//! cannot reach `<target>`, the cluster lives in `<temp dir>/deckhand-testkit-pg/` instead.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail, ensure};
use nix::unistd::User;

use super::pgbouncer::PgBouncer;

const SYSTEM_USER: &str = "postgres";
const SUPERUSER: &str = "postgres";
// The longest path a Unix socket address holds on Linux, without its terminating NUL.
const MAX_SOCKET_PATH: usize = 107;
const SOCKET_FILE: &str = ".s.PGSQL.5432";

/// Where a cluster lives.
struct Layout {
    root: PathBuf,
}

impl Layout {
    fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    fn socket(&self) -> PathBuf {
        self.root.join("socket")
    }

    fn log(&self) -> PathBuf {
        self.root.join("postgres.log")
    }

    fn lock(&self) -> PathBuf {
        self.root.join("lock")
    }

    fn exists(&self) -> bool {
        self.data().join("PG_VERSION").is_file()
    }

    /// The connection URL of the cluster once it runs.
    fn url(&self) -> String {
        let socket = self.socket();
        let host = percent_encoding::percent_encode(
            socket.as_os_str().as_encoded_bytes(),
            percent_encoding::NON_ALPHANUMERIC,
        );
        format!("postgresql://{SUPERUSER}@/postgres?host={host}")
    }
}

/// How the server binaries are run: as ourselves, or as the `postgres` user when we are root.
struct Runner {
    bindir: PathBuf,
    run_as: Option<User>,
}

impl Runner {
    fn detect() -> anyhow::Result<Self> {
        let bindir = find_bindir()?;
        let run_as = if nix::unistd::geteuid().is_root() {
            let user = User::from_name(SYSTEM_USER)
                .context("looking up the postgres system user")?
                .with_context(|| {
                    format!(
                        "running as root, which PostgreSQL refuses, and there is no `{SYSTEM_USER}` \
                         system user to run it as"
                    )
                })?;
            Some(user)
        } else {
            None
        };
        Ok(Self { bindir, run_as })
    }

    /// `program` (a path or a name on PATH) as the user the server runs as.
    fn command(&self, program: impl AsRef<OsStr>) -> Command {
        match self.run_as {
            None => Command::new(program),
            Some(_) => {
                let mut command = Command::new("runuser");
                command.args(["-u", SYSTEM_USER, "--"]).arg(program);
                command
            }
        }
    }

    fn server_binary(&self, name: &str) -> Command {
        self.command(self.bindir.join(name))
    }

    /// A program of the server's release (`pg_basebackup`): beside `pg_ctl`, where `pg_ctl`
    /// really lives when that is a link, or on PATH.
    fn release_binary(&self, name: &str) -> anyhow::Result<Command> {
        let real_bindir = fs::canonicalize(self.bindir.join("pg_ctl"))
            .ok()
            .and_then(|pg_ctl| pg_ctl.parent().map(Path::to_path_buf));
        let found = [Some(self.bindir.clone()), real_bindir]
            .into_iter()
            .flatten()
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
            .or_else(|| which::which(name).ok())
            .with_context(|| {
                format!(
                    "found no `{name}` beside pg_ctl or on PATH (it comes with PostgreSQL's \
                     client programs: the Debian package postgresql-client)"
                )
            })?;
        Ok(self.command(found))
    }

    /// A directory the server's user may use, created if needed.
    fn prepare(&self, dir: &Path) -> anyhow::Result<()> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let Some(user) = &self.run_as else {
            return Ok(());
        };
        // Never take over a cluster another user made: its files would stay theirs.
        if let Ok(data) = fs::metadata(dir.join("data")) {
            ensure!(
                data.uid() == user.uid.as_raw(),
                "{} belongs to another user than {SYSTEM_USER}",
                dir.display()
            );
        }
        std::os::unix::fs::chown(dir, Some(user.uid.as_raw()), Some(user.gid.as_raw()))
            .with_context(|| format!("giving {} to {SYSTEM_USER}", dir.display()))?;
        let usable = self
            .command("test")
            .arg("-w")
            .arg(dir)
            .arg("-a")
            .arg("-x")
            .arg(dir)
            .status()
            .context("running `runuser`")?
            .success();
        ensure!(
            usable,
            "the {SYSTEM_USER} user cannot use {}: a parent directory is closed to it",
            dir.display()
        );
        Ok(())
    }

    /// Runs `command` to completion; an error with its output when it fails.
    fn run(&self, command: &mut Command) -> anyhow::Result<()> {
        let shown = format!("{command:?}");
        // Captured, not inherited: the server outlives the command, and must not hold on to
        // the test harness's pipes.
        let output = command
            .output()
            .with_context(|| format!("could not run {shown}"))?;
        ensure!(
            output.status.success(),
            "{shown} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(())
    }

    fn is_running(&self, layout: &Layout) -> anyhow::Result<bool> {
        // `pg_ctl status` rather than the pid file, which a crashed server leaves behind.
        let status = self
            .server_binary("pg_ctl")
            .arg("status")
            .arg("-D")
            .arg(layout.data())
            .output()
            .context("could not run pg_ctl status")?
            .status;
        Ok(status.success())
    }

    fn init(&self, layout: &Layout) -> anyhow::Result<()> {
        // initdb into a side directory and rename it into place, so that an interrupted run
        // leaves no half-made cluster for the next one to trip over.
        let staging = layout.root.join("data.initdb");
        if staging.exists() {
            fs::remove_dir_all(&staging)
                .with_context(|| format!("removing {}", staging.display()))?;
        }
        self.run(
            self.server_binary("initdb")
                .arg("-D")
                .arg(&staging)
                .args([
                    "-U",
                    SUPERUSER,
                    "--auth=trust",
                    "--encoding=UTF8",
                    "--locale=C",
                ])
                .arg("--no-sync")
                .current_dir(&layout.root),
        )?;
        fs::rename(&staging, layout.data()).context("moving the new cluster into place")
    }

    fn start(&self, layout: &Layout) -> anyhow::Result<()> {
        let socket = layout.socket();
        self.prepare(&socket)?;
        let socket_text = socket
            .to_str()
            .filter(|path| !path.contains('\''))
            .with_context(|| format!("{} cannot be quoted for pg_ctl", socket.display()))?;
        // On the command line rather than in postgresql.conf, so that a cluster made by
        // `cargo xtask db` starts the same way. Durability is not wanted: the data is thrown
        // away. Many test processes each hold a few connections at once.
        let options = format!(
            "-k '{socket_text}' -c listen_addresses='' -F -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections=300"
        );
        let started = self.run(
            self.server_binary("pg_ctl")
                .args(["start", "-w", "-t", "60", "-D"])
                .arg(layout.data())
                .arg("-l")
                .arg(layout.log())
                .args(["-o", &options])
                .current_dir(&layout.root),
        );
        started.with_context(|| {
            format!(
                "the server log {} ends with:\n{}",
                layout.log().display(),
                log_tail(&layout.log())
            )
        })
    }

    fn stop(&self, layout: &Layout) -> anyhow::Result<()> {
        self.run(
            self.server_binary("pg_ctl")
                .args(["stop", "-w", "-m", "fast", "-D"])
                .arg(layout.data())
                .current_dir(&layout.root),
        )
    }
}

/// Starts the local cluster, or finds it running, and returns its URL.
pub(super) fn start() -> anyhow::Result<String> {
    let runner = Runner::detect()?;
    let layout = choose_layout(&runner)?;
    let socket_path = layout.socket().join(SOCKET_FILE);
    ensure!(
        socket_path.as_os_str().len() <= MAX_SOCKET_PATH,
        "the socket path {} is longer than a Unix socket address allows; set CARGO_TARGET_DIR \
         to a shorter path",
        socket_path.display()
    );

    let lock = File::create(layout.lock())
        .with_context(|| format!("creating {}", layout.lock().display()))?;
    lock.lock()
        .with_context(|| format!("locking {}", layout.lock().display()))?;
    if !layout.exists() {
        runner.init(&layout)?;
    }
    if !runner.is_running(&layout)?
        && let Err(error) = runner.start(&layout)
    {
        // The data is disposable: a cluster that no longer starts (its data directory swapped
        // or damaged under a running server, say) is made anew instead of failing every run
        // until someone deletes it by hand.
        eprintln!("the test cluster did not start; making a fresh one. {error:#}");
        fs::remove_dir_all(layout.data())
            .with_context(|| format!("removing {}", layout.data().display()))?;
        runner.init(&layout)?;
        runner
            .start(&layout)
            .context("a fresh cluster did not start either")?;
    }
    Ok(layout.url())
}

/// Stops the throwaway cluster the tests start when `DATABASE_URL` is unset, if it runs: the one
/// in `<target>/testkit-pg/data` (`pg_ctl stop -D target/testkit-pg/data -m fast`), or in
/// `<temp dir>/deckhand-testkit-pg/data` when root had to put it there. Returns whether a server
/// was stopped. The data stays, so the next run starts it again without `initdb`.
pub fn stop_local_cluster() -> anyhow::Result<bool> {
    let runner = Runner::detect()?;
    let mut stopped = false;
    for layout in candidate_layouts(&runner) {
        if !layout.exists() {
            continue;
        }
        let _lock = File::create(layout.lock())
            .and_then(|lock| lock.lock().map(|()| lock))
            .with_context(|| format!("locking {}", layout.lock().display()))?;
        if runner.is_running(&layout)? {
            runner.stop(&layout)?;
            stopped = true;
        }
    }
    Ok(stopped)
}

/// Where the local cluster lives: `<target>/testkit-pg`, with its data in `data/`. (When root
/// cannot hand that directory to the `postgres` user, `<temp dir>/deckhand-testkit-pg` instead.)
pub fn local_cluster_dir() -> PathBuf {
    target_dir().join("testkit-pg")
}

fn candidate_layouts(runner: &Runner) -> Vec<Layout> {
    let mut roots = vec![local_cluster_dir()];
    if runner.run_as.is_some() {
        roots.push(std::env::temp_dir().join("deckhand-testkit-pg"));
    }
    roots.into_iter().map(|root| Layout { root }).collect()
}

fn choose_layout(runner: &Runner) -> anyhow::Result<Layout> {
    let mut refusals = Vec::new();
    for layout in candidate_layouts(runner) {
        match runner.prepare(&layout.root) {
            Ok(()) => return Ok(layout),
            Err(error) => refusals.push(format!("{error:#}")),
        }
    }
    bail!("no directory for the cluster: {}", refusals.join("; "))
}

fn target_dir() -> PathBuf {
    // crates/testkit -> the workspace root.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest.ancestors().nth(2).unwrap_or(manifest);
    match std::env::var_os("CARGO_TARGET_DIR") {
        // A relative CARGO_TARGET_DIR is relative to where cargo ran: the workspace, for us.
        Some(dir) => workspace.join(dir),
        None => workspace.join("target"),
    }
}

/// The directory holding `initdb` and `pg_ctl`: on PATH, else the newest
/// `/usr/lib/postgresql/*/bin` (Debian and Ubuntu keep them off PATH), else `pg_config --bindir`.
fn find_bindir() -> anyhow::Result<PathBuf> {
    let complete = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();

    if let Some(dir) = which::which("initdb")
        .ok()
        .and_then(|initdb| initdb.parent().map(Path::to_path_buf))
        && complete(&dir)
    {
        return Ok(dir);
    }

    let mut versioned: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, dir)| complete(dir))
        .collect();
    versioned.sort();
    if let Some((_, dir)) = versioned.pop() {
        return Ok(dir);
    }

    if let Ok(output) = Command::new("pg_config").arg("--bindir").output()
        && output.status.success()
    {
        let dir = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        if complete(&dir) {
            return Ok(dir);
        }
    }

    bail!(
        "found no PostgreSQL server binaries (initdb and pg_ctl) on PATH, in \
         /usr/lib/postgresql/*/bin or in `pg_config --bindir`"
    )
}

fn log_tail(log: &Path) -> String {
    match fs::read_to_string(log) {
        Ok(text) => {
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(20)..].join("\n")
        }
        Err(error) => format!("(could not read it: {error})"),
    }
}

/// A cluster of a test's own, which it may stop and start under a running application (the
/// shared one must never be stopped mid-run). It lives beside the shared cluster, in
/// `<target>/testkit-pg-<name>/` (or under the temp dir when root must), and is stopped on drop.
pub struct OwnCluster {
    runner: Runner,
    layout: Layout,
}

impl OwnCluster {
    /// Creates the cluster `name` with empty data (replacing what a previous run left) and
    /// starts it.
    pub fn start(name: &str) -> anyhow::Result<Self> {
        let (runner, layout) = Self::fresh_layout(name)?;
        runner.init(&layout)?;
        runner.start(&layout)?;
        Ok(Self { runner, layout })
    }

    /// A streaming replica of this cluster, `name`: a base backup taken with `pg_basebackup -R`
    /// (which writes `primary_conninfo` and `standby.signal`) into a data directory of its
    /// own, started as a second server that replays this one's log and answers reads (hot
    /// standby). Stopped on drop, like this one.
    pub fn replica(&self, name: &str) -> anyhow::Result<Self> {
        let (runner, layout) = Self::fresh_layout(name)?;
        runner
            .run(
                runner
                    .release_binary("pg_basebackup")?
                    .arg("-D")
                    .arg(layout.data())
                    .args(["-R", "-X", "stream", "--no-sync", "-d"])
                    .arg(self.url())
                    .current_dir(&layout.root),
            )
            .context("taking a base backup for the replica")?;
        runner.start(&layout)?;
        Ok(Self { runner, layout })
    }

    /// An empty place for the cluster `name` (what a previous run left there removed).
    fn fresh_layout(name: &str) -> anyhow::Result<(Runner, Layout)> {
        let runner = Runner::detect()?;
        let folder = format!("testkit-pg-{name}");
        let mut roots = vec![local_cluster_dir().with_file_name(&folder)];
        if runner.run_as.is_some() {
            roots.push(std::env::temp_dir().join(format!("deckhand-{folder}")));
        }
        let root = roots
            .into_iter()
            .find(|root| runner.prepare(root).is_ok())
            .with_context(|| format!("no directory {SYSTEM_USER} may use for {folder}"))?;
        let layout = Layout { root };
        // Always fresh: a test's own cluster holds only what the test put there.
        if layout.exists() {
            if runner.is_running(&layout)? {
                runner.stop(&layout)?;
            }
            fs::remove_dir_all(layout.data())
                .with_context(|| format!("removing {}", layout.data().display()))?;
        }
        Ok((runner, layout))
    }

    pub fn url(&self) -> String {
        self.layout.url()
    }

    /// Stops the server (fast shutdown: clients are disconnected at once).
    pub fn stop(&self) -> anyhow::Result<()> {
        self.runner.stop(&self.layout)
    }

    /// Starts the server again after [`OwnCluster::stop`].
    pub fn restart(&self) -> anyhow::Result<()> {
        self.runner.start(&self.layout)
    }

    /// A PgBouncer in transaction pooling mode in front of this cluster's `postgres` database,
    /// with at most `pool_size` server connections, run as the server's user.
    pub fn pgbouncer(&self, pool_size: u32) -> anyhow::Result<PgBouncer> {
        let dir = self.layout.root.join("pgbouncer");
        self.runner.prepare(&dir)?;
        PgBouncer::start(
            &dir,
            &self.layout.socket(),
            SUPERUSER,
            pool_size,
            |program| self.runner.command(program),
        )
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        if self.runner.is_running(&self.layout).unwrap_or(false)
            && let Err(error) = self.runner.stop(&self.layout)
        {
            eprintln!("could not stop {}: {error:#}", self.layout.root.display());
        }
    }
}
