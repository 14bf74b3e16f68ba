//! Named engine definitions (`configs/engines.toml`), layered over built-in defaults, and the
//! resolution of `--engine`/`--each` into engine specs.
//!
//! ```toml
//! [[engine]]
//! name = "sf"
//! cmd = "/usr/games/stockfish"
//! args = []
//! dir = "/tmp"
//! tc = "10+0.1"     # limits of this engine: tc or st, nodes, depth, timemargin (ms)
//! [engine.options]
//! Hash = 16
//! ```
//! A later definition with the same name replaces an earlier one; unknown keys are warned about.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;

use crate::plan::engine_spec::{EngineSpec, PartialSpec};

/// An engine file: `[[engine]]` entries; other top-level keys are warned about.
#[derive(Deserialize)]
struct EngineFile {
    #[serde(default)]
    engine: Vec<EngineEntry>,
    #[serde(flatten)]
    extra: BTreeMap<String, toml::Value>,
}

/// One `[[engine]]` entry; keys not named here are warned about.
#[derive(Deserialize)]
struct EngineEntry {
    name: String,
    cmd: String,
    #[serde(default)]
    args: Vec<String>,
    dir: Option<PathBuf>,
    #[serde(default)]
    options: BTreeMap<String, Scalar>,
    tc: Option<Scalar>,
    st: Option<Scalar>,
    nodes: Option<Scalar>,
    depth: Option<Scalar>,
    timemargin: Option<Scalar>,
    #[serde(flatten)]
    extra: BTreeMap<String, toml::Value>,
}

/// A value an option or a limit may take.
#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Whole(i64),
    Real(f64),
    Flag(bool),
}

/// The default location of the user's engine file, relative to the working directory.
pub const DEFAULT_ENGINES_FILE: &str = "configs/engines.toml";

/// The name under which the bundled engine is known.
pub const BUNDLED_NAME: &str = "engine";

/// Engine definitions by name plus the warnings met while reading them.
#[derive(Clone, Debug, Default)]
pub struct EngineCatalog {
    pub engines: Vec<EngineSpec>,
    pub warnings: Vec<String>,
}

impl EngineCatalog {
    /// Built-in definitions: the bundled engine (found next to the runner) and Debian's packaged
    /// engines under /usr/games.
    pub fn builtin() -> EngineCatalog {
        let mut engines = Vec::new();
        if let Ok(p) = bundled_engine_path() {
            engines.push(plain(BUNDLED_NAME, &p.to_string_lossy()));
        }
        for n in ["stockfish", "toga2", "glaurung", "ethereal-chess"] {
            engines.push(plain(n, &format!("/usr/games/{n}")));
        }
        EngineCatalog { engines, warnings: Vec::new() }
    }

    /// Reads a TOML file and layers it over this catalog.
    pub fn layer_file(&mut self, path: &Path) -> Result<()> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read engine file {}", path.display()))?;
        self.layer_str(&text, &path.display().to_string())
    }

    /// Layers TOML text (`source` names it in messages; toml's own errors name the line).
    pub fn layer_str(&mut self, text: &str, source: &str) -> Result<()> {
        let file: EngineFile = toml::from_str(text).map_err(|e| {
            // One line: toml's message and the line it points at.
            match e.span() {
                Some(at) => {
                    let line = text[..at.start.min(text.len())].matches('\n').count() + 1;
                    anyhow!("{source}: line {line}: {}", e.message().trim())
                }
                None => anyhow!("{source}: {}", e.message().trim()),
            }
        })?;
        for key in file.extra.keys() {
            self.warnings.push(format!("{source}: unknown top-level key {key:?} ignored"));
        }
        for (i, entry) in file.engine.into_iter().enumerate() {
            let ctx = format!("{source}: engine #{} ({})", i + 1, entry.name);
            let spec = self.entry_spec(entry, &ctx)?;
            match self.engines.iter_mut().find(|e| e.name == spec.name) {
                Some(slot) => *slot = spec,
                None => self.engines.push(spec),
            }
        }
        Ok(())
    }

    fn entry_spec(&mut self, e: EngineEntry, ctx: &str) -> Result<EngineSpec> {
        for key in e.extra.keys() {
            self.warnings.push(format!("{ctx}: unknown key {key:?} ignored"));
        }
        let mut options = Vec::new();
        for (k, v) in e.options {
            let v = match v {
                Scalar::Text(s) => s,
                Scalar::Whole(i) => i.to_string(),
                Scalar::Real(f) => f.to_string(),
                Scalar::Flag(b) => b.to_string(),
            };
            options.push((k, v));
        }
        let mut limits = crate::plan::limits::EngineLimits::default();
        let given = [
            ("tc", e.tc),
            ("st", e.st),
            ("nodes", e.nodes),
            ("depth", e.depth),
            ("timemargin", e.timemargin),
        ];
        for (key, value) in given {
            let text = match value {
                None => continue,
                Some(Scalar::Text(s)) => s,
                Some(Scalar::Whole(i)) => i.to_string(),
                Some(Scalar::Real(f)) if key == "st" => f.to_string(),
                Some(_) => bail!("{ctx}: `{key}` must be a string or a whole number"),
            };
            limits.set(key, &text).map_err(|e| anyhow!("{ctx}: {e}"))?;
        }
        Ok(EngineSpec { name: e.name, cmd: e.cmd, args: e.args, dir: e.dir, options, limits })
    }

    /// Looks an engine up by name.
    pub fn get(&self, name: &str) -> Option<&EngineSpec> {
        self.engines.iter().find(|e| e.name == name)
    }

    /// Built-ins layered with the user's file: `path` if given (must exist), else
    /// [`DEFAULT_ENGINES_FILE`] when present.
    pub fn load(path: Option<&Path>) -> Result<EngineCatalog> {
        let mut cat = EngineCatalog::builtin();
        match path {
            Some(p) => cat.layer_file(p)?,
            None => {
                let p = Path::new(DEFAULT_ENGINES_FILE);
                if p.exists() {
                    cat.layer_file(p)?;
                }
            }
        }
        Ok(cat)
    }
}

fn plain(name: &str, cmd: &str) -> EngineSpec {
    EngineSpec {
        name: name.into(),
        cmd: cmd.into(),
        args: vec![],
        dir: None,
        options: vec![],
        limits: Default::default(),
    }
}

/// The bundled engine: `engine` in the directory of the runner's own executable.
pub fn bundled_engine_path() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot locate the runner's own executable")?;
    let dir = exe.parent().ok_or_else(|| anyhow!("runner executable has no directory"))?;
    let p = dir.join(format!("engine{}", std::env::consts::EXE_SUFFIX));
    if !p.is_file() {
        bail!(
            "bundled engine not found at {} (build it with cargo build --release, or pass --engine)",
            p.display()
        );
    }
    Ok(p)
}

/// Turns `--engine` specs and `--each` into engine specs: a spec with `cmd=`, or a name from the
/// built-ins and `engines_file` (default configs/engines.toml); with no spec, the bundled engine.
/// Warnings met reading the engine file are printed.
pub fn resolve_engines(
    engines: &[String],
    each: Option<&str>,
    engines_file: Option<&Path>,
) -> Result<Vec<EngineSpec>> {
    let catalog = EngineCatalog::load(engines_file)?;
    for w in &catalog.warnings {
        errln!("warning: {w}");
    }
    let each = each.map(PartialSpec::parse).transpose()?;
    let mut specs = Vec::new();
    if engines.is_empty() {
        specs.push(plain(BUNDLED_NAME, &bundled_engine_path()?.to_string_lossy()));
    }
    for text in engines {
        let p = PartialSpec::parse(text)?;
        let mut spec = match (&p.cmd, &p.name) {
            (Some(cmd), _) => plain(&p.name.clone().unwrap_or_else(|| default_name(cmd)), cmd),
            (None, Some(name)) => match catalog.get(name) {
                Some(s) => s.clone(),
                None if name == BUNDLED_NAME => {
                    plain(name, &bundled_engine_path()?.to_string_lossy())
                }
                None => bail!(
                    "engine {name:?} is not defined (give cmd=PATH, or add it to {})",
                    engines_file.unwrap_or(Path::new(DEFAULT_ENGINES_FILE)).display()
                ),
            },
            (None, None) => bail!("engine spec {text:?} needs cmd=PATH or name=NAME"),
        };
        spec.overlay(&p);
        specs.push(spec);
    }
    if let Some(each) = &each {
        for s in &mut specs {
            s.add_defaults(each);
        }
    }
    for s in &specs {
        s.check_pipe_text()?;
    }
    Ok(specs)
}

/// One engine for the tools (`--engine SPEC`, default the bundled engine), resolved like
/// [`resolve_engines`].
pub fn resolve_engine(spec: Option<&str>) -> Result<EngineSpec> {
    let specs: Vec<String> = spec.into_iter().map(str::to_string).collect();
    resolve_engines(&specs, None, None)?
        .into_iter()
        .next()
        .ok_or_else(|| anyhow!("no engine to run"))
}

fn default_name(cmd: &str) -> String {
    Path::new(cmd).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or(cmd.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_and_warns_about_unknown_keys() {
        let mut cat = EngineCatalog::default();
        cat.layer_str(
            r#"
            colour = "red"
            [[engine]]
            name = "a"
            cmd = "/bin/a"
            args = ["-x"]
            speed = 3
            [engine.options]
            Hash = 16
            MPC = true
            t_mid = "0.9"
            [[engine]]
            name = "b"
            cmd = "/bin/b"
            "#,
            "f1",
        )
        .unwrap();
        assert_eq!(cat.engines.len(), 2);
        let a = cat.get("a").unwrap();
        assert_eq!(a.args, ["-x"]);
        assert!(a.options.contains(&("Hash".into(), "16".into())));
        assert!(a.options.contains(&("MPC".into(), "true".into())));
        assert_eq!(cat.warnings.len(), 2, "{:?}", cat.warnings);
        cat.layer_str("[[engine]]\nname = \"a\"\ncmd = \"/bin/a2\"\n", "f2").unwrap();
        assert_eq!(cat.get("a").unwrap().cmd, "/bin/a2");
        assert_eq!(cat.engines.len(), 2);
    }

    /// An entry may carry the engine's limits; bad ones name the entry.
    #[test]
    fn entries_carry_limits() {
        let mut cat = EngineCatalog::default();
        let text = "[[engine]]\nname = \"a\"\ncmd = \"/bin/a\"\ntc = \"8+0.08\"\nnodes = 5000\n\
                    timemargin = 200\n[[engine]]\nname = \"b\"\ncmd = \"/bin/b\"\nst = 0.5\n";
        cat.layer_str(text, "f").unwrap();
        assert!(cat.warnings.is_empty(), "{:?}", cat.warnings);
        let a = cat.get("a").unwrap().limits;
        assert_eq!(a.clock.map(|c| c.pgn_tag()).as_deref(), Some("8+0.08"));
        assert_eq!((a.nodes, a.timemargin_ms), (Some(5000), Some(200)));
        assert_eq!(
            cat.get("b").unwrap().limits.clock.map(|c| c.pgn_tag()).as_deref(),
            Some("1/0.5")
        );
        // Limits on the command line replace the entry's (its margin stays unless given).
        let mut spec = cat.get("a").unwrap().clone();
        spec.overlay(&PartialSpec::parse("depth=3").unwrap());
        assert_eq!((spec.limits.clock, spec.limits.nodes), (None, None));
        assert_eq!((spec.limits.depth, spec.limits.timemargin_ms), (Some(3), Some(200)));
        let e = cat.layer_str("[[engine]]\nname = \"c\"\ncmd = \"/c\"\ndepth = 300\n", "g");
        assert!(e.unwrap_err().to_string().contains("engine #1 (c): depth=300"));
    }

    #[test]
    fn bad_files_are_errors_naming_the_entry() {
        let mut cat = EngineCatalog::default();
        // toml's errors name the line and the field.
        let e = cat.layer_str("[[engine]]\nname = \"x\"\n", "f").unwrap_err().to_string();
        assert!(e.contains("missing field `cmd`") && e.contains("line 1"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        let e = cat.layer_str("engine = 3", "f").unwrap_err().to_string();
        assert!(e.contains("invalid type") && e.contains("line 1"), "{e}");
        let text = "[[engine]]\nname = \"x\"\ncmd = \"/x\"\nargs = [1]\n";
        let e = cat.layer_str(text, "f").unwrap_err().to_string();
        assert!(e.starts_with("f: ") && e.contains("line 4"), "{e}");
        let e = cat.layer_str("[[engine]]\nname = \"x\"\ncmd = \"/x\"\ntc = true\n", "f");
        assert!(e.unwrap_err().to_string().contains("`tc` must be a string"));
        assert!(cat.layer_str("[[engine", "f").is_err());
    }
}
