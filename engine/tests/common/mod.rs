//! A UCI conversation with the `engine` binary, shared by the UCI tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// The engine binary with piped stdin and stdout.
fn spawn() -> Child {
    Command::new(env!("CARGO_BIN_EXE_engine"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn engine")
}

pub struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    pub fn start() -> Self {
        let mut child = spawn();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, stdin, lines }
    }

    /// Writes raw bytes (which may be invalid UTF-8) and a newline.
    pub fn send_bytes(&mut self, b: &[u8]) {
        self.stdin.write_all(b).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn send(&mut self, s: &str) {
        writeln!(self.stdin, "{s}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Lines up to and including the first one starting with `prefix`.
    pub fn until(&mut self, prefix: &str, timeout: Duration) -> Vec<String> {
        let end = Instant::now() + timeout;
        let mut out = Vec::new();
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    let done = l.starts_with(prefix);
                    out.push(l);
                    if done {
                        return out;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("no {prefix:?} in time; got {out:#?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("engine exited; got {out:#?}"),
            }
        }
    }

    pub fn sync(&mut self) -> Vec<String> {
        self.send("isready");
        self.until("readyok", Duration::from_secs(20))
    }

    pub fn quit(mut self) {
        self.send("quit");
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            if let Ok(Some(status)) = self.child.try_wait() {
                assert!(status.success(), "{status:?}");
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        panic!("engine did not quit");
    }
}

/// Runs the engine on `input` (stdin closed after it, as with `printf ... |
/// engine`); returns whether it exited with status 0 and its output lines.
pub fn run_batch(input: &[u8]) -> (bool, Vec<String>) {
    let mut child = spawn();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout).lines().map_while(Result::ok).collect::<Vec<String>>()
    });
    let end = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break s;
        }
        if Instant::now() > end {
            let _ = child.kill();
            panic!("engine did not exit after its input ended");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = writer.join();
    (status.success(), reader.join().unwrap())
}
