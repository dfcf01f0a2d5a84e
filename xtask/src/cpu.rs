//! CPU time of processes, read from `/proc`: what a measured request cost each process, in
//! CPU time rather than in a rate that the other loads of a shared machine move.

use std::fs;

use anyhow::{Context, Result};

/// Linux's `USER_HZ`: the unit of `/proc/<pid>/stat`'s times, 100 on every architecture
/// Linux ships (the kernel converts to it for user space).
const TICKS_PER_SECOND: f64 = 100.0;

/// The fields of `/proc/<pid>/stat` after the command name, numbered as in proc(5) minus 3.
struct Stat {
    parent: u32,
    /// utime + stime.
    own: u64,
    /// cutime + cstime: children the process has waited for.
    reaped_children: u64,
}

fn stat(pid: u32) -> Result<Stat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("reading /proc/{pid}/stat"))?;
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    let fields: Vec<&str> = text
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let field = |n: usize| -> Result<u64> {
        fields
            .get(n - 3)
            .and_then(|value| value.parse().ok())
            .with_context(|| format!("field {n} of /proc/{pid}/stat"))
    };
    Ok(Stat {
        parent: u32::try_from(field(4)?)?,
        own: field(14)? + field(15)?,
        reaped_children: field(16)? + field(17)?,
    })
}

/// CPU seconds `pid` has used.
pub fn process_seconds(pid: u32) -> Result<f64> {
    Ok(stat(pid)?.own as f64 / TICKS_PER_SECOND)
}

/// CPU seconds `pid` and its children have used, the living and the reaped: for the
/// postmaster, the whole database server (backends, autovacuum, checkpointer, WAL writer). A
/// child that ends between two readings moves from the living to the reaped, so the
/// difference of two readings is what ran in between.
pub fn family_seconds(pid: u32) -> Result<f64> {
    let parent = stat(pid)?;
    let mut ticks = parent.own + parent.reaped_children;
    for entry in fs::read_dir("/proc")? {
        let Some(child) = entry?
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        // A process may end while we read: it is then counted as reaped next time.
        if let Ok(child) = stat(child)
            && child.parent == pid
        {
            ticks += child.own;
        }
    }
    Ok(ticks as f64 / TICKS_PER_SECOND)
}
