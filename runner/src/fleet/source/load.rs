//! The worker's side of an engine from source: for a run it loads (an approved, active run:
//! the database lists its artifacts to no one else), each engine built from source is built
//! from the run's source archive (or taken from the build cache) and benched, and played only
//! when its node count is the submitted one; the bundled engine delivered as a binary is
//! benched too (it is cheap) for its speed on this machine. Each engine loaded is recorded in
//! the server (`queue::builds::engine_loaded`: build, seconds, node count, speed). Called off the
//! worker's async loop.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::SourceIdentity;
use super::bench::{BenchSpec, run_bench};
use super::build::{BuildBox, BuildHow, cached_build};
use super::submit::BENCH_TIMEOUT;
use crate::fleet::artifacts::cache::Cache;
use crate::fleet::boxing::EngineBox;
use crate::fleet::client::WorkerClient;
use crate::fleet::identity::BENCH_DEPTH;
use crate::fleet::queue::builds::EngineLoad;
use crate::fleet::queue::{RunRow, WorkerId};
use crate::fleet::submission::Submission;

/// How a worker builds.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Longest build (`runner worker --build-timeout`).
    pub timeout: Duration,
    /// Whether builds and benches run in a box (`fleet::boxing`).
    pub boxing: EngineBox,
    /// `runner worker --build-net`: boxed builds keep the network.
    pub net: bool,
}

/// The binaries of run `row`'s engines from source on this machine, by engine name, each
/// built (or taken from the cache) and its bench checked; `files` are the run's artifacts in
/// the cache by SHA-256. `Err` is the one line saying why this worker refuses the run (the
/// build failed or timed out, the bench differs).
pub fn build_run_engines(
    rt: &tokio::runtime::Handle,
    link: &WorkerClient,
    id: &WorkerId,
    row: &RunRow,
    files: &HashMap<String, PathBuf>,
    cache: &Cache,
    opts: &BuildOptions,
) -> Result<HashMap<String, PathBuf>, String> {
    let Ok(sub) = Submission::from_stored(&row.submission) else {
        // load_run says why.
        return Ok(HashMap::new());
    };
    let record = |e: EngineLoad| {
        let r = rt.block_on(link.engine_loaded(id, row.id, &e));
        if let Err(e) = r {
            errln!("warning: {e:#}");
        }
    };
    let sandbox = opts.boxing.sandbox();
    let boxed = BuildBox { sandbox: sandbox.as_deref(), net: opts.net };
    let mut out = HashMap::new();
    // One build and bench per distinct source (a sweep's points share one).
    let mut done: HashMap<String, (PathBuf, Option<i64>)> = HashMap::new();
    for e in &sub.engines {
        if let Some(src) = &e.source {
            let key = format!("{}\n{}\n{}\n{:?}", src.archive_sha, src.build, src.bin, src.bench);
            if let Some((path, _)) = done.get(&key) {
                out.insert(e.name.clone(), path.clone());
                continue;
            }
            let Some(archive) = files.get(&src.archive_sha) else {
                return Err(format!(
                    "engine {}: built from source, and its source archive {} was not delivered \
                     (this worker fetches no artifacts: --no-artifacts)",
                    e.name,
                    src.archive_sha.get(..12).unwrap_or(&src.archive_sha)
                ));
            };
            opts.boxing.allow_submitted(&e.name)?;
            let (path, nps) = build_and_check(&e.name, src, archive, cache, opts, boxed, &record)?;
            done.insert(key, (path.clone(), nps));
            out.insert(e.name.clone(), path);
        } else if e.bench.is_some()
            && let Some(file) = files.get(&e.sha256)
            && !done.contains_key(&e.sha256)
        {
            done.insert(e.sha256.clone(), (file.clone(), None));
            if opts.boxing.allow_submitted(&e.name).is_err() {
                // load_run refuses it.
                continue;
            }
            bench_bundled(&e.name, file, cache, boxed, &record);
        }
    }
    Ok(out)
}

/// Builds engine `name` from `src` (its source archive `archive`), or takes the build from the
/// cache, and checks its bench; what happened is `record`ed. The build and its speed (nodes per
/// second), or the line refusing the run.
fn build_and_check(
    name: &str,
    src: &SourceIdentity,
    archive: &Path,
    cache: &Cache,
    opts: &BuildOptions,
    boxed: BuildBox,
    record: &dyn Fn(EngineLoad),
) -> Result<(PathBuf, Option<i64>), String> {
    let mut load = EngineLoad {
        engine: name.to_string(),
        commit: Some(src.commit.clone()),
        ..EngineLoad::default()
    };
    let built = match cached_build(cache, archive, src, opts.timeout, boxed) {
        Ok(b) => b,
        Err(why) => {
            let line = format!("engine {name}: build of {} failed: {why}", src.short());
            load.build = Some("failed");
            load.error = Some(line.clone());
            record(load);
            return Err(line);
        }
    };
    match built.how {
        BuildHow::Built(s) => {
            errln!("built engine {name} (commit {}) in {s:.1} s", src.short());
            (load.build, load.build_secs) = (Some("built"), Some(s));
        }
        BuildHow::Cached => {
            errln!("engine {name} (commit {}): build taken from the cache", src.short());
            load.build = Some("cached");
        }
    }
    let checked = check_bench(name, src, &built.path, &cache.dir, boxed, &mut load);
    if let Err(line) = checked {
        load.error = Some(line.clone());
        record(load);
        return Err(line);
    }
    let nps = load.nps;
    record(load);
    Ok((built.path, nps))
}

/// The bundled engine delivered as a binary (`file`): its speed here (its identity is its
/// hash), `record`ed; a bench that fails only warns.
fn bench_bundled(
    name: &str,
    file: &Path,
    cache: &Cache,
    boxed: BuildBox,
    record: &dyn Fn(EngineLoad),
) {
    let spec = BenchSpec { args: vec!["bench".into(), BENCH_DEPTH.to_string()], nodes_label: None };
    match run_bench(file, &spec, &cache.dir, BENCH_TIMEOUT, boxed.sandbox) {
        Ok(r) => record(EngineLoad {
            engine: name.to_string(),
            nodes: i64::try_from(r.nodes).ok(),
            nps: r.nps.and_then(|n| i64::try_from(n).ok()),
            ..EngineLoad::default()
        }),
        Err(why) => errln!("warning: engine {name}: {why}"),
    }
}

/// Benches `binary`, the build of `src` for engine `name`, in `work` (boxed as `boxed`), and
/// records its node count and speed in `load`; `Err` is the line refusing the run when the bench
/// fails or its node count is not the submitted one.
fn check_bench(
    name: &str,
    src: &SourceIdentity,
    binary: &Path,
    work: &Path,
    boxed: BuildBox<'_>,
    load: &mut EngineLoad,
) -> Result<(), String> {
    let r = run_bench(binary, &src.bench, work, BENCH_TIMEOUT, boxed.sandbox)
        .map_err(|why| format!("engine {name}: bench of the build of {}: {why}", src.short()))?;
    load.nodes = i64::try_from(r.nodes).ok();
    load.nps = r.nps.and_then(|n| i64::try_from(n).ok());
    if r.nodes != src.nodes {
        return Err(format!(
            "engine {name}: bench of the build of {} differs: {} nodes here, {} submitted",
            src.short(),
            r.nodes,
            src.nodes
        ));
    }
    Ok(())
}
