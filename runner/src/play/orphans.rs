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
    let child = busy_retry(|| cmd.spawn())?;
    if let Some(pid) = child.id() {
        live.get_or_insert_with(HashSet::new).insert(pid as i32);
    }
    Ok((child, token))
}

/// Starts a child of the runner's own that is not an engine (a build, a bench, `tar`, a
/// compiler's version) with its pid registered as live, like an engine's, until [`forget`]:
/// an engine dropped meanwhile sweeps the runner's zombie children, and would otherwise reap
/// this one first and take its exit status (its waiter then sees `ECHILD`: a failed build or
/// bench read as one whose status is unknown; `output()` failing outright).
pub fn spawn_own(cmd: &mut std::process::Command) -> std::io::Result<std::process::Child> {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let child = busy_retry(|| cmd.spawn())?;
    live.get_or_insert_with(HashSet::new).insert(child.id() as i32);
    Ok(child)
}

/// `spawn` again while it fails with "text file busy" (`ETXTBSY`), at most 10 times over about
/// 0.3 s. A program written a moment ago (an artifact fetched into the cache, a build's binary,
/// a test's script) is busy while any process forked meanwhile by another thread still holds
/// a copy of the writer's descriptor, until that process executes its own program: a race of
/// a few milliseconds that would otherwise refuse a run for nothing.
fn busy_retry<T>(mut spawn: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    let mut tries = 0;
    loop {
        match spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 10 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(5 * tries));
            }
            r => return r,
        }
    }
}

/// A child started by [`spawn_own`] was waited for: its pid is no longer the runner's.
pub fn forget(pid: u32) {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(set) = live.as_mut() {
        set.remove(&(pid as i32));
    }
}

/// `cmd.output()` through [`spawn_own`]: stdout and stderr captured, stdin as `cmd` set it.
pub fn output_own(cmd: &mut std::process::Command) -> std::io::Result<std::process::Output> {
    use std::process::Stdio;
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = spawn_own(cmd)?;
    let pid = child.id();
    let out = child.wait_with_output();
    forget(pid);
    out
}

/// An engine is gone (dropped): kills the inherited processes that carry its `token` and
/// forgets its pid. Does not wait; zombies are reaped by later calls and by [`reap_all`].
pub fn kill_inherited(pid: Option<i32>, token: &str) {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    sweep(&mut live, pid, token);
}

/// [`kill_inherited`] with [`LIVE`] held by the caller.
fn sweep(live: &mut Option<HashSet<i32>>, pid: Option<i32>, token: &str) {
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

    /// A child of the runner's own, registered by `spawn_own`, keeps its exit status through
    /// an engine's sweep; an unregistered one loses it to the sweep (what made a failed bench
    /// read as "printed no node count" now and then). The unregistered child is started and
    /// swept with [`LIVE`] held: the tests of this process drop engines meanwhile, and each
    /// drop sweeps, so without the lock another test's sweep reaped it before it was seen as
    /// a zombie here (the test then waited 10 s for a process already gone and failed).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_sweep_leaves_the_runner_s_own_children_to_their_waiters() {
        let zombie = |pid: u32| {
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(10) {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                if state_and_parent(&stat).is_some_and(|(s, _)| s == "Z") {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            panic!("process {pid} did not end");
        };
        let sh = || {
            let mut c = std::process::Command::new("sh");
            c.args(["-c", "exit 3"]);
            c
        };
        let mut own = spawn_own(&mut sh()).unwrap();
        zombie(own.id());
        kill_inherited(None, "no-such-token");
        assert_eq!(own.wait().unwrap().code(), Some(3));
        forget(own.id());
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        let mut plain = sh().spawn().unwrap();
        zombie(plain.id());
        sweep(&mut live, None, "no-such-token");
        drop(live);
        let e = plain.wait().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ECHILD), "{e}");
    }

    #[test]
    fn stat_lines_give_state_and_parent() {
        assert_eq!(state_and_parent("42 (a b) c) S 7 42 42 0"), Some(("S", 7)));
        assert_eq!(state_and_parent("42 (x) Z 1 0"), Some(("Z", 1)));
        assert_eq!(state_and_parent("garbage"), None);
    }
}
