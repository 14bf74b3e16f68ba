//! Engine specifications: how to start an engine and which UCI options to give it. Parsed from
//! cutechess-cli style `key=value,...` strings (`--engine name=A,cmd=PATH,option.Hash=16`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::plan::limits::EngineLimits;

/// Everything needed to start one engine and configure it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineSpec {
    /// Display name (PGN player name); unique within a run.
    pub name: String,
    /// Program to run.
    pub cmd: String,
    /// Command-line arguments, in order.
    #[serde(default)]
    pub args: Vec<String>,
    /// Working directory of the process.
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// UCI options sent with `setoption` after `uciok`, in order.
    #[serde(default)]
    pub options: Vec<(String, String)>,
    /// The engine's own limits (`tc=`, `st=`, `nodes=`, `depth=`, `timemargin=`); left out of
    /// run.json when none, so older plans keep their hash.
    #[serde(default, skip_serializing_if = "EngineLimits::is_empty")]
    pub limits: EngineLimits,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SpecError {
    #[error("engine spec {spec:?}: item {item:?} is not key=value")]
    NotKeyValue { spec: String, item: String },
    #[error(
        "engine spec {spec:?}: unknown key {key:?} (known: name, cmd, arg, dir, proto, option.NAME, \
         tc, st, nodes, depth, timemargin)"
    )]
    UnknownKey { spec: String, key: String },
    #[error("engine spec {spec:?}: {reason}")]
    BadLimit { spec: String, reason: String },
    #[error(
        "engine spec {spec:?}: {key}= belongs to an engine built from source, which only `runner \
         submit` takes (its workers build it); locally, build it and give cmd="
    )]
    SourceKey { spec: String, key: String },
    #[error("engine spec {spec:?}: only proto=uci is supported")]
    Protocol { spec: String },
    #[error("engine spec {spec:?}: {what} is empty")]
    Empty { spec: String, what: &'static str },
    #[error(
        "engine {engine:?}: {what} {text:?} holds a control character (U+{code:04X}); nothing \
         sent on the UCI pipe may"
    )]
    ControlChar { engine: String, what: &'static str, text: String, code: u32 },
}

/// A parsed `key=value,...` list; fields are `None` when not given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartialSpec {
    pub name: Option<String>,
    pub cmd: Option<String>,
    pub args: Vec<String>,
    pub dir: Option<PathBuf>,
    pub options: Vec<(String, String)>,
    pub limits: EngineLimits,
}

impl PartialSpec {
    /// Parses `name=A,cmd=PATH,arg=X,dir=D,option.NAME=VALUE` (values cannot hold commas).
    pub fn parse(spec: &str) -> Result<PartialSpec, SpecError> {
        let mut out = PartialSpec::default();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((key, value)) = item.split_once('=') else {
                return Err(SpecError::NotKeyValue { spec: spec.into(), item: item.into() });
            };
            let (key, value) = (key.trim(), value.trim());
            match key {
                "name" => out.name = Some(value.to_string()),
                "cmd" => out.cmd = Some(value.to_string()),
                "arg" => out.args.push(value.to_string()),
                "dir" => out.dir = Some(PathBuf::from(value)),
                "proto" if value.eq_ignore_ascii_case("uci") => {}
                "proto" => return Err(SpecError::Protocol { spec: spec.into() }),
                "tc" | "st" | "nodes" | "depth" | "timemargin" => {
                    out.limits
                        .set(key, value)
                        .map_err(|reason| SpecError::BadLimit { spec: spec.into(), reason })?;
                }
                "src" | "rev" | "build" | "bin" | "bench" | "benchcmd" | "benchnodes" => {
                    return Err(SpecError::SourceKey { spec: spec.into(), key: key.into() });
                }
                _ => match key.strip_prefix("option.") {
                    Some(name) if !name.is_empty() => {
                        out.options.push((name.to_string(), value.to_string()))
                    }
                    _ => return Err(SpecError::UnknownKey { spec: spec.into(), key: key.into() }),
                },
            }
        }
        if out.name.as_deref() == Some("") {
            return Err(SpecError::Empty { spec: spec.into(), what: "name" });
        }
        if out.cmd.as_deref() == Some("") {
            return Err(SpecError::Empty { spec: spec.into(), what: "cmd" });
        }
        Ok(out)
    }
}

impl EngineSpec {
    /// Applies a partial spec over this one: given fields replace, args and options are merged
    /// (an option given again replaces the earlier value).
    pub fn overlay(&mut self, p: &PartialSpec) {
        if let Some(n) = &p.name {
            self.name = n.clone();
        }
        if let Some(c) = &p.cmd {
            self.cmd = c.clone();
        }
        if !p.args.is_empty() {
            self.args = p.args.clone();
        }
        if let Some(d) = &p.dir {
            self.dir = Some(d.clone());
        }
        for (k, v) in &p.options {
            set_option(&mut self.options, k, v);
        }
        if p.limits.has_limit() {
            // Limits given on the command line replace an engines.toml entry's as a whole.
            self.limits = EngineLimits { timemargin_ms: self.limits.timemargin_ms, ..p.limits };
        }
        if p.limits.timemargin_ms.is_some() {
            self.limits.timemargin_ms = p.limits.timemargin_ms;
        }
    }

    /// Adds options from `--each` that the engine does not set itself.
    pub fn add_defaults(&mut self, each: &PartialSpec) {
        for (k, v) in &each.options {
            if !self.options.iter().any(|(n, _)| n.eq_ignore_ascii_case(k)) {
                self.options.push((k.clone(), v.clone()));
            }
        }
        if self.dir.is_none() {
            self.dir = each.dir.clone();
        }
        if self.args.is_empty() {
            self.args = each.args.clone();
        }
        self.limits.add_defaults(&each.limits);
    }

    /// The program path to execute: a relative path with a slash is resolved against the
    /// runner's working directory (not the engine's `dir`), so `cmd=./sf` means what users expect.
    /// Refuses control characters (newline, CR, NUL, ...) in what goes on the UCI pipe or into
    /// one-line records: the name and every option name and value. A newline in a value would
    /// send the engine a command of its own (`option.Hash=8<newline>quit`).
    pub fn check_pipe_text(&self) -> Result<(), SpecError> {
        let fields = std::iter::once(("name", &self.name)).chain(
            self.options.iter().flat_map(|(k, v)| [("option name", k), ("option value", v)]),
        );
        for (what, text) in fields {
            if let Some(c) = text.chars().find(|c| c.is_control()) {
                return Err(SpecError::ControlChar {
                    engine: self.name.clone(),
                    what,
                    text: text.clone(),
                    code: c as u32,
                });
            }
        }
        Ok(())
    }

    pub fn program(&self) -> PathBuf {
        let p = Path::new(&self.cmd);
        if p.is_relative()
            && self.cmd.contains('/')
            && let Ok(abs) = std::path::absolute(p)
        {
            return abs;
        }
        p.to_path_buf()
    }
}

/// Sets option `name` (case-insensitive, as UCI option names are) to `value`.
pub fn set_option(options: &mut Vec<(String, String)>, name: &str, value: &str) {
    match options.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
        Some(slot) => slot.1 = value.to_string(),
        None => options.push((name.to_string(), value.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cutechess_style_specs() {
        let p = PartialSpec::parse(
            "name=SF,cmd=/usr/games/stockfish,arg=--x,arg=y,dir=/tmp,option.Hash=16,option.Skill Level=3,proto=uci",
        )
        .unwrap();
        assert_eq!(p.name.as_deref(), Some("SF"));
        assert_eq!(p.cmd.as_deref(), Some("/usr/games/stockfish"));
        assert_eq!(p.args, ["--x", "y"]);
        assert_eq!(p.dir, Some(PathBuf::from("/tmp")));
        assert_eq!(
            p.options,
            [("Hash".to_string(), "16".to_string()), ("Skill Level".into(), "3".into())]
        );
    }

    #[test]
    fn control_characters_are_refused() {
        let spec = |name: &str, k: &str, v: &str| EngineSpec {
            name: name.into(),
            cmd: "x".into(),
            args: vec![],
            dir: None,
            options: vec![(k.into(), v.into())],
            limits: Default::default(),
        };
        assert!(spec("a", "Hash", "16").check_pipe_text().is_ok());
        for (n, k, v) in [("a", "Hash", "8\nquit"), ("a", "Ha\rsh", "8"), ("a\0", "H", "1")] {
            let e = spec(n, k, v).check_pipe_text().unwrap_err().to_string();
            assert!(e.contains("control character"), "{e}");
        }
    }

    #[test]
    fn rejects_bad_items() {
        assert!(matches!(PartialSpec::parse("name"), Err(SpecError::NotKeyValue { .. })));
        assert!(matches!(PartialSpec::parse("nmae=x"), Err(SpecError::UnknownKey { .. })));
        assert!(matches!(PartialSpec::parse("name=d,src=/r"), Err(SpecError::SourceKey { .. })));
        assert!(matches!(PartialSpec::parse("option.=3"), Err(SpecError::UnknownKey { .. })));
        assert!(matches!(PartialSpec::parse("proto=xboard"), Err(SpecError::Protocol { .. })));
        assert!(matches!(PartialSpec::parse("cmd="), Err(SpecError::Empty { .. })));
    }

    #[test]
    fn each_adds_only_missing_options() {
        let mut s = EngineSpec {
            name: "A".into(),
            cmd: "a".into(),
            args: vec![],
            dir: None,
            options: vec![("Hash".into(), "64".into())],
            limits: Default::default(),
        };
        s.add_defaults(&PartialSpec::parse("option.hash=16,option.Threads=1").unwrap());
        assert_eq!(s.options, [("Hash".into(), "64".into()), ("Threads".into(), "1".into())]);
        s.overlay(&PartialSpec::parse("option.Threads=2,name=B").unwrap());
        assert_eq!(s.name, "B");
        assert_eq!(s.options[1], ("Threads".into(), "2".into()));
    }
}
