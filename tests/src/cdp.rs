//! Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
//! the browser reads JSON messages on its fd 3 and writes them on fd 4, each ended by a NUL),
//! for a test that must look at a page more than once while it stays open: a live page
//! updated by its event stream, read without a reload. [`crate::browse`] takes one look.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::CHROMIUM;

/// One Chromium with one page open, killed when dropped.
pub struct Browser {
    child: Child,
    to: std::fs::File,
    from: mpsc::Receiver<Value>,
    id: u64,
    session: String,
}

/// A pipe whose two ends close on exec (only their copies at fd 3 and 4 reach the browser).
fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(r, 0, "pipe2: {}", std::io::Error::last_os_error());
    // SAFETY: pipe2 succeeded, so both are open descriptors this process owns.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

impl Browser {
    /// Starts headless Chromium (a fresh profile under `work`, 1280x2000) on `url` and
    /// attaches to its page. A missing browser fails the test saying how to install it.
    pub fn open(url: &str, work: &Path) -> Browser {
        assert!(
            Path::new(CHROMIUM).is_file(),
            "this test opens a page in {CHROMIUM}, which is not installed: run .ci/run as \
             root, or apt-get install chromium"
        );
        let (browser_reads, we_write) = pipe();
        let (we_read, browser_writes) = pipe();
        let (r, w) = (browser_reads.as_raw_fd(), browser_writes.as_raw_fd());
        let n = work.read_dir().map(|d| d.count()).unwrap_or(0);
        let mut cmd = Command::new(CHROMIUM);
        cmd.args(["--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe"])
            .arg(format!("--user-data-dir={}", work.join(format!("cdp-profile-{n}")).display()))
            .arg("--window-size=1280,2000")
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(work.join(format!("cdp-{n}.err"))).expect("log file"));
        // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec. The ends
        // are first copied above 10 so that placing them at 3 and 4 cannot close one another.
        unsafe {
            cmd.pre_exec(move || {
                let (a, b) = (libc::fcntl(r, libc::F_DUPFD, 10), libc::fcntl(w, libc::F_DUPFD, 10));
                if a < 0 || b < 0 || libc::dup2(a, 3) < 0 || libc::dup2(b, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("starting chromium");
        drop((browser_reads, browser_writes));
        let (tx, from) = mpsc::channel();
        let reader = std::fs::File::from(we_read);
        std::thread::spawn(move || {
            let mut r = BufReader::new(reader);
            let mut buf = Vec::new();
            while matches!(r.read_until(0, &mut buf), Ok(n) if n > 0) {
                buf.pop_if(|b| *b == 0);
                if let Ok(v) = serde_json::from_slice::<Value>(&buf)
                    && tx.send(v).is_err()
                {
                    return;
                }
                buf.clear();
            }
        });
        let mut b = Browser {
            child,
            to: std::fs::File::from(we_write),
            from,
            id: 0,
            session: String::new(),
        };
        let start = Instant::now();
        let target = loop {
            let t = b.call("Target.getTargets", json!({}));
            let infos = t["targetInfos"].as_array().cloned().unwrap_or_default();
            if let Some(p) = infos.iter().find(|i| i["type"] == "page") {
                break p["targetId"].clone();
            }
            assert!(start.elapsed() < Duration::from_secs(60), "chromium opened no page: {t}");
            std::thread::sleep(Duration::from_millis(100));
        };
        let attached =
            b.call("Target.attachToTarget", json!({ "targetId": target, "flatten": true }));
        b.session = attached["sessionId"].as_str().expect("a session").to_string();
        b.wait_for("the page to load", Duration::from_secs(60), |b| {
            b.eval("document.readyState") == "complete"
        });
        b
    }

    /// Sends `method` (to the page's session once attached) and returns its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let mut msg = json!({ "id": self.id, "method": method, "params": params });
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&msg).expect("JSON");
        bytes.push(0);
        self.to.write_all(&bytes).expect("writing to chromium");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let reply = self
                .from
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("chromium did not answer {method} within a minute"));
            if reply["id"] == self.id {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }

    /// The value of the JavaScript expression `expr` in the page (JSON-serializable values).
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call("Runtime.evaluate", json!({ "expression": expr, "returnByValue": true }));
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// Polls `done` every 200 ms until it holds; fails naming `what` after `limit`.
    pub fn wait_for(
        &mut self,
        what: &str,
        limit: Duration,
        mut done: impl FnMut(&mut Self) -> bool,
    ) {
        let start = Instant::now();
        while !done(self) {
            assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
