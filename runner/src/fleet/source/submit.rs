//! The submitter's side of an engine from source: the commit, its archive, one build and bench
//! in a fresh temporary folder (removed when the submission is stored).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};

use super::bench::run_bench;
use super::build::{BuildBox, extract, fresh_dir, run_build};
use super::{SourceIdentity, is_source_spec, parse_source_spec};
use crate::fleet::artifacts::MAX_SIZE;
use crate::fleet::artifacts::cache::sha256_file;
use crate::play::orphans::output_own;

/// Longest wait for the submitter's build.
pub const SUBMIT_BUILD_TIMEOUT: Duration = Duration::from_secs(3600);
/// Longest wait for a bench.
pub const BENCH_TIMEOUT: Duration = Duration::from_secs(600);

/// An engine from source, ready to be submitted: its identity, its archive, and (unless
/// `bench=N` was given) its build, which the engine's spec now names as its command. The
/// temporary folder holding them is removed when this is dropped.
#[derive(Debug)]
pub struct PreparedSource {
    pub name: String,
    pub identity: SourceIdentity,
    pub archive: PathBuf,
    /// Built here (the spec's `cmd`); false with `bench=N`, when nothing was built.
    pub built: bool,
    dir: PathBuf,
}

impl Drop for PreparedSource {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `git ARGS` in `dir`: its stdout, trimmed; `Err` names the command and git's last line.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let o = output_own(Command::new("git").arg("-C").arg(dir).args(args).stdin(Stdio::null()))
        .context("cannot run git")?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no output");
        bail!("git {} failed: {}", args.join(" "), last.trim());
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Replaces each source engine of `specs` (`src=...`) by an ordinary spec of its build, and
/// returns what each one is. Nothing of a source engine reaches the engine spec's parser.
pub fn prepare_sources(specs: &mut [String]) -> Result<Vec<PreparedSource>> {
    let mut out: Vec<PreparedSource> = Vec::new();
    // Engines of one source (the same repository, revision, build, binary and bench; their
    // options may differ) are archived and built once.
    let mut seen: Vec<(String, usize)> = Vec::new();
    for spec in specs.iter_mut().filter(|s| is_source_spec(s)) {
        let args = parse_source_spec(spec).map_err(|e| anyhow!(e))?;
        let name = args.name.clone();
        let key = format!(
            "{:?}",
            (&args.src, &args.rev, &args.build, &args.bin, &args.nodes, &args.bench)
        );
        let p = match seen.iter().find(|(k, _)| *k == key) {
            Some((_, i)) => {
                let first = &out[*i];
                errln!(
                    "engine {name}: the source of engine {} (commit {}), built once",
                    first.name,
                    first.identity.short()
                );
                PreparedSource {
                    name: name.clone(),
                    identity: first.identity.clone(),
                    archive: first.archive.clone(),
                    built: first.built,
                    dir: first.dir.clone(),
                }
            }
            None => {
                seen.push((key, out.len()));
                prepare_one(args).with_context(|| format!("engine {name}"))?
            }
        };
        let mut rest = parse_source_spec(spec).map_err(|e| anyhow!(e))?.rest;
        rest.push(format!("cmd={}", p.dir.join("build").join(&p.identity.bin).display()));
        *spec = rest.join(",");
        out.push(p);
    }
    Ok(out)
}

fn prepare_one(a: super::SourceArgs) -> Result<PreparedSource> {
    let dir = fresh_dir(&std::env::temp_dir(), "runner-source");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
    // From here the folder goes with `p` (removed on every error too).
    let mut p = PreparedSource {
        name: a.name.clone(),
        identity: SourceIdentity {
            repo: a.src.clone(),
            commit: String::new(),
            archive_sha: String::new(),
            build: String::new(),
            bin: a.bin.clone(),
            bench: a.bench.clone(),
            nodes: 0,
        },
        archive: dir.join("source.tar"),
        built: false,
        dir: dir.clone(),
    };
    let repo = repository(&a.src, &dir)?;
    let rev = format!("{}^{{commit}}", a.rev);
    let commit = git(&repo, &["rev-parse", "--verify", "--quiet", "--end-of-options", &rev])
        .map_err(|_| anyhow!("{}: no commit {:?}", a.src, a.rev))?;
    let build = build_command(a.build, &repo, &commit)?;
    let size = archive(&repo, &commit, &p.archive)?;
    p.identity.commit = commit;
    p.identity.archive_sha = sha256_file(&p.archive)?;
    p.identity.build = build;
    match a.nodes {
        Some(n) => {
            p.identity.nodes = n;
            errln!(
                "engine {}: commit {} of {}, source archive {} KiB; bench {n} nodes as given (not \
                 built here)",
                p.name,
                p.identity.short(),
                a.src,
                size.div_ceil(1024)
            );
        }
        None => build_and_bench(&mut p, &dir.join("build"), &a.src, size)?,
    }
    Ok(p)
}

/// The repository of `src`: the folder itself when it is one, else a bare clone in `dir`.
fn repository(src: &str, dir: &Path) -> Result<PathBuf> {
    let local = Path::new(src);
    if local.is_dir() {
        return Ok(local.to_path_buf());
    }
    let to = dir.join("repo.git");
    let o = output_own(
        Command::new("git")
            .args(["clone", "--quiet", "--bare", "--", src])
            .arg(&to)
            .stdin(Stdio::null()),
    )
    .context("cannot run git")?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        bail!("cannot clone {}: {}", src, err.lines().last().unwrap_or("").trim());
    }
    Ok(to)
}

/// The build command: `build=` as given, else cargo's or make's by the files at the root of
/// the commit.
fn build_command(given: Option<String>, repo: &Path, commit: &str) -> Result<String> {
    let has = |f: &str| git(repo, &["cat-file", "-e", &format!("{commit}:{f}")]).is_ok();
    Ok(match given {
        Some(b) => b,
        None if has("Cargo.toml") => "cargo build --release".into(),
        None if has("Makefile") || has("makefile") => "make".into(),
        None => bail!(
            "no build= and the commit has no Cargo.toml nor Makefile at its root: say how to build \
             it (build=\"make -j\")"
        ),
    })
}

/// Writes the tar archive of `commit` to `to`; its size, at most the artifact limit.
fn archive(repo: &Path, commit: &str, to: &Path) -> Result<u64> {
    let archive = to.display().to_string();
    git(repo, &["archive", "--format=tar", "-o", &archive, commit])?;
    let size = std::fs::metadata(to).context("the source archive")?.len();
    if size > MAX_SIZE {
        bail!(
            "the source archive of {commit} is {} MiB, over the artifact limit of {} MiB",
            size >> 20,
            MAX_SIZE >> 20
        );
    }
    Ok(size)
}

/// Extracts `p`'s archive into `tree`, builds it and benches the build: `p` then holds the
/// bench's node count and is marked built.
fn build_and_bench(p: &mut PreparedSource, tree: &Path, src: &str, size: u64) -> Result<()> {
    extract(&p.archive, tree).map_err(|e| anyhow!(e))?;
    let secs = run_build(
        tree,
        &p.identity.build,
        &p.identity.bin,
        SUBMIT_BUILD_TIMEOUT,
        BuildBox::default(),
    )
    .map_err(|e| anyhow!("build of {} failed: {e}", p.identity.short()))?;
    let r = run_bench(&tree.join(&p.identity.bin), &p.identity.bench, tree, BENCH_TIMEOUT, None)
        .map_err(|e| anyhow!("bench of the build of {}: {e}", p.identity.short()))?;
    p.identity.nodes = r.nodes;
    p.built = true;
    errln!(
        "engine {}: commit {} of {}, source archive {} KiB, built in {secs:.1} s; bench {} \
         nodes",
        p.name,
        p.identity.short(),
        src,
        size.div_ceil(1024),
        r.nodes
    );
    Ok(())
}
