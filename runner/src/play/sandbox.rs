//! The box: engines and builds of other people's runs started inside bubblewrap (`bwrap`), with
//! no network (unless asked, for a build), new user, PID, IPC, UTS and mount namespaces, no
//! capabilities, no environment but a fixed one, the whole file system read-only, and the
//! worker's own files hidden under empty private folders: its home, its cache, its logs, its
//! key file, `/run` (sockets: PostgreSQL's, D-Bus), `/tmp` (private to the box). A boxed process
//! writes only into its own folder (a fresh private `/tmp/work`, or a build's fresh folder
//! bound read-write) and its private `/tmp`; what it writes vanishes with it, except a build's
//! folder. Its `/proc` is its own PID namespace's: the worker, and its environment, are not
//! there (`/proc/$PPID/environ` is bwrap's, which holds only the fixed environment).
//!
//! Why bubblewrap: it is one small, well-kept program (Flatpak's) that sets up every namespace
//! above in one exec, needs no privilege where unprivileged user namespaces are allowed (and
//! works as root), and is one `apt-get install bubblewrap` away; the same with `unshare(2)`
//! and mounts by hand would be a few hundred lines of unsafe code between fork and exec, and
//! Landlock alone hides no environment, no `/proc` and no network. The process tree is
//! `runner -> bwrap -> bwrap (PID 1 of the box) -> engine`: the runner's process group, kill and
//! parent-death signal apply to the outer bwrap; `--die-with-parent` ties the box's PID 1 to it,
//! and when PID 1 dies the kernel kills everything else in the box, so nothing an engine started
//! outlives it (stronger than the token sweep of [`super::orphans`], which still runs).
//!
//! What remains: a worker running as root runs boxed processes as root without capabilities,
//! who can still read the root-owned files the box leaves visible (`/etc/shadow` and
//! `/etc/gshadow` are hidden; others a worker hides with `--box-hide`); a worker running as a
//! user of its own is the better setup. What engines need from a hidden folder (a tablebase
//! folder in a home, the program a wrapper script starts) the worker's operator shows read-only
//! with `--box-show`; never a folder holding the worker's key file, cache or logs.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Folders a box always hides (those that exist): homes, sockets, temporary and mounted files,
/// logs and mail. The worker's own (its home, cache, logs) are added by [`Sandbox::new`].
const HIDDEN_DIRS: [&str; 11] = [
    "/root",
    "/home",
    "/run",
    "/var/run",
    "/var/tmp",
    "/var/log",
    "/var/mail",
    "/var/spool",
    "/var/lib/postgresql",
    "/mnt",
    "/media",
];

/// Files a box always hides (those that exist): password hashes, readable by root.
const HIDDEN_FILES: [&str; 2] = ["/etc/shadow", "/etc/gshadow"];

/// The folder a boxed engine starts in when it has no working folder of its own: inside the
/// box's private `/tmp`, empty at each start.
pub const WORK_DIR: &str = "/tmp/work";

/// The `PATH` inside a box (plus the toolchain's, for a build).
const BOX_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/games";

/// A box's settings on this machine: bwrap, and what it hides.
#[derive(Clone, Debug)]
pub struct Sandbox {
    bwrap: PathBuf,
    hidden_dirs: Vec<PathBuf>,
    hidden_files: Vec<PathBuf>,
    /// Shown read-only inside hidden folders (`--box-show`).
    shown: Vec<PathBuf>,
    toolchain: Toolchain,
}

/// Where a build's compilers live when they are inside a hidden folder (rustup's in a home):
/// shown read-only to builds, with the variables that point to them.
#[derive(Clone, Debug, Default)]
struct Toolchain {
    show: Vec<PathBuf>,
    env: Vec<(String, OsString)>,
    path: Vec<PathBuf>,
}

/// One process to start in a box.
#[derive(Clone, Debug)]
pub struct Inside<'a> {
    pub program: &'a Path,
    pub args: Vec<OsString>,
    /// The process's working folder, shown read-only (None: a fresh [`WORK_DIR`]).
    pub dir: Option<&'a Path>,
    /// A folder bound read-write (a build's fresh folder), and the working folder.
    pub writable: Option<&'a Path>,
    /// Keep the network (a build whose worker opted in).
    pub net: bool,
    /// Show the compilers (a build).
    pub toolchain: bool,
}

impl Default for Inside<'_> {
    fn default() -> Self {
        Inside {
            program: Path::new(""),
            args: Vec::new(),
            dir: None,
            writable: None,
            net: false,
            toolchain: false,
        }
    }
}

/// Whether `p` lies inside `dir` (or is it).
fn under(p: &Path, dir: &Path) -> bool {
    p.starts_with(dir)
}

/// `p` made absolute and its symbolic links resolved, when it exists.
fn real(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok()
}

/// `program` as `Command` would find it: itself when it holds a `/`, else the first executable
/// of that name on `PATH`.
pub fn which(program: &Path) -> Option<PathBuf> {
    if program.as_os_str().to_string_lossy().contains('/') {
        return real(program);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(program)).find_map(|c| {
        use std::os::unix::fs::PermissionsExt as _;
        let m = std::fs::metadata(&c).ok()?;
        (m.is_file() && m.permissions().mode() & 0o111 != 0).then(|| real(&c)).flatten()
    })
}

impl Sandbox {
    /// The box of this machine hiding `hide` too (the worker's key file, cache, logs, config:
    /// folders or files) and showing `show` read-only (files or folders that must not hold
    /// anything of `hide`); `Err` is one line saying why this machine cannot box (no bwrap, or
    /// bwrap cannot make its namespaces here) or why a shown path is refused.
    pub fn new(hide: &[PathBuf], show: &[PathBuf]) -> Result<Sandbox, String> {
        let bwrap = which(Path::new("bwrap"))
            .ok_or_else(|| "no bwrap on PATH (Debian: apt-get install bubblewrap)".to_string())?;
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let xdg = ["XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"];
        let libpq = ["PGPASSFILE", "PGSSLKEY", "PGSERVICEFILE"];
        let mut wanted: Vec<PathBuf> =
            HIDDEN_DIRS.iter().chain(&HIDDEN_FILES).map(PathBuf::from).collect();
        wanted.extend(home.clone());
        wanted.extend(xdg.iter().chain(&libpq).filter_map(std::env::var_os).map(PathBuf::from));
        wanted.extend(hide.iter().cloned());
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        for p in wanted.iter().filter_map(|p| real(p)) {
            match p.is_dir() {
                true => dirs.push(p),
                false => files.push(p),
            }
        }
        dirs.sort();
        dirs.dedup();
        // A folder inside another hidden folder (or the private /tmp) is hidden already.
        let outer: Vec<PathBuf> = dirs
            .iter()
            .filter(|d| !under(d, Path::new("/tmp")))
            .filter(|d| !dirs.iter().any(|o| o != *d && under(d, o)))
            .cloned()
            .collect();
        files.sort();
        files.dedup();
        files.retain(|f| !under(f, Path::new("/tmp")) && !outer.iter().any(|d| under(f, d)));
        // A shown path may lie inside a hidden folder, but may not hold one, nor a hidden file
        // (the key, `/etc/shadow`), nor any of the worker's own paths.
        let own: Vec<PathBuf> = hide.iter().filter_map(|p| real(p)).collect();
        let mut shown = Vec::new();
        for p in show {
            let r = real(p).ok_or_else(|| format!("--box-show {}: no such file", p.display()))?;
            if let Some(o) = own.iter().chain(&outer).chain(&files).find(|o| under(o, &r)) {
                return Err(format!(
                    "--box-show {} would show {}, which the worker hides from engines",
                    p.display(),
                    o.display()
                ));
            }
            shown.push(r);
        }
        let boxed = Sandbox {
            bwrap,
            toolchain: toolchain(&outer),
            hidden_dirs: outer,
            hidden_files: files,
            shown,
        };
        boxed.probe()?;
        Ok(boxed)
    }

    /// Starts `true` in a box: `Err` says why bwrap cannot box here.
    fn probe(&self) -> Result<(), String> {
        let t = which(Path::new("true")).unwrap_or_else(|| PathBuf::from("/bin/true"));
        let mut cmd = self.command(&Inside { program: &t, ..Inside::default() });
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let out = crate::play::orphans::output_own(&mut cmd)
            .map_err(|e| format!("cannot run {}: {e}", self.bwrap.display()))?;
        if out.status.success() {
            return Ok(());
        }
        let why = String::from_utf8_lossy(&out.stderr);
        let why = why.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message");
        Err(format!("{} cannot make a box here ({}): {why}", self.bwrap.display(), out.status))
    }

    /// The folders and files this box hides (for the worker's start line and the tests).
    pub fn hidden(&self) -> impl Iterator<Item = &Path> {
        self.hidden_dirs.iter().chain(&self.hidden_files).map(PathBuf::as_path)
    }

    /// Whether `p` (resolved) is hidden in the box.
    fn is_hidden(&self, p: &Path) -> bool {
        self.hidden_dirs.iter().any(|d| under(p, d))
            || self.hidden_files.iter().any(|f| f == p)
            || under(p, Path::new("/tmp"))
    }

    /// The command that starts `i` in the box: bwrap with its arguments, and an environment of
    /// `PATH`, `HOME=/tmp` and `LANG` only (the caller may add variables, which bwrap passes
    /// in: the engine's token). Not started.
    pub fn command(&self, i: &Inside) -> Command {
        let mut a: Vec<OsString> = Vec::new();
        let mut arg = |x: &[&OsStr]| a.extend(x.iter().map(|s| s.to_os_string()));
        arg(&["--unshare-all".as_ref(), "--die-with-parent".as_ref(), "--new-session".as_ref()]);
        arg(&["--cap-drop".as_ref(), "ALL".as_ref()]);
        if i.net {
            arg(&["--share-net".as_ref()]);
        }
        arg(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
        arg(&["--dev".as_ref(), "/dev".as_ref(), "--proc".as_ref(), "/proc".as_ref()]);
        arg(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
        for d in &self.hidden_dirs {
            arg(&["--tmpfs".as_ref(), d.as_os_str()]);
        }
        for f in &self.hidden_files {
            arg(&["--ro-bind".as_ref(), "/dev/null".as_ref(), f.as_os_str()]);
        }
        // What the process needs from inside hidden folders, read-only: its program (and the
        // program's folder, unless that folder is one hidden as a whole: the cache), its
        // working folder, the compilers of a build.
        let mut show: Vec<PathBuf> = Vec::new();
        let program = which(i.program);
        if let Some(p) = &program
            && self.is_hidden(p)
        {
            match p.parent().filter(|d| !self.hidden_dirs.iter().any(|h| h == d)) {
                Some(d) if !under(d, Path::new("/tmp")) => show.push(d.to_path_buf()),
                _ => show.push(p.clone()),
            }
        }
        let dir = i.dir.and_then(real);
        if let Some(d) = &dir
            && self.is_hidden(d)
        {
            show.push(d.clone());
        }
        if i.toolchain {
            show.extend(self.toolchain.show.iter().cloned());
        }
        show.extend(self.shown.iter().cloned());
        for s in &show {
            arg(&["--ro-bind".as_ref(), s.as_os_str(), s.as_os_str()]);
        }
        let writable = i.writable.and_then(real);
        if let Some(w) = &writable {
            arg(&["--bind".as_ref(), w.as_os_str(), w.as_os_str()]);
        }
        let cwd: OsString = match (&writable, &dir) {
            (Some(w), _) => w.clone().into(),
            (None, Some(d)) => d.clone().into(),
            (None, None) => {
                arg(&["--dir".as_ref(), WORK_DIR.as_ref()]);
                WORK_DIR.into()
            }
        };
        arg(&["--chdir".as_ref(), &cwd, "--".as_ref()]);
        // The program by its resolved path when it has one (bwrap's own PATH lookup would use
        // the box's PATH).
        let prog = program.map_or_else(|| i.program.as_os_str().to_os_string(), Into::into);
        a.push(prog);
        a.extend(i.args.iter().cloned());
        let mut cmd = Command::new(&self.bwrap);
        cmd.args(a).env_clear();
        let mut path = std::env::join_paths(if i.toolchain {
            self.toolchain.path.clone()
        } else {
            Vec::new()
        })
        .unwrap_or_default();
        if !path.is_empty() {
            path.push(":");
        }
        path.push(BOX_PATH);
        cmd.env("PATH", path).env("HOME", "/tmp").env("LANG", "C.UTF-8");
        if i.toolchain {
            cmd.envs(self.toolchain.env.iter().map(|(k, v)| (k, v)));
        }
        cmd
    }
}

/// The compilers a build needs that lie in hidden folders: rustup's toolchains and cargo's
/// programs and downloaded crates (not its credentials), shown read-only, with `RUSTUP_HOME`,
/// `CARGO_HOME` and `PATH` pointing to them (cargo then writes its locks in the box's private,
/// empty copy of the home).
fn toolchain(hidden: &[PathBuf]) -> Toolchain {
    let mut t = Toolchain::default();
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let hidden_here = |p: &Path| hidden.iter().any(|d| under(p, d));
    let rustup = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".rustup")))
        .and_then(|p| real(&p));
    if let Some(r) = rustup.filter(|r| r.is_dir() && hidden_here(r)) {
        t.env.push(("RUSTUP_HOME".into(), r.clone().into()));
        t.show.push(r);
    }
    let cargo = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".cargo")))
        .and_then(|p| real(&p));
    if let Some(c) = cargo.filter(|c| c.is_dir() && hidden_here(c)) {
        for sub in ["bin", "registry", "git"] {
            if c.join(sub).is_dir() {
                t.show.push(c.join(sub));
            }
        }
        t.path.push(c.join("bin"));
        t.env.push(("CARGO_HOME".into(), c.into()));
    }
    // Any other compiler on the worker's PATH inside a hidden folder: its folder.
    for tool in ["cc", "c++", "gcc", "g++", "clang", "clang++", "make", "cargo", "rustc"] {
        if let Some(p) = which(Path::new(tool))
            && hidden_here(&p)
            && !t.show.iter().any(|s| under(&p, s))
            && let Some(d) = p.parent()
        {
            t.show.push(d.to_path_buf());
            t.path.push(d.to_path_buf());
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        // Outside /tmp, which the box hides as a whole: the test shows that the box hides
        // what it is told to.
        let base = std::env::var_os("CARGO_TARGET_TMPDIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| std::env::current_dir().unwrap().join("target"));
        let d = base.join(format!("sandbox-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        real(&d).unwrap()
    }

    fn boxed_sh(b: &Sandbox, script: &str, writable: Option<&Path>) -> (bool, String) {
        let sh = PathBuf::from("/bin/sh");
        let i = Inside {
            program: &sh,
            args: vec!["-c".into(), script.into()],
            writable,
            ..Inside::default()
        };
        let mut cmd = b.command(&i);
        cmd.env("MPC_SANDBOX_TEST", "seen").stdin(Stdio::null());
        let o = crate::play::orphans::output_own(&mut cmd).expect("bwrap runs");
        let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&o.stderr));
        (o.status.success(), text)
    }

    #[test]
    fn a_boxed_process_sees_no_secret_and_writes_only_its_folders() {
        let d = scratch("secrets");
        let key = d.join("worker.key");
        std::fs::write(&key, "KEY-SECRET-1").unwrap();
        let cache = d.join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        std::fs::write(cache.join("other"), "CACHE-SECRET-2").unwrap();
        let work = d.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let b = Sandbox::new(&[key.clone(), cache.clone()], &[])
            .unwrap_or_else(|e| panic!("this test needs a working bwrap: {e}"));
        // Hidden by name, or as part of the private /tmp when the checkout is under /tmp.
        assert!(b.is_hidden(&key) && b.is_hidden(&cache));
        let script = format!(
            "cat {k} /proc/$PPID/environ /proc/1/environ {c}/other; echo; env; \
             echo x > {d}/outside; echo y > work.txt; echo z > /tmp/t && echo tmp-ok; \
             test -e /proc/$PPID/cmdline && cat /proc/1/cmdline; echo",
            k = key.display(),
            c = cache.display(),
            d = d.display()
        );
        let (_, text) = boxed_sh(&b, &script, Some(&work));
        for secret in ["KEY-SECRET-1", "CACHE-SECRET-2", "RUNNER_DB", "CARGO_"] {
            assert!(!text.contains(secret), "{secret} seen in the box: {text}");
        }
        assert!(text.contains("MPC_SANDBOX_TEST=seen") && text.contains("tmp-ok"), "{text}");
        assert!(!d.join("outside").exists(), "wrote outside its folder: {text}");
        assert_eq!(std::fs::read_to_string(work.join("work.txt")).unwrap(), "y\n");
        // The key file and the cache are still the worker's.
        assert_eq!(std::fs::read_to_string(&key).unwrap(), "KEY-SECRET-1");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_shown_file_is_seen_read_only_and_a_shown_folder_may_not_hold_the_key() {
        let d = scratch("shown");
        let key = d.join("worker.key");
        std::fs::write(&key, "KEY-SECRET-3").unwrap();
        let tables = d.join("tables");
        std::fs::create_dir_all(&tables).unwrap();
        std::fs::write(tables.join("KQvK.rtbw"), "TABLE").unwrap();
        // The scratch folder hidden as a home would be: the tables shown inside it.
        let b = Sandbox::new(&[d.clone(), key.clone()], std::slice::from_ref(&tables))
            .unwrap_or_else(|e| panic!("this test needs a working bwrap: {e}"));
        let script = format!(
            "cat {t}/KQvK.rtbw; echo; cat {k}; echo x > {t}/new || echo read-only",
            t = tables.display(),
            k = key.display()
        );
        let (_, text) = boxed_sh(&b, &script, None);
        assert!(text.contains("TABLE") && text.contains("read-only"), "{text}");
        assert!(!text.contains("KEY-SECRET-3") && !tables.join("new").exists(), "{text}");
        // Showing the folder that holds the key file, or a missing path, is refused.
        let e = Sandbox::new(std::slice::from_ref(&key), std::slice::from_ref(&d)).unwrap_err();
        assert!(e.contains("would show") && e.contains("worker.key"), "{e}");
        let e = Sandbox::new(&[], &[PathBuf::from("/etc")]).unwrap_err();
        assert!(
            e.contains("would show /etc/shadow") || e.contains("would show /etc/gshadow"),
            "{e}"
        );
        let e = Sandbox::new(&[], &[d.join("nope")]).unwrap_err();
        assert!(e.contains("no such file"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_boxed_process_has_no_network_unless_asked() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        l.set_nonblocking(true).unwrap();
        let b = Sandbox::new(&[], &[])
            .unwrap_or_else(|e| panic!("this test needs a working bwrap: {e}"));
        let bash = which(Path::new("bash")).expect("bash");
        let i = Inside {
            program: &bash,
            args: vec![
                "-c".into(),
                format!("echo hi > /dev/tcp/127.0.0.1/{port} && echo sent").into(),
            ],
            ..Inside::default()
        };
        let o = crate::play::orphans::output_own(b.command(&i).stdin(Stdio::null())).unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(!text.contains("sent"), "{text}");
        assert!(l.accept().is_err(), "a boxed process connected to the worker's port");
        let i = Inside { net: true, ..i };
        let o = crate::play::orphans::output_own(b.command(&i).stdin(Stdio::null())).unwrap();
        assert!(String::from_utf8_lossy(&o.stdout).contains("sent"));
    }
}
