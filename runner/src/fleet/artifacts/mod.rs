//! Engines delivered through the database. `runner submit` stores each engine binary it
//! resolves as an artifact: content-addressed by SHA-256, deduplicated (a sealed artifact is
//! never uploaded again), in chunks of [`CHUNK_SIZE`], at most [`MAX_SIZE`]
//! (docs/guide/fleet-how-it-works.md says why), and names the run's artifacts in the transaction
//! that stores the run. A worker lists the artifacts of a run it loads (the database lists them
//! only for an approved, active run), fetches those it lacks into its [`cache`] once, and starts
//! the cached file in place of the submitter's path: no identical paths, no copying binaries by
//! hand.

pub mod cache;

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use self::cache::Cache;
use super::client::WorkerClient;
use super::identity::EngineIdentity;
use super::link::is_transient;
use super::queue::WorkerId;
use super::queue::submit::{self, ArtifactKind, Upload};
use super::rights::Principal;

/// Bytes per chunk: one row of `artifact_chunks`, one round trip. 1 MiB keeps a row far below
/// PostgreSQL's 1 GB field limit and a chunk's transfer far below a statement's deadline on a
/// slow link, while a 100 MB binary is still only 100 round trips.
pub const CHUNK_SIZE: usize = 1 << 20;
/// Largest artifact: 128 MiB. Stockfish with its networks embedded is under 100 MB; the
/// database checks an upload's hash over the whole file in memory when it is sealed.
pub const MAX_SIZE: u64 = 128 << 20;

/// Where a submitter's artifacts go: the database itself (`runner submit --db`), or the
/// server's people API (`--server`), which checks who uploads. (Used within the runner only,
/// on one task: its futures need not be `Send`.)
#[allow(async_fn_in_trait)]
pub trait ArtifactDoor {
    /// Whether artifact `sha` is stored and sealed.
    async fn sealed(&self, sha: &str) -> Result<bool>;
    /// Stores chunk `n` (of `size.div_ceil(CHUNK_SIZE)`) of artifact `sha`.
    async fn put(&self, sha: &str, size: u64, kind: &str, n: usize, bytes: &[u8]) -> Result<()>;
    /// Seals artifact `sha` (its size and hash are checked where it is stored).
    async fn seal(&self, sha: &str) -> Result<()>;
}

/// The database itself (`runner submit --db`, the operator's way): the checked operations the
/// server runs for a user's upload (`queue::submit`), as `who`.
pub struct DbDoor<'a> {
    db: tokio::sync::Mutex<&'a mut tokio_postgres::Client>,
    who: &'a Principal,
}

impl<'a> DbDoor<'a> {
    pub fn new(db: &'a mut tokio_postgres::Client, who: &'a Principal) -> DbDoor<'a> {
        DbDoor { db: tokio::sync::Mutex::new(db), who }
    }
}

impl ArtifactDoor for DbDoor<'_> {
    async fn sealed(&self, sha: &str) -> Result<bool> {
        Ok(submit::sealed(&**self.db.lock().await, sha).await?)
    }

    async fn put(&self, sha: &str, size: u64, kind: &str, n: usize, bytes: &[u8]) -> Result<()> {
        let kind = match kind {
            "binary" => ArtifactKind::Binary,
            "source" => ArtifactKind::Source,
            other => bail!("artifact {sha}: kind {other:?} is neither binary nor source"),
        };
        let up = Upload { sha: sha.to_string(), size, kind };
        submit::put_chunk(&mut **self.db.lock().await, self.who, &up, n as u64, bytes).await?;
        Ok(())
    }

    async fn seal(&self, sha: &str) -> Result<()> {
        Ok(submit::seal(&mut **self.db.lock().await, self.who, sha).await?)
    }
}

/// Uploads the binaries of `engines` the fleet does not hold yet (one per distinct hash);
/// returns the hashes of all of them (the run's artifacts). A binary over [`MAX_SIZE`] is not
/// stored (a warning says so): workers must then have it themselves.
pub async fn upload_engines(
    door: &impl ArtifactDoor,
    engines: &[EngineIdentity],
) -> Result<Vec<String>> {
    let mut shas: Vec<String> = Vec::new();
    for e in engines {
        if shas.contains(&e.sha256) {
            continue;
        }
        let path = PathBuf::from(&e.cmd);
        let size = std::fs::metadata(&path)
            .with_context(|| format!("engine {}: cannot read {}", e.name, path.display()))?
            .len();
        if size > MAX_SIZE {
            errln!(
                "warning: engine {}: {} is {} MiB, over the artifact limit of {} MiB: not stored \
                 (workers must have it in their catalog or under --trust)",
                e.name,
                path.display(),
                size >> 20,
                MAX_SIZE >> 20
            );
            continue;
        }
        upload_file(door, &path, &e.sha256, "binary")
            .await
            .with_context(|| format!("engine {}", e.name))?;
        shas.push(e.sha256.clone());
    }
    Ok(shas)
}

/// Stores the file at `path` as artifact `sha` (checked against the file) unless the fleet
/// holds it sealed already.
pub async fn upload_file(
    door: &impl ArtifactDoor,
    path: &std::path::Path,
    sha: &str,
    kind: &str,
) -> Result<()> {
    if door.sealed(sha).await? {
        return Ok(());
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.is_empty() {
        bail!("{} is empty: not an engine", path.display());
    }
    let have = crate::hex::sha256_hex(&bytes);
    if have != sha {
        bail!("{} changed since it was identified (sha256 {have}, not {sha})", path.display());
    }
    let size = bytes.len() as u64;
    for (n, c) in bytes.chunks(CHUNK_SIZE).enumerate() {
        door.put(sha, size, kind, n, c).await?;
    }
    door.seal(sha).await
}

/// Attempts of one request (the run's list of artifacts, one chunk) to a server that fails
/// passingly (busy: 503; restarting): 40 to 60 s of the worker's waits in all, after which the
/// run is refused on this worker.
const ATTEMPTS: u32 = 8;

/// `f` on the runtime `rt`, again after a passing failure, [`ATTEMPTS`] times at most, with the
/// worker's waits between (never shorter than the server's `Retry-After`).
fn attempts<T, Fut>(
    rt: &tokio::runtime::Handle,
    link: &WorkerClient,
    mut f: impl FnMut() -> Fut,
) -> Result<T>
where
    Fut: std::future::Future<Output = Result<T>>,
{
    let mut tries = 0;
    loop {
        match rt.block_on(f()) {
            Err(e) if is_transient(&e) && tries + 1 < ATTEMPTS => {
                tries += 1;
                std::thread::sleep(link.wait(tries, &e));
            }
            r => return r,
        }
    }
}

/// The files of run `run`'s artifacts on this worker, by hash: each taken from the cache, or
/// fetched into it. Called off the async loop (it blocks on the runtime `rt`). `Err` is one
/// line saying which artifact could not be had.
pub fn fetch_run_artifacts(
    rt: &tokio::runtime::Handle,
    link: &WorkerClient,
    id: &WorkerId,
    run: i64,
    cache: &Cache,
) -> Result<HashMap<String, PathBuf>> {
    let list = attempts(rt, link, || link.artifacts(id, run))?;
    let mut out = HashMap::new();
    // Binaries, and the source archives of engines built from source (`source::load`).
    for a in list {
        let (size, chunks) = (u64::try_from(a.size)?, u32::try_from(a.chunks)?);
        let started = std::time::Instant::now();
        let sha = a.sha.as_str();
        let (path, fetched) = cache
            .get(sha, size, chunks, |n| attempts(rt, link, || link.chunk(id, sha, n as i32)))?;
        if fetched {
            errln!(
                "fetched artifact {} ({} bytes) into {} in {:.2} s",
                a.sha.get(..12).unwrap_or(&a.sha),
                size,
                cache.dir.display(),
                started.elapsed().as_secs_f64()
            );
        }
        out.insert(a.sha, path);
    }
    Ok(out)
}
