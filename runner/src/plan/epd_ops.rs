//! The EPD operations of test suites: `bm` (best moves: the position is solved by playing one of
//! them) and `am` (avoid moves: solved by playing none of them), in SAN, read into UCI moves per
//! position (keyed by the normalised FEN that `positions::load_positions` gives).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, EnPassantMode};

use crate::plan::openings::{epd_line_to_fen, position_from_fen};

/// The `bm` and `am` moves of one position, in UCI.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MoveOps {
    pub bm: Vec<String>,
    pub am: Vec<String>,
}

impl MoveOps {
    /// Whether playing `mv` (UCI) solves the position: one of `bm` if any, and none of `am`.
    pub fn solved_by(&self, mv: &str) -> bool {
        (self.bm.is_empty() || self.bm.iter().any(|m| m == mv)) && !self.am.iter().any(|m| m == mv)
    }
}

/// The positions of an EPD file that have `bm` or `am`, by normalised FEN. A PGN file, or an
/// EPD without such operations, gives an empty map. A SAN move that is not legal in its
/// position is an error naming the line.
pub fn load_move_ops(path: &Path) -> Result<HashMap<String, MoveOps>> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if ext.as_deref() == Some("pgn") {
        return Ok(HashMap::new());
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read positions {}", path.display()))?;
    let mut out = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('%') {
            continue;
        }
        let ops = line_ops(line).with_context(|| format!("{}: line {}", path.display(), i + 1))?;
        if let Some((fen, ops)) = ops {
            out.insert(fen, ops);
        }
    }
    Ok(out)
}

/// One EPD line's FEN and its `bm`/`am` moves, if it has any.
pub fn line_ops(line: &str) -> Result<Option<(String, MoveOps)>> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let Some(rest) = fields.get(4..).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let rest = rest.join(" ");
    let mut san = (Vec::new(), Vec::new());
    for op in rest.split(';') {
        let mut parts = op.split_whitespace();
        match parts.next() {
            Some("bm") => san.0.extend(parts.map(str::to_string)),
            Some("am") => san.1.extend(parts.map(str::to_string)),
            _ => {}
        }
    }
    if san.0.is_empty() && san.1.is_empty() {
        return Ok(None);
    }
    let fen = epd_line_to_fen(line, Default::default())?;
    let pos = position_from_fen(&fen)?;
    let to_uci = |moves: &[String]| -> Result<Vec<String>> {
        moves
            .iter()
            .map(|s| {
                let token = s.trim_end_matches(['!', '?']);
                let m = SanPlus::from_ascii(token.as_bytes())
                    .map_err(|_| anyhow!("{s:?} is not a move in SAN"))?
                    .san
                    .to_move(&pos)
                    .map_err(|_| anyhow!("{s} is not legal in this position"))?;
                Ok(UciMove::from_move(m, CastlingMode::Standard).to_string())
            })
            .collect()
    };
    let ops = MoveOps { bm: to_uci(&san.0)?, am: to_uci(&san.1)? };
    if ops.bm.is_empty() && ops.am.is_empty() {
        bail!("bm/am without moves");
    }
    let fen = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
    Ok(Some((fen, ops)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn bm_and_am_are_read_as_uci() {
        // A WAC-style line: white mates with Qxf7+ (a capture with check in SAN).
        let (fen, ops) = line_ops(
            "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - bm Qxf7#; id \"mate\";",
        )
        .unwrap()
        .unwrap();
        assert_eq!(ops.bm, ["h5f7"]);
        assert!(fen.ends_with(" w KQkq - 0 1"), "{fen}");
        assert!(ops.solved_by("h5f7") && !ops.solved_by("h5e5"));
        let (_, ops) =
            line_ops("4k3/8/8/8/8/8/8/R3K2R w KQ - am O-O Kd2; c0 \"x\";").unwrap().unwrap();
        assert_eq!(ops.am, ["e1g1", "e1d2"]);
        assert!(ops.solved_by("a1a8") && !ops.solved_by("e1g1"));
        assert_eq!(line_ops("4k3/8/8/8/8/8/8/4K3 w - - id \"none\";").unwrap(), None);
        assert!(line_ops("4k3/8/8/8/8/8/8/4K3 w - - bm Qd8;").is_err(), "no queen: illegal");
        assert!(line_ops("4k3/8/8/8/8/8/8/4K3 w - - bm zz9;").is_err());
    }
}
