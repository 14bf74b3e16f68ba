//! A throwaway PostgreSQL cluster for tests and the queue's load benchmark: `initdb` into a
//! temporary folder, `pg_ctl start` listening on a Unix socket in that folder only (no TCP),
//! trust authentication for one user, stopped (`immediate`) and removed when dropped.
//!
//! Two kinds: [`TempPg::start`], the tests' scratch cluster, lives in memory (`/dev/shm` when it
//! has room) with `fsync = off`; [`TempPg::start_durable`], the benchmark's, lives on disk with
//! `fsync = on`, so its figures include the disk as a deployment's would. Turning off fsync only
//! gives up what survives the operating system's crash: a PostgreSQL process killed with
//! SIGKILL, or stopped `immediate`, loses no committed transaction either way, since its writes
//! are already the kernel's (`synchronous_commit` stays on). The tests that kill or restart
//! the database under workers test exactly that.
//!
//! Debian's `postgresql` package provides the binaries (`/usr/lib/postgresql/N/bin`); without
//! them [`TempPg::start`] panics naming the package, so a test never passes silently. As root
//! (CI containers), the server runs as the `postgres` user through `runuser`, since PostgreSQL
//! refuses to run as root.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A running throwaway cluster.
pub struct TempPg {
    root: PathBuf,
    data: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
    stopped: bool,
}

/// The user the tests connect as (trust authentication over the socket).
pub const USER: &str = "fleet";
/// The database created in the cluster.
pub const DBNAME: &str = "fleet";

/// The folder of PostgreSQL's server binaries (the newest installed), if any.
pub fn pg_bindir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PG_BINDIR") {
        return Some(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, b)| b)
}

/// `/dev/shm` if it is a folder with at least 2 GiB free (a container's default 64 MiB is not
/// enough for two clusters and their write-ahead logs).
fn memory_dir() -> Option<PathBuf> {
    let dir = Path::new("/dev/shm");
    // SAFETY: statvfs writes into the zeroed struct we own; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c"/dev/shm".as_ptr(), &mut st) } != 0 {
        return None;
    }
    let free = st.f_bavail as u128 * st.f_frsize as u128;
    (dir.is_dir() && free >= 2 << 30).then(|| dir.to_path_buf())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

impl TempPg {
    /// Starts a scratch cluster for a test: in memory when `/dev/shm` has room (else the
    /// system's temporary directory), `fsync = off`. Creating a cluster there takes about a
    /// second less than on disk, and the fleet tests make about a hundred.
    pub fn start(name: &str) -> TempPg {
        let base = memory_dir().unwrap_or_else(std::env::temp_dir);
        TempPg::start_in(name, &base, false)
    }

    /// Starts a cluster on disk (the system's temporary directory) with `fsync = on`: the load
    /// benchmark's, whose figures should include the cost of a durable commit.
    pub fn start_durable(name: &str) -> TempPg {
        TempPg::start_in(name, &std::env::temp_dir(), true)
    }

    fn start_in(name: &str, base: &Path, fsync: bool) -> TempPg {
        let bin = pg_bindir().unwrap_or_else(|| {
            panic!(
                "PostgreSQL server binaries not found (no /usr/lib/postgresql/N/bin/initdb): \
                 install Debian's `postgresql` package (.ci/run does)"
            )
        });
        static N: AtomicUsize = AtomicUsize::new(0);
        // Unix socket paths are limited to 107 bytes: keep the folder short.
        let root = base.join(format!(
            "pg-{}-{}-{}",
            &name[..name.len().min(12)],
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("temporary folder for PostgreSQL");
        let as_postgres = is_root();
        if as_postgres {
            let st = Command::new("chown").arg("postgres:postgres").arg(&root).status();
            assert!(st.is_ok_and(|s| s.success()), "cannot chown {} to postgres", root.display());
        }
        let data = root.join("data");
        let pg = TempPg { root, data, bin, as_postgres, stopped: true };
        let out = pg.pg(
            "initdb",
            &[
                "-D",
                path_str(&pg.data),
                "-U",
                USER,
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
        );
        assert!(out.status.success(), "initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        let conf = format!(
            "listen_addresses = ''\nunix_socket_directories = '{}'\nfsync = {}\n\
             max_connections = 200\nshared_buffers = 64MB\n",
            pg.root.display(),
            if fsync { "on" } else { "off" }
        );
        let conf_path = pg.data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf_path).unwrap_or_default();
        text.push_str(&conf);
        std::fs::write(&conf_path, text).expect("postgresql.conf");
        let mut pg = pg;
        pg.ctl_start();
        pg.watch_owner();
        let out = pg.pg("createdb", &["-h", path_str(&pg.root), "-U", USER, DBNAME]);
        assert!(out.status.success(), "createdb failed: {}", String::from_utf8_lossy(&out.stderr));
        pg
    }

    fn pg(&self, tool: &str, args: &[&str]) -> Output {
        let exe = self.bin.join(tool);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        cmd.args(args)
            .current_dir(&self.root)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()))
    }

    fn ctl_start(&mut self) {
        let log = self.root.join("server.log");
        let out = self.pg(
            "pg_ctl",
            &["-D", path_str(&self.data), "-l", path_str(&log), "-w", "-t", "60", "start"],
        );
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        self.stopped = false;
    }

    /// A detached watchdog: when this process is gone (a test killed by a timeout or `kill -9`,
    /// where `Drop` never runs), it stops the cluster and removes its folder. `Drop` does the
    /// same at once in the normal case; the watchdog then finds nothing left and exits.
    fn watch_owner(&self) {
        let ctl = self.bin.join("pg_ctl");
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 1; done; \
             if [ -d '{data}' ]; then {run}'{ctl}' -D '{data}' -m immediate -w stop; fi; \
             rm -rf '{root}'",
            pid = std::process::id(),
            data = self.data.display(),
            root = self.root.display(),
            ctl = ctl.display(),
            run = if self.as_postgres { "runuser -u postgres -- " } else { "" },
        );
        let spawned = Command::new("setsid")
            .args(["sh", "-c", &script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        assert!(spawned.is_ok(), "cannot start the cluster's watchdog (setsid, sh)");
    }

    /// The connection string (`host=` the socket folder).
    pub fn url(&self) -> String {
        format!("host={} user={USER} dbname={DBNAME}", self.root.display())
    }

    /// The socket folder.
    pub fn socket_dir(&self) -> &Path {
        &self.root
    }

    /// `pg_ctl stop -m fast` (clients are disconnected).
    pub fn stop(&mut self) {
        let out = self.pg("pg_ctl", &["-D", path_str(&self.data), "-m", "fast", "-w", "stop"]);
        assert!(out.status.success(), "pg_ctl stop: {}", String::from_utf8_lossy(&out.stderr));
        self.stopped = true;
    }

    /// Starts a stopped cluster again.
    pub fn start_again(&mut self) {
        self.ctl_start();
    }

    /// `pg_ctl restart -m fast`: every connection is cut.
    pub fn restart(&mut self) {
        self.stop();
        self.ctl_start();
    }

    /// Runs SQL through `psql` (for assertions); returns its unaligned, tuples-only output.
    pub fn psql(&self, sql: &str) -> String {
        let out = self.pg(
            "psql",
            &[
                "-h",
                path_str(&self.root),
                "-U",
                USER,
                "-d",
                DBNAME,
                "-AtX",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ],
        );
        assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl TempPg {
    /// Runs an SQL script file through `psql -f` as the superuser (psql's backslash commands
    /// work); returns its output, or psql's error output when it failed.
    pub fn psql_file(&self, script: &Path) -> Result<String, String> {
        let text = std::fs::read_to_string(script)
            .map_err(|e| format!("cannot read {}: {e}", script.display()))?;
        // A copy in the cluster's folder, readable by the server's user when running as root.
        let copy = self.root.join("script.sql");
        std::fs::write(&copy, text).map_err(|e| format!("cannot copy the script: {e}"))?;
        let out = self.pg(
            "psql",
            &["-h", path_str(&self.root), "-U", USER, "-d", DBNAME, "-AtX", "-f", path_str(&copy)],
        );
        let _ = std::fs::remove_file(&copy);
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// The connection string for another role (trust authentication on the socket).
    pub fn url_as(&self, user: &str) -> String {
        format!("host={} user={user} dbname={DBNAME}", self.root.display())
    }
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

impl Drop for TempPg {
    fn drop(&mut self) {
        if !self.stopped {
            let _ =
                self.pg("pg_ctl", &["-D", path_str(&self.data), "-m", "immediate", "-w", "stop"]);
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
