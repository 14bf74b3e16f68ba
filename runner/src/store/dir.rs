//! A run's folder, owned by one runner at a time: a new run's folder is made with `mkdir` (which
//! fails when the name is taken, so two runners never share one), and every runner that writes a
//! folder holds an exclusive `flock` on its `run.lock` for as long as it runs. The kernel drops
//! the lock when the process exits or is killed, so a kill -9 never leaves a folder locked.

use std::fs::{self, File, TryLockError};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::{GAMES_FILE, LOG_DIR, PGN_FILE, RUN_FILE, SUMMARY_FILE};

/// The lock file (it holds the pid of the runner that took the lock last; the lock itself is
/// the `flock`, not the file's presence).
pub const LOCK_FILE: &str = "run.lock";

/// How a run uses its folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirMode {
    /// A new run in a new folder named after the given path (`results/<timestamp>`), or the same
    /// name with `-2`, `-3`, ... when taken.
    Fresh,
    /// A new run in the folder given with `--out` (made when missing; refused when it holds games).
    New,
    /// `--resume` of the run in the folder.
    Resume,
}

/// A locked run folder. The lock lasts as long as this value.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
    _lock: File,
    mode: DirMode,
    /// This runner made the folder.
    created: bool,
}

impl RunDir {
    /// Takes the folder for a run: see [`DirMode`]. A folder another runner holds is refused.
    pub fn open(path: &Path, mode: DirMode) -> Result<RunDir> {
        match mode {
            DirMode::Fresh => Self::fresh(path),
            DirMode::New => {
                let created = !path.exists();
                check_new_out(path, &|d| super::read_run_file(d).is_ok())?;
                super::files::create_dir_all(path).with_context(|| {
                    format!("cannot create results directory {}", path.display())
                })?;
                let dir = Self::lock(path.to_path_buf(), mode, created)?;
                if fs::metadata(path.join(GAMES_FILE)).is_ok_and(|m| m.len() > 0) {
                    bail!(
                        "{} already holds games: add --resume to continue it, or choose another \
                         --out",
                        path.display()
                    );
                }
                Ok(dir)
            }
            DirMode::Resume => {
                if !path.is_dir() {
                    bail!("cannot resume {}: no such directory", path.display());
                }
                Self::lock(path.to_path_buf(), mode, false)
            }
        }
    }

    fn fresh(path: &Path) -> Result<RunDir> {
        let parent = path.parent().unwrap_or(Path::new("."));
        let stem = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if !parent.as_os_str().is_empty() {
            fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        for n in 1..=1000u32 {
            let p = if n == 1 { path.to_path_buf() } else { parent.join(format!("{stem}-{n}")) };
            match fs::create_dir(&p) {
                Ok(()) => return Self::lock(p, DirMode::Fresh, true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("cannot create results directory {}", p.display())
                    });
                }
            }
        }
        bail!("cannot find a free name for a new folder {}-N", path.display())
    }

    fn lock(path: PathBuf, mode: DirMode, created: bool) -> Result<RunDir> {
        let p = path.join(LOCK_FILE);
        let mut f = super::files::open_lock(&p)?;
        match f.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = f.read_to_string(&mut pid);
                let pid = pid.trim();
                let who = if pid.is_empty() { String::new() } else { format!(" (pid {pid})") };
                bail!(
                    "{} is in use by another runner{who}: wait for it to stop, or choose another \
                     --out",
                    path.display()
                );
            }
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", p.display()));
            }
        }
        f.set_len(0)
            .and_then(|()| f.write_all(format!("{}\n", std::process::id()).as_bytes()))
            .with_context(|| format!("cannot write {}", p.display()))?;
        Ok(RunDir { path, _lock: f, mode, created })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// After a new run failed before its first game (an engine that does not start): removes
    /// the run's files, so the folder holds no run that a later `--resume` could pick up, and
    /// the folder itself when this runner made it and nothing else is left. Engine logs that
    /// are not empty are kept (the error points to them). A resume, or a run with games, is
    /// left alone.
    pub fn discard_if_unplayed(&self, extra_files: &[&str]) {
        if self.mode == DirMode::Resume
            || fs::metadata(self.path.join(GAMES_FILE)).is_ok_and(|m| m.len() > 0)
        {
            return;
        }
        for f in [RUN_FILE, GAMES_FILE, PGN_FILE, SUMMARY_FILE].iter().chain(extra_files) {
            let _ = fs::remove_file(self.path.join(f));
        }
        let logs = self.path.join(LOG_DIR);
        for e in fs::read_dir(&logs).into_iter().flatten().flatten() {
            if e.metadata().is_ok_and(|m| m.is_file() && m.len() == 0) {
                let _ = fs::remove_file(e.path());
            }
        }
        let _ = fs::remove_dir(&logs);
        if self.created {
            let only_lock = fs::read_dir(&self.path)
                .map(|mut d| d.all(|e| e.is_ok_and(|e| e.file_name() == LOCK_FILE)))
                .unwrap_or(false);
            if only_lock {
                let _ = fs::remove_file(self.path.join(LOCK_FILE));
                let _ = fs::remove_dir(&self.path);
            }
        }
    }
}

/// Whether an `--out` folder may take a new run (or a tool's output): a missing or empty folder,
/// one holding only what a failed start leaves (`run.lock`, a `logs/` folder), or one that
/// `is_ours` recognises (a `run.json` of the runner). Any other folder holds the user's files,
/// which a run would overwrite: refused in one line, before any engine starts.
pub fn check_new_out(path: &Path, is_ours: &dyn Fn(&Path) -> bool) -> Result<()> {
    let entries = match fs::read_dir(path) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(_) if path.exists() && !path.is_dir() => {
            bail!("--out {} is a file, not a folder: choose a folder", path.display())
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let leftover = |e: &fs::DirEntry| {
        e.file_name() == LOCK_FILE
            || (e.file_name() == LOG_DIR && e.file_type().is_ok_and(|t| t.is_dir()))
    };
    let foreign = entries.flatten().find(|e| !leftover(e));
    if let Some(f) = foreign
        && !is_ours(path)
    {
        bail!(
            "--out {} is not empty and holds no run of the runner (it has {:?} and no {RUN_FILE}): \
             choose a new or empty folder",
            path.display(),
            f.file_name()
        );
    }
    Ok(())
}

/// A shared lock on a results directory being read (`runner merge`): refused while a runner
/// writes it. Directories without a lock file (older runners) are read unlocked.
pub fn lock_for_reading(dir: &Path) -> Result<Option<File>> {
    let p = dir.join(LOCK_FILE);
    let f = match File::open(&p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot open {}", p.display())),
    };
    match f.try_lock_shared() {
        Ok(()) => Ok(Some(f)),
        Err(TryLockError::WouldBlock) => {
            bail!(
                "{} is in use by another runner: merge it once that run has stopped",
                dir.display()
            )
        }
        Err(TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("cannot lock {}", p.display()))
        }
    }
}

/// The command that continues the run in `dir`: this process's command line with `--out DIR`
/// (unless it has one) and `--resume` (unless it has it), quoted for a POSIX shell.
pub fn resume_command(dir: &Path) -> String {
    let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    resume_command_from(&args, dir)
}

fn resume_command_from(args: &[String], dir: &Path) -> String {
    let mut v = args.to_vec();
    if !v.iter().any(|a| a == "--out" || a.starts_with("--out=")) {
        v.push("--out".into());
        v.push(dir.display().to_string());
    }
    if !v.iter().any(|a| a == "--resume") {
        v.push("--resume".into());
    }
    v.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")
}

fn shell_quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rundir-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn fresh_folders_are_unique_and_locked() {
        let base = tmp("fresh");
        let a = RunDir::open(&base.join("20260101-000000"), DirMode::Fresh).unwrap();
        let b = RunDir::open(&base.join("20260101-000000"), DirMode::Fresh).unwrap();
        assert_eq!(a.path(), base.join("20260101-000000"));
        assert_eq!(b.path(), base.join("20260101-000000-2"));
        let e = RunDir::open(a.path(), DirMode::Resume).unwrap_err().to_string();
        assert!(e.contains("in use by another runner") && e.contains("pid"), "{e}");
        let e = RunDir::open(a.path(), DirMode::New).unwrap_err().to_string();
        assert!(e.contains("in use by another runner"), "{e}");
        drop(a);
        let again = RunDir::open(&base.join("20260101-000000"), DirMode::Resume).unwrap();
        // A failed start removes the folder it made (nothing else in it).
        again.discard_if_unplayed(&[]);
        assert!(again.path().exists(), "a resume keeps its folder");
        b.discard_if_unplayed(&[]);
        assert!(!base.join("20260101-000000-2").exists());
        fs::remove_dir_all(&base).unwrap();
    }

    /// A folder of the user's files is not a run folder.
    #[test]
    fn a_folder_of_other_files_is_refused() {
        let base = tmp("foreign");
        fs::create_dir_all(base.join(LOG_DIR)).unwrap();
        fs::write(base.join(LOCK_FILE), "1").unwrap();
        // What a failed start leaves is fine.
        drop(RunDir::open(&base, DirMode::New).unwrap());
        fs::write(base.join("table.md"), "my notes").unwrap();
        let e = RunDir::open(&base, DirMode::New).unwrap_err().to_string();
        assert!(e.contains("not empty") && e.contains("table.md"), "{e}");
        assert_eq!(fs::read_to_string(base.join("table.md")).unwrap(), "my notes");
        // A run.json of the runner makes it a run of ours.
        let run = super::super::RunFile {
            runner_version: "x".into(),
            created: "x".into(),
            plan_hash: "x".into(),
            ..super::super::RunFile::new(super::super::tests::plan())
        };
        fs::write(base.join(RUN_FILE), serde_json::to_string(&run).unwrap()).unwrap();
        drop(RunDir::open(&base, DirMode::New).unwrap());
        fs::write(base.join(RUN_FILE), "{}").unwrap();
        assert!(RunDir::open(&base, DirMode::New).is_err(), "not a run.json of ours");
        fs::remove_dir_all(&base).unwrap();
        // A symlinked run.lock is not followed.
        let base = tmp("lock-link");
        fs::create_dir_all(&base).unwrap();
        let outside = tmp("lock-outside");
        fs::write(&outside, "keep").unwrap();
        std::os::unix::fs::symlink(&outside, base.join(LOCK_FILE)).unwrap();
        let e = RunDir::open(&base, DirMode::Resume).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep");
        fs::remove_dir_all(&base).unwrap();
        fs::remove_file(&outside).unwrap();
    }

    #[test]
    fn resume_command_adds_out_and_resume_quoted() {
        let args: Vec<String> = ["runner", "match", "--engine", "name=a b,cmd=x", "--games", "4"]
            .map(String::from)
            .into();
        assert_eq!(
            resume_command_from(&args, Path::new("results/20260101-000000")),
            "runner match --engine 'name=a b,cmd=x' --games 4 --out results/20260101-000000 --resume"
        );
        let args: Vec<String> =
            ["runner", "match", "--out", "it's", "--resume"].map(String::from).into();
        assert_eq!(
            resume_command_from(&args, Path::new("x")),
            r"runner match --out 'it'\''s' --resume"
        );
    }
}
