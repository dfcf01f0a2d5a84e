//! A real PgBouncer in transaction pooling mode in front of a test's own cluster
//! ([`super::OwnCluster::pgbouncer`]): its config, user list, log and Unix socket live in a
//! `pgbouncer/` directory beside the cluster's data, and it runs as the user the server runs as.
//! A missing `pgbouncer` binary fails the test with how to install it; it never skips.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, ensure};

/// The port in the socket's name (`.s.PGSQL.<port>`); no TCP listener is opened.
const PORT: u16 = 6432;
/// Where Debian's package puts the binary, off the PATH of most users.
const DEBIAN_BINARY: &str = "/usr/sbin/pgbouncer";

/// A running PgBouncer, stopped on drop.
pub struct PgBouncer {
    dir: PathBuf,
    user: String,
}

impl PgBouncer {
    /// Starts PgBouncer in `dir` (which the server's user may use) in front of the server whose
    /// socket is in `server_socket`, for the database `postgres` as `user`, with at most
    /// `pool_size` server connections. `command` runs a program as the server's user.
    pub(super) fn start(
        dir: &Path,
        server_socket: &Path,
        user: &str,
        pool_size: u32,
        command: impl Fn(&Path) -> Command,
    ) -> anyhow::Result<Self> {
        let binary = find_binary()?;
        let bouncer = Self {
            dir: dir.to_owned(),
            user: user.to_owned(),
        };
        // A previous run's daemon, if any, goes first: the socket name is fixed. Its socket file
        // goes too (a fast exit may leave it behind).
        bouncer.stop();
        let socket = dir.join(format!(".s.PGSQL.{PORT}"));
        if let Err(error) = fs::remove_file(&socket)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            return Err(error).with_context(|| format!("removing the stale {}", socket.display()));
        }
        let config = dir.join("pgbouncer.ini");
        fs::write(dir.join("userlist.txt"), format!("\"{user}\" \"\"\n"))
            .context("writing PgBouncer's user list")?;
        fs::write(
            &config,
            format!(
                "[databases]\n\
                 postgres = host={server} port=5432 dbname=postgres\n\
                 [pgbouncer]\n\
                 pool_mode = transaction\n\
                 default_pool_size = {pool_size}\n\
                 min_pool_size = 0\n\
                 reserve_pool_size = 0\n\
                 max_client_conn = 500\n\
                 listen_addr =\n\
                 listen_port = {PORT}\n\
                 unix_socket_dir = {dir}\n\
                 auth_type = trust\n\
                 auth_file = {dir}/userlist.txt\n\
                 logfile = {dir}/pgbouncer.log\n\
                 pidfile = {dir}/pgbouncer.pid\n\
                 server_reset_query =\n",
                server = server_socket.display(),
                dir = dir.display(),
            ),
        )
        .context("writing pgbouncer.ini")?;
        let output = command(&binary)
            .arg("-d")
            .arg(&config)
            .current_dir(dir)
            .output()
            .with_context(|| format!("running {}", binary.display()))?;
        ensure!(
            output.status.success(),
            "PgBouncer did not start ({}):\n{}{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            bouncer.log_tail()
        );
        // Ready when it accepts a connection: the socket file appears at `bind`, before
        // `listen`, and a connection between the two is refused.
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            ensure!(
                Instant::now() < deadline,
                "PgBouncer did not open {} within 10 s:\n{}",
                socket.display(),
                bouncer.log_tail()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(bouncer)
    }

    /// The URL of the `postgres` database through PgBouncer.
    pub fn url(&self) -> String {
        let host = percent_encoding::percent_encode(
            self.dir.as_os_str().as_encoded_bytes(),
            percent_encoding::NON_ALPHANUMERIC,
        );
        format!(
            "postgresql://{}@/postgres?host={host}&port={PORT}",
            self.user
        )
    }

    fn log_tail(&self) -> String {
        let log = fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    fn stop(&self) {
        let Ok(pid) = fs::read_to_string(self.dir.join("pgbouncer.pid")) else {
            return;
        };
        // SIGINT: PgBouncer's "safe shutdown" waits for clients; SIGTERM closes them at once.
        let _ = Command::new("kill").arg("-TERM").arg(pid.trim()).output();
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.dir.join("pgbouncer.pid").exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `pgbouncer` on PATH or where Debian installs it.
fn find_binary() -> anyhow::Result<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join("pgbouncer"));
    on_path
        .chain([PathBuf::from(DEBIAN_BINARY)])
        .find(|candidate| candidate.is_file())
        .context(
            "the pgbouncer binary is missing (looked on PATH and in /usr/sbin): install the \
             Debian package `pgbouncer` (apt-get install pgbouncer; `.ci/run` does) for the \
             connection pooler tests",
        )
}
