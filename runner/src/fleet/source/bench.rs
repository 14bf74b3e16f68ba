//! An engine's bench: the command that searches a fixed set of positions and prints how many
//! nodes it searched (the engine's signature: the same source and the same search give the
//! same count on every machine) and how fast (nodes per second: this machine's speed).
//!
//! The node count is read from the output (stdout and stderr together: Stockfish prints its
//! bench to stderr), by default from the last line of one of these forms:
//!
//! - `<N> nodes <M> nps` (the bundled engine's `engine bench 5`, and engines like it);
//! - `Nodes searched: N` or `Nodes searched  : N` (Stockfish's `bench`), with the speed on
//!   a `Nodes/second : M` line.
//!
//! An engine that prints something else names the text that precedes its count
//! (`benchnodes=Total nodes` reads `Total nodes 12345` or `Total nodes: 12345`).

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::play::sandbox::{Inside, Sandbox};

/// How to bench an engine: its arguments, and how its node count is found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchSpec {
    /// Arguments of the engine's bench (`bench`; `bench 5` for the bundled engine).
    pub args: Vec<String>,
    /// The text that precedes the node count (None: the forms above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes_label: Option<String>,
}

/// What a bench printed: nodes searched, and the speed when it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchResult {
    pub nodes: u64,
    pub nps: Option<u64>,
}

/// The first whole number in `s` after optional spaces, `:` or `=`.
fn number_after(s: &str) -> Option<u64> {
    let t = s.trim_start_matches(|c: char| c.is_whitespace() || c == ':' || c == '=');
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `N nodes M nps` anywhere in a line: (N, M).
fn nodes_nps(line: &str) -> Option<(u64, u64)> {
    let w: Vec<&str> = line.split_whitespace().collect();
    w.windows(4).rev().find_map(|x| match x {
        [n, "nodes", m, "nps"] => Some((n.parse().ok()?, m.parse().ok()?)),
        _ => None,
    })
}

/// The number after `label` (case-insensitive) on `line`.
fn after_label(line: &str, label: &str) -> Option<u64> {
    let lower = line.to_ascii_lowercase();
    let at = lower.rfind(&label.to_ascii_lowercase())?;
    number_after(line.get(at + label.len()..)?)
}

/// Reads a bench's output; `None` when no node count is found.
pub fn parse_bench(text: &str, nodes_label: Option<&str>) -> Option<BenchResult> {
    let lines: Vec<&str> = text.lines().collect();
    let stockfish_nps = || lines.iter().rev().find_map(|l| after_label(l, "nodes/second"));
    if let Some(label) = nodes_label.filter(|l| !l.is_empty()) {
        let nodes = lines.iter().rev().find_map(|l| after_label(l, label))?;
        let nps = lines.iter().rev().find_map(|l| nodes_nps(l).map(|x| x.1)).or_else(stockfish_nps);
        return Some(BenchResult { nodes, nps });
    }
    lines.iter().rev().find_map(|l| {
        if let Some((nodes, nps)) = nodes_nps(l) {
            return Some(BenchResult { nodes, nps: Some(nps) });
        }
        after_label(l, "nodes searched").map(|nodes| BenchResult { nodes, nps: stockfish_nps() })
    })
}

/// Runs `program ARGS` in `dir` (environment without the fleet's secrets), or in `sandbox`'s
/// box (in a fresh private folder), and reads its node count; `Err` is one line (did not
/// start, timed out, failed, printed no count).
pub fn run_bench(
    program: &Path,
    spec: &BenchSpec,
    dir: &Path,
    timeout: Duration,
    sandbox: Option<&Sandbox>,
) -> Result<BenchResult, String> {
    let mut cmd = match sandbox {
        Some(b) => b.command(&Inside {
            program,
            args: spec.args.iter().map(Into::into).collect(),
            ..Inside::default()
        }),
        None => {
            let mut cmd = Command::new(program);
            cmd.args(&spec.args).current_dir(dir);
            cmd
        }
    };
    cmd.stdin(Stdio::null());
    for v in crate::play::uci::SECRET_ENV {
        cmd.env_remove(v);
    }
    let (status, text) = run_captured(cmd, timeout)
        .map_err(|e| format!("{} {}: {e}", program.display(), spec.args.join(" ")))?;
    if let Some(s) = status.filter(|s| !s.success()) {
        return Err(format!("{} {} failed ({s})", program.display(), spec.args.join(" ")));
    }
    parse_bench(&text, spec.nodes_label.as_deref()).ok_or_else(|| {
        let want = match &spec.nodes_label {
            Some(l) => format!("a count after {l:?}"),
            None => "`<N> nodes <M> nps` nor `Nodes searched: N`".into(),
        };
        format!("{} {} printed no node count ({want})", program.display(), spec.args.join(" "))
    })
}

/// Runs `cmd` in a process group of its own with stdout and stderr captured together, killing
/// the group after `timeout`. Its pid is registered with the runner's orphan sweep
/// (`play::orphans::spawn_own`), which then never reaps it; the exit status is still `None`
/// if something else took it first (the output then says how it went).
pub(crate) fn run_captured(
    mut cmd: Command,
    timeout: Duration,
) -> Result<(Option<std::process::ExitStatus>, String), String> {
    use std::os::unix::process::CommandExt as _;
    let (mut reader, writer) = std::io::pipe().map_err(|e| format!("cannot make a pipe: {e}"))?;
    let writer2 = writer.try_clone().map_err(|e| format!("cannot make a pipe: {e}"))?;
    cmd.stdout(writer).stderr(writer2).process_group(0);
    let mut child =
        crate::play::orphans::spawn_own(&mut cmd).map_err(|e| format!("cannot start: {e}"))?;
    // The parent's ends of the pipe are closed (moved into `cmd`, dropped with it), so the
    // reader ends when every process of the group closed its ends.
    drop(cmd);
    let out = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = reader.read_to_end(&mut text);
        String::from_utf8_lossy(&text).into_owned()
    });
    let start = Instant::now();
    let pid = child.id() as i32;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(e) if e.raw_os_error() == Some(libc::ECHILD) => break None,
            Err(e) => {
                crate::play::orphans::forget(child.id());
                return Err(format!("cannot wait for it: {e}"));
            }
        }
        if start.elapsed() > timeout {
            kill_group(pid);
            let _ = child.wait();
            crate::play::orphans::forget(child.id());
            return Err(format!("did not end within {} s", timeout.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    crate::play::orphans::forget(child.id());
    // What the command left running in its group (a daemon of a build) is stopped, so the
    // pipe closes.
    kill_group(pid);
    Ok((status, out.join().unwrap_or_default()))
}

fn kill_group(pid: i32) {
    // SAFETY: kill only sends a signal, to the process group this process made for the child.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_outputs_of_the_bundled_engine_stockfish_and_others_are_read() {
        let bundled = "mpc tries 10 cuts 3\n383308 nodes 1234567 nps\n";
        assert_eq!(
            parse_bench(bundled, None),
            Some(BenchResult { nodes: 383308, nps: Some(1234567) })
        );
        let stockfish = "info depth 13 ...\nbestmove e2e4\n\n===========================\n\
            Total time (ms) : 2345\nNodes searched  : 2105544\nNodes/second    : 897886\n";
        assert_eq!(
            parse_bench(stockfish, None),
            Some(BenchResult { nodes: 2105544, nps: Some(897886) })
        );
        assert_eq!(
            parse_bench("Nodes searched: 42\n", None),
            Some(BenchResult { nodes: 42, nps: None })
        );
        // Ethereal-like: a summary line with more words around the pair.
        assert_eq!(
            parse_bench("Bench: 5000 nodes 250000 nps\n", None),
            Some(BenchResult { nodes: 5000, nps: Some(250000) })
        );
        // The last count wins (a per-position line before the total).
        assert_eq!(parse_bench("1 nodes 2 nps\n9 nodes 3 nps\n", None).unwrap().nodes, 9);
        // A label of the engine's own.
        let own = "positions 50\nTotal nodes = 777 in 1.5 s\n";
        assert_eq!(parse_bench(own, Some("total nodes")).unwrap().nodes, 777);
        assert_eq!(parse_bench(own, None), None);
        assert_eq!(parse_bench("", None), None);
        assert_eq!(parse_bench("nodes searched: lots\n", None), None);
        assert_eq!(parse_bench("x nodes 5 nps\n", None), None);
    }

    #[test]
    fn a_bench_that_fails_or_hangs_is_one_line() {
        let d = std::env::temp_dir().join(format!("fleet-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let script = |name: &str, body: &str| {
            use std::os::unix::fs::PermissionsExt as _;
            let p = d.join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p
        };
        let spec = BenchSpec { args: vec!["bench".into()], nodes_label: None };
        let sf = script("sf.sh", "echo 'Nodes searched  : 12' >&2; echo 'Nodes/second : 3' >&2");
        let t = Duration::from_secs(20);
        let run_bench = |p: &Path, s: &BenchSpec, d: &Path, t| run_bench(p, s, d, t, None);
        assert_eq!(run_bench(&sf, &spec, &d, t), Ok(BenchResult { nodes: 12, nps: Some(3) }));
        let e = run_bench(&script("f.sh", "exit 3"), &spec, &d, t).unwrap_err();
        assert!(e.contains("failed") && !e.contains('\n'), "{e}");
        let e = run_bench(&script("n.sh", "echo hi"), &spec, &d, t).unwrap_err();
        assert!(e.contains("printed no node count"), "{e}");
        let e = run_bench(&script("h.sh", "sleep 30"), &spec, &d, Duration::from_millis(300))
            .unwrap_err();
        assert!(e.contains("did not end within"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
