//! Headless Chromium driven through the DevTools protocol over a pipe
//! (`--remote-debugging-pipe`: the browser reads commands on its fd 3 and writes replies on its
//! fd 4, each a JSON text ended by a NUL byte), so that a test can fill a form, click a button
//! and follow the page as a person would, with no WebSocket client and no driver binary.
//! A missing browser fails the test naming the package, as [`super::browse`] does.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::CHROMIUM;

/// A browser with one page, killed when dropped.
pub struct Browser {
    child: Child,
    to: File,
    from: BufReader<File>,
    next: u64,
    session: String,
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just created and are owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

impl Browser {
    /// Starts headless Chromium with a fresh profile under `work` and opens one blank page.
    pub fn launch(work: &Path) -> Browser {
        assert!(
            Path::new(CHROMIUM).is_file(),
            "this test drives {CHROMIUM}, which is not installed: run .ci/run as root, or \
             apt-get install chromium"
        );
        let (cmd_read, cmd_write) = pipe();
        let (reply_read, reply_write) = pipe();
        let (r3, w4) = (cmd_read.into_raw_fd(), reply_write.into_raw_fd());
        let mut cmd = Command::new(CHROMIUM);
        cmd.args(["--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe"])
            .arg(format!("--user-data-dir={}", work.join("cdp-profile").display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(work.join("cdp-chromium.err")).expect("chromium stderr file"));
        // SAFETY: only async-signal-safe calls (dup2, fcntl) between fork and exec. The
        // command pipe was made first, so r3 < w4: moving r3 to 3 never overwrites w4. A
        // descriptor already at its place keeps it, with close-on-exec cleared (dup2 onto
        // itself would leave the flag set).
        unsafe {
            cmd.pre_exec(move || {
                for (from, to) in [(r3, 3), (w4, 4)] {
                    let rc = if from == to {
                        libc::fcntl(to, libc::F_SETFD, 0)
                    } else {
                        libc::dup2(from, to)
                    };
                    if rc < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("starting chromium");
        // The child's ends, closed here: the browser holds its own copies.
        // SAFETY: r3 and w4 came from into_raw_fd above and are closed once.
        unsafe {
            libc::close(r3);
            libc::close(w4);
        }
        let mut b = Browser {
            child,
            to: File::from(cmd_write),
            from: BufReader::new(File::from(reply_read)),
            next: 0,
            session: String::new(),
        };
        let target = b.call_browser("Target.createTarget", json!({ "url": "about:blank" }));
        let id = target["targetId"].as_str().expect("a target id").to_string();
        let attached =
            b.call_browser("Target.attachToTarget", json!({ "targetId": id, "flatten": true }));
        b.session = attached["sessionId"].as_str().expect("a session id").to_string();
        b
    }

    fn send(&mut self, mut msg: Value) -> u64 {
        self.next += 1;
        msg["id"] = json!(self.next);
        let mut bytes = serde_json::to_vec(&msg).expect("JSON");
        bytes.push(0);
        self.to.write_all(&bytes).expect("write to chromium");
        self.next
    }

    fn reply(&mut self, id: u64) -> Value {
        self.try_reply(id).unwrap_or_else(|e| panic!("DevTools call failed: {e}"))
    }

    /// The reply to call `id`: its result, or the error it got.
    fn try_reply(&mut self, id: u64) -> Result<Value, Value> {
        loop {
            let mut buf = Vec::new();
            let n = self.from.read_until(0, &mut buf).expect("read from chromium");
            assert!(n > 0, "chromium closed its DevTools pipe");
            buf.pop();
            let v: Value = serde_json::from_slice(&buf).expect("chromium sends JSON");
            if v["id"] == json!(id) {
                return match v.get("error") {
                    Some(e) => Err(e.clone()),
                    None => Ok(v["result"].clone()),
                };
            }
        }
    }

    fn call_browser(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(json!({ "method": method, "params": params }));
        self.reply(id)
    }

    /// A call to the page's session.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let s = self.session.clone();
        let id = self.send(json!({ "sessionId": s, "method": method, "params": params }));
        self.reply(id)
    }

    /// Evaluates `expr` in the page; its value (JSON).
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expr, "returnByValue": true, "awaitPromise": true }),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// [`Browser::eval`] that gives None when the page could not evaluate (it is navigating).
    fn try_eval(&mut self, expr: &str) -> Option<Value> {
        let s = self.session.clone();
        let params = json!({ "expression": expr, "returnByValue": true });
        let id =
            self.send(json!({ "sessionId": s, "method": "Runtime.evaluate", "params": params }));
        let r = self.try_reply(id).ok()?;
        if r.get("exceptionDetails").is_some() {
            return None;
        }
        Some(r["result"]["value"].clone())
    }

    /// Waits (at most `limit`) until `expr` is true in a loaded page.
    pub fn wait_for(&mut self, expr: &str, limit: Duration) {
        let start = Instant::now();
        let full = format!("document.readyState === 'complete' && !!({expr})");
        while start.elapsed() < limit {
            if self.try_eval(&full) == Some(json!(true)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let seen = self.try_eval("location.href + '\\n' + document.body.innerText");
        panic!("waited {limit:?} for {expr} in vain; the page: {seen:?}");
    }

    /// Polls `done` every 200 ms until it holds; fails naming `what` after `limit` (for a
    /// condition the test computes from several evaluations).
    pub fn poll(&mut self, what: &str, limit: Duration, mut done: impl FnMut(&mut Self) -> bool) {
        let start = Instant::now();
        while !done(self) {
            assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Opens `url` and waits until it is loaded.
    pub fn open(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
        let want = serde_json::to_string(url).expect("JSON");
        self.wait_for(&format!("location.href === {want}"), Duration::from_secs(60));
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
