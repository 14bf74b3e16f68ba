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

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};

use crate::plan::engine_spec::{EngineSpec, PartialSpec};

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

    /// Layers TOML text (`source` names it in messages).
    pub fn layer_str(&mut self, text: &str, source: &str) -> Result<()> {
        let table: toml::Table =
            toml::from_str(text).with_context(|| format!("{source}: invalid TOML"))?;
        for key in table.keys().filter(|k| *k != "engine") {
            self.warnings.push(format!("{source}: unknown top-level key {key:?} ignored"));
        }
        let Some(list) = table.get("engine") else { return Ok(()) };
        let list = list
            .as_array()
            .ok_or_else(|| anyhow!("{source}: `engine` must be an array of tables ([[engine]])"))?;
        for (i, item) in list.iter().enumerate() {
            let t = item
                .as_table()
                .ok_or_else(|| anyhow!("{source}: engine #{} is not a table", i + 1))?;
            let spec = self.parse_entry(t, &format!("{source}: engine #{}", i + 1))?;
            match self.engines.iter_mut().find(|e| e.name == spec.name) {
                Some(slot) => *slot = spec,
                None => self.engines.push(spec),
            }
        }
        Ok(())
    }

    fn parse_entry(&mut self, t: &toml::Table, ctx: &str) -> Result<EngineSpec> {
        let string = |key: &str| -> Result<Option<String>> {
            match t.get(key) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => bail!("{ctx}: `{key}` must be a string"),
            }
        };
        let name = string("name")?.ok_or_else(|| anyhow!("{ctx}: missing `name`"))?;
        let ctx = format!("{ctx} ({name})");
        let cmd = string("cmd")?.ok_or_else(|| anyhow!("{ctx}: missing `cmd`"))?;
        let dir = string("dir")?.map(PathBuf::from);
        let args = match t.get("args") {
            None => Vec::new(),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| anyhow!("{ctx}: `args` must be a list of strings"))?,
            Some(_) => bail!("{ctx}: `args` must be a list of strings"),
        };
        let mut options = Vec::new();
        match t.get("options") {
            None => {}
            Some(toml::Value::Table(o)) => {
                for (k, v) in o {
                    let v = match v {
                        toml::Value::String(s) => s.clone(),
                        toml::Value::Integer(i) => i.to_string(),
                        toml::Value::Float(f) => f.to_string(),
                        toml::Value::Boolean(b) => b.to_string(),
                        _ => bail!("{ctx}: option {k:?} must be a string, number or boolean"),
                    };
                    options.push((k.clone(), v));
                }
            }
            Some(_) => bail!("{ctx}: `options` must be a table"),
        }
        let mut limits = crate::plan::limits::EngineLimits::default();
        for key in ["tc", "st", "nodes", "depth", "timemargin"] {
            let text = match t.get(key) {
                None => continue,
                Some(toml::Value::String(s)) => s.clone(),
                Some(toml::Value::Integer(i)) => i.to_string(),
                Some(toml::Value::Float(f)) if key == "st" => f.to_string(),
                Some(_) => bail!("{ctx}: `{key}` must be a string or a whole number"),
            };
            limits.set(key, &text).map_err(|e| anyhow!("{ctx}: {e}"))?;
        }
        for key in t.keys() {
            if ![
                "name",
                "cmd",
                "dir",
                "args",
                "options",
                "tc",
                "st",
                "nodes",
                "depth",
                "timemargin",
            ]
            .contains(&key.as_str())
            {
                self.warnings.push(format!("{ctx}: unknown key {key:?} ignored"));
            }
        }
        Ok(EngineSpec { name, cmd, args, dir, options, limits })
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
        let e = cat.layer_str("[[engine]]\nname = \"x\"\n", "f").unwrap_err();
        assert!(e.to_string().contains("missing `cmd`"), "{e}");
        let e = cat.layer_str("engine = 3", "f").unwrap_err();
        assert!(e.to_string().contains("array"), "{e}");
        assert!(cat.layer_str("[[engine", "f").is_err());
    }
}
