//! Which binary each engine of a run is: the command as it resolves (`dir`, a path, or a name
//! looked up on `PATH`, as the play layer starts it), the SHA-256 of that file, and for the
//! bundled engine its `bench` signature (the node count of a fixed search, the same on every
//! machine that builds the same source). `runner submit` stores the identities; a worker
//! identifies its own engines and refuses a run whose binaries differ ([`check_same`]).
//!
//! A worker runs only engines it trusts ([`resolve_trusted`]): an engine of its own catalog
//! (the built-ins and the configs/engines.toml of the folder it was started in), found by the
//! submitted engine's name (without a sweep point's `[..]` or a tuning side's `+`/`-`) and
//! started with the catalog's command and arguments, or a command inside a folder it was told
//! to trust (`runner worker --trust DIR`). A submitted command is never run because it was
//! submitted: `/bin/sh -c ...` is refused however the hashes compare.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use crate::plan::engine_spec::EngineSpec;
use crate::plan::engines::{EngineCatalog, bundled_engine_path};
use crate::plan::run_plan::file_sha256;

/// Search depth of the bundled engine's bench signature (about 0.3 s in a debug build).
pub const BENCH_DEPTH: u32 = 5;
/// Longest wait for `engine bench`.
const BENCH_TIMEOUT: Duration = Duration::from_secs(60);

/// One engine's binary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineIdentity {
    /// The engine's name in the plan.
    pub name: String,
    /// The command as resolved (an absolute path, or a path relative to the runner's folder).
    pub cmd: String,
    /// SHA-256 (hex) of the command's file.
    pub sha256: String,
    /// The bundled engine's `bench` signature (`bench 5: 383308 nodes`); `None` for others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<String>,
    /// An engine built from source at a commit (`src=`): what workers build, and the bench
    /// signature they check; its `sha256` is then the source archive's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<crate::fleet::source::SourceIdentity>,
}

/// The file the play layer would start for `spec`: its command as a path (made absolute when
/// relative with a `/`), or a bare name found on `PATH`; `None` when there is no such file.
pub fn resolve_command(spec: &EngineSpec) -> Option<PathBuf> {
    let program = spec.program();
    if program.components().count() > 1 {
        return program.is_file().then_some(program);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(&program)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether `path` is the bundled engine (the `engine` beside the runner's executable).
fn is_bundled(path: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    bundled_engine_path().is_ok_and(|b| canon(&b).is_some_and(|b| Some(b) == canon(path)))
}

/// The identity of the engine `spec`.
pub fn identify(spec: &EngineSpec) -> Result<EngineIdentity> {
    identify_all(std::slice::from_ref(spec)).map(|mut v| v.remove(0))
}

/// The identities of `specs`, in order; each file is hashed (and benched) once.
pub fn identify_all(specs: &[EngineSpec]) -> Result<Vec<EngineIdentity>> {
    let mut seen: HashMap<PathBuf, (String, Option<String>)> = HashMap::new();
    let mut out = Vec::with_capacity(specs.len());
    for spec in specs {
        let path = resolve_command(spec).ok_or_else(|| {
            anyhow!(
                "engine {}: command {:?} not found (no such file, and not on PATH)",
                spec.name,
                spec.cmd
            )
        })?;
        let (sha256, bench) = match seen.get(&path) {
            Some(known) => known.clone(),
            None => {
                let sha = file_sha256(&path)
                    .with_context(|| format!("engine {}: cannot hash its binary", spec.name))?;
                let bench = if is_bundled(&path) {
                    Some(
                        bench_signature(&path)
                            .with_context(|| format!("engine {}: no bench signature", spec.name))?,
                    )
                } else {
                    None
                };
                seen.insert(path.clone(), (sha.clone(), bench.clone()));
                (sha, bench)
            }
        };
        out.push(EngineIdentity {
            name: spec.name.clone(),
            cmd: path.display().to_string(),
            sha256,
            bench,
            source: None,
        });
    }
    Ok(out)
}

/// `PROGRAM bench 5`: the node count of its last line (`<N> nodes <M> nps`) as
/// `bench 5: N nodes` (the speed is left out: it differs between machines).
pub fn bench_signature(program: &Path) -> Result<String> {
    let mut child = crate::play::orphans::spawn_own(
        Command::new(program)
            .args(["bench", &BENCH_DEPTH.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .with_context(|| format!("cannot start {}", program.display()))?;
    let pid = child.id();
    // Read on a thread of its own, so a full pipe never stops the engine.
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(o) = stdout.as_mut() {
            let _ = o.read_to_string(&mut text);
        }
        text
    });
    let start = Instant::now();
    // Registered with the play layer's orphan sweep (`spawn_own`), which then never reaps it;
    // should something else take its status first, it has ended and its output says how.
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(e) if e.raw_os_error() == Some(libc::ECHILD) => break None,
            Err(e) => {
                crate::play::orphans::forget(pid);
                return Err(e).context("waiting for the bench");
            }
        }
        if start.elapsed() > BENCH_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            crate::play::orphans::forget(pid);
            bail!("{} bench did not end within {} s", program.display(), BENCH_TIMEOUT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    crate::play::orphans::forget(pid);
    let text = reader.join().unwrap_or_default();
    if let Some(s) = status.filter(|s| !s.success()) {
        bail!("{} bench failed ({s})", program.display());
    }
    let nodes = text.lines().rev().find_map(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.as_slice() {
            [n, "nodes", _, "nps"] => n.parse::<u64>().ok(),
            _ => None,
        }
    });
    match nodes {
        Some(n) => Ok(format!("bench {BENCH_DEPTH}: {n} nodes")),
        None => bail!("{} bench printed no `<N> nodes <M> nps` line", program.display()),
    }
}

/// Whether this machine's engines (`local`) are the submitted ones: every submitted engine must
/// be there with the same SHA-256, or, for the bundled engine, the same bench signature (a
/// build of the same source on another machine). The error is one line naming the engine.
pub fn check_same(submitted: &[EngineIdentity], local: &[EngineIdentity]) -> Result<(), String> {
    let short = |h: &str| h.get(..12).unwrap_or(h).to_string();
    // An engine from source was built and its bench checked when the worker loaded it
    // (`source::load`): its binary differs between machines.
    for s in submitted.iter().filter(|s| s.source.is_none()) {
        let Some(l) = local.iter().find(|l| l.name == s.name) else {
            return Err(format!("engine {}: not resolved on this machine", s.name));
        };
        if l.sha256 == s.sha256 {
            continue;
        }
        match (&s.bench, &l.bench) {
            (Some(a), Some(b)) if a == b => continue,
            (Some(a), Some(b)) => {
                return Err(format!(
                    "engine {}: {} here has {b}, the submitted binary {a}: not the same engine",
                    s.name, l.cmd
                ));
            }
            _ => {
                return Err(format!(
                    "engine {}: {} here (sha256 {}) is not the submitted binary (sha256 {})",
                    s.name,
                    l.cmd,
                    short(&l.sha256),
                    short(&s.sha256)
                ));
            }
        }
    }
    Ok(())
}

/// The names an engine may be known by: its own, then without a sweep point's `[..]` suffix
/// and a tuning side's `+`/`-`.
pub(crate) fn base_names(name: &str) -> Vec<&str> {
    let mut names = vec![name];
    let mut base = name;
    if let Some(i) = base.find('[')
        && base.ends_with(']')
    {
        base = &base[..i];
    }
    base = base.strip_suffix(['+', '-']).unwrap_or(base);
    if base != name && !base.is_empty() {
        names.push(base);
    }
    names
}

/// `spec` as this worker starts it, if it trusts it: the entry of its catalog of that name
/// (command, arguments and working folder from the catalog; the submitted name, options and
/// limits kept), refused when the submitted arguments differ from the entry's; else the
/// submitted command as it resolves here, when it lies inside one of the `trust` folders.
/// `Err` is the line saying why the engine is not run here.
pub fn resolve_trusted(
    spec: &EngineSpec,
    catalog: &EngineCatalog,
    trust: &[PathBuf],
) -> Result<EngineSpec, String> {
    for name in base_names(&spec.name) {
        if let Some(found) = catalog.get(name) {
            if found.args != spec.args {
                return Err(format!(
                    "engine {}: its arguments {:?} are not those of this worker's engine {name} \
                     ({:?})",
                    spec.name, spec.args, found.args
                ));
            }
            let mut s = spec.clone();
            s.cmd = found.cmd.clone();
            s.dir = found.dir.clone();
            return Ok(s);
        }
    }
    let inside = resolve_command(spec).and_then(|p| std::fs::canonicalize(p).ok()).filter(|p| {
        trust.iter().filter_map(|d| std::fs::canonicalize(d).ok()).any(|d| p.starts_with(d))
    });
    match inside {
        Some(_) => Ok(spec.clone()),
        None => Err(format!(
            "engine {}: command {:?} is not one this worker trusts (an engine of its \
             configs/engines.toml or the built-ins by that name, or a command inside a folder \
             given with --trust)",
            spec.name, spec.cmd
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fleet-id-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn spec(name: &str, cmd: &str) -> EngineSpec {
        EngineSpec {
            name: name.into(),
            cmd: cmd.into(),
            args: vec![],
            dir: None,
            options: vec![],
            limits: Default::default(),
        }
    }

    #[test]
    fn identities_hash_the_resolved_file_and_differences_name_the_engine() {
        let d = scratch("hash");
        let a = script(&d, "a.sh", "echo a");
        let b = script(&d, "b.sh", "echo b");
        let ids = identify_all(&[spec("A", a.to_str().unwrap()), spec("B", b.to_str().unwrap())])
            .unwrap();
        assert_eq!(ids[0].sha256, file_sha256(&a).unwrap());
        assert_eq!((ids[0].cmd.as_str(), ids[0].bench.as_deref()), (a.to_str().unwrap(), None));
        assert!(check_same(&ids, &ids).is_ok());
        let mut other = ids.clone();
        other[1].sha256 = ids[0].sha256.clone();
        let e = check_same(&ids, &other).unwrap_err();
        assert!(e.starts_with("engine B: ") && e.contains("not the submitted binary"), "{e}");
        assert!(!e.contains('\n'));
        let e = check_same(&ids, &other[..1]).unwrap_err();
        assert_eq!(e, "engine B: not resolved on this machine");
        // The bench signature decides for the bundled engine rebuilt elsewhere.
        let mut sub = ids.clone();
        sub[0].bench = Some("bench 5: 1 nodes".into());
        let mut here = sub.clone();
        here[0].sha256 = "ff".into();
        assert!(check_same(&sub, &here).is_ok());
        here[0].bench = Some("bench 5: 2 nodes".into());
        let e = check_same(&sub, &here).unwrap_err();
        assert!(e.starts_with("engine A: ") && e.contains("bench 5: 2 nodes"), "{e}");
        // A missing command is one line naming the engine.
        let e = identify(&spec("C", d.join("nope").to_str().unwrap())).unwrap_err().to_string();
        assert!(e.starts_with("engine C: command") && e.contains("not found"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn bench_signatures_keep_the_node_count_only() {
        let d = scratch("bench");
        let good = script(&d, "good.sh", "echo 'mpc tries 0 cuts 0'; echo '383308 nodes 99 nps'");
        assert_eq!(bench_signature(&good).unwrap(), "bench 5: 383308 nodes");
        let bad = script(&d, "bad.sh", "echo hello");
        let e = bench_signature(&bad).unwrap_err().to_string();
        assert!(e.contains("no `<N> nodes <M> nps` line"), "{e}");
        let fails = script(&d, "fails.sh", "exit 3");
        assert!(bench_signature(&fails).unwrap_err().to_string().contains("fails.sh bench"));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn workers_run_only_engines_they_trust() {
        assert_eq!(base_names("mpc[t_mid=0.9]"), ["mpc[t_mid=0.9]", "mpc"]);
        assert_eq!(base_names("engine+"), ["engine+", "engine"]);
        assert_eq!(base_names("sf"), ["sf"]);
        let catalog = EngineCatalog::builtin();
        // A submitted shell is not run, whatever it is called.
        let mut sh = spec("sh", "/bin/sh");
        sh.args = vec!["-c".into(), "touch /tmp/pwned".into()];
        let e = resolve_trusted(&sh, &catalog, &[]).unwrap_err();
        assert!(e.starts_with("engine sh: command") && e.contains("--trust"), "{e}");
        // Named after a built-in: the built-in's command, the submitted options.
        let mut gone = spec("stockfish[Hash=16]", "/bin/sh");
        gone.options = vec![("Hash".into(), "16".into())];
        let r = resolve_trusted(&gone, &catalog, &[]).unwrap();
        assert_eq!((r.cmd.as_str(), r.name.as_str()), ("/usr/games/stockfish", gone.name.as_str()));
        assert_eq!(r.options, gone.options);
        // ... but not with arguments of the submitter's.
        let mut args = gone.clone();
        args.args = vec!["-c".into(), "x".into()];
        assert!(resolve_trusted(&args, &catalog, &[]).unwrap_err().contains("arguments"));
        // A command inside a trusted folder runs as submitted; outside it, not.
        let d = scratch("trust");
        let a = script(&d, "a.sh", "echo a");
        let inside = spec("mine", a.to_str().unwrap());
        assert_eq!(resolve_trusted(&inside, &catalog, std::slice::from_ref(&d)).unwrap(), inside);
        assert!(resolve_trusted(&inside, &catalog, &[PathBuf::from("/usr/games")]).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }
}
