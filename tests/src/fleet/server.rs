//! The fixture's `runner serve` processes: started on a free (or given) address, their URL
//! read from their first line, killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::{read_text, runner_bin};

/// A `runner serve` process (killed when dropped) and where it listens.
pub struct Server {
    pub child: Child,
    /// `http://127.0.0.1:PORT` (or `https://`), no trailing slash.
    pub url: String,
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `runner serve --db DB --bind BIND --results DIR/no-results EXTRA` (EXTRA's own `--results`
/// instead when it has one), stderr appended to `dir/LOG.log`; the URL read from its first
/// line, waited for at most two minutes (a server waits for a database that refuses it).
pub(super) fn spawn_server(
    dir: &Path,
    db: &str,
    bind: &str,
    extra: &[String],
    log: &str,
) -> Server {
    let log_path = dir.join(format!("{log}.log"));
    let err = std::fs::OpenOptions::new().create(true).append(true).open(&log_path).unwrap();
    let mut c = Command::new(runner_bin());
    c.args(["serve", "--db", db, "--bind", bind]);
    if !extra.iter().any(|a| a == "--results") {
        c.arg("--results").arg(dir.join("no-results"));
    }
    let mut child = c
        .args(extra)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(err)
        .spawn()
        .expect("start runner serve");
    let out = child.stdout.take().expect("the server's stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    let first = rx.recv_timeout(Duration::from_secs(120)).unwrap_or_default();
    // `serving http://127.0.0.1:PORT/ (results DIR)`
    let url = first.split_whitespace().nth(1).map(|u| u.trim_end_matches('/').to_string());
    let port = url.as_deref().and_then(|u| u.rsplit(':').next()).and_then(|p| p.parse().ok());
    let (Some(url), Some(port)) = (url, port) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("runner serve did not say where it listens: {first:?}\n{}", read_text(&log_path));
    };
    Server { child, url, port }
}
