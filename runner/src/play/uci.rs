//! The one UCI driver: an engine process spawned in its own process group, its stdout read by a
//! dedicated task that timestamps each line, driven by `select!` loops (line, deadline) and
//! killed as a group. Games use it with `info` lines folded into the next line (one wake-up per
//! move); tools that need every `info` line start it with [`StartOptions::every_line`] and read
//! them through the `on_line` callbacks of [`UciEngine::go_each`] and [`UciEngine::start_with`].

use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use crate::plan::engine_spec::EngineSpec;
use crate::plan::limits::EngineLimits;
use crate::plan::names::file_stem;
use crate::play::orphans;
use crate::play::sandbox::{Inside, Sandbox};
use crate::play::uci_info::{InfoSummary, parse_info, parse_pv};
use crate::play::uci_lines::{self, LineRead, MAX_LINE};

/// Variables never passed to an engine: the fleet's database URL, a worker's key, a person's
/// API token, and libpq's password and connection settings (an engine has no business with the
/// fleet).
pub const SECRET_ENV: [&str; 9] = [
    "RUNNER_DB",
    "RUNNER_WORKER_KEY",
    "RUNNER_TOKEN",
    "PGPASSWORD",
    "PGPASSFILE",
    "PGUSER",
    "PGHOST",
    "PGSERVICEFILE",
    "PGSSLKEY",
];

/// A line of engine output and the moment the reader task read it. Unless the engine was started
/// with [`StartOptions::every_line`], `info` lines are not forwarded one by one: the reader keeps
/// the last one holding a score and attaches it to the next forwarded line (the `bestmove`), so
/// the game task wakes once per move.
#[derive(Debug)]
pub struct Line {
    pub text: String,
    pub at: Instant,
    /// The last `info ... score ...` line read before this line.
    pub info: Option<String>,
    /// The engine wrote more than [`MAX_LINE`] bytes without a newline (the reader stopped).
    pub overlong: bool,
}

/// What went wrong talking to an engine.
#[derive(Debug, thiserror::Error)]
pub enum UciError {
    #[error("engine {engine}: cannot start {program}: {source}")]
    Spawn { engine: String, program: String, source: std::io::Error },
    #[error("engine {engine}: cannot create log file {path}: {source}")]
    Log { engine: String, path: String, source: std::io::Error },
    #[error("engine {engine}: no {expected} within {timeout:?}")]
    Timeout { engine: String, expected: &'static str, timeout: Duration },
    #[error("engine {engine}: process exited ({status})")]
    Exited { engine: String, status: String, clean: bool },
    #[error("engine {engine}: closed its output")]
    Disconnected { engine: String },
    #[error("engine {engine}: garbage output (a line longer than {MAX_LINE} bytes)")]
    Garbage { engine: String },
    #[error("engine {engine}: working directory {dir} does not exist or is not a directory")]
    NoDir { engine: String, dir: String },
    #[error("{0}")]
    Refused(String),
    /// A failure while starting, with the engine's stderr log to look at.
    #[error("{source} (its stderr: {log})")]
    Start { source: Box<UciError>, log: String },
    #[error("engine {engine}: cannot play {what}")]
    Unsupported { engine: String, what: &'static str },
}

/// How an engine process is started.
#[derive(Clone, Debug)]
pub struct StartOptions {
    /// Directory for `<name>-<instance>.stderr.log` (and `.uci.log` with `protocol_log`).
    pub log_dir: Option<PathBuf>,
    /// Distinguishes processes of the same spec in log file names.
    pub instance: usize,
    /// Limit for `uciok` and the first `readyok`.
    pub handshake_timeout: Duration,
    /// Write every line sent and received to `<name>-<instance>.uci.log`.
    pub protocol_log: bool,
    /// The log files' name before `.stderr.log` instead of `<name>-<instance>`.
    pub log_stem: Option<String>,
    /// Forward every `info` line as a line of its own (for tools that read each iteration).
    pub every_line: bool,
    /// Chess960: `setoption name UCI_Chess960 value true`, and an engine that does not declare
    /// the option is refused ([`UciError::Unsupported`]).
    pub chess960: bool,
    /// Start the engine in this box ([`crate::play::sandbox`]): a fleet worker's engines.
    pub sandbox: Option<Arc<Sandbox>>,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            log_dir: None,
            instance: 0,
            handshake_timeout: Duration::from_secs(10),
            protocol_log: false,
            log_stem: None,
            every_line: false,
            chess960: false,
            sandbox: None,
        }
    }
}

/// The reply to `go`.
#[derive(Clone, Debug)]
pub struct GoReply {
    /// The move as the engine wrote it (checked for legality by the caller).
    pub bestmove: String,
    /// When the `go` command had been written and flushed.
    pub sent_at: Instant,
    /// When the `bestmove` line was read.
    pub received_at: Instant,
    /// The last `info` line holding a score, raw (parsed on demand with [`GoReply::info`]).
    pub last_info: Option<String>,
}

impl GoReply {
    pub fn elapsed(&self) -> Duration {
        self.received_at.saturating_duration_since(self.sent_at)
    }

    pub fn info(&self) -> InfoSummary {
        self.last_info.as_deref().map(parse_info).unwrap_or_default()
    }

    /// The principal variation of that line, if it has one.
    pub fn pv(&self) -> Option<String> {
        self.last_info.as_deref().and_then(parse_pv)
    }
}

type ProtoLog = Arc<Mutex<std::io::BufWriter<File>>>;

/// A running UCI engine.
pub struct UciEngine {
    name: String,
    child: Child,
    pid: Option<i32>,
    stdin: ChildStdin,
    lines: mpsc::UnboundedReceiver<Line>,
    proto_log: Option<ProtoLog>,
    /// `id name` reported by the engine.
    pub id_name: Option<String>,
    /// Option names the engine declared.
    pub declared_options: Vec<String>,
    /// The declared type of each of `declared_options` (same order; empty when none was given).
    pub declared_types: Vec<String>,
    exited: bool,
    /// Where the engine's stderr goes (named in start failures).
    stderr_log: Option<String>,
    /// Marks the engine's descendants ([`orphans`]).
    token: String,
    /// The spec's own limits (`tc=`, `nodes=`, ...), which games apply to this engine.
    limits: EngineLimits,
}

impl UciEngine {
    /// Spawns the engine, runs the `uci`/`uciok` handshake, sends the spec's options and waits for
    /// `readyok`. Any failure is an error naming the engine.
    pub async fn start(spec: &EngineSpec, opts: &StartOptions) -> Result<UciEngine, UciError> {
        Self::start_with(spec, opts, &[], &mut |_| {}).await
    }

    /// [`UciEngine::start`] that also sets `if_declared` options (after the spec's own, each only
    /// when the engine declared it) and hands every line read before the first `readyok` to
    /// `on_line` (`info string` answers to the options, with [`StartOptions::every_line`]).
    pub async fn start_with(
        spec: &EngineSpec,
        opts: &StartOptions,
        if_declared: &[(String, String)],
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<UciEngine, UciError> {
        spec.check_pipe_text().map_err(|e| UciError::Refused(e.to_string()))?;
        let mut eng = Self::spawn(spec, opts)?;
        match eng.handshake(spec, if_declared, opts.handshake_timeout, opts.chess960, on_line).await
        {
            Ok(()) => Ok(eng),
            // Point to the log only when the engine wrote something there (an empty log is
            // removed with the run folder of a run that played nothing).
            Err(e) => match eng.stderr_log.take() {
                Some(log) if std::fs::metadata(&log).is_ok_and(|m| m.len() > 0) => {
                    Err(UciError::Start { source: Box::new(e), log })
                }
                _ => Err(e),
            },
        }
    }

    fn spawn(spec: &EngineSpec, opts: &StartOptions) -> Result<UciEngine, UciError> {
        let program = spec.program();
        if let Some(d) = &spec.dir
            && !d.is_dir()
        {
            return Err(UciError::NoDir {
                engine: spec.name.clone(),
                dir: d.display().to_string(),
            });
        }
        let mut cmd = match &opts.sandbox {
            // The box starts with a fixed environment of its own, and the working folder inside.
            Some(b) => Command::from(b.command(&Inside {
                program: &program,
                args: spec.args.iter().map(Into::into).collect(),
                dir: spec.dir.as_deref(),
                ..Inside::default()
            })),
            None => {
                let mut cmd = Command::new(&program);
                cmd.args(&spec.args);
                if let Some(d) = &spec.dir {
                    cmd.current_dir(d);
                }
                cmd
            }
        };
        // An engine is somebody else's program: it gets no database credentials or worker key.
        for var in SECRET_ENV {
            cmd.env_remove(var);
        }
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true).process_group(0);
        die_with_parent(&mut cmd);
        let file_stem = match &opts.log_stem {
            Some(stem) => stem.clone(),
            None => format!("{}-{}", file_stem(&spec.name), opts.instance),
        };
        let mut proto_log = None;
        let mut stderr_log = None;
        match &opts.log_dir {
            Some(dir) => {
                let open_log = |path: &std::path::Path| {
                    // Never through a symlink: a log goes into the run's own logs/ only.
                    use std::os::unix::fs::OpenOptionsExt as _;
                    let mut o = File::options();
                    o.create(true).append(true).custom_flags(libc::O_NOFOLLOW);
                    o.open(path).map_err(|e| UciError::Log {
                        engine: spec.name.clone(),
                        path: path.display().to_string(),
                        source: e,
                    })
                };
                let path = dir.join(format!("{file_stem}.stderr.log"));
                stderr_log = Some(path.display().to_string());
                cmd.stderr(Stdio::from(open_log(&path)?));
                if opts.protocol_log {
                    let f = open_log(&dir.join(format!("{file_stem}.uci.log")))?;
                    proto_log = Some(Arc::new(Mutex::new(std::io::BufWriter::new(f))));
                }
            }
            None => {
                cmd.stderr(Stdio::null());
            }
        }
        let (mut child, token) = orphans::spawn(&mut cmd).map_err(|e| UciError::Spawn {
            engine: spec.name.clone(),
            program: program.display().to_string(),
            source: e,
        })?;
        let pid = child.id().map(|p| p as i32);
        let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
            (Some(i), Some(o)) => (i, o),
            _ => {
                orphans::kill_inherited(pid, &token);
                return Err(UciError::Spawn {
                    engine: spec.name.clone(),
                    program: program.display().to_string(),
                    source: std::io::Error::other("no pipes"),
                });
            }
        };
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(read_lines(stdout, tx, proto_log.clone(), opts.every_line));
        Ok(UciEngine {
            name: spec.name.clone(),
            child,
            pid,
            stdin,
            lines: rx,
            proto_log,
            id_name: None,
            declared_options: Vec::new(),
            declared_types: Vec::new(),
            exited: false,
            stderr_log,
            token,
            limits: spec.limits,
        })
    }

    async fn handshake(
        &mut self,
        spec: &EngineSpec,
        if_declared: &[(String, String)],
        timeout: Duration,
        chess960: bool,
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(), UciError> {
        self.send("uci\n").await?;
        let deadline = Instant::now() + timeout;
        loop {
            let line = self.next_line(deadline, "uciok", timeout).await?;
            if line.text.trim() == "uciok" {
                break;
            } else if let Some(n) = uci_lines::id_name(&line.text) {
                self.id_name = Some(n);
            } else if let Some(o) = uci_lines::option_name(&line.text) {
                self.declared_options.push(o);
                self.declared_types.push(uci_lines::option_type(&line.text).unwrap_or_default());
            }
        }
        let mut cmds = String::new();
        if chess960 {
            if !self.declares("UCI_Chess960") {
                return Err(UciError::Unsupported {
                    engine: self.name.clone(),
                    what: "Chess960 (--variant fischerandom): it declares no UCI_Chess960 option",
                });
            }
            cmds.push_str("setoption name UCI_Chess960 value true\n");
        }
        for (k, v) in &spec.options {
            cmds.push_str(&format!("setoption name {k} value {v}\n"));
        }
        for (k, v) in if_declared.iter().filter(|(k, _)| self.declares(k)) {
            cmds.push_str(&format!("setoption name {k} value {v}\n"));
        }
        self.send(&cmds).await?;
        self.send("isready\n").await?;
        self.wait_readyok(timeout, on_line).await
    }

    /// Whether the engine declared option `name` (case-insensitive).
    pub fn declares(&self, name: &str) -> bool {
        self.declared_options.iter().any(|d| d.eq_ignore_ascii_case(name))
    }

    /// The declared type of option `name` (`spin`, `string`, ...), if declared.
    pub fn option_type(&self, name: &str) -> Option<&str> {
        let i = self.declared_options.iter().position(|d| d.eq_ignore_ascii_case(name))?;
        self.declared_types.get(i).map(String::as_str)
    }

    /// The engine's display name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The limits of the engine's spec (`--engine ...,tc=,nodes=,...`).
    pub fn limits(&self) -> &EngineLimits {
        &self.limits
    }

    /// Writes raw text (one or more complete lines) and flushes it.
    pub async fn send(&mut self, text: &str) -> Result<(), UciError> {
        if text.is_empty() {
            return Ok(());
        }
        if let Some(log) = &self.proto_log
            && let Ok(mut w) = log.lock()
        {
            for l in text.lines() {
                let _ = writeln!(w, "> {l}");
            }
            let _ = w.flush();
        }
        let res = async {
            self.stdin.write_all(text.as_bytes()).await?;
            self.stdin.flush().await
        }
        .await;
        match res {
            Ok(()) => Ok(()),
            Err(_) => Err(self.gone_error().await),
        }
    }

    /// Waits for the next line until `deadline`.
    async fn next_line(
        &mut self,
        deadline: Instant,
        expected: &'static str,
        timeout: Duration,
    ) -> Result<Line, UciError> {
        tokio::select! {
            biased;
            line = self.lines.recv() => match line {
                Some(l) if l.overlong => Err(UciError::Garbage { engine: self.name.clone() }),
                Some(l) => Ok(l),
                None => Err(self.gone_error().await),
            },
            _ = tokio::time::sleep_until(deadline.into()) => Err(UciError::Timeout {
                engine: self.name.clone(),
                expected,
                timeout,
            }),
        }
    }

    /// Sends `isready` and waits for `readyok` (earlier output, e.g. a stale bestmove, is
    /// skipped).
    pub async fn sync(&mut self, timeout: Duration) -> Result<(), UciError> {
        self.send("isready\n").await?;
        self.wait_readyok(timeout, &mut |_| {}).await
    }

    /// Reads until `readyok`, handing the lines before it to `on_line`.
    async fn wait_readyok(
        &mut self,
        timeout: Duration,
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(), UciError> {
        let deadline = Instant::now() + timeout;
        loop {
            let line = self.next_line(deadline, "readyok", timeout).await?;
            if line.text.trim() == "readyok" {
                return Ok(());
            }
            on_line(&line.text);
        }
    }

    /// Prepares for a new game: `ucinewgame`, then `isready`/`readyok`.
    pub async fn new_game(&mut self, timeout: Duration) -> Result<(), UciError> {
        self.send("ucinewgame\nisready\n").await?;
        self.wait_readyok(timeout, &mut |_| {}).await
    }

    /// Sends the position and `go` line in one write, and waits for `bestmove` up to `limit`
    /// after the write was flushed. On timeout the engine is still thinking: call
    /// [`UciEngine::stop_and_drain`] before reusing it.
    pub async fn go(
        &mut self,
        position_cmd: &str,
        go_cmd: &str,
        limit: Duration,
        expected: &'static str,
    ) -> Result<GoReply, UciError> {
        self.go_each(position_cmd, go_cmd, limit, expected, &mut |_| {}).await
    }

    /// [`UciEngine::go`] that hands every line read before `bestmove` to `on_line` (each `info`
    /// line with [`StartOptions::every_line`]).
    pub async fn go_each(
        &mut self,
        position_cmd: &str,
        go_cmd: &str,
        limit: Duration,
        expected: &'static str,
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<GoReply, UciError> {
        let mut text = String::with_capacity(position_cmd.len() + go_cmd.len() + 2);
        text.push_str(position_cmd);
        text.push('\n');
        text.push_str(go_cmd);
        text.push('\n');
        // Lines left over from an earlier command (none in normal play) are not this reply.
        while self.lines.try_recv().is_ok() {}
        self.send(&text).await?;
        let sent_at = Instant::now();
        let deadline = sent_at.checked_add(limit).unwrap_or_else(far_future);
        self.read_reply(sent_at, deadline, expected, limit, on_line).await
    }

    /// After `go` (or `stop`): reads lines until `bestmove` or `deadline`, handing the others to
    /// `on_line`. `sent_at` is when `go` was flushed.
    pub async fn read_reply(
        &mut self,
        sent_at: Instant,
        deadline: Instant,
        expected: &'static str,
        limit: Duration,
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<GoReply, UciError> {
        let mut last_info: Option<String> = None;
        loop {
            let line = self.next_line(deadline, expected, limit).await?;
            if line.info.is_some() {
                last_info = line.info;
            }
            let t = line.text.as_str();
            if let Some(m) = uci_lines::bestmove(t) {
                let bestmove = m.to_string();
                return Ok(GoReply { bestmove, sent_at, received_at: line.at, last_info });
            }
            if t.starts_with("info ") && t.contains(" score ") {
                last_info = Some(line.text.clone());
            }
            on_line(t);
        }
    }

    /// After a timeout: sends `stop` and waits up to `wait` for the pending `bestmove`. Returns
    /// true when the engine answered (it can be reused).
    pub async fn stop_and_drain(&mut self, wait: Duration) -> bool {
        if self.send("stop\n").await.is_err() {
            return false;
        }
        let deadline = Instant::now() + wait;
        loop {
            match self.next_line(deadline, "bestmove", wait).await {
                Ok(l) if uci_lines::bestmove(&l.text).is_some() => return true,
                Ok(_) => continue,
                Err(_) => return false,
            }
        }
    }

    /// Searches one position with a `go` line such as `go depth 8` and returns the reply; the
    /// final score and depth are in [`GoReply::info`]. For tools that probe an engine (e.g.
    /// calibration) rather than play games.
    pub async fn search(
        &mut self,
        fen: &str,
        moves: &[String],
        go_cmd: &str,
        timeout: Duration,
    ) -> Result<GoReply, UciError> {
        self.go(&position_command(fen, moves), go_cmd, timeout, "bestmove").await
    }

    async fn gone_error(&mut self) -> UciError {
        match tokio::time::timeout(Duration::from_millis(500), self.child.wait()).await {
            Ok(Ok(status)) => {
                self.exited = true;
                UciError::Exited {
                    engine: self.name.clone(),
                    status: status.to_string(),
                    clean: status.success(),
                }
            }
            _ => UciError::Disconnected { engine: self.name.clone() },
        }
    }

    /// Asks the engine to quit, then terminates and finally kills its process group.
    pub async fn shutdown(mut self) {
        let _ = self.send("quit\n").await;
        if tokio::time::timeout(Duration::from_millis(300), self.child.wait()).await.is_ok() {
            self.exited = true;
            self.kill_group(libc::SIGKILL); // stray grandchildren, if any
            orphans::kill_inherited(None, &self.token); // and those that left the group
            return;
        }
        self.kill_group(libc::SIGTERM);
        if tokio::time::timeout(Duration::from_millis(300), self.child.wait()).await.is_ok() {
            self.exited = true;
        }
        self.kill_group(libc::SIGKILL);
        let _ = self.child.wait().await;
        self.exited = true;
        // The engine has exited: what it started is re-parented to the runner by now.
        orphans::kill_inherited(None, &self.token);
    }

    fn kill_group(&self, sig: i32) {
        if let Some(pid) = self.pid
            && pid > 0
        {
            // SAFETY: killpg only sends a signal; the group was created for this child.
            unsafe {
                libc::killpg(pid, sig);
            }
        }
    }

    /// OS process id.
    pub fn pid(&self) -> Option<i32> {
        self.pid
    }

    /// CPU time (user + system) the engine process has used so far, from /proc (Linux only).
    pub fn cpu_time(&self) -> Option<Duration> {
        process_cpu_time(self.pid?)
    }
}

impl Drop for UciEngine {
    fn drop(&mut self) {
        // Kill the whole group (the engine and anything it started); kill_on_drop reaps. What
        // left the group and was re-parented to the runner is killed by its token.
        self.kill_group(libc::SIGKILL);
        orphans::kill_inherited(self.pid, &self.token);
        let _ = self.exited;
    }
}

/// CPU time of a live process from `/proc/<pid>/stat` (utime + stime), Linux only.
pub fn process_cpu_time(pid: i32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state); utime and stime are fields 14 and 15.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks <= 0 {
        return None;
    }
    Some(Duration::from_secs_f64((utime + stime) as f64 / ticks as f64))
}

/// CPU time (user + system) used by this process so far.
pub fn own_cpu_time() -> Option<Duration> {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return None;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(Duration::from_secs_f64(tv(ru.ru_utime) + tv(ru.ru_stime)))
}

/// The `position` command for a root FEN and the moves played from it.
pub fn position_command(fen: &str, moves: &[String]) -> String {
    let mut s = String::with_capacity(fen.len() + 20 + moves.len() * 6);
    if fen == crate::plan::openings::STARTPOS_FEN {
        s.push_str("position startpos");
    } else {
        s.push_str("position fen ");
        s.push_str(fen);
    }
    if !moves.is_empty() {
        s.push_str(" moves");
        for m in moves {
            s.push(' ');
            s.push_str(m);
        }
    }
    s
}

/// A deadline beyond any wait (for limits too large to add to an instant).
fn far_future() -> Instant {
    let now = Instant::now();
    let year = Duration::from_secs(365 * 24 * 3600);
    now.checked_add(year).unwrap_or(now)
}

/// Ties the engine's life to the runner's: the kernel kills it (SIGKILL) when the runner dies,
/// even by kill -9, which no `Drop` sees. Linux only; a no-op elsewhere.
fn die_with_parent(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the closure runs in the forked child before exec and only makes
        // async-signal-safe calls (prctl, getppid, _exit).
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The runner died between fork and prctl: the signal will never come.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// The reader task: one line at a time, timestamped as read, until EOF or the receiver is gone.
async fn read_lines(
    stdout: tokio::process::ChildStdout,
    tx: mpsc::UnboundedSender<Line>,
    log: Option<ProtoLog>,
    every_line: bool,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut buf = Vec::with_capacity(256);
    let mut last_info: Option<String> = None;
    loop {
        match uci_lines::read_line_capped(&mut reader, &mut buf, MAX_LINE).await {
            Ok(LineRead::Eof) | Err(_) => break,
            Ok(LineRead::Overlong) => {
                let at = Instant::now();
                let text = String::new();
                let _ = tx.send(Line { text, at, info: None, overlong: true });
                break;
            }
            Ok(LineRead::Line) => {
                let at = Instant::now();
                let text = String::from_utf8_lossy(&buf).trim_end().to_string();
                if let Some(log) = &log
                    && let Ok(mut w) = log.lock()
                {
                    let _ = writeln!(w, "< {text}");
                }
                if text.starts_with("info ") && !every_line {
                    if text.contains(" score ") {
                        last_info = Some(text);
                    }
                    continue;
                }
                if tx.send(Line { text, at, info: last_info.take(), overlong: false }).is_err() {
                    break;
                }
            }
        }
    }
    if let Some(log) = &log
        && let Ok(mut w) = log.lock()
    {
        let _ = w.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_commands() {
        assert_eq!(position_command(crate::plan::openings::STARTPOS_FEN, &[]), "position startpos");
        assert_eq!(
            position_command("8/8/8/8/8/8/8/K6k w - - 0 1", &["a1a2".into(), "h1h2".into()]),
            "position fen 8/8/8/8/8/8/8/K6k w - - 0 1 moves a1a2 h1h2"
        );
    }

    #[test]
    fn cpu_times_are_readable() {
        let own = own_cpu_time().unwrap();
        let via_proc = process_cpu_time(std::process::id() as i32).unwrap();
        // Both clocks see the same process; /proc has tick resolution.
        assert!((own.as_secs_f64() - via_proc.as_secs_f64()).abs() < 1.0);
    }

    #[test]
    fn bestmove_tokens() {
        let b = uci_lines::bestmove;
        assert_eq!(b("bestmove e2e4 ponder e7e5"), Some("e2e4"));
        assert_eq!(b("bestmove a7a8q"), Some("a7a8q"));
        assert_eq!(b("bestmove zz9"), Some("zz9"));
        assert_eq!(b("bestmove"), Some(""));
        assert_eq!(b("bestmovex a1a1"), None);
    }

    fn shell_engine(script: &str) -> EngineSpec {
        EngineSpec {
            name: "fake".into(),
            cmd: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            dir: None,
            options: vec![],
            limits: Default::default(),
        }
    }

    // Moved with the tools' former driver (calibrate/uci_child.rs): the tools now start engines
    // here, so its handshake tests run against this driver.
    #[tokio::test]
    async fn handshake_timeout_and_disconnect_are_errors() {
        let quick = |ms| StartOptions {
            handshake_timeout: Duration::from_millis(ms),
            every_line: true,
            ..Default::default()
        };
        let silent = shell_engine("sleep 5");
        let err = UciEngine::start(&silent, &quick(200)).await.err().unwrap();
        assert!(matches!(err, UciError::Timeout { .. }), "{err}");
        let dies = shell_engine("echo 'id name x'");
        let err = UciEngine::start(&dies, &quick(5000)).await.err().unwrap();
        assert!(err.to_string().contains("exited"), "{err}");
        let missing = EngineSpec { cmd: "/nonexistent/engine".into(), ..silent };
        let err = UciEngine::start(&missing, &quick(1000)).await.err().unwrap();
        assert!(err.to_string().contains("cannot start /nonexistent/engine"), "{err}");
    }

    #[tokio::test]
    async fn handshake_collects_options() {
        let e = shell_engine(
            "read l; echo 'option name MPC type check default true'; echo uciok; \
             read l; echo 'info string hello'; echo readyok; sleep 5",
        );
        let opts = StartOptions { every_line: true, ..Default::default() };
        let mut seen = Vec::new();
        let eng =
            UciEngine::start_with(&e, &opts, &[], &mut |l| seen.push(l.to_string())).await.unwrap();
        assert!(eng.declares("mpc"));
        assert!(!eng.declares("Hash"));
        assert_eq!(seen, ["info string hello"]);
    }
}
