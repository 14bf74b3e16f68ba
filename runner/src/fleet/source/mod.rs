//! Engines delivered from source at a commit: `runner submit --engine
//! name=dev,src=REPO,rev=REV,build=CMD,bin=PATH[,bench=N][,benchcmd=ARGS][,benchnodes=TEXT]`.
//!
//! The submitter resolves REV to a commit, stores `git archive` of that commit as an artifact
//! of kind `source` (so workers never reach the repository), builds it once in a fresh folder
//! to read its bench's node count (unless `bench=N` gives it) and stores what identifies the
//! engine: commit, archive, build command, binary path, bench command and node count
//! ([`SourceIdentity`], in the engine's identity). A worker that loads an approved run builds
//! it in a fresh folder of its cache, keeps the binary under a key of the commit, the build
//! command, its compilers' versions and its CPU ([`build`]), benches it and plays only when
//! the node count is the submitted one; otherwise it refuses the run in one line.

pub mod bench;
pub mod build;
pub mod load;
pub mod submit;

use serde::{Deserialize, Serialize};

use self::bench::BenchSpec;

/// What identifies an engine built from source (stored in the submission).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceIdentity {
    /// The repository as the submitter named it (shown, never fetched by workers).
    pub repo: String,
    /// The full commit id REV resolved to.
    pub commit: String,
    /// SHA-256 of the source archive (the run's artifact of kind `source`).
    pub archive_sha: String,
    /// The build command, run by `sh -c` at the archive's root.
    pub build: String,
    /// The binary the build makes, relative to the archive's root.
    pub bin: String,
    pub bench: BenchSpec,
    /// The bench's node count on the submitter's build (or as given with `bench=N`).
    pub nodes: u64,
}

impl SourceIdentity {
    /// The commit's first 12 digits.
    pub fn short(&self) -> &str {
        self.commit.get(..12).unwrap_or(&self.commit)
    }
}

/// The keys of an engine spec that describe a source (the others are the engine spec's).
pub const SOURCE_KEYS: [&str; 7] =
    ["src", "rev", "build", "bin", "bench", "benchcmd", "benchnodes"];

/// Whether an `--engine` spec names a source (`src=`).
pub fn is_source_spec(spec: &str) -> bool {
    spec.split(',').any(|i| i.split_once('=').is_some_and(|(k, _)| k.trim() == "src"))
}

/// An `--engine` spec's source keys, and the rest of the spec.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceArgs {
    pub name: String,
    pub src: String,
    pub rev: String,
    pub build: Option<String>,
    pub bin: String,
    pub nodes: Option<u64>,
    pub bench: BenchSpec,
    /// The spec without the source keys (name, options, limits, arguments).
    pub rest: Vec<String>,
}

/// Splits `spec` into its source keys and the rest; `Err` is one line.
pub fn parse_source_spec(spec: &str) -> Result<SourceArgs, String> {
    let mut a = SourceArgs {
        rev: "HEAD".into(),
        bench: BenchSpec { args: vec!["bench".into()], nodes_label: None },
        ..SourceArgs::default()
    };
    let (mut bin, mut src) = (None, None);
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            return Err(format!("engine spec {spec:?}: item {item:?} is not key=value"));
        };
        let (k, v) = (k.trim(), v.trim());
        let empty = || format!("engine spec {spec:?}: {k} is empty");
        match k {
            "src" if v.is_empty() => return Err(empty()),
            "src" => src = Some(v.to_string()),
            "rev" if v.is_empty() => return Err(empty()),
            "rev" => a.rev = v.to_string(),
            "build" if v.is_empty() => return Err(empty()),
            "build" => a.build = Some(v.to_string()),
            "bin" => bin = Some(v.to_string()),
            "bench" => {
                a.nodes =
                    Some(v.parse().map_err(|_| {
                        format!("engine spec {spec:?}: bench={v} is not a node count")
                    })?)
            }
            "benchcmd" => a.bench.args = v.split_whitespace().map(str::to_string).collect(),
            "benchnodes" if v.is_empty() => return Err(empty()),
            "benchnodes" => a.bench.nodes_label = Some(v.to_string()),
            "cmd" => {
                return Err(format!(
                    "engine spec {spec:?}: cmd= and src= together: a source engine's command is \
                     its build's bin="
                ));
            }
            "name" => {
                a.name = v.to_string();
                a.rest.push(item.to_string());
            }
            _ => a.rest.push(item.to_string()),
        }
    }
    a.src = src.ok_or_else(|| format!("engine spec {spec:?}: no src="))?;
    if a.name.is_empty() {
        return Err(format!("engine spec {spec:?}: a source engine needs name="));
    }
    let bin = bin.ok_or_else(|| {
        format!(
            "engine spec {spec:?}: no bin= (the file the build makes, e.g. bin=target/release/NAME)"
        )
    })?;
    let p = std::path::Path::new(&bin);
    if bin.is_empty()
        || p.is_absolute()
        || p.components().any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(format!(
            "engine spec {spec:?}: bin={bin} must be a path inside the source (relative, no ..)"
        ));
    }
    a.bin = bin;
    if a.bench.args.is_empty() {
        return Err(format!("engine spec {spec:?}: benchcmd is empty"));
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_specs_are_split_from_the_engine_spec() {
        let s = "name=dev,src=/r,rev=v1,build=make -j,bin=out/eng,option.Hash=16,tc=1+0.1";
        assert!(is_source_spec(s) && !is_source_spec("name=a,cmd=x"));
        let a = parse_source_spec(s).unwrap();
        assert_eq!((a.name.as_str(), a.src.as_str(), a.rev.as_str()), ("dev", "/r", "v1"));
        assert_eq!(
            (a.build.as_deref(), a.bin.as_str(), a.nodes),
            (Some("make -j"), "out/eng", None)
        );
        assert_eq!(a.bench.args, ["bench"]);
        assert_eq!(a.rest, ["name=dev", "option.Hash=16", "tc=1+0.1"]);
        let a = parse_source_spec("name=d,src=x,bin=e,bench=42,benchcmd=bench 5,benchnodes=Total")
            .unwrap();
        assert_eq!((a.rev.as_str(), a.nodes), ("HEAD", Some(42)));
        assert_eq!(a.bench.args, ["bench", "5"]);
        assert_eq!(a.bench.nodes_label.as_deref(), Some("Total"));
        for (bad, needle) in [
            ("name=d,src=x", "no bin="),
            ("src=x,bin=e", "needs name="),
            ("name=d,src=x,bin=../e", "inside the source"),
            ("name=d,src=x,bin=/bin/sh", "inside the source"),
            ("name=d,src=x,bin=e,bench=many", "not a node count"),
            ("name=d,src=x,bin=e,cmd=/bin/sh", "cmd= and src="),
            ("name=d,src=x,bin=e,build=", "build is empty"),
        ] {
            let e = parse_source_spec(bad).unwrap_err();
            assert!(e.contains(needle) && !e.contains('\n'), "{bad}: {e}");
        }
    }
}
