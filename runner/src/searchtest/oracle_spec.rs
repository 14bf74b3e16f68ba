//! `--oracle SPEC[,depth=N|nodes=N|movetime=MS]`: the engine that scores the variants' moves,
//! its search limit, and the mapping of its scores to bounded centipawns.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::plan::engine_spec::EngineSpec;
use crate::plan::engines::resolve_engine;
use crate::play::probe::Limit;
use crate::play::uci_info::Eval;

/// The oracle's depth when `--oracle` gives no limit.
pub const DEFAULT_ORACLE_DEPTH: u32 = 12;

/// Centipawn scores are clamped to +-`CP_CLAMP`; a mate in p plies is +-(`MATE_VALUE` - p), at
/// least `CP_CLAMP` + 1, so every mate ranks above every centipawn score.
pub const CP_CLAMP: i32 = 1000;
pub const MATE_VALUE: i32 = 2000;

/// The mapping in words (oracle.json, table.md).
pub const MAPPING_NOTE: &str = "centipawns clamped to +-1000; mate in p plies = +-(2000 - p), at \
     least 1001: every mate ranks above every centipawn score";

/// The oracle: an engine and its limit (plan.json, oracle.json).
pub use crate::store::formats::OracleSpec;

/// Parses the `--oracle` value. Items `depth=N`, `nodes=N`, `movetime=MS` (at most one) are the
/// limit; the rest is an engine spec (`name=X,cmd=PATH,option.K=V`, or a name alone from
/// configs/engines.toml). Without an engine, Debian's stockfish: `stockfish` on PATH or
/// /usr/games/stockfish.
pub fn parse_oracle(text: &str) -> Result<OracleSpec> {
    let mut limit = None;
    let mut rest = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let parsed = match item.split_once('=') {
            Some(("depth", v)) => Some(number(v, item).and_then(|d| match u32::try_from(d) {
                Ok(d) if (1..=64).contains(&d) => Ok(Limit::Depth(d)),
                _ => bail!("--oracle {item}: depth must be 1..=64"),
            })?),
            Some(("nodes", v)) => Some(Limit::Nodes(number(v, item)?)),
            Some(("movetime", v)) => match number(v, item)? {
                ms @ 1..=3_600_000 => Some(Limit::Movetime(ms)),
                _ => bail!("--oracle {item}: movetime must be 1..=3600000 ms"),
            },
            _ => None,
        };
        match parsed {
            Some(l) if limit.is_some() => bail!("--oracle: two limits ({:?} and {item})", l),
            Some(l) => limit = Some(l),
            None => rest.push(item),
        }
    }
    let limit = limit.unwrap_or(Limit::Depth(DEFAULT_ORACLE_DEPTH));
    let engine = match rest.as_slice() {
        [] => default_stockfish()?,
        [name] if !name.contains('=') => resolve_engine(Some(&format!("name={name}")))
            .map_err(|e| anyhow::anyhow!("--oracle: {e}"))?,
        _ => resolve_engine(Some(&rest.join(","))).map_err(|e| anyhow::anyhow!("--oracle: {e}"))?,
    };
    Ok(OracleSpec { engine, limit })
}

fn number(v: &str, item: &str) -> Result<u64> {
    match v.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => bail!("--oracle {item}: expected a positive whole number"),
    }
}

/// Debian's stockfish: on PATH, else /usr/games/stockfish; a one-line error without it.
fn default_stockfish() -> Result<EngineSpec> {
    let Some(cmd) = find_on_path("stockfish").or_else(|| {
        let p = PathBuf::from("/usr/games/stockfish");
        p.is_file().then_some(p)
    }) else {
        bail!(
            "--oracle: no stockfish on PATH or in /usr/games (apt-get install stockfish), \
             or name the oracle: --oracle name=X,cmd=PATH[,depth=N]"
        );
    };
    Ok(EngineSpec {
        name: "stockfish".into(),
        cmd: cmd.to_string_lossy().into_owned(),
        args: Vec::new(),
        dir: None,
        options: Vec::new(),
        limits: Default::default(),
    })
}

/// The first executable file `name` in the PATH's folders.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// An oracle score as bounded centipawns from the mover's view: centipawns clamped to
/// +-[`CP_CLAMP`]; mate in n moves (n > 0: the mover mates in 2n - 1 plies; n < 0: is mated in
/// 2|n| plies) as +-max([`MATE_VALUE`] - plies, [`CP_CLAMP`] + 1).
pub fn bounded_cp(e: Eval) -> i32 {
    match e {
        Eval::Cp(cp) => cp.clamp(-CP_CLAMP, CP_CLAMP),
        Eval::Mate(n) => {
            let plies = if n > 0 { 2 * n as i64 - 1 } else { -2 * n as i64 };
            let v = (MATE_VALUE as i64 - plies).max(CP_CLAMP as i64 + 1) as i32;
            if n > 0 { v } else { -v }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_scores_map_to_bounded_values_above_every_cp() {
        assert_eq!(bounded_cp(Eval::Cp(35)), 35);
        assert_eq!(bounded_cp(Eval::Cp(-4000)), -1000);
        assert_eq!(bounded_cp(Eval::Cp(1500)), 1000);
        // Mate in 1 move = 1 ply; mated in 1 move = 2 plies.
        assert_eq!(bounded_cp(Eval::Mate(1)), 1999);
        assert_eq!(bounded_cp(Eval::Mate(3)), 1995);
        assert_eq!(bounded_cp(Eval::Mate(-1)), -1998);
        // "mate 0" (the mover is mated now) is the worst score; far mates stay above any cp.
        assert_eq!(bounded_cp(Eval::Mate(0)), -2000);
        assert_eq!(bounded_cp(Eval::Mate(900)), 1001);
        assert_eq!(bounded_cp(Eval::Mate(i32::MAX)), 1001);
        assert_eq!(bounded_cp(Eval::Mate(i32::MIN)), -1001);
        // A quicker mate is better, a later one less bad.
        assert!(bounded_cp(Eval::Mate(2)) > bounded_cp(Eval::Mate(5)));
        assert!(bounded_cp(Eval::Mate(-5)) > bounded_cp(Eval::Mate(-2)));
    }

    #[test]
    fn oracle_values_split_into_engine_and_limit() {
        let o = parse_oracle("name=sf,cmd=/bin/true,option.Hash=16,depth=8").unwrap();
        assert_eq!((o.engine.name.as_str(), o.limit), ("sf", Limit::Depth(8)));
        assert_eq!(o.engine.options, [("Hash".to_string(), "16".to_string())]);
        let o = parse_oracle("cmd=/bin/true,nodes=5000").unwrap();
        assert_eq!(o.limit, Limit::Nodes(5000));
        let o = parse_oracle("cmd=/bin/true").unwrap();
        assert_eq!(o.limit, Limit::Depth(DEFAULT_ORACLE_DEPTH));
        for bad in [
            "cmd=/bin/true,depth=0",
            "cmd=/bin/true,depth=x",
            "cmd=/bin/true,depth=8,nodes=9",
            "cmd=/bin/true,movetime=0",
            "cmd=/bin/true,colour=red",
        ] {
            assert!(parse_oracle(bad).is_err(), "{bad}");
        }
    }
}
