//! Engine processes, the UCI pipe, clocks and the game loop under faults and bad input: each test
//! here reproduces a failure the runner once had.
//! Waits are bounded far above what the behaviour needs (seconds against minutes), never tight.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use e2e::{
    bad_spec, badengine_bin, match_args, processes_with, read_games, run_runner, scratch,
    spawn_runner, wait_until, watchdog,
};

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn summary(out: &Path) -> serde_json::Value {
    let t = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    serde_json::from_str(&t).expect("summary.json is JSON")
}

/// `runner match` of `a` against `b` (engine specs) with `extra` arguments, results in `dir/run`.
fn play(dir: &Path, a: &str, b: &str, extra: &[&str]) -> (Output, PathBuf) {
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    (run_runner(dir, &match_args(a, b, &out_s, extra)), out)
}

/// Kills what a failed test left behind (processes this test started, by pid).
fn kill_pids(pids: &[u32]) {
    for p in pids {
        let _ = Command::new("kill").args(["-KILL", &p.to_string()]).status();
    }
}

/// A depth the common UCI parsers cannot hold (vampirc-uci keeps it in a u8) is refused
/// before any game, instead of every game becoming a crash loss.
#[test]
fn a_depth_beyond_uci_parsers_is_refused() {
    let dir = scratch("depth300");
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let (o, out) = play(&dir, &a, &b, &["--depth", "300", "--games", "2"]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--depth 300") && err.contains("255"), "{err}");
    assert!(read_games(&out).is_empty());
}

/// An engine that crashes in every game stops the run after `--fault-limit` games in a
/// row (default 5) with a line naming it, instead of a normal-looking 50% result.
#[test]
fn an_engine_crashing_in_every_game_stops_the_run() {
    let dir = scratch("crashstop");
    let bad = bad_spec("bad", "crash", Some(0));
    let good = bad_spec("good", "good", None);
    let extra = ["--nodes", "100", "--games", "20", "--concurrency", "1", "--maxmoves", "20"];
    let (o, out) = play(&dir, &bad, &good, &extra);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad") && err.contains("5 games in a row"), "{err}");
    // The stop is decided as records arrive; games that finished meanwhile (a crash takes
    // milliseconds, so a loaded machine may finish several more) are kept, never the 20.
    let played = read_games(&out).len();
    assert!((5..20).contains(&played), "{played} games");
}

/// Faults below the limit are kept but said loudly, in the output and summary.json.
#[test]
fn crashes_below_the_limit_are_warned_about() {
    let dir = scratch("crashwarn");
    let bad = bad_spec("bad", "crash", Some(0));
    let good = bad_spec("good", "good", None);
    let (o, out) = play(&dir, &bad, &good, &["--nodes", "100", "--games", "2", "--maxmoves", "20"]);
    assert!(o.status.success(), "{}", text(&o));
    let all = text(&o);
    assert!(all.contains("warning: engine bad") && all.contains("crash"), "{all}");
    let warnings = summary(&out)["warnings"].as_array().cloned().unwrap_or_default();
    assert!(warnings.iter().any(|w| w.as_str().is_some_and(|w| w.contains("bad"))), "{warnings:?}");
}

/// Kill -9 of the runner takes its engines with it, even one that reads no input.
#[test]
fn no_engine_survives_a_killed_runner() {
    let _watchdog = watchdog("no_engine_survives_a_killed_runner", Duration::from_secs(600));
    let dir = scratch("pdeathsig");
    let token = format!("pdeath-token-{}", std::process::id());
    let spec = |name: &str| {
        format!("name={name},cmd={},arg=stuck,arg=0,arg={token}", badengine_bin().display())
    };
    let (a, b) = (spec("a"), spec("b"));
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    let args =
        match_args(&a, &b, &out_s, &["--nodes", "100", "--games", "2", "--stall-timeout", "600"]);
    let mut child = spawn_runner(&dir, &args);
    // The engine with White writes `stuck` to its stderr log once it stopped reading input.
    let stuck = wait_until(Duration::from_secs(60), || {
        std::fs::read_dir(out.join("logs"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("stuck")))
    });
    let engines = processes_with(&token);
    let _ = child.kill();
    let _ = child.wait();
    let gone = wait_until(Duration::from_secs(30), || processes_with(&token).is_empty());
    let left = processes_with(&token);
    kill_pids(&left);
    assert!(stuck, "the engine never got stuck");
    assert!(!engines.is_empty());
    assert!(gone, "engines outlived the runner: {left:?}");
}

/// Output without a newline is capped (1 MiB); beyond it the engine loses by garbage
/// output, instead of the runner buffering it without limit.
#[test]
fn an_endless_line_is_garbage_output() {
    let dir = scratch("flood");
    let bad = bad_spec("bad", "flood", Some(1));
    let good = bad_spec("good", "good", None);
    let extra = ["--nodes", "100", "--games", "2", "--stall-timeout", "60", "--maxmoves", "20"];
    let (o, out) = play(&dir, &bad, &good, &extra);
    assert!(o.status.success(), "{}", text(&o));
    let games = read_games(&out);
    assert_eq!(games.len(), 2);
    for g in &games {
        assert_eq!(g["termination"], "garbage-output", "{g}");
        let bad_white = g["white"] == "bad";
        assert_eq!(g["result"], if bad_white { "0-1" } else { "1-0" }, "{g}");
    }
}

/// Time values that overflow the clock arithmetic are refused with one line.
#[test]
fn huge_time_values_are_refused() {
    let dir = scratch("timemargin");
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    for extra in [
        &["--tc", "1+0.01", "--timemargin", "9223372036854775"][..],
        &["--tc", "1+0.01", "--timemargin", "18446744073709551615"][..],
    ] {
        let mut e = extra.to_vec();
        e.extend_from_slice(&["--games", "2"]);
        let (o, out) = play(&dir, &a, &b, &e);
        assert!(!o.status.success(), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--timemargin"), "{err}");
        assert!(read_games(&out).is_empty());
    }
}

/// Control characters in anything sent on the UCI pipe are refused before any game:
/// option names and values from the command line or an engines file, and engine names.
#[test]
fn control_characters_for_the_pipe_are_refused() {
    let dir = scratch("ctrlchars");
    let good = bad_spec("good", "good", None);
    let bin = badengine_bin().display().to_string();
    let cases = [
        format!("name=a,cmd={bin},option.Hash=8\nquit"),
        format!("name=a,cmd={bin},option.Ha\rsh=8"),
        format!("name=a\nb,cmd={bin}"),
    ];
    for spec in &cases {
        let (o, out) = play(&dir, spec, &good, &["--nodes", "100", "--games", "2"]);
        assert!(!o.status.success(), "{spec:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("control character"), "{spec:?}: {err}");
        assert!(read_games(&out).is_empty());
    }
    // From an engines file: a newline in a value, a NUL in an option name.
    for options in ["Hash = \"8\\nquit\"", "\"Ha\\u0000sh\" = 8"] {
        let toml = dir.join("engines.toml");
        let body =
            format!("[[engine]]\nname = \"t\"\ncmd = \"{bin}\"\n[engine.options]\n{options}\n");
        std::fs::write(&toml, body).unwrap();
        let toml_s = toml.to_string_lossy().into_owned();
        let extra = ["--engines-file", &toml_s, "--nodes", "100", "--games", "2"];
        let (o, out) = play(&dir, "name=t", &good, &extra);
        assert!(!o.status.success(), "{options}: {}", text(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("control character"), "{}", text(&o));
        assert!(read_games(&out).is_empty());
    }
}

/// Ctrl-C while engines are still starting stops the run at once, not after the start
/// timeout.
#[test]
fn ctrl_c_during_a_slow_handshake_stops_at_once() {
    let _watchdog =
        watchdog("ctrl_c_during_a_slow_handshake_stops_at_once", Duration::from_secs(600));
    let dir = scratch("slowstart");
    let token = format!("slowstart-token-{}", std::process::id());
    let spec = |name: &str| {
        format!(
            "name={name},cmd={},arg=slowstart,arg=600000,arg={token}",
            badengine_bin().display()
        )
    };
    let (a, b) = (spec("a"), spec("b"));
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    let args =
        match_args(&a, &b, &out_s, &["--nodes", "100", "--games", "2", "--start-timeout", "900"]);
    let mut child = spawn_runner(&dir, &args);
    let started = wait_until(Duration::from_secs(60), || processes_with(&token).len() >= 2);
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    // The engines answer `uci` only after 10 minutes: the runner must not wait for them.
    let exited = wait_until(Duration::from_secs(60), || child.try_wait().ok().flatten().is_some());
    if !exited {
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    kill_pids(&processes_with(&token));
    assert!(started, "engines never started");
    assert!(exited, "the runner kept waiting for the handshake after Ctrl-C");
    assert_eq!(status.code(), Some(130));
}

/// A missing working directory is named as such, not as a missing binary.
#[test]
fn a_missing_engine_directory_is_named() {
    let dir = scratch("nodir");
    let bin = badengine_bin().display().to_string();
    let a = format!("name=a,cmd={bin},dir=/nonexistent-dir-for-test");
    let good = bad_spec("good", "good", None);
    let (o, _) = play(&dir, &a, &good, &["--nodes", "100", "--games", "2"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent-dir-for-test") && err.contains("directory"), "{err}");
    assert!(!err.contains("cannot start"), "{err}");
}

/// An engine that fails to start points to its stderr log.
#[test]
fn a_start_failure_points_to_the_stderr_log() {
    let dir = scratch("nouci");
    let bad = bad_spec("bad", "nouci", None);
    let good = bad_spec("good", "good", None);
    let (o, out) =
        play(&dir, &bad, &good, &["--nodes", "100", "--games", "2", "--start-timeout", "1"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let log = out.join("logs").join("bad-0.stderr.log");
    assert!(err.contains(&log.display().to_string()), "{err}");
    assert!(log.is_file());
}

/// An interrupted run counts the CPU time of the engines it was playing with.
#[test]
fn an_interrupted_summary_counts_the_engines_cpu() {
    let _watchdog =
        watchdog("an_interrupted_summary_counts_the_engines_cpu", Duration::from_secs(600));
    let dir = scratch("cpuint");
    let (a, b) = (bad_spec("a", "burn", Some(20)), bad_spec("b", "burn", Some(20)));
    let out = dir.join("run");
    let out_s = out.to_string_lossy().into_owned();
    let args = match_args(
        &a,
        &b,
        &out_s,
        &["--nodes", "1", "--games", "40", "--concurrency", "1", "--maxmoves", "20"],
    );
    let child = spawn_runner(&dir, &args);
    let played = wait_until(Duration::from_secs(120), || !read_games(&out).is_empty());
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let o = child.wait_with_output().unwrap();
    assert!(played);
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    let s = summary(&out);
    assert_eq!(s["stopped_by"], "interrupted");
    // Each game is at least 40 moves of 20 ms of spinning.
    let cpu = s["runner_overhead"]["engines_cpu_s"].as_f64().unwrap_or(0.0);
    assert!(cpu >= 0.5, "{}", s["runner_overhead"]);
}

/// Summary.json records the bestmove->go turnaround's p99 and maximum.
#[test]
fn the_summary_records_turnaround_p99_and_max() {
    let dir = scratch("turnaround");
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    let (o, out) = play(&dir, &a, &b, &["--nodes", "100", "--games", "2", "--maxmoves", "20"]);
    assert!(o.status.success(), "{}", text(&o));
    let r = &summary(&out)["runner_overhead"];
    let p99 = r["turnaround_us_p99"].as_u64().expect("p99");
    let max = r["turnaround_us_max"].as_u64().expect("max");
    assert!(p99 <= max, "{r}");
}

/// Losing on time against a side that cannot mate is a draw; the record says how the
/// flag fell (think time against the clock and margin).
#[test]
fn a_time_forfeit_against_a_bare_king_is_a_draw() {
    let dir = scratch("flagdraw");
    // White has king and pawn, Black a bare king.
    std::fs::write(dir.join("book.epd"), "4k3/8/8/8/8/8/4P3/4K3 w - -\n").unwrap();
    // The bad side never answers its first `go` and flags after 2 s; the good side answers at
    // once (only a 2 s stall of one instant move could make it flag first).
    let bad = bad_spec("bad", "hang", Some(0));
    let good = bad_spec("good", "good", None);
    let (o, out) =
        play(&dir, &bad, &good, &["--tc", "2+0.01", "--games", "2", "--book", "book.epd"]);
    assert!(o.status.success(), "{}", text(&o));
    let games = read_games(&out);
    assert_eq!(games.len(), 2);
    for g in &games {
        assert_eq!(g["termination"], "time-forfeit", "{g}");
        let f = &g["forfeit"];
        let think = f["think_ms"].as_f64().expect("think_ms");
        let clock = f["clock_ms"].as_f64().expect("clock_ms");
        let margin = f["margin_ms"].as_f64().expect("margin_ms");
        assert!(think >= clock + margin, "{g}");
        if g["white"] == "bad" {
            // White flagged; Black's bare king cannot mate.
            assert_eq!(g["result"], "1/2-1/2", "{g}");
        } else {
            assert_eq!(g["result"], "1-0", "{g}");
        }
    }
}

/// An engine whose reported depth stays at 1-2 under a clock is warned about.
#[test]
fn a_starved_engine_is_warned_about() {
    let dir = scratch("starved");
    let (a, b) = (bad_spec("a", "good", None), bad_spec("b", "good", None));
    // badengine always reports depth 1; a generous clock keeps time forfeits out of the picture.
    let extra = ["--tc", "60+1", "--games", "2", "--maxmoves", "20"];
    let (o, out) = play(&dir, &a, &b, &extra);
    assert!(o.status.success(), "{}", text(&o));
    let all = text(&o);
    assert!(all.contains("warning: engine a") && all.contains("depth"), "{all}");
    let warnings = summary(&out)["warnings"].as_array().cloned().unwrap_or_default();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    // Under a node limit shallow depths are what was asked for: no warning.
    let dir = scratch("starved-nodes");
    let (o, _) = play(&dir, &a, &b, &["--nodes", "100", "--games", "2", "--maxmoves", "20"]);
    assert!(!text(&o).contains("depth"), "{}", text(&o));
}

/// A grandchild that left the engine's process group and session (`setsid`, a
/// daemon) does not outlive the run: the runner inherits it (child subreaper) and kills it.
#[test]
fn a_daemonized_grandchild_dies_with_the_run() {
    let _watchdog = watchdog("a_daemonized_grandchild_dies_with_the_run", Duration::from_secs(600));
    let dir = scratch("daemon");
    let pids_dir = dir.join("pids");
    std::fs::create_dir_all(&pids_dir).expect("pids dir");
    let daemon =
        format!("name=d,cmd={},arg=daemon,arg={}", badengine_bin().display(), pids_dir.display());
    let good = bad_spec("good", "good", None);
    let extra = ["--nodes", "100", "--games", "2", "--concurrency", "1", "--maxmoves", "20"];
    let (o, out) = play(&dir, &daemon, &good, &extra);
    let daemons: Vec<u32> = std::fs::read_dir(&pids_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pid"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok()?.trim().parse().ok())
        .collect();
    // A pid is alive while /proc holds it with the sleeper's command line (not a reused pid).
    let alive = |p: &u32| {
        std::fs::read(format!("/proc/{p}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("sleeper"))
            && !std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z'))
            })
    };
    let gone = wait_until(Duration::from_secs(30), || !daemons.iter().any(alive));
    let left: Vec<u32> = daemons.iter().copied().filter(alive).collect();
    kill_pids(&left);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(read_games(&out).len(), 2);
    assert!(!daemons.is_empty(), "the daemon engine left no pid file");
    assert!(gone, "daemonized grandchildren outlived the run: {left:?}");
}
