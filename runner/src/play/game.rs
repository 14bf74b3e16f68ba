//! Playing one game between two running engines: clocks, legality, endings, adjudication.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position};

use crate::plan::adjudication::Adjudication;
use crate::plan::limits::{EngineLimits, SideLimit};
use crate::plan::openings::{Opening, position_for};
use crate::plan::run_plan::RunPlan;
use crate::plan::time_control::TimeControl;
use crate::plan::variant::Variant;
use crate::play::adjudication::{Adjudicator, MovePlayed};
use crate::play::clock::Clock;
use crate::play::tablebase::{Tables, TbProbe};
use crate::play::termination::Termination;
use crate::play::uci::{UciEngine, UciError, position_command};
use crate::play::uci_info::Eval;

/// Game result from White's point of view, in PGN notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GameResult {
    #[serde(rename = "1-0")]
    WhiteWins,
    #[serde(rename = "0-1")]
    BlackWins,
    #[serde(rename = "1/2-1/2")]
    Draw,
}

impl GameResult {
    pub fn pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }

    pub fn from_winner(winner: Option<Color>) -> GameResult {
        match winner {
            Some(Color::White) => GameResult::WhiteWins,
            Some(Color::Black) => GameResult::BlackWins,
            None => GameResult::Draw,
        }
    }
}

/// Settings shared by every game of a run (of a pairing: `tc` is the pairing's). Engines with
/// limits of their own (`--engine ...,tc=,nodes=`) use theirs instead ([`GameSettings::side`]).
#[derive(Clone, Debug)]
pub struct GameSettings {
    pub tc: TimeControl,
    /// Node and depth caps beside `tc` (`--tc 10+0.1 --nodes 50000`).
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    /// How far below zero a clock may go before the side loses on time.
    pub margin: Duration,
    pub adjudication: Adjudication,
    /// Longest wait for `readyok`, and for `bestmove` under node or depth limits.
    pub stall_timeout: Duration,
    /// Chess960 reads the opening for Chess960 and writes castling king-takes-rook.
    pub variant: Variant,
    /// `--wait`: the pause of a game slot after each game.
    pub wait: Duration,
    /// This machine's Syzygy tables, for a plan with a tablebase rule (`--tb PATH`); set by
    /// [`GameSettings::with_tables`].
    pub tables: Option<Tables>,
}

impl GameSettings {
    /// These settings with a pairing's own time control, if it has one (`tc=` of a gauntlet's
    /// engine).
    pub fn with_pairing_tc(&self, tc: Option<TimeControl>) -> GameSettings {
        match tc {
            Some(tc) => GameSettings { tc, ..self.clone() },
            None => self.clone(),
        }
    }

    /// The settings of the games of `plan`; `stall_timeout` is the run's `--stall-timeout`.
    pub fn of_plan(plan: &RunPlan, stall_timeout: Duration) -> GameSettings {
        GameSettings {
            tc: plan.tc,
            nodes: plan.nodes,
            depth: plan.depth,
            margin: Duration::from_millis(plan.timemargin_ms),
            adjudication: plan.adjudication,
            stall_timeout,
            variant: plan.variant,
            wait: Duration::from_millis(plan.scheduling.wait_ms),
            tables: None,
        }
    }

    /// These settings with the tables at `--tb` (`tb`), checked against the plan's tablebase
    /// rule before any game: a plan with the rule and no tables, or tables that do not cover
    /// it, is an error (a game is never played without the adjudication it asked for).
    pub fn with_tables(mut self, tb: Option<&Tables>) -> anyhow::Result<GameSettings> {
        match (self.adjudication.tablebase, tb) {
            (Some(rule), Some(t)) => {
                t.check_covers(&rule)?;
                self.tables = Some(t.clone());
            }
            (Some(rule), None) => anyhow::bail!(
                "the run asks for tablebase adjudication ({}): give --tb PATH",
                rule.describe()
            ),
            (None, Some(_)) => anyhow::bail!("--tb is given but the run has no tablebase rule"),
            (None, None) => {}
        }
        Ok(self)
    }

    /// What an engine with limits `own` may use in a game with these settings.
    pub fn side(&self, own: &EngineLimits) -> SideLimit {
        let margin = u64::try_from(self.margin.as_millis()).unwrap_or(u64::MAX);
        SideLimit::resolve(SideLimit::of_run(self.tc, self.nodes, self.depth, margin), own)
    }
}

/// One engine move and what the runner measured around it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveInfo {
    /// The move in standard UCI notation.
    pub uci: String,
    pub eval: Option<Eval>,
    pub depth: Option<u32>,
    /// Runner-measured thinking time (from `go` flushed to `bestmove` read), microseconds.
    pub time_us: u64,
    /// Time the engine reported in its last info line, ms.
    pub engine_time_ms: Option<u64>,
    /// From reading the opponent's `bestmove` to flushing this `go`, microseconds (the
    /// runner's own turnaround; none for the first move).
    pub turnaround_us: Option<u64>,
    /// What else the engine's last scored `info` line said (for `--pgnout`'s fields).
    #[serde(default)]
    pub extra: MoveExtra,
}

/// The fields of a move's last scored `info` line beyond score and depth, and the mover's clock
/// after the move: what `--pgnout nodes=,seldepth=,nps=,hashfull=,pv=,timeleft=` write.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveExtra {
    pub seldepth: Option<u32>,
    pub nodes: Option<u64>,
    pub nps: Option<u64>,
    pub hashfull: Option<u32>,
    pub pv: Option<String>,
    /// The mover's clock after the move (increment added), ms; none without a clock.
    pub timeleft_ms: Option<u64>,
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct GameOutcome {
    pub result: GameResult,
    pub termination: Termination,
    /// Book moves played from the opening's FEN before the engines took over.
    pub book_moves: Vec<String>,
    pub moves: Vec<MoveInfo>,
    /// The side whose engine faulted (it must be restarted before it plays again).
    pub faulty: Option<Color>,
    /// The move the engine sent when it was illegal, for the record.
    pub illegal_move: Option<String>,
    /// How the flag fell, for time forfeits.
    pub forfeit: Option<Forfeit>,
    pub duration: Duration,
    /// What White and Black could use.
    pub limits: [SideLimit; 2],
    /// What the tables said, for a game they ended.
    pub tablebase: Option<TbProbe>,
}

/// A flag fall as the runner saw it, so that a forfeit can be checked from the record alone:
/// the side lost (or drew, against a side that cannot mate) because `think_ms` went past
/// `clock_ms + margin_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Forfeit {
    /// How long the flagging move took (runner-measured from `go`; the wait, when no
    /// `bestmove` came before the flag).
    pub think_ms: f64,
    /// What its clock held before the move (the move time, under `--st`).
    pub clock_ms: f64,
    pub margin_ms: f64,
}

/// How a game ended: the result, why, the side whose engine faulted and the illegal move sent.
struct Ending {
    result: GameResult,
    termination: Termination,
    faulty: Option<Color>,
    illegal_move: Option<String>,
    forfeit: Option<Forfeit>,
    tablebase: Option<TbProbe>,
}

impl Ending {
    /// An ending by the rules or by adjudication (`winner` `None`: a draw).
    fn decided(termination: Termination, winner: Option<Color>) -> Ending {
        Ending {
            result: GameResult::from_winner(winner),
            termination,
            faulty: None,
            illegal_move: None,
            forfeit: None,
            tablebase: None,
        }
    }

    /// `side` lost by a fault of its engine.
    fn fault(side: Color, termination: Termination) -> Ending {
        Ending {
            result: GameResult::from_winner(Some(!side)),
            termination,
            faulty: Some(side),
            illegal_move: None,
            forfeit: None,
            tablebase: None,
        }
    }

    /// `side` ran out of time in `pos` (before its move): a loss, or a draw when the opponent
    /// has no mating material left (FIDE Laws of Chess, 6.9).
    fn flag(side: Color, pos: &Chess, forfeit: Forfeit) -> Ending {
        let winner = (!pos.has_insufficient_material(!side)).then_some(!side);
        Ending {
            result: GameResult::from_winner(winner),
            termination: Termination::TimeForfeit,
            faulty: Some(side),
            illegal_move: None,
            forfeit: Some(forfeit),
            tablebase: None,
        }
    }
}

/// The position of a game and the moves that led to it from the opening's FEN.
struct Board {
    pos: Chess,
    history: Vec<Zobrist64>,
    played: Vec<String>,
    /// How castling is written on the pipe: e1g1, or king takes rook (e1h1) in Chess960.
    mode: CastlingMode,
}

impl Board {
    /// The opening's position after its book moves; an illegal book move is an error.
    fn from_opening(opening: &Opening, variant: Variant) -> anyhow::Result<Board> {
        let pos: Chess = position_for(&opening.fen, variant)?;
        let history = vec![pos.zobrist_hash(EnPassantMode::Legal)];
        let played = Vec::with_capacity(opening.moves.len() + 160);
        let mut board = Board { pos, history, played, mode: variant.castling_mode() };
        for m in &opening.moves {
            let mv =
                m.parse::<UciMove>().ok().and_then(|u| u.to_move(&board.pos).ok()).ok_or_else(
                    || anyhow::anyhow!("book move {m} is illegal in opening {}", opening.id),
                )?;
            board.play(mv);
        }
        Ok(board)
    }

    /// Plays a legal move; returns it in the variant's UCI notation.
    fn play(&mut self, mv: shakmaty::Move) -> String {
        self.pos.play_unchecked(mv);
        self.history.push(self.pos.zobrist_hash(EnPassantMode::Legal));
        let uci = UciMove::from_move(mv, self.mode).to_string();
        self.played.push(uci.clone());
        uci
    }

    fn rules_ending(&self) -> Option<Ending> {
        rules_ending(&self.pos, &self.history).map(|(t, winner)| Ending::decided(t, winner))
    }
}

/// Plays one game from `opening`. Engine faults are losses for the faulting side, never errors;
/// an error means the opening itself is unusable.
pub async fn play_game(
    white: &mut UciEngine,
    black: &mut UciEngine,
    opening: &Opening,
    settings: &GameSettings,
) -> anyhow::Result<GameOutcome> {
    let started = Instant::now();
    let limits = [settings.side(white.limits()), settings.side(black.limits())];
    let mut board = Board::from_opening(opening, settings.variant)?;
    let book_moves = board.played.clone();
    let mut moves: Vec<MoveInfo> = Vec::with_capacity(160);
    let finish = |e: Ending, moves| GameOutcome {
        result: e.result,
        termination: e.termination,
        book_moves: book_moves.clone(),
        moves,
        faulty: e.faulty,
        illegal_move: e.illegal_move,
        forfeit: e.forfeit,
        duration: started.elapsed(),
        limits,
        tablebase: e.tablebase,
    };
    // Both engines get ready; one that cannot loses the game.
    for (color, eng) in [(Color::White, &mut *white), (Color::Black, &mut *black)] {
        if let Err(e) = eng.new_game(settings.stall_timeout).await {
            return Ok(finish(Ending::fault(color, fault_kind(&e, false)), moves));
        }
    }
    if let Some(end) = board.rules_ending() {
        return Ok(finish(end, moves));
    }
    let mut clocks = limits.map(|l| Clock::new(l.clock));
    let mut adjudicator = Adjudicator::new(settings.adjudication);
    let tablebase = settings.adjudication.tablebase.zip(settings.tables.as_ref());
    let mut last_reply_at: Option<Instant> = None;
    loop {
        let side = board.pos.turn();
        let eng = match side {
            Color::White => &mut *white,
            Color::Black => &mut *black,
        };
        let turn =
            engine_move(eng, &mut clocks, &limits, &board, opening, settings, &mut last_reply_at);
        let (mv, record) = match turn.await {
            Ok(m) => m,
            Err(end) => return Ok(finish(end, moves)),
        };
        let eval = record.eval;
        let uci = board.play(mv);
        moves.push(MoveInfo { uci, ..record });
        if let Some(end) = board.rules_ending() {
            return Ok(finish(end, moves));
        }
        if let Some((rule, tables)) = tablebase
            && let Some((winner, probe)) = tables.adjudicate(&board.pos, &rule)
        {
            let mut end = Ending::decided(Termination::AdjudicationTablebase, winner);
            end.tablebase = Some(probe);
            return Ok(finish(end, moves));
        }
        let played = MovePlayed {
            mover: side,
            eval,
            zeroing: board.pos.halfmoves() == 0,
            total_plies: board.played.len() as u32,
            engine_plies: moves.len() as u32,
        };
        if let Some((t, winner)) = adjudicator.on_move(played) {
            return Ok(finish(Ending::decided(t, winner), moves));
        }
    }
}

/// One move of the side to move: `go` with its clock, the reply timed and charged, the move
/// checked for legality. A fault, a flag fall or an illegal move ends the game instead.
async fn engine_move(
    eng: &mut UciEngine,
    clocks: &mut [Clock; 2],
    limits: &[SideLimit; 2],
    board: &Board,
    opening: &Opening,
    settings: &GameSettings,
    last_reply_at: &mut Option<Instant>,
) -> Result<(shakmaty::Move, MoveInfo), Ending> {
    let side = board.pos.turn();
    let own = limits[if side == Color::White { 0 } else { 1 }];
    let go_cmd = go_command(&own, clocks, side);
    let pos_cmd = position_command(&opening.fen, &board.played);
    let clock = &mut clocks[if side == Color::White { 0 } else { 1 }];
    let margin = Duration::from_millis(own.timemargin_ms);
    let (limit, expected) = match clock.time_to_flag(margin) {
        Some(d) => (d, "bestmove before the flag"),
        None => (settings.stall_timeout, "bestmove"),
    };
    let asked = Instant::now();
    let available_ms = clock.available_ms().unwrap_or(0.0);
    let flag = |think: Duration| {
        let forfeit = Forfeit {
            think_ms: round3(think.as_secs_f64() * 1000.0),
            clock_ms: round3(available_ms),
            margin_ms: round3(margin.as_secs_f64() * 1000.0),
        };
        Ending::flag(side, &board.pos, forfeit)
    };
    let reply = match eng.go(&pos_cmd, &go_cmd, limit, expected).await {
        Ok(r) => r,
        Err(e) => {
            let t = fault_kind(&e, own.is_timed());
            let waited = asked.elapsed();
            if matches!(e, UciError::Timeout { .. }) {
                // Give the engine a moment to answer `stop`; it is restarted either way.
                eng.stop_and_drain(Duration::from_millis(200)).await;
            }
            if t == Termination::TimeForfeit {
                return Err(flag(waited));
            }
            return Err(Ending::fault(side, t));
        }
    };
    let turnaround_us =
        last_reply_at.map(|t| reply.sent_at.saturating_duration_since(t).as_micros() as u64);
    *last_reply_at = Some(reply.received_at);
    let elapsed = reply.elapsed();
    let info = reply.info();
    let mut record = MoveInfo {
        uci: reply.bestmove.clone(),
        eval: info.score,
        depth: info.depth,
        time_us: elapsed.as_micros() as u64,
        engine_time_ms: info.time_ms,
        turnaround_us,
        extra: MoveExtra {
            seldepth: info.seldepth,
            nodes: info.nodes,
            nps: info.nps,
            hashfull: info.hashfull,
            pv: reply.pv(),
            timeleft_ms: None,
        },
    };
    // A late bestmove is late even though it arrived.
    if !clock.charge(elapsed, margin) {
        // The late move is not played (and not checked for legality).
        return Err(flag(elapsed));
    }
    if matches!(settings.tc, TimeControl::Fischer { .. }) {
        record.extra.timeleft_ms = Some(clock.remaining_ms());
    }
    let legal = reply.bestmove.parse::<UciMove>().ok().and_then(|u| u.to_move(&board.pos).ok());
    match legal {
        Some(mv) => Ok((mv, record)),
        None => {
            let mut end = Ending::fault(side, Termination::IllegalMove);
            end.illegal_move = Some(reply.bestmove);
            Err(end)
        }
    }
}

/// How a failed exchange with an engine is classified.
fn fault_kind(e: &UciError, timed: bool) -> Termination {
    match e {
        UciError::Timeout { .. } if timed => Termination::TimeForfeit,
        UciError::Timeout { .. } => Termination::Stall,
        UciError::Exited { clean: false, .. } => Termination::Crash,
        UciError::Exited { clean: true, .. } | UciError::Disconnected { .. } => {
            Termination::Disconnect
        }
        UciError::Garbage { .. } => Termination::GarbageOutput,
        UciError::Spawn { .. }
        | UciError::Log { .. }
        | UciError::NoDir { .. }
        | UciError::Refused(_)
        | UciError::Unsupported { .. }
        | UciError::Start { .. } => Termination::Crash,
    }
}

/// Rounds to three decimals (milliseconds to the microsecond in records).
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The `go` line for the side to move, whose limits are `own`: its clock (`wtime .. btime ..`
/// from both sides' clocks, each with its own time control, or `movetime`), then its node and
/// depth caps.
pub fn go_command(own: &SideLimit, clocks: &[Clock; 2], side: Color) -> String {
    let mut s = String::from("go");
    match own.clock {
        Some(TimeControl::Fischer { .. }) => {
            // A side without a Fischer clock (odds against a node limit) has no time to send.
            let [w, b] = clocks.each_ref().map(|c| c.is_fischer().then_some(c));
            for (word, c) in [("wtime", w), ("btime", b)] {
                if let Some(c) = c {
                    s.push_str(&format!(" {word} {}", c.remaining_ms()));
                }
            }
            for (word, c) in [("winc", w), ("binc", b)] {
                if let Some(c) = c {
                    s.push_str(&format!(" {word} {}", c.inc_ms()));
                }
            }
            let mine = &clocks[if side == Color::White { 0 } else { 1 }];
            if let Some(n) = mine.moves_to_go() {
                s.push_str(&format!(" movestogo {n}"));
            }
        }
        Some(TimeControl::MoveTime { ms }) => s.push_str(&format!(" movetime {ms}")),
        _ => {}
    }
    s.push_str(&own.go_caps());
    s
}

/// Endings by the rules of chess, checked after every move (mate before the fifty-move rule).
pub fn rules_ending(pos: &Chess, history: &[Zobrist64]) -> Option<(Termination, Option<Color>)> {
    if pos.legal_moves().is_empty() {
        return Some(if pos.is_check() {
            (Termination::Checkmate, Some(!pos.turn()))
        } else {
            (Termination::Stalemate, None)
        });
    }
    if pos.is_insufficient_material() {
        return Some((Termination::InsufficientMaterial, None));
    }
    if is_threefold(history, pos.halfmoves() as usize) {
        return Some((Termination::Threefold, None));
    }
    if pos.halfmoves() >= 100 {
        return Some((Termination::FiftyMove, None));
    }
    None
}

/// True when the last position occurred at least three times since the last irreversible move.
fn is_threefold(history: &[Zobrist64], halfmoves: usize) -> bool {
    let Some((&last, earlier)) = history.split_last() else { return false };
    let window = halfmoves.min(earlier.len());
    let mut count = 1;
    let mut back = 2;
    while back <= window {
        if earlier[earlier.len() - back] == last {
            count += 1;
            if count >= 3 {
                return true;
            }
        }
        back += 2;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::openings::position_from_fen;

    fn replay(fen: &str, moves: &[&str]) -> (Chess, Vec<Zobrist64>) {
        let mut pos = position_from_fen(fen).unwrap();
        let mut h = vec![pos.zobrist_hash(EnPassantMode::Legal)];
        for m in moves {
            let mv = m.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(mv);
            h.push(pos.zobrist_hash(EnPassantMode::Legal));
        }
        (pos, h)
    }

    #[test]
    fn detects_each_rules_ending() {
        let start = crate::plan::openings::STARTPOS_FEN;
        let (p, h) = replay(start, &["f2f3", "e7e5", "g2g4", "d8h4"]);
        assert_eq!(rules_ending(&p, &h), Some((Termination::Checkmate, Some(Color::Black))));
        let (p, h) = replay("7k/5Q2/6K1/8/8/8/8/8 w - - 0 1", &["f7f6"]);
        assert_eq!(rules_ending(&p, &h), None);
        let (p, h) = replay("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", &["f1f7"]);
        assert_eq!(rules_ending(&p, &h), Some((Termination::Stalemate, None)));
        let (p, h) = replay("8/8/4k3/8/8/2B5/8/4K3 w - - 0 1", &[]);
        assert_eq!(rules_ending(&p, &h), Some((Termination::InsufficientMaterial, None)));
        let (p, h) = replay("8/8/4k3/8/8/8/4P3/4K3 w - - 99 80", &["e1d1"]);
        assert_eq!(rules_ending(&p, &h), Some((Termination::FiftyMove, None)));
        let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
        let twice: Vec<&str> = shuffle.iter().chain(shuffle.iter()).copied().collect();
        let (p, h) = replay(start, &twice[..7]);
        assert_eq!(rules_ending(&p, &h), None);
        let (p, h) = replay(start, &twice);
        assert_eq!(rules_ending(&p, &h), Some((Termination::Threefold, None)));
    }

    #[test]
    fn mate_beats_the_fifty_move_rule() {
        // Rook mate delivered on the 100th quiet half-move.
        let (p, h) = replay("7k/8/6K1/8/8/8/8/R7 w - - 99 90", &["a1a8"]);
        assert_eq!(rules_ending(&p, &h), Some((Termination::Checkmate, Some(Color::White))));
    }

    #[test]
    fn go_commands() {
        let side = |tc, nodes, depth| SideLimit::of_run(tc, nodes, depth, 100);
        let tc = TimeControl::parse_tc("40/60+0.6").unwrap();
        let clocks = [Clock::new(Some(tc)), Clock::new(Some(tc))];
        assert_eq!(
            go_command(&side(tc, None, None), &clocks, Color::White),
            "go wtime 60000 btime 60000 winc 600 binc 600 movestogo 40"
        );
        let n = TimeControl::Nodes { nodes: 500 };
        assert_eq!(
            go_command(&side(n, None, None), &[Clock::new(None), Clock::new(None)], Color::Black),
            "go nodes 500"
        );
        // A clock with a node cap, and time odds.
        let fast = TimeControl::parse_tc("2+0.02").unwrap();
        let odds = [Clock::new(Some(tc)), Clock::new(Some(fast))];
        assert_eq!(
            go_command(&side(fast, Some(5000), Some(9)), &odds, Color::Black),
            "go wtime 60000 btime 2000 winc 600 binc 20 nodes 5000 depth 9"
        );
        let st = TimeControl::MoveTime { ms: 250 };
        assert_eq!(
            go_command(&side(st, Some(7), None), &odds, Color::White),
            "go movetime 250 nodes 7"
        );
    }

    #[test]
    fn results_serialize_as_pgn_strings() {
        assert_eq!(serde_json::to_string(&GameResult::Draw).unwrap(), "\"1/2-1/2\"");
        assert_eq!(GameResult::from_winner(Some(Color::Black)).pgn(), "0-1");
    }
}
