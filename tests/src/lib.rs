//! Helpers for the end-to-end tests: locating (and building once) the binaries under test, and
//! running the runner in a scratch directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

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
/// tests never run a stale binary. The profile follows the test's own.
fn ensure_built() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(workspace_root())
            .args(["build", "--quiet", "-p", "runner", "-p", "engine", "--bins"]);
        if bin_dir().ends_with("release") {
            cmd.arg("--release");
        }
        if let Some(target) = bin_dir().parent() {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        let status = cmd.status().expect("running cargo build");
        assert!(status.success(), "cargo build of runner and engine failed");
    });
}

/// Path of the `runner` binary.
pub fn runner_bin() -> PathBuf {
    ensure_built();
    bin_dir().join("runner")
}

/// Path of the bundled `engine` binary.
pub fn engine_bin() -> PathBuf {
    ensure_built();
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
    let d = bin_dir().join("e2e-scratch").join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Runs `runner` with `args` in `cwd` and returns its output.
pub fn run_runner(cwd: &Path, args: &[&str]) -> Output {
    Command::new(runner_bin()).current_dir(cwd).args(args).output().expect("running runner")
}

/// The records of a run's games.jsonl.
pub fn read_games(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("games.jsonl")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("jsonl line"))
        .collect()
}

/// True when the Debian stockfish binary is installed.
pub fn have_stockfish() -> bool {
    Path::new("/usr/games/stockfish").is_file()
}
