//! Deadlines for the end-to-end tests, so that a hung process fails the suite with a line
//! naming what hung instead of hanging it:
//! - [`output_within`]: a process run to its end with its output captured, killed past its
//!   limit, the test failing with what it waited for ([`crate::run_runner`] uses it);
//! - the test clock: every test thread that asks the helpers for a binary or a scratch folder
//!   is timed from then on (after the workspace's build, which a test process makes once and
//!   which is not the test's time), and one monitor thread aborts the test process, naming
//!   the test, when a test runs past [`TEST_LIMIT`]. It guards every end-to-end file, whether
//!   or not the file starts a [`crate::watchdog`] of its own (a tighter limit for one test).

use std::collections::HashMap;
use std::io::Read as _;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// The longest any one end-to-end test may run (about three times the slowest test's time on
/// the loaded two-core CI machine).
pub const TEST_LIMIT: Duration = Duration::from_secs(1200);

/// The longest one `runner` command run by [`crate::run_runner`] may take.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(900);

/// The tests being timed: their thread, name and start.
fn running() -> &'static Mutex<HashMap<ThreadId, (String, Instant)>> {
    static RUNNING: OnceLock<Mutex<HashMap<ThreadId, (String, Instant)>>> = OnceLock::new();
    RUNNING.get_or_init(|| {
        std::thread::spawn(|| {
            loop {
                std::thread::sleep(Duration::from_secs(1));
                let late = running()
                    .lock()
                    .map(|m| m.values().find(|(_, t)| t.elapsed() > TEST_LIMIT).cloned())
                    .unwrap_or_default();
                if let Some((name, _)) = late {
                    // Straight to the stream: the harness captures `eprintln!` and would lose it.
                    use std::io::Write as _;
                    let _ = writeln!(
                        std::io::stderr(),
                        "test {name} ran past {TEST_LIMIT:?} (the end-to-end tests' limit): aborting"
                    );
                    std::process::abort();
                }
            }
        });
        Mutex::new(HashMap::new())
    })
}

/// A test thread's place on the clock: removed when the thread (the test) ends.
struct Timed(ThreadId);

impl Drop for Timed {
    fn drop(&mut self) {
        if let Ok(mut m) = running().lock() {
            m.remove(&self.0);
        }
    }
}

thread_local! {
    static TIMED: Option<Timed> = {
        let me = std::thread::current();
        // The harness runs each test in a thread named after it; other threads (the main
        // thread, a test's own helpers) are not timed, so no entry outlives its test.
        match me.name() {
            Some(name) if name != "main" => {
                if let Ok(mut m) = running().lock() {
                    m.insert(me.id(), (name.to_string(), Instant::now()));
                }
                Some(Timed(me.id()))
            }
            _ => None,
        }
    };
}

/// Starts the clock of the calling test (once per test thread).
pub fn time_this_test() {
    TIMED.with(|_| {});
}

/// Runs `cmd` to its end with stdin empty and stdout and stderr captured, at most `limit`:
/// past it the process is killed and the test fails saying it waited for `what`.
pub fn output_within(cmd: &mut Command, what: &str, limit: Duration) -> Output {
    time_this_test();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = read(child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let err = read(child.stderr.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let status = crate::wait_exit(&mut child, what, limit);
    Output {
        status,
        stdout: out.join().expect("the stdout reader"),
        stderr: err.join().expect("the stderr reader"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_captured_and_a_process_past_its_limit_fails_the_test_naming_it() {
        let o = output_within(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            "sh",
            Duration::from_secs(60),
        );
        assert_eq!(
            (o.status.code(), &o.stdout[..], &o.stderr[..]),
            (Some(3), &b"out\n"[..], &b"err\n"[..])
        );
        assert!(running().lock().unwrap().contains_key(&std::thread::current().id()));
        let hung = std::panic::catch_unwind(|| {
            output_within(
                Command::new("sleep").arg("30"),
                "a sleeping process",
                Duration::from_millis(200),
            )
        });
        let why = hung.unwrap_err();
        let why = why.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(why.contains("a sleeping process to exit, in vain (killed)"), "{why}");
    }
}
