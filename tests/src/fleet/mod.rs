//! The fleet's end-to-end fixture: a throwaway PostgreSQL cluster ([`TempPg`]) with the fleet's
//! schema, one approver (`ops`, whose token is in a file), one worker key in a file, and one
//! `runner serve --db` on a free localhost port. Everything after the operator's bootstrap goes
//! through that server, as on a real fleet:
//!
//! - the operator's bootstrap, on the database's side: `runner db init --db`, `runner user add
//!   --db` ([`Fleet::user`]) and the first `runner worker-key add --db`;
//! - people's commands: `runner CMD --server URL --token-file FILE` with no database URL in
//!   their arguments or environment ([`Fleet::person`], [`Fleet::submit`], [`Fleet::pull`]);
//! - workers: `runner worker --server URL --key-file FILE`, likewise without a database URL
//!   ([`Fleet::worker`], [`Fleet::worker_with`]), their stderr in `NAME.log` in the scratch
//!   folder ([`Fleet::log`]) and their fetched engines under its `cache/`;
//! - what the tests check is read from the database with `psql` ([`Fleet::sql`] and the
//!   helpers after it).
//!
//! The server can be killed and started again on its address, and more servers started on the
//! same database ([`Fleet::server_on`]).

mod server;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::Duration;

pub use server::Server;
use server::spawn_server;

use crate::pg::TempPg;
use crate::{run_runner, runner_bin, scratch, stderr, stdout, wait_until};

/// Variables that would point a command at the database or carry a secret: removed from the
/// environment of every person's command and worker the fixture starts (a test adds its own).
const AMBIENT: [&str; 9] = [
    "RUNNER_DB",
    "RUNNER_SERVER",
    "RUNNER_TOKEN",
    "RUNNER_WORKER_KEY",
    "PGHOST",
    "PGPORT",
    "PGUSER",
    "PGDATABASE",
    "PGPASSWORD",
];

/// One fleet: its database, scratch folder, server, approver's token and worker key.
pub struct Fleet {
    /// (First: dropped, so killed, before the database stops.)
    server: Server,
    pub pg: TempPg,
    /// The scratch folder: the commands' working folder, the logs, the key and token files.
    pub dir: PathBuf,
    /// The server's extra arguments, for [`Fleet::start_server_again`].
    serve_args: Vec<String>,
    /// The server's URL.
    pub url: String,
    /// The worker key `box`, issued by the operator (`runner worker-key add --db`).
    pub key_file: PathBuf,
    /// The approver `ops`'s token: [`Fleet::person`] and [`Fleet::submit`] use it.
    pub token_file: PathBuf,
    /// The CA of the server's certificate (TLS), given to people's commands with `--ca`.
    pub ca: Option<PathBuf>,
}

/// How [`Fleet::worker_with`] starts a worker; `Default` is the fixture's key, the fixture's
/// server and [`Fleet::trusted`] folders.
#[derive(Default, Clone, Copy)]
pub struct WorkerOpts<'a> {
    /// Arguments after `--server URL --key-file FILE` and the `--trust` folders.
    pub args: &'a [&'a str],
    /// Variables added to the worker's environment (after [`AMBIENT`] is removed).
    pub env: &'a [(&'a str, &'a str)],
    /// Another key file (from [`Fleet::worker_key`]).
    pub key_file: Option<&'a Path>,
    /// The folders given with `--trust` (empty: none, the worker runs only what the server
    /// delivers and its own catalog).
    pub trust: Option<&'a [PathBuf]>,
    /// Another server's URL (one from [`Fleet::server_on`]).
    pub server: Option<&'a str>,
}

impl Fleet {
    /// A fleet whose server has no extra arguments.
    pub fn new(name: &str) -> Fleet {
        Fleet::serving(name, &[])
    }

    /// A fleet whose server runs with `extra` arguments (TLS, `--worker-poll`, ...).
    pub fn serving(name: &str, extra: &[&str]) -> Fleet {
        let dir = scratch(name);
        let pg = TempPg::start(name);
        let url = pg.url();
        last_line(run_runner(&dir, &["db", "init", "--db", &url]), "db init");
        let key = last_line(run_runner(&dir, &["worker-key", "add", "box", "--db", &url]), "key");
        let key_file = secret_file(&dir, "worker.key", &key);
        let token = last_line(
            run_runner(&dir, &["user", "add", "ops", "--approver", "--db", &url]),
            "user add ops",
        );
        let token_file = secret_file(&dir, "ops.token", &token);
        let serve_args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let server = spawn_server(&dir, &url, "127.0.0.1:0", &serve_args, "server");
        let url = server.url.clone();
        Fleet { server, pg, dir, serve_args, url, key_file, token_file, ca: None }
    }

    // --- People ---

    /// `runner user add NAME [--approver] --db URL` (the operator's way): the user's token,
    /// written to `NAME.token` (mode 0600), whose path is returned.
    pub fn user(&self, name: &str, approver: bool) -> PathBuf {
        let url = self.pg.url();
        let mut args = vec!["user", "add", name, "--db", &url];
        if approver {
            args.push("--approver");
        }
        let token = last_line(run_runner(&self.dir, &args), &format!("user add {name}"));
        secret_file(&self.dir, &format!("{name}.token"), &token)
    }

    /// A person's command through the server as `ops`: `runner CMD --server URL --token-file
    /// FILE [--ca FILE] ARGS`. `cmd` may be several words (`"worker-key add"`).
    pub fn person(&self, cmd: &str, args: &[&str]) -> Output {
        self.person_as(&self.token_file, cmd, args)
    }

    /// [`Fleet::person`] as the user whose token is in `token_file`.
    pub fn person_as(&self, token_file: &Path, cmd: &str, args: &[&str]) -> Output {
        let mut c = Command::new(runner_bin());
        c.current_dir(&self.dir).args(cmd.split_whitespace()).args(["--server", &self.url]);
        c.arg("--token-file").arg(token_file);
        if let Some(ca) = &self.ca {
            c.arg("--ca").arg(ca);
        }
        for var in AMBIENT {
            c.env_remove(var);
        }
        let what = format!("runner {cmd} {}", args.join(" "));
        crate::deadline::output_within(
            c.args(args).stdin(Stdio::null()),
            &what,
            crate::deadline::COMMAND_LIMIT,
        )
    }

    /// [`Fleet::person`], asserted to succeed: its standard output.
    pub fn said(&self, cmd: &str, args: &[&str]) -> String {
        let o = self.person(cmd, args);
        assert!(o.status.success(), "runner {cmd} {args:?}: {}", stderr(&o));
        stdout(&o)
    }

    /// `runner submit ARGS` as `ops` (an approver: the run is active at once): the run's id.
    pub fn submit(&self, args: &[&str]) -> i64 {
        self.submit_as(&self.token_file, args).0
    }

    /// `runner submit ARGS` as the user of `token_file`: the run's id and submit's stderr.
    pub fn submit_as(&self, token_file: &Path, args: &[&str]) -> (i64, String) {
        let o = self.person_as(token_file, "submit", args);
        assert!(o.status.success(), "submit: {}", stderr(&o));
        let out = stdout(&o);
        let id = out
            .lines()
            .last()
            .and_then(|l| l.strip_prefix("run "))
            .and_then(|id| id.trim().parse().ok())
            .unwrap_or_else(|| panic!("no `run ID` last line: {out}"));
        (id, stderr(&o))
    }

    /// `runner pull RUN --out OUT` through the server, asserted to succeed.
    pub fn pull(&self, run: i64, out: &Path) -> Output {
        let o = self.person("pull", &[&run.to_string(), "--out", &out.to_string_lossy()]);
        assert!(o.status.success(), "pull: {}", stderr(&o));
        o
    }

    /// `runner ARGS --db URL`: the operator's commands on the database's side (`gc`, `user`).
    pub fn operator(&self, args: &[&str]) -> Output {
        let url = self.pg.url();
        let mut full = args.to_vec();
        full.extend(["--db", url.as_str()]);
        run_runner(&self.dir, &full)
    }

    // --- Workers ---

    /// Another worker key, issued through the server by `ops`: written to `NAME.key` (mode
    /// 0600), whose path is returned.
    pub fn worker_key(&self, name: &str) -> PathBuf {
        let key = last_line(self.person("worker-key add", &[name]), &format!("key {name}"));
        secret_file(&self.dir, &format!("{name}.key"), &key)
    }

    /// The folders a worker trusts by default: badengine's, the scratch folder (scripts a test
    /// writes) and /usr/games (Debian's engines).
    pub fn trusted(&self) -> Vec<PathBuf> {
        let bad = crate::badengine_bin();
        vec![bad.parent().unwrap().to_path_buf(), self.dir.clone(), PathBuf::from("/usr/games")]
    }

    /// A worker of the server with `args` (see [`Fleet::worker_with`]).
    pub fn worker(&self, name: &str, args: &[&str]) -> Child {
        self.worker_with(name, WorkerOpts { args, ..Default::default() })
    }

    /// `runner worker --server URL --key-file FILE --trust DIR... ARGS`, in the scratch folder,
    /// with no database URL or secret of the test's environment; stderr to `NAME.log`.
    pub fn worker_with(&self, name: &str, o: WorkerOpts) -> Child {
        let log = std::fs::File::create(self.dir.join(format!("{name}.log"))).unwrap();
        let trust = match o.trust {
            Some(t) => t.to_vec(),
            None => self.trusted(),
        };
        let mut c = Command::new(runner_bin());
        c.args(["worker", "--server", o.server.unwrap_or(&self.url), "--key-file"])
            .arg(o.key_file.unwrap_or(&self.key_file));
        for t in &trust {
            c.arg("--trust").arg(t);
        }
        for var in AMBIENT {
            c.env_remove(var);
        }
        c.args(o.args)
            .env("XDG_CACHE_HOME", self.dir.join("cache"))
            .envs(o.env.iter().copied())
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start a worker")
    }

    /// Waits for worker `name` to exit, at most `limit`; past it the worker is killed and the
    /// test fails with its log.
    pub fn ended(&self, w: &mut Child, name: &str, limit: Duration) -> ExitStatus {
        let mut status = None;
        if !wait_until(limit, || {
            status = w.try_wait().ok().flatten();
            status.is_some()
        }) {
            let _ = w.kill();
            let _ = w.wait();
            panic!("worker {name} did not end within {limit:?}:\n{}", self.log(name));
        }
        status.unwrap()
    }

    /// A worker started with `o` and waited for (5 minutes at most): its exit status and log.
    pub fn worker_run(&self, name: &str, o: WorkerOpts) -> (ExitStatus, String) {
        let mut w = self.worker_with(name, o);
        let status = self.ended(&mut w, name, Duration::from_secs(300));
        (status, self.log(name))
    }

    /// [`Fleet::worker_run`], asserted to end well: its log.
    pub fn worker_done(&self, name: &str, o: WorkerOpts) -> String {
        let (status, log) = self.worker_run(name, o);
        assert!(status.success(), "worker {name} failed ({status}):\n{log}");
        log
    }

    /// What worker (or server) `name` wrote to `NAME.log`.
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(format!("{name}.log"))).unwrap_or_default()
    }

    // --- The database's content ---

    /// SQL through `psql` as the cluster's superuser: its unaligned, tuples-only output.
    pub fn sql(&self, q: &str) -> String {
        self.pg.psql(q)
    }

    /// The run's state (`runs.state`).
    pub fn state(&self, run: i64) -> String {
        self.sql(&format!("SELECT state FROM runs WHERE id = {run}"))
    }

    /// The rows of `table` (games, refusals, pairs, ...) of the run.
    pub fn count(&self, table: &str, run: i64) -> i64 {
        self.sql(&format!("SELECT count(*) FROM {table} WHERE run_id = {run}")).parse().unwrap()
    }

    /// The run's pairs in `state` (pending, leased, done, skipped).
    pub fn pairs_in(&self, state: &str, run: i64) -> i64 {
        let q = format!("SELECT count(*) FROM pairs WHERE run_id = {run} AND state = '{state}'");
        self.sql(&q).parse().unwrap()
    }

    /// The run's counts as the database stored them: games, and the tallies' pairs.
    pub fn stored(&self, run: i64) -> (i64, i64) {
        let pairs = self.sql(&format!(
            "SELECT coalesce(sum(ll + ld + dd + wd + ww), 0) FROM tallies WHERE run_id = {run}"
        ));
        (self.count("games", run), pairs.parse().unwrap())
    }

    /// Every stored game is stored once, and every done pair has both games.
    pub fn assert_nothing_doubled(&self, run: i64) {
        let doubled = self.sql(&format!(
            "SELECT count(*) FROM (SELECT pairing, pair, game FROM games WHERE run_id = {run} \
             GROUP BY 1, 2, 3 HAVING count(*) > 1) d"
        ));
        assert_eq!(doubled, "0", "games stored twice");
        let odd = self.sql(&format!(
            "SELECT count(*) FROM pairs p WHERE run_id = {run} AND (state = 'done') <> \
             ((SELECT count(*) FROM games g WHERE g.run_id = p.run_id AND g.pairing = p.pairing \
               AND g.pair = p.pair) = 2)"
        ));
        assert_eq!(odd, "0", "a done pair without its two games, or games of a pair not done");
    }

    // --- Servers ---

    /// The server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.server.port
    }

    /// The server's process id.
    pub fn server_pid(&self) -> i32 {
        self.server.child.id() as i32
    }

    /// Waits at most `limit` for the server to exit (after a signal); whether it did.
    pub fn server_exited(&mut self, limit: Duration) -> bool {
        let child = &mut self.server.child;
        wait_until(limit, || child.try_wait().ok().flatten().is_some())
    }

    /// Stops the server at once (SIGKILL).
    pub fn kill_server(&mut self) {
        let _ = self.server.child.kill();
        let _ = self.server.child.wait();
    }

    /// A new server, with the first one's arguments, on the address of the last one.
    pub fn start_server_again(&mut self) {
        let bind = self.url.split_once("://").map_or(self.url.as_str(), |(_, a)| a).to_string();
        self.server = spawn_server(&self.dir, &self.pg.url(), &bind, &self.serve_args, "server");
    }

    /// Another server on a free port, over the database as `db` (the fleet's URL, or another
    /// role's from [`TempPg::url_as`]) with `extra` arguments; its stderr in `LOG.log`.
    pub fn server_on(&self, db: &str, extra: &[&str], log: &str) -> Server {
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        spawn_server(&self.dir, db, "127.0.0.1:0", &extra, log)
    }
}

/// The match the fleet tests submit: `a` against `b` over `book`, `games` games, seed 7, one
/// node a move, at most 40 moves (no result depends on timing).
pub fn match_args<'a>(a: &'a str, b: &'a str, book: &'a str, games: &'a str) -> Vec<&'a str> {
    vec![
        "match",
        "--engine",
        a,
        "--engine",
        b,
        "--book",
        book,
        "--games",
        games,
        "--seed",
        "7",
        "--nodes",
        "1",
        "--maxmoves",
        "40",
        "--progress",
        "quiet",
    ]
}

/// The last line of a command's output (a key, a token), asserting it succeeded.
fn last_line(o: Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {}", stderr(&o));
    stdout(&o).lines().last().unwrap_or_default().trim().to_string()
}

/// `secret` in `dir/name`, mode 0600 (a secret file others may read draws a warning).
fn secret_file(dir: &Path, name: &str, secret: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    assert!(!secret.is_empty() && !secret.contains(char::is_whitespace), "{name}: {secret:?}");
    let p = dir.join(name);
    std::fs::write(&p, format!("{secret}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p
}
