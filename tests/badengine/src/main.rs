//! A UCI engine that misbehaves on purpose, for end-to-end tests of the runner.
//!
//! `badengine [MODE [N]]`, modes (N counts `go` commands, default 0 = at once):
//! - `good`: plays legal moves (deterministic), with info lines;
//! - `crash N`: aborts (SIGABRT) at the N+1-th `go`;
//! - `exit N`: exits silently with status 0 at the N+1-th `go`;
//! - `hang N`: never answers the N+1-th `go` (nor anything after it);
//! - `illegal N`: answers the N+1-th `go` with an illegal move;
//! - `garbage`: surrounds every answer with junk lines, still plays legal moves;
//! - `nouci`: never answers `uci` (says so on stderr);
//! - `slow MS`: waits MS milliseconds before every `bestmove`;
//! - `mate`: plays legal moves, preferring checkmate, then captures (ends games quickly);
//! - `stuck N`: at the N+1-th `go`, writes `stuck` to stderr and sleeps for good, reading no more
//!   input (it ignores `quit` and the end of its input, as a search that never looks up would);
//! - `flood N`: at the N+1-th `go`, writes 2 MiB without a newline, then answers nothing more;
//! - `slowstart MS`: waits MS milliseconds before answering `uci`;
//! - `burn MS`: spins the CPU for MS milliseconds of its own CPU time before every `bestmove`;
//! - `daemon DIR`: at start, leaves a grandchild behind in a session of its own (`setsid`, out
//!   of the engine's process group, as a daemon would) that writes its pid to
//!   `DIR/daemon-<engine pid>.pid` and sleeps for 1000 s; then plays as `good`;
//! - `tunable`: a known optimum for tuners: option `X` (0..100), strongest at X = 37 (see
//!   [`tunable`]);
//! - `script FILE`: plays the game FILE scripts, one line per ply from the opening's position
//!   (`MOVE SCORE`, SCORE a centipawn number or `none`): at ply k (the moves after the
//!   position's FEN) it answers line k+1's move with that score; past the end of the script it
//!   plays as `good` without a score;
//! - `cpus`: plays as `good` and reports as its score the CPU it may run on (its own
//!   `Cpus_allowed_list` in /proc/self/status), or -1 when that is not a single CPU.
//!
//! Three environment variables make a test wait on events instead of timing (the plan of a run
//! does not hold them, so a resume can run without them):
//! - `BADENGINE_HOLD=FILE:N`: a `go` that finds at least N lines in FILE (a run's games.jsonl;
//!   for a folder, in the games.jsonl of its subfolders) is never answered, nor anything after
//!   it, as in `hang`: the run cannot finish, and a test can stop it with N games recorded
//!   whatever the machine's load;
//! - `BADENGINE_MEET=DIR:N`: at its first `go` the engine leaves a file named for its CPUs in DIR
//!   and waits (at most 120 s) until DIR holds N files: with `--affinity`, a slot's first game
//!   cannot end before the other slots have started theirs;
//! - `BADENGINE_GATE=FILE`: at `uci` the engine leaves `FILE.waiting` and answers only once FILE
//!   exists (it waits at most 120 s): an engine start that lasts exactly as long as the test
//!   wants.

mod tunable;

use std::io::{BufRead, Write};
use std::time::Duration;

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("good").to_string();
    let n: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    match (mode.as_str(), args.get(1)) {
        ("sleeper", Some(file)) => sleeper(file),
        ("daemon", Some(dir)) => daemonize(dir),
        _ => {}
    }
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut pos = Chess::default();
    let mut gos = 0u64;
    let mut hung = false;
    let mut x = 50i64;
    let script: Vec<(String, Option<i32>)> = match (mode.as_str(), args.get(1)) {
        ("script", Some(file)) => read_script(file),
        _ => Vec::new(),
    };
    let mut plies = 0usize;
    let hold = path_and_count("BADENGINE_HOLD");
    let mut meet = path_and_count("BADENGINE_MEET");
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let line = line.trim();
        let cmd = line.split_whitespace().next().unwrap_or("");
        if hung && cmd != "quit" {
            continue;
        }
        if wait_for_events(cmd, &mut meet, hold.as_ref()) {
            hung = true;
            continue;
        }
        match cmd {
            "uci" if mode == "nouci" => eprintln!("badengine: not answering uci"),
            "uci" if mode == "slowstart" => {
                std::thread::sleep(Duration::from_millis(n));
                let _ = writeln!(out, "id name badengine-{mode}\nuciok");
            }
            "uci" => answer_uci(&mut out, &mode),
            "isready" => {
                let _ = writeln!(out, "readyok");
            }
            "position" => {
                pos = parse_position(line).unwrap_or_default();
                plies = line.split_once(" moves").map_or(0, |(_, m)| m.split_whitespace().count());
            }
            "setoption" => x = tunable::parse_x(line).unwrap_or(x),
            "go" if mode == "tunable" => {
                let (mv, cp) = tunable::choose(&pos, x).unwrap_or_else(|| ("0000".into(), 0));
                let _ = writeln!(out, "info depth 2 score cp {cp} nodes 1 time 0 pv {mv}");
                let _ = writeln!(out, "bestmove {mv}");
            }
            "go" if mode == "script" => {
                let (mv, score) = match script.get(plies) {
                    Some((mv, score)) => (mv.clone(), *score),
                    None => (choose(&pos, gos, false), None),
                };
                gos += 1;
                let score = score.map(|cp| format!(" score cp {cp}")).unwrap_or_default();
                let _ = writeln!(out, "info depth 1{score} nodes 1 time 0 pv {mv}");
                let _ = writeln!(out, "bestmove {mv}");
            }
            "go" => {
                let k = gos;
                gos += 1;
                let fire = k >= n;
                if misbehave_at_go(&mode, n, fire, &mut out) {
                    hung = true;
                    continue;
                }
                if mode == "garbage" {
                    write_junk(&mut out);
                }
                let mv = if mode == "illegal" && fire {
                    "a1a1".to_string()
                } else {
                    choose(&pos, k, mode == "mate")
                };
                let score = if mode == "cpus" { own_cpu() } else { (k % 7) as i64 - 3 };
                let _ = writeln!(out, "info depth 1 score cp {score} nodes 1 time 0 pv {mv}");
                let _ = writeln!(out, "bestmove {mv}");
            }
            "quit" => break,
            _ => {}
        }
        let _ = out.flush();
    }
}

/// `NAME=PATH:N` in the environment (`BADENGINE_HOLD`, `BADENGINE_MEET`): the path and N.
fn path_and_count(name: &str) -> Option<(String, usize)> {
    let v = std::env::var(name).ok()?;
    let (path, n) = v.rsplit_once(':')?;
    Some((path.to_string(), n.parse::<usize>().ok()?))
}

/// The waits on the test's events before command `cmd` (`BADENGINE_GATE` at `uci`,
/// `BADENGINE_MEET` at the first `go`); true when a `go` finds the `BADENGINE_HOLD` count
/// reached: the engine then hangs.
fn wait_for_events(
    cmd: &str,
    meet: &mut Option<(String, usize)>,
    hold: Option<&(String, usize)>,
) -> bool {
    if cmd == "uci"
        && let Ok(gate) = std::env::var("BADENGINE_GATE")
    {
        wait_at_gate(&gate);
    }
    if cmd == "go" {
        if let Some((dir, n)) = meet.take() {
            meet_others(&dir, n);
        }
        if let Some((file, n)) = hold
            && recorded_lines(file) >= *n
        {
            return true;
        }
    }
    false
}

/// The answer to `uci`: the engine's name, its options, `uciok`.
fn answer_uci(out: &mut impl Write, mode: &str) {
    let _ = writeln!(out, "id name badengine-{mode}\nid author tests");
    let _ = writeln!(out, "option name Hash type spin default 1 min 1 max 16");
    if mode == "tunable" {
        let _ = writeln!(out, "{}", tunable::OPTION_LINE);
    }
    let _ = writeln!(out, "uciok");
}

/// What mode `mode` does at a `go` before its answer (`fire`: this is the N+1-th `go` or a
/// later one): crash, exit, get stuck (never return), wait or burn CPU; true when the engine
/// hangs from now on (`hang`, `flood`).
fn misbehave_at_go(mode: &str, n: u64, fire: bool, out: &mut impl Write) -> bool {
    match mode {
        "crash" if fire => std::process::abort(),
        "exit" if fire => std::process::exit(0),
        "hang" if fire => return true,
        "slow" => std::thread::sleep(Duration::from_millis(n)),
        "stuck" if fire => {
            let _ = out.flush();
            eprintln!("stuck");
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        "flood" if fire => {
            let chunk = [b'x'; 64 * 1024];
            for _ in 0..32 {
                let _ = out.write_all(&chunk);
            }
            let _ = out.flush();
            return true;
        }
        "burn" => burn_cpu(n),
        _ => {}
    }
    false
}

/// Spins until this process has used `ms` of CPU (not of wall time), so the CPU it burns is
/// the same on a loaded machine. (A wall-clock cap of 50 x `ms` keeps it finite should the
/// clock fail.)
fn burn_cpu(ms: u64) {
    let (start, wall) = (cpu_time(), std::time::Instant::now());
    let mut x = 1u64;
    while cpu_time().saturating_sub(start) < Duration::from_millis(ms)
        && wall.elapsed() < Duration::from_millis(ms.saturating_mul(50))
    {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}

/// The junk lines of mode `garbage` before each answer.
fn write_junk(out: &mut impl Write) {
    let _ = writeln!(out, "\u{1b}[31mjunk\u{0} ÿÿ line");
    let _ = writeln!(out, "bestmovex a1a1");
    let _ = writeln!(out, "info score");
    let _ = writeln!(out, "info depth x score cp y");
    let _ = writeln!(out, "infostring nothing");
    let _ = writeln!(out);
}

/// Starts `badengine sleeper DIR/daemon-<pid>.pid` in a new session with no standard streams,
/// and waits (up to 30 s) until it wrote its pid.
fn daemonize(dir: &str) {
    use std::os::unix::process::CommandExt as _;
    use std::process::Stdio;
    let file = std::path::Path::new(dir).join(format!("daemon-{}.pid", std::process::id()));
    let Ok(exe) = std::env::current_exe() else { return };
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("sleeper").arg(&file).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe; it runs in the forked child before exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    if cmd.spawn().is_err() {
        eprintln!("badengine: cannot start the daemon");
        return;
    }
    let start = std::time::Instant::now();
    while !file.exists() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The daemon's body: its pid to `file` (through a rename), then a long sleep.
fn sleeper(file: &str) -> ! {
    let tmp = format!("{file}.tmp");
    if std::fs::write(&tmp, std::process::id().to_string()).is_ok() {
        let _ = std::fs::rename(&tmp, file);
    }
    std::thread::sleep(Duration::from_secs(1000));
    std::process::exit(0)
}

fn parse_position(line: &str) -> Option<Chess> {
    let rest = line.strip_prefix("position")?.trim();
    let (setup, moves) = match rest.split_once(" moves") {
        Some((s, m)) => (s.trim(), m.split_whitespace().collect::<Vec<_>>()),
        None => (rest, vec![]),
    };
    let mut pos: Chess = if setup == "startpos" {
        Chess::default()
    } else {
        let fen: Fen = setup.strip_prefix("fen")?.trim().parse().ok()?;
        fen.into_position(CastlingMode::Standard).ok()?
    };
    for m in moves {
        let mv = m.parse::<UciMove>().ok()?.to_move(&pos).ok()?;
        pos.play_unchecked(mv);
    }
    Some(pos)
}

fn choose(pos: &Chess, k: u64, aggressive: bool) -> String {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return "0000".into();
    }
    let pick = if aggressive {
        moves
            .iter()
            .find(|m| {
                let mut p = pos.clone();
                p.play_unchecked(**m);
                p.is_checkmate()
            })
            .or_else(|| moves.iter().find(|m| m.is_capture()))
            .copied()
            .unwrap_or(moves[(k as usize * 7) % moves.len()])
    } else {
        moves[(k as usize * 7 + pos.fullmoves().get() as usize) % moves.len()]
    };
    UciMove::from_move(pick, CastlingMode::Standard).to_string()
}

/// The script of `script FILE`: `MOVE SCORE` per line (SCORE `none`: no score).
fn read_script(file: &str) -> Vec<(String, Option<i32>)> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| {
        eprintln!("badengine: cannot read the script {file}: {e}");
        String::new()
    });
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((it.next()?.to_string(), it.next().and_then(|s| s.parse().ok())))
        })
        .collect()
}

/// The single CPU this process may run on (`Cpus_allowed_list` of /proc/self/status), else -1.
fn own_cpu() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(-1)
}

/// `BADENGINE_HOLD`'s count: the lines of `path`, or for a folder those of the games.jsonl of
/// its subfolders.
fn recorded_lines(path: &str) -> usize {
    let lines = |p: &std::path::Path| std::fs::read_to_string(p).map_or(0, |t| t.lines().count());
    let path = std::path::Path::new(path);
    if !path.is_dir() {
        return lines(path);
    }
    let subfolders = std::fs::read_dir(path).into_iter().flatten().flatten();
    subfolders.map(|e| lines(&e.path().join("games.jsonl"))).sum()
}

/// `BADENGINE_MEET`: leaves `DIR/cpus-<Cpus_allowed_list>` and waits until `dir` holds `n`
/// files, at most 120 s.
fn meet_others(dir: &str, n: usize) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let cpus = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map_or("unknown", str::trim)
        .to_string();
    let _ = std::fs::write(std::path::Path::new(dir).join(format!("cpus-{cpus}")), b"");
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if std::fs::read_dir(dir).map_or(0, |d| d.count()) >= n {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `BADENGINE_GATE`: leaves `FILE.waiting`, then waits until `FILE` exists, at most 120 s.
fn wait_at_gate(file: &str) {
    let _ = std::fs::write(format!("{file}.waiting"), b"");
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(120) && !std::path::Path::new(file).exists() {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// CPU time (user + system) this process has used so far.
fn cpu_time() -> Duration {
    // SAFETY: clock_gettime writes into the zeroed timespec we own.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
