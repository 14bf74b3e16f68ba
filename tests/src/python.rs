//! python-chess, the independent reader the tests check the runner's PGN and output lines with.

use std::io::Write as _;
use std::process::{Command, Stdio};

/// Runs `python3 -c script args...` with `stdin` (if any) on its standard input and returns its
/// standard output, trimmed. A python without python-chess fails the test saying how to install
/// it (a check is never skipped unseen); a failing script fails it with its stderr, headed by
/// `what` (e.g. "python-chess rejected the PGN").
pub fn python_chess(what: &str, script: &str, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 (with python-chess: pip install chess) runs the check");
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes()).expect("writing to python3");
    }
    let o = child.wait_with_output().expect("python3's output");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains("No module named 'chess'"),
        "python-chess is not installed (pip install chess==1.11.2; .ci/run installs it): this \
         test checks the runner's output with it"
    );
    assert!(o.status.success(), "{what}: {err}");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}
