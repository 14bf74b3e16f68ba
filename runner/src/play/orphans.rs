//! Processes the engines leave behind. The runner is a child subreaper (Linux
//! `PR_SET_CHILD_SUBREAPER`, set before its first engine starts): a process an engine started
//! that left the engine's process group (`setsid`, a daemon's double fork) is re-parented to the
//! runner when its parent dies, instead of to init. Each engine is started with
//! [`ENGINE_ENV`]`=<token>` in its environment, which its descendants inherit: when the engine is
//! dropped, the inherited processes carrying its token are killed ([`kill_inherited`]), and at
//! the end of a command every process left with the runner as parent is killed and reaped
//! ([`reap_all`]). Engines in use are never touched: their pids are registered while they live.
//! Linux only; elsewhere these are no-ops.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The environment variable naming the engine a process descends from.
pub const ENGINE_ENV: &str = "MPC_RUNNER_ENGINE";

/// Pids of the engine processes alive (spawned and not yet dropped). Held while spawning and
/// while scanning, so a fresh engine is never taken for an inherited process.
static LIVE: Mutex<Option<HashSet<i32>>> = Mutex::new(None);
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(0);

/// Makes the runner the subreaper of its descendants (once; later calls do nothing).
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of this process.
        ONCE.call_once(|| unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong);
        });
    }
}

/// Spawns an engine: the runner becomes a subreaper, the engine gets a fresh token in its
/// environment, and its pid is registered as live. Returns the child and its token.
pub fn spawn(
    cmd: &mut tokio::process::Command,
) -> std::io::Result<(tokio::process::Child, String)> {
    become_subreaper();
    let token = format!("{}-{}", std::process::id(), NEXT_TOKEN.fetch_add(1, Ordering::Relaxed));
    cmd.env(ENGINE_ENV, &token);
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let child = cmd.spawn()?;
    if let Some(pid) = child.id() {
        live.get_or_insert_with(HashSet::new).insert(pid as i32);
    }
    Ok((child, token))
}

/// An engine is gone (dropped): kills the inherited processes that carry its `token` and
/// forgets its pid. Does not wait; zombies are reaped by later calls and by [`reap_all`].
pub fn kill_inherited(pid: Option<i32>, token: &str) {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let needle = format!("{ENGINE_ENV}={token}");
    for p in inherited(live.as_ref()) {
        if p.zombie {
            reap(p.pid);
        } else if carries(p.pid, &needle) {
            kill(p.pid);
        }
    }
    if let (Some(set), Some(pid)) = (live.as_mut(), pid) {
        set.remove(&pid);
    }
}

/// At the end of a command: kills every process left with the runner as parent (engines
/// included) and reaps them, until none is left or `limit` has passed. Returns how many were
/// still there at the end.
pub async fn reap_all(limit: Duration) -> usize {
    let start = Instant::now();
    loop {
        let left = {
            let _live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
            let children = inherited(None);
            for p in &children {
                if p.zombie {
                    reap(p.pid);
                } else {
                    kill(p.pid);
                }
            }
            children.iter().filter(|p| !p.zombie).count()
        };
        if left == 0 || start.elapsed() >= limit {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

struct Inherited {
    pid: i32,
    zombie: bool,
}

/// The processes whose parent is the runner, but for the pids in `live`.
fn inherited(live: Option<&HashSet<i32>>) -> Vec<Inherited> {
    let me = std::process::id() as i32;
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return out };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        if pid == me || live.is_some_and(|l| l.contains(&pid)) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        if let Some((state, ppid)) = state_and_parent(&stat)
            && ppid == me
        {
            out.push(Inherited { pid, zombie: state == "Z" || state == "X" });
        }
    }
    out
}

/// The state and the parent pid of a `/proc/PID/stat` line (the name may hold spaces and ')').
fn state_and_parent(stat: &str) -> Option<(&str, i32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Whether process `pid`'s environment holds the entry `needle` (`NAME=VALUE`).
fn carries(pid: i32, needle: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|entry| entry == needle.as_bytes()))
}

fn kill(pid: i32) {
    // SAFETY: kill only sends a signal; `pid` is a child of this process (not yet reaped, so
    // its pid cannot have been reused).
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: waitpid on our own child with WNOHANG never blocks and writes only `status`.
    unsafe {
        libc::waitpid(pid, &mut status, libc::WNOHANG);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_state_and_parent() {
        assert_eq!(state_and_parent("42 (a b) c) S 7 42 42 0"), Some(("S", 7)));
        assert_eq!(state_and_parent("42 (x) Z 1 0"), Some(("Z", 1)));
        assert_eq!(state_and_parent("garbage"), None);
    }
}
