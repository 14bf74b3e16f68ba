//! Helpers for the end-to-end tests: locating (and building once) the binaries under test,
//! running the runner in a scratch directory, checking how it ended, and reading what it wrote
//! (games.jsonl, JSON and text files, a small opening book).

pub mod cdp;
pub mod deadline;
pub mod fleet;
pub mod http;
pub mod pg;
pub mod python;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The cargo target directory the tests run from (`target/<profile>`).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test-binary>
    let deps = exe.parent().expect("deps dir");
    if deps.ends_with("deps") {
        deps.parent().expect("profile dir").to_path_buf()
    } else {
        deps.to_path_buf()
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

/// Builds `runner` and `engine` once per test process (a no-op when they are fresh), so the
/// tests never run a stale binary. The profile follows the test's own. The build is the
/// README's test build (`cargo test --workspace --no-run`), not `cargo build`: a plain build
/// resolves dependency features without the dev-dependencies and so compiled a second copy of
/// serde, syn, regex, rand and others on a fresh clone; under `cargo test --workspace` this is
/// a no-op.
fn ensure_built() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(workspace_root()).args(["test", "--workspace", "--no-run", "--quiet"]);
        if bin_dir().ends_with("release") {
            cmd.arg("--release");
        }
        if let Some(target) = bin_dir().parent() {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        // Cargo gives this test process the variables of its own package (CARGO_PKG_NAME=e2e,
        // CARGO_MANIFEST_DIR, ...). Build scripts that watch them (ring's does) would see them
        // change and rebuild, and everything above them with it: the runner, twice per test
        // run. The build runs with the variables of the shell that started the tests.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            let per_package = ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_CRATE_", "CARGO_BIN_"]
                .iter()
                .any(|p| name.starts_with(p));
            let per_run = ["CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR", "OUT_DIR"];
            if per_package || per_run.contains(&name.as_ref()) {
                cmd.env_remove(name.as_ref());
            }
        }
        let status = cmd.status().expect("running cargo test --no-run");
        assert!(status.success(), "building runner and engine (cargo test --no-run) failed");
    });
}

/// Path of the `runner` binary.
pub fn runner_bin() -> PathBuf {
    ensure_built();
    deadline::time_this_test();
    bin_dir().join("runner")
}

/// Path of the bundled `engine` binary.
pub fn engine_bin() -> PathBuf {
    ensure_built();
    deadline::time_this_test();
    bin_dir().join("engine")
}

/// Path of the `badengine` test engine.
pub fn badengine_bin() -> PathBuf {
    bin_dir().join("badengine")
}

/// `name=NAME,cmd=<badengine>,arg=MODE[,arg=N]` for `--engine`.
pub fn bad_spec(name: &str, mode: &str, n: Option<u64>) -> String {
    let mut s = format!("name={name},cmd={},arg={mode}", badengine_bin().display());
    if let Some(n) = n {
        s.push_str(&format!(",arg={n}"));
    }
    s
}

/// A fresh scratch directory under the target directory.
pub fn scratch(name: &str) -> PathBuf {
    ensure_built();
    deadline::time_this_test();
    let d = bin_dir().join("e2e-scratch").join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Runs `runner` with `args` in `cwd` and returns its output; a run past
/// [`deadline::COMMAND_LIMIT`] is killed and fails the test, naming the command.
pub fn run_runner(cwd: &Path, args: &[&str]) -> Output {
    let what = format!("runner {}", args.join(" "));
    let mut cmd = Command::new(runner_bin());
    deadline::output_within(cmd.current_dir(cwd).args(args), &what, deadline::COMMAND_LIMIT)
}

/// Starts `runner` with `args` in `cwd`: stdout discarded, stderr piped (read it with
/// `wait_with_output`). For tests that signal, pause or kill the run while it plays.
pub fn spawn_runner(cwd: &Path, args: &[&str]) -> Child {
    spawn_runner_env(cwd, args, &[])
}

/// [`spawn_runner`] with environment variables added (the engines inherit them: e.g.
/// `BADENGINE_HOLD`, see badengine).
pub fn spawn_runner_env(cwd: &Path, args: &[&str], env: &[(&str, String)]) -> Child {
    Command::new(runner_bin())
        .current_dir(cwd)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting runner")
}

/// `BADENGINE_HOLD` for a run into `out`: its engines stop answering once `n` games are
/// recorded, so the run is still going, with at least `n` games, when the test looks.
pub fn hold_after_games(out: &Path, n: usize) -> (&'static str, String) {
    ("BADENGINE_HOLD", format!("{}:{n}", out.join("games.jsonl").display()))
}

/// `runner match` between the engine specs `a` and `b` with `extra` arguments, quiet, into
/// `out`.
pub fn match_args<'a>(a: &'a str, b: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["match", "--engine", a, "--engine", b];
    v.extend_from_slice(extra);
    v.extend(["--progress", "quiet", "--out", out]);
    v
}

/// The records of a run's games.jsonl.
pub fn read_games(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("games.jsonl")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("jsonl line"))
        .collect()
}

/// Runs `runner` with `args` in `cwd`, asserts it succeeded, and returns the records of the
/// games.jsonl in `out`.
pub fn run_games(cwd: &Path, args: &[&str], out: &Path) -> Vec<serde_json::Value> {
    let o = run_runner(cwd, args);
    assert!(o.status.success(), "runner failed: {}", stderr(&o));
    read_games(out)
}

/// Asserts that a run succeeded (`what` names it in the failure) and returns it.
pub fn ok(o: Output, what: &str) -> Output {
    assert!(o.status.success(), "{what} failed: {}", stderr(&o));
    o
}

/// Asserts that a run succeeded and returns its standard output.
pub fn ok_stdout(o: &Output) -> String {
    let out = stdout(o);
    assert!(o.status.success(), "runner failed:\n{out}\n{}", stderr(o));
    out
}

/// Runs `runner` with `args` in the scratch directory `name`, asserts that it fails with
/// `needle` in the last stderr line that is not a warning and that no game was written under
/// `out/`; returns stderr.
pub fn fails_before_any_game(name: &str, args: &[&str], needle: &str) -> String {
    let dir = scratch(name);
    let o = run_runner(&dir, args);
    let err = stderr(&o);
    assert!(!o.status.success(), "{name}: should fail");
    let last = err.lines().rfind(|l| !l.starts_with("warning:")).unwrap_or("");
    assert!(last.contains(needle), "{name}: expected {needle:?} in last line, got:\n{err}");
    assert!(read_games(&dir.join("out")).is_empty(), "{name}: no game may be played");
    err
}

/// A process's standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A process's standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A text file (panics naming it when unreadable).
pub fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A JSON file (panics naming it when unreadable or invalid).
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&read_text(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Writes `book.epd` into `dir` with the first `n` (at most 4) of four different openings and
/// returns its path.
pub fn write_book(dir: &Path, n: usize) -> String {
    const OPENINGS: [&str; 4] = [
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1",
    ];
    let p = dir.join("book.epd");
    let text: String = OPENINGS.iter().take(n).map(|l| format!("{l}\n")).collect();
    std::fs::write(&p, text).expect("writing book.epd");
    p.display().to_string()
}

/// The Debian engines the end-to-end tests play against (`.ci/run` installs them).
pub const DEBIAN_ENGINES: [&str; 4] = ["stockfish", "glaurung", "toga2", "ethereal-chess"];

/// The path of Debian's engine `name` (one of [`DEBIAN_ENGINES`]). A test that needs it fails
/// with a line saying how to install it: a missing engine never lets a test pass unseen.
pub fn debian_engine(name: &str) -> String {
    let path = format!("/usr/games/{name}");
    assert!(
        Path::new(&path).is_file(),
        "this test plays {path}, which is not installed: run .ci/run as root, or \
         apt-get install stockfish glaurung toga2 ethereal-chess"
    );
    path
}

/// Processes whose command line holds `token`.
pub fn processes_with(token: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        if let Ok(cmdline) = std::fs::read(e.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline).contains(token)
        {
            out.push(pid);
        }
    }
    out
}

/// Polls `done` every 20 ms until it holds or `limit` passes; returns whether it held. Tests
/// wait through [`wait_for`], which fails naming what it waited for; this form is for callers
/// that must clean up before failing.
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// Waits until `done` holds, polling every 20 ms; when `limit` passes first, the test fails
/// saying it waited `limit` for `what` (e.g. "4 games in run/games.jsonl").
pub fn wait_for(what: &str, limit: Duration, done: impl FnMut() -> bool) {
    assert!(wait_until(limit, done), "waited {limit:?} for {what}, in vain");
}

/// Waits for `child` to exit, at most `limit`; past it the child is killed and the test fails
/// naming `what` (e.g. "the resumed run").
pub fn wait_exit(child: &mut Child, what: &str, limit: Duration) -> std::process::ExitStatus {
    let mut status = None;
    if !wait_until(limit, || {
        status = child.try_wait().ok().flatten();
        status.is_some()
    }) {
        let _ = child.kill();
        let _ = child.wait();
        panic!("waited {limit:?} for {what} to exit, in vain (killed)");
    }
    status.expect("an exit status")
}

/// Waits until `dir`'s games.jsonl holds at least `n` games, at most `limit` (the test fails
/// naming the file otherwise); returns the games.
pub fn wait_for_games(dir: &Path, n: usize, limit: Duration) -> Vec<serde_json::Value> {
    let what = format!("{n} games in {}", dir.join("games.jsonl").display());
    let mut games = Vec::new();
    wait_for(&what, limit, || {
        games = read_games(dir);
        games.len() >= n
    });
    games
}

/// A whole-test deadline: while the guard lives, a thread watches the clock, and when the test
/// runs past `limit` it writes `test NAME ran past LIMIT` to stderr and aborts the test process.
/// A hung run then fails the suite, naming the test, instead of hanging it. Create one at the
/// start of each end-to-end test that drives processes; limits are generous (about ten times a
/// test's usual time on a loaded two-core machine), never tight.
pub struct Watchdog {
    done: Option<std::sync::mpsc::Sender<()>>,
}

/// Starts a [`Watchdog`] for the test `name` (dropped at the test's end, or as it unwinds).
pub fn watchdog(name: &str, limit: Duration) -> Watchdog {
    // The workspace's build (once per test process, minutes on a cold tree) is not the test's.
    ensure_built();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let name = name.to_string();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
            // Straight to the stream: the test harness captures `eprintln!` and would lose it.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "test {name} ran past {limit:?}: aborting");
            std::process::abort();
        }
    });
    Watchdog { done: Some(tx) }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // Dropping the sender wakes the thread with `Disconnected`: the test ended in time.
        self.done.take();
    }
}

/// The lines of every `*.uci.log` (the `--debug-log` protocol logs) under `dir`/logs.
pub fn protocol_lines(dir: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for e in std::fs::read_dir(dir.join("logs")).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().ends_with(".uci.log") {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            lines.extend(text.lines().map(String::from));
        }
    }
    lines
}

/// `runner sweep` of Debian's stockfish over its `Skill Level`, 0 and 20 (the sweep tests add
/// their limits, games and folder).
pub fn stockfish_skill_sweep() -> Vec<String> {
    debian_engine("stockfish");
    let args = ["sweep", "--engine", "name=sf,cmd=/usr/games/stockfish", "--param", "Skill Level"];
    let mut v: Vec<String> = args.map(String::from).to_vec();
    v.extend(["--values", "0,20"].map(String::from));
    v
}

/// A racing sweep ([`stockfish_skill_sweep`] with `--adaptive`, 32 games at 400 nodes) whose
/// first point is hopeless and is dropped: the local sweep and the fleet's both run it.
pub fn stockfish_racing_sweep() -> Vec<String> {
    let mut v = stockfish_skill_sweep();
    let racing = [
        "--nodes",
        "400",
        "--maxmoves",
        "60",
        "--games",
        "32",
        "--adaptive",
        "--adaptive-min-pairs",
        "4",
        "--seed",
        "5",
        "--progress",
        "quiet",
    ];
    v.extend(racing.map(String::from));
    v
}

/// Debian's Chromium, the browser the page tests open run pages in (`.ci/run` installs it).
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// What headless Chromium saw of a page: the DOM after its scripts ran, and the console
/// messages and uncaught errors it logged.
pub struct Browsed {
    pub dom: String,
    pub console: Vec<String>,
}

/// Opens `url` in headless Chromium (`--dump-dom`, with `--screenshot=PATH` when given, at
/// 1280x2000) with a fresh profile under `work`. A missing browser fails the test with a line
/// saying how to install it: a page test never passes unseen.
pub fn browse(url: &str, work: &Path, screenshot: Option<&Path>) -> Browsed {
    assert!(
        Path::new(CHROMIUM).is_file(),
        "this test opens the run's page in {CHROMIUM}, which is not installed: run .ci/run as \
         root, or apt-get install chromium"
    );
    let n = work.read_dir().map(|d| d.count()).unwrap_or(0);
    let out = work.join(format!("chromium-{n}.out"));
    let err = work.join(format!("chromium-{n}.err"));
    let mut cmd = Command::new(CHROMIUM);
    cmd.args(["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", work.join(format!("chromium-profile-{n}")).display()))
        .arg("--window-size=1280,2000");
    match screenshot {
        Some(p) => cmd.arg(format!("--screenshot={}", p.display())),
        None => cmd.arg("--dump-dom"),
    };
    cmd.arg(url)
        .stdout(std::fs::File::create(&out).expect("chromium stdout file"))
        .stderr(std::fs::File::create(&err).expect("chromium stderr file"));
    let mut child = cmd.spawn().expect("starting chromium");
    let status = wait_exit(&mut child, &format!("chromium on {url}"), Duration::from_secs(120));
    let log = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(status.success(), "chromium failed on {url} ({status}):\n{log}");
    let console = log
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(String::from)
        .collect();
    Browsed { dom: std::fs::read_to_string(&out).unwrap_or_default(), console }
}

/// The SVG drawings shown in `html` as `<img class="CLASS">` images of base64 `data:` URLs (the
/// run page's own figures), decoded, without line breaks.
pub fn drawings(html: &str, class: &str) -> Vec<String> {
    use base64::Engine;
    let start = format!("<img class=\"{class}\" src=\"data:image/svg+xml;base64,");
    html.split(&start)
        .skip(1)
        .map(|rest| {
            let b64 = &rest[..rest.find('"').expect("the data URL ends")];
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).expect("base64");
            // plotters writes a text element's words on a line of their own.
            String::from_utf8(bytes).expect("an SVG drawing is UTF-8").replace('\n', "")
        })
        .collect()
}

/// The part of `html` from `<section id="ID"` to its `</section>` (empty when absent).
pub fn html_section<'a>(html: &'a str, id: &str) -> &'a str {
    let Some(start) = html.find(&format!("<section id=\"{id}\"")) else { return "" };
    let end = html[start..].find("</section>").map_or(html.len(), |e| start + e);
    &html[start..end]
}
