//! A worker's cache of artifacts: one file per artifact, named by its SHA-256, in one folder
//! (`runner worker --cache DIR`). A file is checked against its name every time it is used (a
//! file changed on disk is fetched again), written to a temporary file of the same folder and
//! renamed into place when complete and verified (two workers sharing the folder never see half
//! a file), and marked executable. Its modification time is its last use: past the size cap the
//! least recently used files go first. Engines built from source are kept in the same folder
//! (`build-<key>`, see `fleet::source::build`) and count towards the same cap.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use crate::hex::hex;

/// The cache's folder when `--cache` is not given: `$XDG_CACHE_HOME/runner/artifacts`, else
/// `~/.cache/runner/artifacts`.
pub fn default_dir() -> Result<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        return Ok(PathBuf::from(x).join("runner/artifacts"));
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(h) => Ok(PathBuf::from(h).join(".cache/runner/artifacts")),
        None => bail!("no XDG_CACHE_HOME nor HOME: give the artifact cache with --cache DIR"),
    }
}

/// The cache folder and its cap.
#[derive(Clone, Debug)]
pub struct Cache {
    pub dir: PathBuf,
    /// Bytes kept at most (the file in use is kept even when it alone is larger).
    pub max_bytes: u64,
}

/// Whether `name` can be an artifact's file name (64 lowercase hex digits).
fn is_sha(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// SHA-256 (hex) of a file, read in pieces.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut f = fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = std::io::Read::read(&mut f, &mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            return Ok(hex(&h.finalize()));
        }
        h.update(&buf[..n]);
    }
}

impl Cache {
    /// The cache at `dir` (made if missing).
    pub fn open(dir: PathBuf, max_bytes: u64) -> Result<Cache> {
        fs::create_dir_all(&dir)
            .with_context(|| format!("cannot make the artifact cache {}", dir.display()))?;
        Ok(Cache { dir, max_bytes })
    }

    pub fn path(&self, sha: &str) -> PathBuf {
        self.dir.join(sha)
    }

    /// The file of artifact `sha` if the cache holds it intact (its use is recorded); a file
    /// whose content is not its name's is removed (`Ok(None)`: fetch it again).
    pub fn lookup(&self, sha: &str) -> Result<Option<PathBuf>> {
        if !is_sha(sha) {
            bail!("{sha:?} is not a SHA-256");
        }
        let p = self.path(sha);
        if !p.is_file() {
            return Ok(None);
        }
        let have = sha256_file(&p)?;
        if have != sha {
            errln!(
                "warning: cached artifact {} holds another file (sha256 {have}): fetching it again",
                p.display()
            );
            fs::remove_file(&p).with_context(|| format!("cannot remove {}", p.display()))?;
            return Ok(None);
        }
        touch(&p);
        Ok(Some(p))
    }

    /// Artifact `sha` of `size` bytes: the cached file, else written from its chunks
    /// (`chunk(n)` for `n` in `0..chunks`), verified, made executable and renamed into place;
    /// then the cache is trimmed to its cap. Returns the file and whether it was fetched.
    pub fn get(
        &self,
        sha: &str,
        size: u64,
        chunks: u32,
        mut chunk: impl FnMut(u32) -> Result<Vec<u8>>,
    ) -> Result<(PathBuf, bool)> {
        if let Some(p) = self.lookup(sha)? {
            return Ok((p, false));
        }
        let tmp = self.dir.join(format!(
            ".{sha}.{}.{}.part",
            std::process::id(),
            SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
        ));
        let r = (|| -> Result<PathBuf> {
            let mut f = fs::File::create(&tmp)
                .with_context(|| format!("cannot write {}", tmp.display()))?;
            let mut h = Sha256::new();
            let mut got = 0u64;
            for n in 0..chunks {
                let b = chunk(n)?;
                got += b.len() as u64;
                if got > size {
                    bail!("artifact {sha}: its chunks hold more than its {size} bytes");
                }
                h.update(&b);
                f.write_all(&b).with_context(|| format!("cannot write {}", tmp.display()))?;
            }
            let have = hex(&h.finalize());
            if got != size || have != sha {
                bail!("artifact {sha}: fetched {got} bytes of sha256 {have}, not the artifact");
            }
            f.sync_all().with_context(|| format!("cannot write {}", tmp.display()))?;
            drop(f);
            set_executable(&tmp)?;
            let p = self.path(sha);
            fs::rename(&tmp, &p)
                .with_context(|| format!("cannot move {} to {}", tmp.display(), p.display()))?;
            Ok(p)
        })();
        if r.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        let p = r?;
        self.trim(Some(sha))?;
        Ok((p, true))
    }

    /// Removes the least recently used artifacts until the cache holds at most its cap
    /// (`keep`, the artifact in use, is never removed). Returns the files removed.
    pub fn trim(&self, keep: Option<&str>) -> Result<Vec<PathBuf>> {
        let mut files: Vec<(SystemTime, u64, PathBuf, bool, bool)> = Vec::new();
        let entries = fs::read_dir(&self.dir)
            .with_context(|| format!("cannot list the artifact cache {}", self.dir.display()))?;
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(m) = e.metadata() else { continue };
            // Artifacts, and binaries built from source (`build-<key>`, `source::build`).
            let built = name.strip_prefix(crate::fleet::source::build::BUILD_PREFIX);
            if !m.is_file() || !(is_sha(&name) || built.is_some_and(is_sha)) {
                continue;
            }
            let used = m.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            files.push((used, m.len(), e.path(), keep == Some(name.as_str()), built.is_some()));
        }
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        files.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.2.cmp(&b.2)));
        let mut removed = Vec::new();
        for (_, len, path, kept, built) in files {
            if total <= self.max_bytes {
                break;
            }
            if kept {
                continue;
            }
            match fs::remove_file(&path) {
                Ok(()) => {
                    // A build's recorded hash goes with it (`source::build`).
                    if built {
                        let mut h = path.clone().into_os_string();
                        h.push(".sha256");
                        let _ = fs::remove_file(h);
                    }
                }
                // Another worker sharing the folder removed it first.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot remove {}", path.display()));
                }
            }
            total -= len;
            removed.push(path);
        }
        Ok(removed)
    }
}

/// Records a use of `p` (its modification time, which eviction orders by).
pub(crate) fn touch(p: &Path) {
    if let Ok(f) = fs::File::options().append(true).open(p) {
        let _ = f.set_modified(SystemTime::now());
    }
}

fn set_executable(p: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    fs::set_permissions(p, fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", p.display()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::hex::sha256_hex;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fleet-cache-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    /// A file of `n` bytes `b`, served in chunks of 4.
    fn artifact(b: u8, n: usize) -> (String, Vec<u8>) {
        let bytes = vec![b; n];
        (sha256_hex(&bytes), bytes)
    }

    fn get(c: &Cache, (sha, bytes): &(String, Vec<u8>)) -> (PathBuf, bool) {
        let chunks: Vec<Vec<u8>> = bytes.chunks(4).map(<[u8]>::to_vec).collect();
        c.get(sha, bytes.len() as u64, chunks.len() as u32, |n| Ok(chunks[n as usize].clone()))
            .unwrap()
    }

    fn set_used(p: &Path, secs_ago: u64) {
        let f = fs::File::options().append(true).open(p).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(secs_ago)).unwrap();
    }

    #[test]
    fn artifacts_are_fetched_once_verified_and_refetched_when_changed() {
        let d = scratch("verify");
        let c = Cache::open(d.clone(), 1 << 20).unwrap();
        let a = artifact(7, 10);
        let (p, fetched) = get(&c, &a);
        assert!(fetched);
        assert_eq!(fs::read(&p).unwrap(), a.1);
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o755);
        assert!(!get(&c, &a).1, "a second use reads the cache");
        fs::write(&p, b"tampered").unwrap();
        let (p, fetched) = get(&c, &a);
        assert!(fetched, "a changed file is fetched again");
        assert_eq!(sha256_file(&p).unwrap(), a.0);
        // Chunks that are not the artifact leave nothing behind.
        let b = artifact(8, 10);
        let e = c.get(&b.0, 10, 1, |_| Ok(vec![9; 10])).unwrap_err().to_string();
        assert!(e.contains("not the artifact"), "{e}");
        let e = c.get(&b.0, 10, 2, |_| Ok(vec![8; 10])).unwrap_err().to_string();
        assert!(e.contains("more than its 10 bytes"), "{e}");
        let names: Vec<String> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, std::slice::from_ref(&a.0));
        assert!(c.lookup("../etc").is_err());
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn the_least_recently_used_artifacts_go_past_the_cap() {
        let d = scratch("lru");
        let c = Cache::open(d.clone(), 25).unwrap();
        let (a, b, x) = (artifact(1, 10), artifact(2, 10), artifact(3, 10));
        let pa = get(&c, &a).0;
        let pb = get(&c, &b).0;
        set_used(&pa, 30);
        set_used(&pb, 20);
        // A used again: B is now the least recently used.
        assert!(!get(&c, &a).1);
        let px = get(&c, &x).0;
        assert!(pa.exists() && px.exists() && !pb.exists());
        // Files that are not artifacts are left alone; the one in use is kept even alone
        // beyond the cap.
        fs::write(d.join("notes.txt"), [0u8; 100]).unwrap();
        let small = Cache { dir: d.clone(), max_bytes: 5 };
        set_used(&px, 50);
        let removed = small.trim(Some(&x.0)).unwrap();
        assert_eq!(removed, std::slice::from_ref(&pa));
        assert!(px.exists() && d.join("notes.txt").exists());
        let _ = fs::remove_dir_all(&d);
    }
}
