//! Writing files in a run folder without following symbolic links: a `games.pgn`, `logs/` or
//! `table.md` that is a symlink to a file elsewhere is refused in one line naming it, so a run
//! never writes outside its folder. Every writer of a run folder (the store, reports, sweeps,
//! tuning, the tools) goes through these functions:
//!
//! - [`create_file`], [`open_append`]: `O_NOFOLLOW` on the last component;
//! - [`write_atomic`]: a temporary file with a unique name, made with `O_EXCL | O_NOFOLLOW`, then
//!   a rename (which replaces a symlink itself, never its target);
//! - [`create_dir_all`]: every missing folder made, every existing one checked with
//!   `symlink_metadata` (a symlinked `logs/` or `points/X/` is refused).
//!
//! Reading a folder that may come from anywhere (a shard, a CI artifact, a colleague):
//! [`read_regular`] takes regular files only, never through a symbolic link, and never more than
//! a cap per file (a FIFO would hang a reader, `/dev/zero` would fill memory); errors name the
//! file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Component, Path};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result, bail};

/// The error of a file that cannot be opened; a symlink gets its own one-line reason.
fn open_error(path: &Path, e: io::Error) -> anyhow::Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        anyhow::anyhow!(
            "cannot write {}: it is a symbolic link (a run writes only its own files in its \
             folder): remove it or choose another --out",
            path.display()
        )
    } else {
        anyhow::Error::new(e).context(format!("cannot write {}", path.display()))
    }
}

fn open_with(path: &Path, o: &mut OpenOptions) -> Result<File> {
    o.custom_flags(libc::O_NOFOLLOW).open(path).map_err(|e| open_error(path, e))
}

/// Creates (or truncates) `path` for writing; a symlink is refused.
pub fn create_file(path: &Path) -> Result<File> {
    open_with(path, File::options().write(true).create(true).truncate(true))
}

/// Opens `path` for appending (created if missing); a symlink is refused.
pub fn open_append(path: &Path) -> Result<File> {
    open_with(path, File::options().append(true).create(true))
}

/// Opens an existing `path` for reading and writing (not created); a symlink is refused.
pub fn open_existing(path: &Path) -> Result<File> {
    open_with(path, File::options().read(true).write(true))
}

/// Opens (or creates) a lock file for reading and writing without truncating it.
pub fn open_lock(path: &Path) -> Result<File> {
    open_with(path, File::options().read(true).write(true).create(true).truncate(false))
}

/// Writes `bytes` to `path` (created or truncated); a symlink is refused.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = create_file(path)?;
    write_named(path, &mut f, bytes)
}

/// Writes `bytes` to `w`, the file `path`: an error (a full disk) names the file.
pub fn write_named(path: &Path, w: &mut impl Write, bytes: &[u8]) -> Result<()> {
    w.write_all(bytes)
        .and_then(|()| w.flush())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Temporary names: unique in this process, and the pid makes them unique across processes.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Creates a new temporary file beside `path` (`NAME.PID-N.tmp`), never an existing one.
fn create_tmp(path: &Path) -> Result<(std::path::PathBuf, File)> {
    let base = path.file_name().unwrap_or_default().to_os_string();
    loop {
        let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut name = base.clone();
        name.push(format!(".{}-{n}.tmp", std::process::id()));
        let tmp = path.with_file_name(name);
        let mut o = File::options();
        o.write(true).create_new(true);
        match open_with(&tmp, &mut o) {
            Ok(f) => return Ok((tmp, f)),
            // A leftover of an earlier process with this pid: take the next name.
            Err(e)
                if e.downcast_ref::<io::Error>()
                    .is_some_and(|e| e.kind() == io::ErrorKind::AlreadyExists)
                    && n < 1_000_000 => {}
            Err(e) => return Err(e),
        }
    }
}

/// Writes a file via a temporary file and a rename. Errors name the file (a full disk says
/// which), and a failed write leaves no temporary file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, bytes, |_, f| Ok(f))
}

/// [`write_atomic`] writing through `wrap(tmp, file)` (tests put a full disk there).
fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    wrap: impl FnOnce(&Path, File) -> Result<File>,
) -> Result<()> {
    let (tmp, f) = create_tmp(path)?;
    let res = (|| {
        let mut f = wrap(&tmp, f)?;
        write_named(path, &mut f, bytes)?;
        f.sync_data().with_context(|| format!("cannot write {}", path.display()))?;
        fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res
}

/// Writes a file the user named outside any run folder (`runner book --out`, `calibrate
/// --write-positions`): its missing parent folders are made, and the file itself is never
/// written through a symbolic link.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    write_file(path, bytes)
}

/// Makes the folder `path` and its missing parents; an existing `path` must be a real folder,
/// not a symlink. Its parents are the user's (`--out` as given); folders inside a run folder
/// are made with [`create_subdir`], which checks every part.
pub fn create_dir_all(path: &Path) -> Result<()> {
    if let Ok(m) = fs::symlink_metadata(path) {
        if m.file_type().is_symlink() {
            bail!(
                "cannot write in {}: it is a symbolic link (a run writes only its own folders): \
                 remove it or choose another --out",
                path.display()
            );
        }
        if !m.is_dir() {
            bail!("cannot create folder {}: a file of that name exists", path.display());
        }
        return Ok(());
    }
    fs::create_dir_all(path).with_context(|| format!("cannot create {}", path.display()))
}

/// Makes the folder `rel` inside the run folder `dir`, refusing a symlink at any part of `rel`.
pub fn create_subdir(dir: &Path, rel: &Path) -> Result<std::path::PathBuf> {
    let mut p = dir.to_path_buf();
    for c in rel.components() {
        let Component::Normal(part) = c else {
            bail!("cannot create {}: not a plain folder name", dir.join(rel).display());
        };
        p.push(part);
        match fs::symlink_metadata(&p) {
            Ok(_) => create_dir_all(&p)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => fs::create_dir(&p)
                .or_else(|e| {
                    // Made by another writer meanwhile: check what is there now.
                    if e.kind() == io::ErrorKind::AlreadyExists { Ok(()) } else { Err(e) }
                })
                .with_context(|| format!("cannot create {}", p.display()))
                .and_then(|()| create_dir_all(&p))?,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", p.display())),
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// An empty folder for one test, removed with what it holds when the test ends, passed or
    /// failed (also used by `read_tests`).
    pub(super) fn tmp(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new().prefix(&format!("store-files-{name}-")).tempdir().unwrap()
    }

    /// Symlinks in a run folder are refused, never written through.
    #[test]
    fn symlinks_are_refused_never_followed() {
        let t = tmp("symlink");
        let d = t.path();
        let outside = d.join("outside.txt");
        fs::write(&outside, "keep me").unwrap();
        let run = d.join("run");
        fs::create_dir(&run).unwrap();
        for name in ["games.pgn", "games.jsonl", "table.md"] {
            symlink(&outside, run.join(name)).unwrap();
        }
        let e = format!("{:#}", create_file(&run.join("games.pgn")).unwrap_err());
        assert!(e.contains("games.pgn") && e.contains("symbolic link"), "{e}");
        let e = format!("{:#}", open_append(&run.join("games.jsonl")).unwrap_err());
        assert!(e.contains("games.jsonl") && e.contains("symbolic link"), "{e}");
        // A rename replaces the link itself.
        write_atomic(&run.join("table.md"), b"table").unwrap();
        assert_eq!(fs::read_to_string(run.join("table.md")).unwrap(), "table");
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep me");
        // A symlinked folder is refused.
        let elsewhere = d.join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        symlink(&elsewhere, run.join("logs")).unwrap();
        let e = format!("{:#}", create_subdir(&run, Path::new("logs")).unwrap_err());
        assert!(e.contains("logs") && e.contains("symbolic link"), "{e}");
        symlink(&elsewhere, run.join("points")).unwrap();
        let e = format!("{:#}", create_subdir(&run, Path::new("points/x=1")).unwrap_err());
        assert!(e.contains("points") && e.contains("symbolic link"), "{e}");
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
        assert_eq!(create_subdir(&run, Path::new("a/b")).unwrap(), run.join("a/b"));
    }

    /// A temporary file is always new: a stale one (or a symlink of that name) is never opened.
    #[test]
    fn temporary_files_are_new_and_cleaned_up() {
        let t = tmp("atomic");
        let d = t.path();
        let p = d.join("summary.json");
        for _ in 0..3 {
            write_atomic(&p, b"{}").unwrap();
        }
        assert_eq!(fs::read_dir(d).unwrap().count(), 1, "no temporary file left");
        // A full disk names the file and leaves no temporary file.
        let e = write_atomic_with(&p, b"x", |_, _| {
            Ok(File::options().write(true).open("/dev/full")?)
        });
        let e = format!("{:#}", e.unwrap_err());
        assert!(e.contains("summary.json") && e.contains("No space left"), "{e}");
        assert_eq!(fs::read_dir(d).unwrap().count(), 1, "no temporary file left");
    }
}

// Reading a results folder: regular files only, under a cap.

const MIB: u64 = 1 << 20;

/// Caps on what is read from a results folder. A game record is a few KiB (80 plies with
/// scores, depths and times: about 4 KiB), so games.jsonl and games.pgn at 1 GiB hold some
/// 250,000 games, far past any real run; the small JSON files and the tables hold kilobytes.
pub const GAMES_CAP: u64 = 1024 * MIB;
/// run.json, sweep.json, summary.json, table.md, the SVG plots.
pub const SMALL_CAP: u64 = 64 * MIB;

/// The cap for a file of a results folder, by name.
pub fn cap_for(name: &str) -> u64 {
    if name.starts_with("games.") { GAMES_CAP } else { SMALL_CAP }
}

/// The bytes of the regular file `path`, at most `cap` of them, or `None` when it does not
/// exist. A symbolic link, a FIFO, a device, a directory or a file over `cap` is an error naming
/// the file; nothing is read from it.
pub fn read_regular(path: &Path, cap: u64) -> Result<Option<Vec<u8>>> {
    let file = match File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            bail!("{} is a symbolic link: not read (only regular files are)", path.display())
        }
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    };
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    };
    let t = meta.file_type();
    if !t.is_file() {
        let what = if t.is_dir() {
            "a directory"
        } else if t.is_fifo() {
            "a FIFO"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else if t.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        bail!("{} is {what}: not read (only regular files are)", path.display());
    }
    if meta.len() > cap {
        bail!(
            "{} is {} MiB, over the {} MiB a report reads",
            path.display(),
            meta.len() / MIB,
            cap / MIB
        );
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    if let Err(e) = file.take(cap + 1).read_to_end(&mut bytes) {
        bail!("cannot read {}: {e}", path.display());
    }
    if bytes.len() as u64 > cap {
        bail!("{} grew past the {} MiB a report reads", path.display(), cap / MIB);
    }
    Ok(Some(bytes))
}

/// [`read_regular`] as text (invalid UTF-8 is an error naming the file).
pub fn read_regular_text(path: &Path, cap: u64) -> Result<Option<String>> {
    match read_regular(path, cap)? {
        Some(b) => match String::from_utf8(b) {
            Ok(s) => Ok(Some(s)),
            Err(_) => bail!("{} is not UTF-8 text", path.display()),
        },
        None => Ok(None),
    }
}

#[cfg(test)]
mod read_tests {
    use super::tests::tmp;
    use super::*;

    #[test]
    fn only_regular_files_under_the_cap_are_read() {
        let t = tmp("regular");
        let d = t.path();
        let p = d.join("games.pgn");
        assert!(read_regular(&p, 10).unwrap().is_none(), "missing: None");
        std::fs::write(&p, b"0123456789").unwrap();
        assert_eq!(read_regular(&p, 10).unwrap().unwrap(), b"0123456789");
        let e = read_regular(&p, 9).unwrap_err().to_string();
        assert!(e.contains("games.pgn") && e.contains("over the"), "{e}");

        let zero = d.join("zero.pgn");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = read_regular(&zero, GAMES_CAP).unwrap_err().to_string();
        assert!(e.contains("zero.pgn is a symbolic link"), "{e}");
        let e = read_regular(Path::new("/dev/zero"), GAMES_CAP).unwrap_err().to_string();
        assert!(e.contains("/dev/zero is a device"), "{e}");

        let fifo = d.join("fifo.pgn");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_regular(&fifo, GAMES_CAP).unwrap_err().to_string();
        assert!(e.contains("fifo.pgn is a FIFO"), "{e}");
        let e = read_regular(d, GAMES_CAP).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }

    /// A live run and `runner report` both wrote `table.md.tmp`; one truncated the
    /// other's half-written file and renamed it away. Another writer's temporary file (here the
    /// old shared name, mid-write) is left alone.
    #[test]
    fn a_write_leaves_another_writers_temporary_file_alone() {
        let t = tmp("other-tmp");
        let d = t.path();
        let other = d.join("table.md.tmp");
        std::fs::write(&other, "the other writer's half").unwrap();
        crate::store::write_atomic(&d.join("table.md"), b"mine").unwrap();
        assert_eq!(std::fs::read_to_string(d.join("table.md")).unwrap(), "mine");
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "the other writer's half");
    }

    /// Two writers of one file, many times over: every write succeeds, the file always holds one
    /// writer's whole text, and no temporary file is left.
    #[test]
    fn two_writers_of_one_file_never_clobber_each_other() {
        let t = tmp("two-writers");
        let d = t.path();
        let path = d.join("report.html");
        let texts = ["A".repeat(64 * 1024), "B".repeat(96 * 1024)];
        std::thread::scope(|s| {
            for text in &texts {
                let (path, texts) = (&path, &texts);
                s.spawn(move || {
                    for i in 0..200 {
                        crate::store::write_atomic(path, text.as_bytes())
                            .unwrap_or_else(|e| panic!("write {i}: {e:#}"));
                        let now = std::fs::read_to_string(path).unwrap();
                        assert!(texts.contains(&now), "a mixed file of {} bytes", now.len());
                    }
                });
            }
        });
        let left: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("report.html")], "temporary files left");
    }
}
