//! Syzygy tablebase adjudication (`--tb`): the tables of this machine, checked before any game,
//! and the probe after each engine move that decides whether the game is over.
//!
//! The fifty-move rule. Syzygy WDL tables hold five values for a position reached by a capture
//! or a pawn move (halfmove clock 0): win, cursed win (a win only without the fifty-move rule),
//! draw, blessed loss, loss. So WDL alone is exact at halfmove clock 0. The rule can only turn
//! a win into a draw, never a draw into anything else, and fewer plies left can only make a
//! cursed win more cursed: a draw, cursed win or blessed loss is a draw at any halfmove clock.
//! A win or a loss at a clock above 0 needs the DTZ value (the plies to the next capture or
//! pawn move under best play) to know whether it still fits in the plies left. Hence, without
//! `--tbignore50`:
//! - draw, cursed win, blessed loss: a draw, at any clock;
//! - win, loss at clock 0: decided;
//! - win, loss at a clock above 0: decided when the DTZ table is there and says so without
//!   doubt (shakmaty-syzygy's `AmbiguousWdl`: DTZ plus the clock within 100 plies; beyond,
//!   a draw); when the DTZ table is missing or its rounding leaves a doubt, the game goes on
//!   and is looked at again after the next move (at the latest, the next capture or pawn move
//!   sets the clock to 0). Nothing is decided on a guess.
//!
//! With `--tbignore50` the fifty-move rule is left out of the adjudication (fastchess's and
//! cutechess-cli's meaning): cursed wins are wins and blessed losses losses, at any clock. The
//! game itself still ends by the rule if it comes first.
//!
//! Positions with castling rights are not in the tables and are not probed. A position the
//! tables cannot answer (a table missing or failing to read) is not adjudicated: one line of
//! warning per table, the game goes on.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Result, anyhow, bail};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};
use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, FromSetup, Piece, Position, Role, Square,
};
use shakmaty_syzygy::{AmbiguousWdl, Metric, SyzygyError, Tablebase, Wdl};

use crate::plan::adjudication::{TablebaseRule, TbAdjudicate};

/// The five WDL values of a Syzygy table, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TbWdl {
    Loss,
    BlessedLoss,
    Draw,
    CursedWin,
    Win,
}

impl From<Wdl> for TbWdl {
    fn from(w: Wdl) -> TbWdl {
        match w {
            Wdl::Loss => TbWdl::Loss,
            Wdl::BlessedLoss => TbWdl::BlessedLoss,
            Wdl::Draw => TbWdl::Draw,
            Wdl::CursedWin => TbWdl::CursedWin,
            Wdl::Win => TbWdl::Win,
        }
    }
}

impl TbWdl {
    pub fn as_str(self) -> &'static str {
        match self {
            TbWdl::Loss => "loss",
            TbWdl::BlessedLoss => "blessed-loss",
            TbWdl::Draw => "draw",
            TbWdl::CursedWin => "cursed-win",
            TbWdl::Win => "win",
        }
    }
}

/// What the tables said about the final position of a game they ended (games.jsonl
/// `tablebase`): its WDL value for the side to move (`turn`), as the WDL table stores it
/// (the value after a capture or pawn move), its piece count and its halfmove clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TbProbe {
    pub wdl: TbWdl,
    #[serde(with = "color_name")]
    pub turn: Color,
    pub pieces: u32,
    pub halfmoves: u32,
}

mod color_name {
    use serde::{Deserialize, Deserializer, Serializer};
    use shakmaty::Color;

    pub fn serialize<S: Serializer>(c: &Color, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(if *c == Color::White { "white" } else { "black" })
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Color, D::Error> {
        match String::deserialize(d)?.as_str() {
            "white" => Ok(Color::White),
            "black" => Ok(Color::Black),
            _ => Err(serde::de::Error::custom("white or black")),
        }
    }
}

/// The Syzygy tables of this machine, shared by every game of a run.
#[derive(Clone)]
pub struct Tables {
    inner: Arc<Inner>,
}

struct Inner {
    tb: Tablebase<Chess>,
    /// `--tb` as given.
    paths: String,
    /// The most pieces of any WDL table found.
    max_pieces: u32,
    /// Whether any DTZ table (`.rtbz`) was found.
    has_dtz: bool,
    /// Warnings already printed (one per table).
    warned: Mutex<BTreeSet<String>>,
}

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tables({:?}, {} pieces)", self.inner.paths, self.inner.max_pieces)
    }
}

/// A game's adjudication by the tables: the winner (`None`: a draw) and what they said.
pub type TbDecision = (Option<Color>, TbProbe);

impl Tables {
    /// The tables in the folders of `paths` (`:`-separated). Every folder must exist and be
    /// readable; together they must hold at least one WDL table.
    pub fn open(paths: &str) -> Result<Tables> {
        let mut tb = Tablebase::<Chess>::new();
        let mut max_pieces = 0u32;
        let mut has_dtz = false;
        let dirs: Vec<&str> = paths.split(':').filter(|p| !p.is_empty()).collect();
        if dirs.is_empty() {
            bail!("--tb: no folder given");
        }
        for dir in &dirs {
            let path = Path::new(dir);
            tb.add_directory(path).map_err(|e| anyhow!("--tb {dir}: {e}"))?;
            for entry in std::fs::read_dir(path).map_err(|e| anyhow!("--tb {dir}: {e}"))? {
                let p: PathBuf = entry.map_err(|e| anyhow!("--tb {dir}: {e}"))?.path();
                let Some(stem) = p.file_stem().and_then(|s| s.to_str()) else { continue };
                match p.extension().and_then(|s| s.to_str()) {
                    Some("rtbw") => {
                        let n = stem.chars().filter(|c| c.is_ascii_uppercase()).count() as u32;
                        max_pieces = max_pieces.max(n);
                    }
                    Some("rtbz") => has_dtz = true,
                    _ => {}
                }
            }
        }
        if max_pieces == 0 {
            bail!("--tb {paths}: no Syzygy WDL tables (*.rtbw) there");
        }
        let inner =
            Inner { tb, paths: paths.to_string(), max_pieces, has_dtz, warned: Mutex::default() };
        Ok(Tables { inner: Arc::new(inner) })
    }

    /// The most pieces of any WDL table found.
    pub fn max_pieces(&self) -> u32 {
        self.inner.max_pieces
    }

    /// Whether any DTZ table was found.
    pub fn has_dtz(&self) -> bool {
        self.inner.has_dtz
    }

    /// Checks, before any game, that the tables cover `rule`: a WDL table for every material
    /// of at most `rule.pieces` pieces, each readable (one seeded position of each is probed,
    /// which opens and checks the table's header). `Err` names the first table missing or
    /// unreadable.
    pub fn check_covers(&self, rule: &TablebaseRule) -> Result<()> {
        let paths = &self.inner.paths;
        if rule.pieces > self.inner.max_pieces {
            bail!(
                "--tb {paths} holds tables up to {} pieces, --tbpieces {} asks for more",
                self.inner.max_pieces,
                rule.pieces
            );
        }
        let mut rng = ChaCha8Rng::seed_from_u64(47);
        for (white, black) in materials(rule.pieces) {
            let name = material_name(&white, &black);
            let Some(pos) = random_position(&white, &black, &mut rng) else { continue };
            match self.inner.tb.probe_wdl_after_zeroing(&pos) {
                Ok(_) => {}
                Err(SyzygyError::MissingTable { .. }) => {
                    bail!("--tb {paths} has no WDL table for {name} (--tbpieces {})", rule.pieces)
                }
                Err(e) => bail!("--tb {paths}: table {name} cannot be read: {e}"),
            }
        }
        Ok(())
    }

    /// The tables' verdict on `pos` under `rule`, when it ends the game (see the module's doc).
    pub fn adjudicate(&self, pos: &Chess, rule: &TablebaseRule) -> Option<TbDecision> {
        if pos.castles().any() {
            return None;
        }
        let pieces = pos.board().occupied().count() as u32;
        if pieces > rule.pieces.min(self.inner.max_pieces) {
            return None;
        }
        let wdl = match self.inner.tb.probe_wdl_after_zeroing(pos) {
            Ok(w) => w,
            Err(e) => {
                self.warn(&e, "no tablebase adjudication of its positions");
                return None;
            }
        };
        let turn = pos.turn();
        let halfmoves = pos.halfmoves();
        let probe = TbProbe { wdl: wdl.into(), turn, pieces, halfmoves };
        // The result for the side to move: 1 win, 0 draw, -1 loss.
        let score = if rule.ignore50 {
            wdl.signum()
        } else {
            match wdl {
                Wdl::Draw | Wdl::CursedWin | Wdl::BlessedLoss => 0,
                Wdl::Win | Wdl::Loss if halfmoves == 0 => wdl.signum(),
                Wdl::Win | Wdl::Loss => self.with_clock(pos)?,
            }
        };
        let winner = match score {
            0 => None,
            s if s > 0 => Some(turn),
            _ => Some(!turn),
        };
        let wanted = match rule.adjudicate {
            TbAdjudicate::Both => true,
            TbAdjudicate::WinLoss => winner.is_some(),
            TbAdjudicate::Draw => winner.is_none(),
        };
        wanted.then_some((winner, probe))
    }

    /// A won or lost position at a halfmove clock above 0, by its DTZ value: `None` when there
    /// is no DTZ table or it leaves a doubt.
    fn with_clock(&self, pos: &Chess) -> Option<i32> {
        if !self.inner.has_dtz {
            return None;
        }
        match self.inner.tb.probe_wdl(pos) {
            Ok(AmbiguousWdl::Win) => Some(1),
            Ok(AmbiguousWdl::Loss) => Some(-1),
            Ok(AmbiguousWdl::MaybeWin | AmbiguousWdl::MaybeLoss) => None,
            Ok(AmbiguousWdl::CursedWin | AmbiguousWdl::BlessedLoss | AmbiguousWdl::Draw) => Some(0),
            Err(e) => {
                self.warn(
                    &e,
                    "its wins and losses are adjudicated only after a capture or pawn move",
                );
                None
            }
        }
    }

    /// One line per table on stderr, the first time it fails.
    fn warn(&self, e: &SyzygyError, what: &str) {
        let key = match e {
            SyzygyError::MissingTable { metric, material }
            | SyzygyError::ProbeFailed { metric, material, .. } => format!("{metric} {material}"),
            other => other.to_string(),
        };
        let first = self.inner.warned.lock().map(|mut w| w.insert(key)).unwrap_or(false);
        if first {
            let e = match e {
                SyzygyError::ProbeFailed {
                    metric: m @ (Metric::Wdl | Metric::Dtz),
                    material,
                    ..
                } => {
                    format!("{m} table {material} cannot be read")
                }
                other => other.to_string(),
            };
            errln!("warning: tablebase: {e}: {what}");
        }
    }
}

/// Every material of 3 to `pieces` pieces, kings included: the pieces besides the kings of
/// White and of Black, strongest first (both colourings of each table).
pub fn materials(pieces: u32) -> Vec<(Vec<Role>, Vec<Role>)> {
    const ROLES: [Role; 5] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight, Role::Pawn];
    fn multisets(k: usize, from: usize, acc: &mut Vec<Role>, out: &mut Vec<Vec<Role>>) {
        if k == 0 {
            out.push(acc.clone());
            return;
        }
        for (i, &role) in ROLES.iter().enumerate().skip(from) {
            acc.push(role);
            multisets(k - 1, i, acc, out);
            acc.pop();
        }
    }
    let mut all = Vec::new();
    for extra in 1..=pieces.saturating_sub(2) as usize {
        for w in 0..=extra {
            let (mut ws, mut bs) = (Vec::new(), Vec::new());
            multisets(w, 0, &mut Vec::new(), &mut ws);
            multisets(extra - w, 0, &mut Vec::new(), &mut bs);
            for a in &ws {
                for b in &bs {
                    all.push((a.clone(), b.clone()));
                }
            }
        }
    }
    all
}

/// `KQvKR`.
pub fn material_name(white: &[Role], black: &[Role]) -> String {
    let side: fn(&[Role]) -> String =
        |r| std::iter::once('K').chain(r.iter().map(|r| r.upper_char())).collect();
    format!("{}v{}", side(white), side(black))
}

/// A legal position with this material, either side to move, no castling, no en passant:
/// `None` when a thousand seeded tries found none (never for real materials).
pub fn random_position(white: &[Role], black: &[Role], rng: &mut ChaCha8Rng) -> Option<Chess> {
    for _ in 0..1000 {
        let mut board = Board::empty();
        let mut taken = Bitboard::EMPTY;
        let mut ok = true;
        let all = [(Color::White, Role::King)]
            .into_iter()
            .chain(white.iter().map(|&r| (Color::White, r)))
            .chain([(Color::Black, Role::King)])
            .chain(black.iter().map(|&r| (Color::Black, r)));
        for (color, role) in all {
            let sq = Square::new(rng.random_range(0..64));
            if taken.contains(sq) || (role == Role::Pawn && matches!(sq.rank() as u32, 0 | 7)) {
                ok = false;
                break;
            }
            taken.add(sq);
            board.set_piece_at(sq, Piece { color, role });
        }
        if !ok {
            continue;
        }
        let turn = if rng.random_range(0..2) == 0 { Color::White } else { Color::Black };
        let mut setup = shakmaty::Setup::empty();
        setup.board = board;
        setup.turn = turn;
        if let Ok(pos) = Chess::from_setup(setup, CastlingMode::Standard) {
            return Some(pos);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::plan::openings::position_from_fen;

    fn repo_tables() -> Tables {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/syzygy");
        Tables::open(dir).unwrap()
    }

    fn rule(pieces: u32, ignore50: bool, adjudicate: TbAdjudicate) -> TablebaseRule {
        TablebaseRule { pieces, ignore50, adjudicate }
    }

    /// (winner, WDL) of the tables' decision on `fen`, None when the game goes on.
    fn decide(t: &Tables, fen: &str, r: TablebaseRule) -> Option<(Option<Color>, TbWdl)> {
        let pos = position_from_fen(fen).unwrap();
        t.adjudicate(&pos, &r).map(|(w, p)| (w, p.wdl))
    }

    #[test]
    fn the_repositorys_tables_cover_four_pieces_not_five() {
        let t = repo_tables();
        assert_eq!((t.max_pieces(), t.has_dtz()), (4, true));
        t.check_covers(&rule(4, false, TbAdjudicate::Both)).unwrap();
        let e = t.check_covers(&rule(5, false, TbAdjudicate::Both)).unwrap_err().to_string();
        assert!(e.contains("holds tables up to 4 pieces, --tbpieces 5 asks for more"), "{e}");
        assert!(
            Tables::open("/nonexistent").unwrap_err().to_string().contains("--tb /nonexistent")
        );
        assert!(Tables::open("").unwrap_err().to_string().contains("no folder"));
    }

    /// The fifty-move rule as the module's doc says: decisive at clock 0; above 0 by DTZ (a
    /// queen mates well within 100 plies from clock 10, not from clock 99); draws at any clock;
    /// with --tbignore50 the clock does not matter.
    #[test]
    fn results_under_the_fifty_move_rule() {
        let t = repo_tables();
        let both = rule(4, false, TbAdjudicate::Both);
        let (w, b) = (Some(Color::White), Some(Color::Black));
        let kqk = "4k3/8/8/8/8/8/8/3QK3 w - - 0 1";
        assert_eq!(decide(&t, kqk, both), Some((w, TbWdl::Win)));
        let kqk_black = "4k3/8/8/8/8/8/8/3QK3 b - - 0 1";
        assert_eq!(decide(&t, kqk_black, both), Some((w, TbWdl::Loss)));
        assert_eq!(decide(&t, "4K3/8/8/8/8/8/8/3qk3 w - - 10 1", both), Some((b, TbWdl::Loss)));
        assert_eq!(decide(&t, "4k3/8/8/8/8/8/8/3QK3 w - - 99 60", both), Some((None, TbWdl::Win)));
        let ignore = rule(4, true, TbAdjudicate::Both);
        assert_eq!(decide(&t, "4k3/8/8/8/8/8/8/3QK3 w - - 99 60", ignore), Some((w, TbWdl::Win)));
        let krkr = "4k3/4r3/8/8/8/8/4R3/4K3 w - - 57 40";
        assert_eq!(decide(&t, krkr, both), Some((None, TbWdl::Draw)));
        // Castling rights: not in the tables. More pieces than --tbpieces: not probed.
        assert_eq!(decide(&t, "r3k3/8/8/8/8/8/8/4K2R w Kq - 0 1", both), None);
        assert_eq!(decide(&t, krkr, rule(3, false, TbAdjudicate::Both)), None);
        // --tbadjudicate: only the results asked for.
        assert_eq!(decide(&t, kqk, rule(4, false, TbAdjudicate::Draw)), None);
        assert_eq!(decide(&t, krkr, rule(4, false, TbAdjudicate::WinLoss)), None);
        assert_eq!(decide(&t, krkr, rule(4, false, TbAdjudicate::Draw)), Some((None, TbWdl::Draw)));
    }

    #[test]
    fn probes_serialize_with_colour_names() {
        let p = TbProbe { wdl: TbWdl::CursedWin, turn: Color::Black, pieces: 5, halfmoves: 3 };
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json, r#"{"wdl":"cursed-win","turn":"black","pieces":5,"halfmoves":3}"#);
        assert_eq!(serde_json::from_str::<TbProbe>(&json).unwrap(), p);
    }

    #[test]
    fn materials_of_four_pieces() {
        let m = materials(4);
        let names: Vec<String> = m.iter().map(|(w, b)| material_name(w, b)).collect();
        // 3 pieces: 5 each way; 4 pieces: 15 + 25 + 15.
        assert_eq!(names.len(), 10 + 55);
        for n in ["KQvK", "KvKP", "KQvKR", "KRvKQ", "KPPvK", "KvKNN"] {
            assert!(names.contains(&n.to_string()), "{n}");
        }
    }

    #[test]
    fn random_positions_are_legal_and_seeded() {
        let mut a = ChaCha8Rng::seed_from_u64(1);
        let mut b = ChaCha8Rng::seed_from_u64(1);
        let p = random_position(&[Role::Pawn], &[Role::Rook], &mut a).unwrap();
        let q = random_position(&[Role::Pawn], &[Role::Rook], &mut b).unwrap();
        assert_eq!(p, q);
        assert_eq!(p.board().occupied().count(), 4);
    }
}
