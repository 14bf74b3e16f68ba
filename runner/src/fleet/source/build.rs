//! Building an engine from its source archive: extract `git archive`'s tar into a fresh
//! folder, run the build command there (`sh -c`, in a process group of its own, killed at the
//! timeout, with an environment without the fleet's secrets), take the binary. On a worker the
//! binary is kept in the artifact cache under a key of what makes two builds the same
//! ([`build_key`]: the commit and its archive's SHA-256, the build command, the binary's path,
//! the compilers' versions, the CPU), so a second run of the same engine (also one submitted by
//! another person: `git archive` of one commit makes the same archive), or a second worker
//! sharing the cache, builds nothing, while an archive that only claims a commit never reaches
//! another run's games; the cache's cap and least-recently-used eviction count these files too.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

use super::SourceIdentity;
use super::bench::run_captured;
use crate::fleet::artifacts::cache::{Cache, sha256_file};
use crate::hex::sha256_hex;
use crate::play::sandbox::{Inside, Sandbox};

/// The prefix of a built binary's name in the cache (`build-<key>`).
pub const BUILD_PREFIX: &str = "build-";

/// How a build went.
#[derive(Clone, Debug, PartialEq)]
pub enum BuildHow {
    /// Built now, in this many seconds.
    Built(f64),
    /// Taken from the cache.
    Cached,
}

/// A built binary in the cache.
#[derive(Clone, Debug, PartialEq)]
pub struct Built {
    pub path: PathBuf,
    pub how: BuildHow,
}

/// The first line `PROGRAM ARGS` prints, or `none` when it cannot run.
fn version_of(program: &str, arg: &str) -> String {
    crate::play::orphans::output_own(Command::new(program).arg(arg).stdin(Stdio::null()))
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string))
        .map(|l| l.trim().to_string())
        .unwrap_or_else(|| "none".into())
}

/// This machine's compilers and CPU, as the build key holds them: `cc`, `c++`, `rustc` and
/// `cargo` versions (whichever the build uses: all of them, as fishtest keys its builds by
/// compiler), the CPU architecture and model (a `-march=native` build differs between CPUs).
/// Asked once per process.
pub fn toolchain() -> &'static str {
    static T: OnceLock<String> = OnceLock::new();
    T.get_or_init(|| {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines().find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    (k.trim() == "model name").then(|| v.trim().to_string())
                })
            })
            .unwrap_or_else(|| "unknown".into());
        format!(
            "cc: {}\nc++: {}\nrustc: {}\ncargo: {}\narch: {}\ncpu: {cpu}\n",
            version_of("cc", "--version"),
            version_of("c++", "--version"),
            version_of("rustc", "-V"),
            version_of("cargo", "-V"),
            std::env::consts::ARCH
        )
    })
}

/// The cache key of a build of `src` with `toolchain`: SHA-256 of what makes two builds the same.
pub fn build_key(src: &SourceIdentity, toolchain: &str) -> String {
    sha256_hex(
        format!(
            "runner build 2\ncommit: {}\narchive: {}\nbuild: {}\nbin: {}\n{toolchain}",
            src.commit, src.archive_sha, src.build, src.bin
        )
        .as_bytes(),
    )
}

/// Extracts the tar `archive` into `dest` (made) with the system's tar: paths with `..` and
/// absolute paths are refused by GNU tar's defaults; owners and modes are not taken over.
pub fn extract(archive: &Path, dest: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot make {}: {e}", dest.display()))?;
    let o = crate::play::orphans::output_own(
        Command::new("tar")
            .args(["-x", "--no-same-owner", "-f"])
            .arg(archive)
            .arg("-C")
            .arg(dest)
            .stdin(Stdio::null()),
    )
    .map_err(|e| format!("cannot run tar: {e}"))?;
    if !o.status.success() {
        let why = String::from_utf8_lossy(&o.stderr);
        return Err(format!("tar could not extract the source: {}", last_line(&why)));
    }
    Ok(())
}

/// The last non-empty line of `text`, at most 200 characters.
fn last_line(text: &str) -> String {
    let l = text.lines().rev().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no output");
    l.chars().take(200).collect()
}

/// Where a build runs: in a box (`play::sandbox`: the build's folder writable, the compilers
/// shown, no network unless `net`), or unboxed (`--no-box`, and the submitter's own build).
#[derive(Clone, Copy, Debug, Default)]
pub struct BuildBox<'a> {
    pub sandbox: Option<&'a Sandbox>,
    /// `runner worker --build-net`: builds keep the network.
    pub net: bool,
}

/// Runs `build` with `sh -c` in `dir`; the seconds it took, or one line saying how it failed
/// (its exit and the last line it printed, or the timeout).
pub fn run_build(
    dir: &Path,
    build: &str,
    bin: &str,
    timeout: Duration,
    boxed: BuildBox,
) -> Result<f64, String> {
    let started = Instant::now();
    let sh = PathBuf::from("/bin/sh");
    let mut cmd = match boxed.sandbox {
        Some(b) => b.command(&Inside {
            program: &sh,
            args: vec!["-c".into(), build.into()],
            writable: Some(dir),
            net: boxed.net,
            toolchain: true,
            ..Inside::default()
        }),
        None => {
            let mut cmd = Command::new("sh");
            cmd.arg("-c").arg(build).current_dir(dir);
            cmd
        }
    };
    cmd.stdin(Stdio::null());
    for v in crate::play::uci::SECRET_ENV {
        cmd.env_remove(v);
    }
    // A build inherits no target folder of the runner's own (a test under cargo, a user's
    // setting): it writes inside its fresh folder.
    cmd.env_remove("CARGO_TARGET_DIR");
    let (status, text) = run_captured(cmd, timeout).map_err(|e| format!("`{build}`: {e}"))?;
    if let Some(s) = status.filter(|s| !s.success()) {
        return Err(format!("`{build}` failed ({s}): {}", last_line(&text)));
    }
    let made = dir.join(bin);
    if !made.is_file() {
        return Err(format!("`{build}` made no {bin}: {}", last_line(&text)));
    }
    Ok(started.elapsed().as_secs_f64())
}

/// A fresh folder's name under `parent` (`.NAME-<pid>-<ns>`).
pub fn fresh_dir(parent: &Path, name: &str) -> PathBuf {
    let ns = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    parent.join(format!(".{name}-{}-{ns}", std::process::id()))
}

/// The file beside a cached build holding its SHA-256, recorded when it was built.
fn hash_file(build: &Path) -> PathBuf {
    let mut name = build.as_os_str().to_os_string();
    name.push(".sha256");
    PathBuf::from(name)
}

/// Whether the cached build at `path` is the file that was built: its SHA-256 is the one
/// recorded beside it. A build without its record, or changed since, is not.
fn intact(path: &Path) -> Result<(), String> {
    let want =
        std::fs::read_to_string(hash_file(path)).map_err(|_| "no recorded hash".to_string())?;
    let have = sha256_file(path).map_err(|e| format!("{e:#}"))?;
    match have == want.trim() {
        true => Ok(()),
        false => Err(format!("sha256 {} where {} was built", short(&have), short(want.trim()))),
    }
}

fn short(h: &str) -> &str {
    h.get(..12).unwrap_or(h)
}

/// The binary of `src` built from `archive`, from the cache when it holds that build intact
/// (its SHA-256 the one recorded when it was built: checked at every use), else built now in
/// a fresh folder of the cache (removed afterwards), in `boxed`'s box, and moved into it with
/// its hash. A cached build that changed is removed and built again, never run. `Err` is one
/// line (extraction, build failure or timeout).
pub fn cached_build(
    cache: &Cache,
    archive: &Path,
    src: &SourceIdentity,
    timeout: Duration,
    boxed: BuildBox,
) -> Result<Built, String> {
    let key = build_key(src, toolchain());
    let name = format!("{BUILD_PREFIX}{key}");
    let path = cache.dir.join(&name);
    if path.is_file() {
        match intact(&path) {
            Ok(()) => {
                crate::fleet::artifacts::cache::touch(&path);
                return Ok(Built { path, how: BuildHow::Cached });
            }
            Err(why) => {
                errln!(
                    "warning: cached build {} is not the file built ({why}): building it again",
                    path.display()
                );
                std::fs::remove_file(&path).map_err(|e| {
                    format!("cannot remove the changed build {}: {e}", path.display())
                })?;
            }
        }
    }
    let work = fresh_dir(&cache.dir, &format!("build-{}", src.short()));
    let r = (|| -> Result<f64, String> {
        let tree = work.join("src");
        extract(archive, &tree)?;
        let secs = run_build(&tree, &src.build, &src.bin, timeout, boxed)?;
        // Two runs of one worker may build the same key at once: each its own file.
        let tmp = fresh_dir(&cache.dir, &name).with_extension("part");
        std::fs::copy(tree.join(&src.bin), &tmp)
            .map_err(|e| format!("cannot copy the build into the cache: {e}"))?;
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| format!("cannot make the build executable: {e}"))?;
        }
        let sha = sha256_file(&tmp).map_err(|e| format!("{e:#}"))?;
        // The hash first: a build is never in place without it (both written whole, renamed).
        let tmp_sha = tmp.with_extension("sha256.part");
        std::fs::write(&tmp_sha, format!("{sha}\n"))
            .and_then(|()| std::fs::rename(&tmp_sha, hash_file(&path)))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp_sha);
                let _ = std::fs::remove_file(&tmp);
                format!("cannot record the build's hash in the cache: {e}")
            })?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot move the build into the cache: {e}")
        })?;
        Ok(secs)
    })();
    let _ = std::fs::remove_dir_all(&work);
    let secs = r?;
    if let Err(e) = cache.trim(Some(&name)) {
        errln!("warning: cannot trim the artifact cache: {e:#}");
    }
    Ok(Built { path, how: BuildHow::Built(secs) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::source::bench::BenchSpec;

    fn src(commit: &str, build: &str) -> SourceIdentity {
        SourceIdentity {
            repo: "r".into(),
            commit: commit.into(),
            archive_sha: "0".repeat(64),
            build: build.into(),
            bin: "out/eng".into(),
            bench: BenchSpec { args: vec!["bench".into()], nodes_label: None },
            nodes: 1,
        }
    }

    #[test]
    fn the_build_key_holds_commit_archive_command_and_compilers() {
        let a = build_key(&src("c1", "make"), "cc: gcc 12\narch: x86_64\n");
        assert_eq!(a, build_key(&src("c1", "make"), "cc: gcc 12\narch: x86_64\n"));
        assert_ne!(a, build_key(&src("c2", "make"), "cc: gcc 12\narch: x86_64\n"));
        // An archive claiming the same commit with other contents is another build.
        let other = SourceIdentity { archive_sha: "1".repeat(64), ..src("c1", "make") };
        assert_ne!(a, build_key(&other, "cc: gcc 12\narch: x86_64\n"));
        assert_ne!(a, build_key(&src("c1", "make -j"), "cc: gcc 12\narch: x86_64\n"));
        assert_ne!(a, build_key(&src("c1", "make"), "cc: gcc 13\narch: x86_64\n"));
        assert_ne!(a, build_key(&src("c1", "make"), "cc: gcc 12\narch: aarch64\n"));
        assert!(toolchain().contains("arch: "));
    }

    #[test]
    fn builds_are_made_once_and_failures_are_one_line() {
        let d = std::env::temp_dir().join(format!("fleet-build-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let tree = d.join("tree");
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::write(tree.join("eng.in"), "#!/bin/sh\necho '7 nodes 8 nps'\n").unwrap();
        let archive = d.join("src.tar");
        let mut tar = Command::new("tar");
        tar.arg("-cf").arg(&archive).arg("-C").arg(&tree).arg("eng.in");
        assert!(crate::play::orphans::output_own(&mut tar).unwrap().status.success());
        let cache = Cache::open(d.join("cache"), 1 << 30).unwrap();
        let good = src("c1", "mkdir -p out && cp eng.in out/eng");
        let t = Duration::from_secs(30);
        let cached_build = |c: &Cache, a: &Path, s: &SourceIdentity, t| {
            cached_build(c, a, s, t, BuildBox::default())
        };
        let b = cached_build(&cache, &archive, &good, t).unwrap();
        assert!(matches!(b.how, BuildHow::Built(_)));
        assert!(b.path.file_name().unwrap().to_string_lossy().starts_with(BUILD_PREFIX));
        let again = cached_build(&cache, &archive, &good, t).unwrap();
        assert_eq!((again.path, again.how), (b.path, BuildHow::Cached));
        // Only the cached binary and its hash are left: the build folder is gone.
        let left: Vec<_> = std::fs::read_dir(&cache.dir).unwrap().flatten().collect();
        assert_eq!(left.len(), 2, "{left:?}");
        let e =
            cached_build(&cache, &archive, &src("c2", "echo broken >&2; exit 2"), t).unwrap_err();
        assert!(e.contains("failed") && e.contains("broken") && !e.contains('\n'), "{e}");
        let e = cached_build(&cache, &archive, &src("c3", "true"), t).unwrap_err();
        assert!(e.contains("made no out/eng"), "{e}");
        let e = cached_build(&cache, &archive, &src("c4", "sleep 20"), Duration::from_millis(300))
            .unwrap_err();
        assert!(e.contains("did not end within"), "{e}");
        assert_eq!(std::fs::read_dir(&cache.dir).unwrap().count(), 2);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_changed_cached_build_is_built_again_never_run() {
        let d = std::env::temp_dir().join(format!("fleet-build-changed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let tree = d.join("tree");
        std::fs::create_dir_all(&tree).unwrap();
        let honest = "#!/bin/sh\necho '7 nodes 8 nps'\n";
        std::fs::write(tree.join("eng.in"), honest).unwrap();
        let archive = d.join("src.tar");
        let mut tar = Command::new("tar");
        tar.arg("-cf").arg(&archive).arg("-C").arg(&tree).arg("eng.in");
        assert!(crate::play::orphans::output_own(&mut tar).unwrap().status.success());
        let cache = Cache::open(d.join("cache"), 1 << 30).unwrap();
        let good = src("c1", "mkdir -p out && cp eng.in out/eng");
        let t = Duration::from_secs(30);
        let b = cached_build(&cache, &archive, &good, t, BuildBox::default()).unwrap();
        assert!(matches!(b.how, BuildHow::Built(_)));
        // Somebody changes the cached file; it still prints the submitted count, so a bench
        // cannot tell.
        let marker = d.join("ran");
        let evil = format!("#!/bin/sh\ntouch {}\necho '7 nodes 8 nps'\n", marker.display());
        std::fs::write(&b.path, &evil).unwrap();
        let again = cached_build(&cache, &archive, &good, t, BuildBox::default()).unwrap();
        assert!(matches!(again.how, BuildHow::Built(_)), "{:?}", again.how);
        assert_eq!(again.path, b.path);
        assert_eq!(std::fs::read_to_string(&again.path).unwrap(), honest);
        assert!(!marker.exists(), "the changed build ran");
        // A build whose recorded hash is gone is not trusted either.
        std::fs::remove_file(hash_file(&b.path)).unwrap();
        let third = cached_build(&cache, &archive, &good, t, BuildBox::default()).unwrap();
        assert!(matches!(third.how, BuildHow::Built(_)));
        let fourth = cached_build(&cache, &archive, &good, t, BuildBox::default()).unwrap();
        assert_eq!(fourth.how, BuildHow::Cached);
        let _ = std::fs::remove_dir_all(&d);
    }
}
