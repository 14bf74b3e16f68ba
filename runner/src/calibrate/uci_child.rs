//! A small UCI child-process driver for analysis commands (`calibrate`, `searchtest`): one
//! search at a time, every output line read by a dedicated task, the process in its own process
//! group (killed as a group when dropped).
//!
//! The match runner's game driver keeps clocks and plays games; analysis only needs "set options,
//! search this position, read the info lines", so this driver stays separate and small.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::engine_spec::EngineSpec;

/// What went wrong talking to an engine.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    #[error("engine {engine}: cannot start {cmd}: {source}")]
    Spawn { engine: String, cmd: String, source: std::io::Error },
    #[error("engine {engine}: no {what} within {secs:.1} s")]
    Timeout { engine: String, what: String, secs: f64 },
    #[error("engine {engine}: exited or closed its output{last}")]
    Disconnected { engine: String, last: String },
    #[error("engine {engine}: cannot write to it: {source}")]
    Write { engine: String, source: std::io::Error },
}

/// A UCI option the engine declared after `uci`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredOption {
    pub name: String,
    pub kind: String,
}

/// A running UCI engine.
pub struct UciChild {
    name: String,
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    pgid: Option<i32>,
    last_line: String,
    /// Options declared in the `uci` answer.
    pub declared: Vec<DeclaredOption>,
}

impl UciChild {
    /// Starts the engine, runs the `uci` handshake and sends the spec's options. `stderr_log`
    /// receives the engine's stderr (appended); `None` discards it.
    pub async fn start(
        spec: &EngineSpec,
        stderr_log: Option<&Path>,
        timeout: Duration,
    ) -> Result<UciChild, ChildError> {
        let program = spec.program();
        let mut cmd = Command::new(&program);
        cmd.args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        if let Some(dir) = &spec.dir {
            cmd.current_dir(dir);
        }
        let stderr = match stderr_log {
            Some(path) => std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map(Stdio::from)
                .unwrap_or_else(|_| Stdio::null()),
            None => Stdio::null(),
        };
        cmd.stderr(stderr);
        let spawn_err = |source| ChildError::Spawn {
            engine: spec.name.clone(),
            cmd: program.display().to_string(),
            source,
        };
        let mut child = cmd.spawn().map_err(spawn_err)?;
        let pgid = child.id().map(|p| p as i32);
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(spawn_err(std::io::Error::other("no stdio pipes")));
        };
        let (tx, rx) = mpsc::channel(1024);
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if tx.send(line).await.is_err() {
                    break;
                }
            }
        });
        let mut engine = UciChild {
            name: spec.name.clone(),
            child,
            stdin,
            lines: rx,
            pgid,
            last_line: String::new(),
            declared: Vec::new(),
        };
        engine.send("uci").await?;
        let deadline = Instant::now() + timeout;
        loop {
            let line = engine.next_line(deadline, "uciok").await?;
            let line = line.trim();
            if line == "uciok" {
                break;
            }
            if let Some(opt) = parse_option_line(line) {
                engine.declared.push(opt);
            }
        }
        for (name, value) in &spec.options {
            engine.set_option(name, value).await?;
        }
        Ok(engine)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the engine declared option `name` (case-insensitive).
    pub fn has_option(&self, name: &str) -> bool {
        self.declared.iter().any(|o| o.name.eq_ignore_ascii_case(name))
    }

    pub async fn set_option(&mut self, name: &str, value: &str) -> Result<(), ChildError> {
        self.send(&format!("setoption name {name} value {value}")).await
    }

    /// Writes one line and flushes.
    pub async fn send(&mut self, line: &str) -> Result<(), ChildError> {
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        let res = async {
            self.stdin.write_all(&buf).await?;
            self.stdin.flush().await
        }
        .await;
        res.map_err(|source| match source.kind() {
            std::io::ErrorKind::BrokenPipe => {
                ChildError::Disconnected { engine: self.name.clone(), last: String::new() }
            }
            _ => ChildError::Write { engine: self.name.clone(), source },
        })
    }

    /// The next output line, or an error at `deadline` (naming `what` was awaited) or when the
    /// engine closed its output.
    pub async fn next_line(&mut self, deadline: Instant, what: &str) -> Result<String, ChildError> {
        let start = Instant::now();
        match tokio::time::timeout_at(deadline, self.lines.recv()).await {
            Ok(Some(line)) => {
                self.last_line.clone_from(&line);
                Ok(line)
            }
            Ok(None) => {
                let last = if self.last_line.is_empty() {
                    String::new()
                } else {
                    format!(" (last line: {:?})", self.last_line)
                };
                Err(ChildError::Disconnected { engine: self.name.clone(), last })
            }
            Err(_) => Err(ChildError::Timeout {
                engine: self.name.clone(),
                what: what.to_string(),
                secs: deadline.saturating_duration_since(start).as_secs_f64(),
            }),
        }
    }

    /// `isready` until `readyok`; returns the lines read before it (e.g. `info string` errors).
    pub async fn sync(&mut self, timeout: Duration) -> Result<Vec<String>, ChildError> {
        self.send("isready").await?;
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let line = self.next_line(deadline, "readyok").await?;
            if line.trim() == "readyok" {
                return Ok(seen);
            }
            seen.push(line);
        }
    }

    /// Asks the engine to quit, then kills its process group if it has not exited within 1 s.
    pub async fn quit(mut self) {
        let _ = self.send("quit").await;
        if tokio::time::timeout(Duration::from_secs(1), self.child.wait()).await.is_ok() {
            self.pgid = None;
        }
    }
}

impl Drop for UciChild {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            // SAFETY: killpg only sends a signal; the group was created for this child alone.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

/// Parses `option name NAME type KIND ...` (names may hold spaces).
pub fn parse_option_line(line: &str) -> Option<DeclaredOption> {
    let rest = line.strip_prefix("option")?.trim_start();
    let rest = rest.strip_prefix("name")?;
    let (name, kind) = rest.split_once(" type ")?;
    let kind = kind.split_whitespace().next()?.to_string();
    let name = name.trim().to_string();
    (!name.is_empty()).then_some(DeclaredOption { name, kind })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_lines() {
        assert_eq!(
            parse_option_line("option name Skill Level type spin default 20 min 0 max 20"),
            Some(DeclaredOption { name: "Skill Level".into(), kind: "spin".into() })
        );
        assert_eq!(
            parse_option_line("option name MPC type check default true"),
            Some(DeclaredOption { name: "MPC".into(), kind: "check".into() })
        );
        assert_eq!(parse_option_line("option name  type x"), None);
        assert_eq!(parse_option_line("id name X"), None);
    }

    fn shell_engine(script: &str) -> EngineSpec {
        EngineSpec {
            name: "fake".into(),
            cmd: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            dir: None,
            options: vec![],
        }
    }

    #[tokio::test]
    async fn handshake_timeout_and_disconnect_are_errors() {
        let silent = shell_engine("sleep 5");
        let err = UciChild::start(&silent, None, Duration::from_millis(200)).await.err().unwrap();
        assert!(matches!(err, ChildError::Timeout { .. }), "{err}");
        let dies = shell_engine("echo 'id name x'");
        let err = UciChild::start(&dies, None, Duration::from_secs(5)).await.err().unwrap();
        assert!(err.to_string().contains("exited"), "{err}");
        let missing = EngineSpec { cmd: "/nonexistent/engine".into(), ..silent };
        let err = UciChild::start(&missing, None, Duration::from_secs(1)).await.err().unwrap();
        assert!(err.to_string().contains("cannot start /nonexistent/engine"), "{err}");
    }

    #[tokio::test]
    async fn handshake_collects_options() {
        let e = shell_engine(
            "read l; echo 'option name MPC type check default true'; echo uciok; \
             read l; echo 'info string hello'; echo readyok; sleep 5",
        );
        let mut child = UciChild::start(&e, None, Duration::from_secs(5)).await.unwrap();
        assert!(child.has_option("mpc"));
        assert!(!child.has_option("Hash"));
        let seen = child.sync(Duration::from_secs(5)).await.unwrap();
        assert_eq!(seen, ["info string hello"]);
    }
}
