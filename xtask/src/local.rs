//! Running local processes for the tasks that drive a real server: PostgreSQL's client, the
//! `deckhand` binary, and the few HTTP requests that tell whether it is up.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use crate::display;
use crate::pg::{self, Cluster};

/// A local address no server listens on now: a port the system hands out, so a server left
/// running by an earlier run can never answer for the one being started.
pub fn free_address() -> Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr()?.to_string())
}

/// Waits until the server answers `/healthz` at `address`, failing if it stops first.
pub fn wait_for_health(server: &mut Child, address: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = server.try_wait()? {
            bail!("the server stopped at start ({status})");
        }
        if get(address, "/healthz").is_ok_and(|(code, _)| code == 200) {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the server did not answer /healthz within 60 s");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The status code and body of one HTTP/1.1 GET (bodies sent whole, not chunked).
pub fn get(address: &str, path: &str) -> Result<(u16, String)> {
    get_with(address, path, "")
}

/// [`get`] with one more header line (`Name: value`), or none when `header` is empty.
pub fn get_with(address: &str, path: &str, header: &str) -> Result<(u16, String)> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let header = if header.is_empty() {
        String::new()
    } else {
        format!("{header}\r\n")
    };
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\n{header}Connection: close\r\n\r\n"
    )?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let text = String::from_utf8_lossy(&response);
    let code = text
        .get(9..12)
        .and_then(|code| code.parse().ok())
        .context("not an HTTP answer")?;
    let body = text
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, body)| body.to_owned());
    Ok((code, body))
}

/// `deckhand <args>` on the database at `url`, sealing with `secret_key`; returns its stdout.
pub fn deckhand(binary: &Path, url: &str, secret_key: &str, args: &[&str]) -> Result<String> {
    let mut cmd = Command::new(binary);
    cmd.args(args)
        .env("DATABASE_URL", url)
        .env("DECKHAND_SECRET_KEY", secret_key)
        .env("RUST_LOG", "warn");
    output(&mut cmd)
}

pub fn psql(cluster: &Cluster, database: &str, args: &[&str]) -> Result<String> {
    let socket = path_text(&cluster.socket())?;
    output(
        pg::pg_command("psql")?
            .args([
                "-X",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                &socket,
                "-U",
                "postgres",
            ])
            .args(["-d", database])
            .args(args),
    )
}

/// Runs `cmd` and returns its stdout; fails with its output when it fails.
pub fn output(cmd: &mut Command) -> Result<String> {
    let result = cmd
        .output()
        .with_context(|| format!("could not start `{}`", display(cmd)))?;
    if !result.status.success() {
        bail!(
            "`{}` failed ({}):\n{}{}",
            display(cmd),
            result.status,
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&result.stdout).into_owned())
}

pub fn path_text(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_owned)
        .with_context(|| format!("{} is not UTF-8", path.display()))
}
