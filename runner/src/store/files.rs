//! Reading and writing a results folder's files safely. A folder may come from anywhere (a
//! shard, a CI artifact, a colleague), so reads take regular files only, never through a
//! symbolic link, and never more than a cap per file (a FIFO would hang a reader, `/dev/zero`
//! would fill memory); the errors name the file. Writes go through a temporary name unique to the
//! writer ([`tmp_path`]: pid and a counter) and a rename, so two writers of one file (a live run
//! and `runner report`) never write into each other's temporary file.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Result, bail};

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

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A temporary name beside `path`, unique to this process and call:
/// `.NAME.PID.N.tmp` (hidden, ends in `.tmp` so readers of the folder skip it).
pub fn tmp_path(path: &Path) -> PathBuf {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("store-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn only_regular_files_under_the_cap_are_read() {
        let d = folder("regular");
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
        let e = read_regular(&d, GAMES_CAP).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }

    #[test]
    fn temporary_names_differ_per_call_and_stay_beside_the_file() {
        let p = Path::new("/r/table.md");
        let (a, b) = (tmp_path(p), tmp_path(p));
        assert_ne!(a, b);
        assert_eq!(a.parent(), p.parent());
        let name = a.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(".table.md.") && name.ends_with(".tmp"), "{name}");
        assert!(name.contains(&std::process::id().to_string()), "{name}");
    }

    /// Issue 25: a live run and `runner report` both wrote `table.md.tmp`; one truncated the
    /// other's half-written file and renamed it away. Another writer's temporary file (here the
    /// old shared name, mid-write) is left alone.
    #[test]
    fn a_write_leaves_another_writers_temporary_file_alone() {
        let d = folder("other-tmp");
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
        let d = folder("two-writers");
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
        let left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("report.html")], "temporary files left");
    }
}
