//! Running the commands a task is made of: cargo as the toolchain that runs xtask, and any
//! program shown as it is run, its output kept back unless it fails.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

pub(crate) fn workspace_root() -> PathBuf {
    let xtask_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask_dir.parent().unwrap_or(xtask_dir).to_path_buf()
}

/// Asks cargo rather than assuming `target/`, so CARGO_TARGET_DIR and `build.target-dir` count.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    let fallback = root.join("target");
    let Ok(output) = cargo_command(root)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .stderr(std::process::Stdio::inherit())
        .output()
    else {
        return fallback;
    };
    serde_json::from_slice::<serde_json::Value>(&output.stdout)
        .ok()
        .and_then(|meta| meta["target_directory"].as_str().map(PathBuf::from))
        .unwrap_or(fallback)
}

/// The cargo that runs us (CARGO), so every step uses the same toolchain, without the
/// variables `cargo run` set for xtask itself (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, ...):
/// build scripts that watch them (ring's does) would otherwise see a change against a plain
/// `cargo build` and rebuild themselves and everything above them.
pub(crate) fn cargo_command(root: &Path) -> Command {
    let mut cmd = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root);
    for (name, _) in env::vars_os() {
        if name.to_str().is_some_and(set_for_xtask) {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// Whether `cargo run` sets the variable `name` for the crate it runs (here, xtask).
pub(crate) fn set_for_xtask(name: &str) -> bool {
    name.starts_with("CARGO_PKG_")
        || matches!(
            name,
            "CARGO_MANIFEST_DIR"
                | "CARGO_MANIFEST_PATH"
                | "CARGO_CRATE_NAME"
                | "CARGO_BIN_NAME"
                | "CARGO_PRIMARY_PACKAGE"
        )
}

pub(crate) fn cargo(root: &Path, args: &[&str]) -> Result<()> {
    run_command(cargo_command(root).args(args))
}

pub(crate) fn run_command(cmd: &mut Command) -> Result<()> {
    println!("$ {}", display(cmd));
    let status = cmd
        .status()
        .with_context(|| format!("could not start `{}`", display(cmd)))?;
    if !status.success() {
        bail!("`{}` failed ({status})", display(cmd));
    }
    Ok(())
}

/// Like `run_command`, but shows the command's output only when it fails.
pub(crate) fn run_quietly(cmd: &mut Command) -> Result<()> {
    println!("$ {}", display(cmd));
    let output = cmd
        .output()
        .with_context(|| format!("could not start `{}`", display(cmd)))?;
    if !output.status.success() {
        bail!(
            "`{}` failed ({}):\n{}{}",
            display(cmd),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

pub(crate) fn display(cmd: &Command) -> String {
    // Show `cargo`, not the toolchain's absolute path from CARGO.
    let program = if Some(cmd.get_program()) == env::var_os("CARGO").as_deref() {
        "cargo".as_ref()
    } else {
        cmd.get_program()
    };
    std::iter::once(program)
        .chain(cmd.get_args())
        .map(|arg| arg.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}
