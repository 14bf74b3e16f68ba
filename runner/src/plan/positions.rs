//! Test positions for calibration and search experiments: loading a position file, the seed's
//! stage classifier, and the sampler that draws a stage-balanced set from self-play games.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;

use anyhow::{Context, Result, bail};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{Board, Chess, Color, EnPassantMode, Position, Role};

use crate::plan::openings;

/// Game stage as the Crafty seed defines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    Middlegame,
    Endgame,
}

impl Stage {
    pub const ALL: [Stage; 2] = [Stage::Middlegame, Stage::Endgame];

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Middlegame => "middlegame",
            Stage::Endgame => "endgame",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Weighted material of one side, pawns not counted: Q = 9, R = 5, B = N = 3.
pub fn weighted_material(board: &Board, color: Color) -> u32 {
    let count = |role: Role| (board.by_role(role) & board.by_color(color)).count() as u32;
    9 * count(Role::Queen) + 5 * count(Role::Rook) + 3 * (count(Role::Bishop) + count(Role::Knight))
}

/// Seed 000, footnote 2: an endgame is a position where BOTH sides' weighted material is below
/// 15; every other position is a middlegame.
pub fn stage_of(board: &Board) -> Stage {
    if weighted_material(board, Color::White) < 15 && weighted_material(board, Color::Black) < 15 {
        Stage::Endgame
    } else {
        Stage::Middlegame
    }
}

/// One position to search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestPosition {
    /// Index in the position file (0-based, file order).
    pub index: usize,
    /// Full FEN, move counters included.
    pub fen: String,
    pub stage: Stage,
}

/// The project's default position set (see configs/positions/README.md).
pub const DEFAULT_POSITIONS: &str = "configs/positions/default.epd";

/// Positions from `path`, cut to the first `limit`; an empty set is an error.
pub fn positions_for_run(path: &Path, limit: Option<usize>) -> Result<Vec<TestPosition>> {
    if !path.exists() {
        bail!(
            "positions file {} not found: pass --positions FILE (EPD or PGN), or make one with \
             `runner calibrate --sample-from results/RUN/games.jsonl --write-positions FILE`",
            path.display()
        );
    }
    let mut positions = load_positions(path)?;
    if let Some(n) = limit {
        positions.truncate(n);
    }
    if positions.is_empty() {
        bail!("no positions to search in {}", path.display());
    }
    Ok(positions)
}

/// Reads positions from an EPD file (one position per line) or a PGN file (the position at the
/// end of each game's mainline). Each position is validated with shakmaty.
pub fn load_positions(path: &Path) -> Result<Vec<TestPosition>> {
    let book = openings::load_book(path, None, Default::default())?;
    let mut out = Vec::with_capacity(book.len());
    for opening in book {
        let mut pos = openings::position_from_fen(&opening.fen)?;
        for (i, m) in opening.moves.iter().enumerate() {
            pos = play_uci(pos, m).with_context(|| {
                format!("{}: game {}, ply {}", path.display(), opening.id + 1, i + 1)
            })?;
        }
        let fen = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
        out.push(TestPosition { index: out.len(), fen, stage: stage_of(pos.board()) });
    }
    Ok(out)
}

fn play_uci(pos: Chess, uci: &str) -> Result<Chess> {
    let parsed: UciMove = uci.parse().map_err(|_| anyhow::anyhow!("bad UCI move {uci:?}"))?;
    let m = parsed.to_move(&pos).map_err(|_| anyhow::anyhow!("illegal move {uci}"))?;
    let mut pos = pos;
    pos.play_unchecked(m);
    Ok(pos)
}

/// How to draw positions from games.
#[derive(Clone, Debug)]
pub struct SampleOptions {
    /// Number of positions wanted.
    pub count: usize,
    /// Seed of the random draw.
    pub seed: u64,
    /// Plies skipped at the start of each game (both games of a pair begin alike).
    pub skip_plies: usize,
}

/// A position drawn from a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampledPosition {
    pub fen: String,
    pub stage: Stage,
    /// 1-based line of the game in games.jsonl.
    pub game: usize,
    /// Plies played from the game's start position.
    pub ply: usize,
}

/// What the sampler saw and kept.
#[derive(Clone, Debug, Default)]
pub struct SampleReport {
    pub games: usize,
    pub bad_lines: usize,
    pub candidates_middlegame: usize,
    pub candidates_endgame: usize,
    pub positions: Vec<SampledPosition>,
}

/// Draws a stage-balanced sample from a runner games.jsonl: every game is replayed from its `fen`
/// through its `moves` (UCI); positions after `skip_plies` that are not in check, not over and
/// not a dead draw by material become candidates, duplicates removed (placement, side, castling,
/// en passant). Half the sample comes from each stage; a stage with too few candidates gives all
/// it has and the other fills the rest. Unreadable lines (e.g. a truncated last line) are counted
/// and skipped; a game with an illegal move contributes the positions before it.
pub fn sample_from_games(path: &Path, opts: &SampleOptions) -> Result<SampleReport> {
    let file = fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut report = SampleReport::default();
    let mut seen = HashSet::new();
    let mut pools: [Vec<SampledPosition>; 2] = [Vec::new(), Vec::new()];
    for (lineno, line) in BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let Some((fen, moves)) = game_line(&line) else {
            report.bad_lines += 1;
            continue;
        };
        let Ok(mut pos) = openings::position_from_fen(&fen) else {
            report.bad_lines += 1;
            continue;
        };
        report.games += 1;
        for (ply, m) in moves.iter().enumerate() {
            pos = match play_uci(pos, m) {
                Ok(p) => p,
                Err(_) => break,
            };
            let ply = ply + 1;
            if ply < opts.skip_plies
                || pos.is_check()
                || pos.is_game_over()
                || pos.is_insufficient_material()
            {
                continue;
            }
            let fen = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
            let key: String = fen.split(' ').take(4).collect::<Vec<_>>().join(" ");
            if !seen.insert(key) {
                continue;
            }
            let stage = stage_of(pos.board());
            if let Some(pool) = pools.get_mut(stage as usize) {
                pool.push(SampledPosition { fen, stage, game: lineno + 1, ply });
            }
        }
    }
    report.candidates_middlegame = pools[0].len();
    report.candidates_endgame = pools[1].len();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    for pool in &mut pools {
        pool.shuffle(&mut rng);
    }
    let (mid, end) = balanced_counts(opts.count, pools[0].len(), pools[1].len());
    let [mut mids, mut ends] = pools;
    mids.truncate(mid);
    ends.truncate(end);
    let mut out = mids;
    out.extend(ends);
    // Shuffled again so that any prefix of the file (a run stopped early) is balanced too.
    out.shuffle(&mut rng);
    report.positions = out;
    Ok(report)
}

/// How many middlegame and endgame positions to take for `count` positions in total.
pub fn balanced_counts(count: usize, mids: usize, ends: usize) -> (usize, usize) {
    let end = ends.min(count / 2);
    let mid = mids.min(count - end);
    let end = ends.min(count - mid);
    (mid, end)
}

/// What the sampler reads of a games.jsonl line: the start position and every move of
/// `store::GameRecord` (a store test reads a record through this type, so a field renamed there
/// fails it).
#[derive(Debug, Deserialize)]
pub struct GameMoves {
    pub fen: String,
    /// Book moves first, as the runner stores them.
    #[serde(default)]
    pub moves: Vec<String>,
}

fn game_line(line: &str) -> Option<(String, Vec<String>)> {
    let g: GameMoves = serde_json::from_str(line).ok()?;
    Some((g.fen, g.moves))
}

/// Sampled positions as EPD text: `board side castling ep hmvc N; fmvn N; id "..."; c0
/// "stage";`, after `header` as `#` comment lines.
pub fn epd_text(positions: &[SampledPosition], header: &str) -> Result<String> {
    let mut text = String::new();
    for line in header.lines() {
        text.push_str("# ");
        text.push_str(line);
        text.push('\n');
    }
    for p in positions {
        let f: Vec<&str> = p.fen.split(' ').collect();
        let [board, side, castling, en_passant, half, full] = f.as_slice() else {
            bail!("internal: FEN without counters {:?}", p.fen);
        };
        text.push_str(&format!(
            "{board} {side} {castling} {en_passant} hmvc {half}; fmvn {full}; id \"g{}p{}\"; c0 \"{}\";\n",
            p.game, p.ply, p.stage
        ));
    }
    Ok(text)
}

/// Parses a FEN into a shakmaty position (standard or Chess960 castling).
pub fn chess_from_fen(fen: &str) -> Result<Chess> {
    openings::position_from_fen(fen)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn board(fen: &str) -> Board {
        chess_from_fen(fen).unwrap().board().clone()
    }

    #[test]
    fn stage_follows_the_seed_rule() {
        // Start position: 31 per side.
        let start = board(openings::STARTPOS_FEN);
        assert_eq!(weighted_material(&start, Color::White), 31);
        assert_eq!(stage_of(&start), Stage::Middlegame);
        // Q+B (12) vs R+B (8), pawns do not count: endgame.
        assert_eq!(stage_of(&board("3qk3/pppb4/8/8/8/8/PPPPPPPP/2BRK3 w - - 0 1")), Stage::Endgame);
        // R+R+N (13) vs Q+B (12): endgame.
        assert_eq!(stage_of(&board("4k3/8/3qb3/8/8/8/8/RR2KN2 w - - 0 1")), Stage::Endgame);
        // Exactly 15 on one side (R+R+B+... = Q+B+B) is not below 15: middlegame.
        assert_eq!(stage_of(&board("4k3/8/2bqb3/8/8/8/8/4K3 w - - 0 1")), Stage::Middlegame);
        // Both below 15 except one side with 15: still middlegame (BOTH must be below).
        assert_eq!(stage_of(&board("4k3/8/3n4/8/8/8/8/1NBQK3 w - - 0 1")), Stage::Middlegame);
        // Bare kings with pawns.
        assert_eq!(stage_of(&board("4k3/pppp4/8/8/8/8/PPPP4/4K3 w - - 0 1")), Stage::Endgame);
    }

    #[test]
    fn balanced_counts_fill_from_the_other_stage() {
        assert_eq!(balanced_counts(100, 500, 500), (50, 50));
        assert_eq!(balanced_counts(100, 500, 10), (90, 10));
        assert_eq!(balanced_counts(100, 20, 500), (20, 80));
        assert_eq!(balanced_counts(100, 20, 30), (20, 30));
        assert_eq!(balanced_counts(7, 100, 100), (4, 3));
    }

    #[test]
    fn sampler_replays_games_dedups_and_balances() {
        let dir = std::env::temp_dir().join(format!("calib-sampler-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let games = dir.join("games.jsonl");
        // Game 1: a few opening moves. Game 2: the same moves (duplicates). Game 3: an endgame
        // from a FEN. A truncated line at the end.
        let opening = r#"["e2e4","e7e5","g1f3","b8c6","f1b5","a7a6"]"#;
        let text = format!(
            "{{\"fen\":\"{s}\",\"moves\":{opening}}}\n{{\"fen\":\"{s}\",\"moves\":{opening}}}\n\
             {{\"fen\":\"4k3/8/8/8/8/8/4P3/R3K3 w - - 0 40\",\"moves\":[\"a1a7\",\"e8f8\",\"e1f2\",\"f8g8\"]}}\n\
             {{\"fen\":\"{s}\",\"mov",
            s = openings::STARTPOS_FEN
        );
        fs::write(&games, text).unwrap();
        let opts = SampleOptions { count: 100, seed: 1, skip_plies: 2 };
        let rep = sample_from_games(&games, &opts).unwrap();
        assert_eq!((rep.games, rep.bad_lines), (3, 1));
        // Plies 2..=6 of the opening (5 positions, once each) + plies 2..=4 of the endgame.
        assert_eq!(rep.candidates_middlegame, 5);
        assert_eq!(rep.candidates_endgame, 3);
        assert_eq!(rep.positions.len(), 8);
        let again = sample_from_games(&games, &opts).unwrap();
        assert_eq!(rep.positions, again.positions, "seeded draw is deterministic");
        let small = sample_from_games(&games, &SampleOptions { count: 4, ..opts }).unwrap();
        let ends = small.positions.iter().filter(|p| p.stage == Stage::Endgame).count();
        assert_eq!((small.positions.len(), ends), (4, 2));

        let epd = dir.join("set.epd");
        fs::write(&epd, epd_text(&small.positions, "made by a test").unwrap()).unwrap();
        let loaded = load_positions(&epd).unwrap();
        assert_eq!(loaded.len(), 4);
        for (l, s) in loaded.iter().zip(&small.positions) {
            assert_eq!((&l.fen, l.stage), (&s.fen, s.stage));
        }
        fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn pgn_positions_are_the_end_of_the_mainline() {
        let dir = std::env::temp_dir().join(format!("calib-pgn-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let pgn = dir.join("p.pgn");
        fs::write(&pgn, "[Event \"x\"]\n\n1. e4 e5 2. Nf3 *\n").unwrap();
        let loaded = load_positions(&pgn).unwrap();
        assert_eq!(loaded[0].fen, "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2");
        fs::remove_dir_all(&dir).ok();
    }
}
