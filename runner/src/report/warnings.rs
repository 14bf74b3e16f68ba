//! Warnings about a run's games that its score alone would hide: an engine that keeps faulting
//! (crashes, stalls, disconnects, garbage output, illegal moves), and an engine that a time
//! control starves (its reported depth stays at 1-2). Computed from the stored records, so a
//! resumed run warns about its earlier games too.

use std::collections::BTreeMap;

use crate::plan::run_plan::RunPlan;
use crate::play::game::GameResult;
use crate::play::termination::Termination;
use crate::store::GameRecord;

/// Engine moves with a reported depth an engine must have made before it can be called starved.
pub const STARVED_MIN_MOVES: u64 = 20;
/// Reported depth at or below which a move counts as starved.
pub const STARVED_DEPTH: u32 = 2;

/// The engine that caused a game's end by a process or protocol fault (not a time forfeit):
/// the loser of a game ended by a crash, stall, disconnect, garbage output or illegal move.
pub fn faulting_engine(rec: &GameRecord) -> Option<&str> {
    if !rec.termination.is_fault() || rec.termination == Termination::TimeForfeit {
        return None;
    }
    match rec.result {
        GameResult::WhiteWins => Some(&rec.black),
        GameResult::BlackWins => Some(&rec.white),
        GameResult::Draw => None,
    }
}

/// One line per engine that faulted: how often and how, out of how many games.
pub fn fault_warnings(records: &[GameRecord]) -> Vec<String> {
    let mut games: BTreeMap<&str, u64> = BTreeMap::new();
    let mut faults: BTreeMap<&str, BTreeMap<&'static str, u64>> = BTreeMap::new();
    for r in records {
        *games.entry(r.white.as_str()).or_default() += 1;
        if r.black != r.white {
            *games.entry(r.black.as_str()).or_default() += 1;
        }
        if let Some(e) = faulting_engine(r) {
            *faults.entry(e).or_default().entry(r.termination.json_str()).or_default() += 1;
        }
    }
    faults
        .into_iter()
        .map(|(engine, kinds)| {
            let n: u64 = kinds.values().sum();
            let what: Vec<String> = kinds.iter().map(|(k, c)| format!("{c} {k}")).collect();
            format!(
                "engine {engine} lost {n} of its {} games by its own fault ({}); its stderr is in logs/",
                games.get(engine).copied().unwrap_or(0),
                what.join(", ")
            )
        })
        .collect()
}

/// One line per engine whose reported depth stayed at 1-2 on most of its moves under a clock.
pub fn starvation_warnings(plan: &RunPlan, records: &[GameRecord]) -> Vec<String> {
    // engine -> (moves with a depth, shallow moves, time controls seen)
    let mut seen: BTreeMap<&str, (u64, u64, Vec<String>)> = BTreeMap::new();
    for r in records {
        let tc = plan.pairing_tc(r.pairing);
        if !tc.is_timed() {
            continue;
        }
        // Engine moves alternate from the side to move after the book moves.
        let white_first = is_white_to_move_after(r);
        for (i, d) in r.depths.iter().enumerate() {
            let Some(d) = d else { continue };
            let white = (i % 2 == 0) == white_first;
            let e = if white { r.white.as_str() } else { r.black.as_str() };
            let slot = seen.entry(e).or_default();
            slot.0 += 1;
            if *d <= STARVED_DEPTH {
                slot.1 += 1;
            }
            let tcs = tc.to_string();
            if !slot.2.contains(&tcs) {
                slot.2.push(tcs);
            }
        }
    }
    seen.into_iter()
        .filter(|(_, (n, shallow, _))| *n >= STARVED_MIN_MOVES && shallow * 2 >= *n)
        .map(|(e, (n, shallow, tcs))| {
            format!(
                "engine {e} reported depth {STARVED_DEPTH} or less on {shallow} of {n} moves ({:.0}%) at {}: \
                 the time control starves it, so its results measure its time handling more than its strength",
                100.0 * shallow as f64 / n as f64,
                tcs.join(", ")
            )
        })
        .collect()
}

fn is_white_to_move_after(r: &GameRecord) -> bool {
    let white_at_root = r.fen.split_whitespace().nth(1) != Some("b");
    white_at_root == r.book_plies.is_multiple_of(2)
}

/// Counts, per engine, the games in a row it lost by its own fault, and says when one reaches
/// the limit (`--fault-limit`): a broken engine then stops the run instead of losing every game.
#[derive(Debug, Default)]
pub struct FaultStreaks {
    limit: u32,
    streak: BTreeMap<String, (u32, Termination)>,
}

impl FaultStreaks {
    /// `limit` 0 never stops.
    pub fn new(limit: u32) -> FaultStreaks {
        FaultStreaks { limit, streak: BTreeMap::new() }
    }

    /// Counts a finished game; returns why the run must stop when an engine reached the limit.
    pub fn on_game(&mut self, rec: &GameRecord) -> Option<String> {
        let faulty = faulting_engine(rec).map(str::to_string);
        // An engine playing itself is one engine.
        let names: &[&String] =
            if rec.white == rec.black { &[&rec.white] } else { &[&rec.white, &rec.black] };
        for &name in names {
            if faulty.as_ref() == Some(name) {
                let e = self.streak.entry(name.clone()).or_insert((0, rec.termination));
                *e = (e.0 + 1, rec.termination);
            } else {
                self.streak.remove(name);
            }
        }
        let name = faulty?;
        let (n, last) = self.streak.get(&name).copied()?;
        (self.limit > 0 && n >= self.limit).then(|| {
            format!(
                "engine {name} lost {n} games in a row by its own fault (last: {last}); its stderr \
                 is in logs/ (--fault-limit {} stops a run there; 0 never stops)",
                self.limit
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(white: &str, black: &str, result: GameResult, t: Termination) -> GameRecord {
        serde_json::from_value(serde_json::json!({
            "seq": 0, "pairing": 0, "label": "x", "pair": 0, "game": 0, "opening": 0,
            "fen": crate::plan::openings::STARTPOS_FEN, "white": white, "black": black,
            "result": result, "termination": t, "plies": 0, "book_plies": 0, "moves": [],
            "scores": [], "depths": [], "times_ms": [], "engine_times_ms": [],
            "latency": {"overhead_ms_mean": null, "overhead_ms_max": null,
                        "turnaround_us_mean": null, "turnaround_us_max": null},
            "duration_ms": 0, "date": "2026.11.23"
        }))
        .unwrap()
    }

    #[test]
    fn streaks_stop_at_the_limit_and_reset_on_a_clean_game() {
        let mut s = FaultStreaks::new(3);
        let crash = |w: &str, b: &str| game(w, b, GameResult::BlackWins, Termination::Crash);
        assert!(s.on_game(&crash("bad", "good")).is_none());
        assert!(s.on_game(&crash("bad", "good")).is_none());
        // A clean game of the bad engine resets its count.
        assert!(
            s.on_game(&game("bad", "good", GameResult::Draw, Termination::Threefold)).is_none()
        );
        assert!(s.on_game(&crash("bad", "good")).is_none());
        assert!(
            s.on_game(&game("good", "bad", GameResult::WhiteWins, Termination::Stall)).is_none()
        );
        let why = s.on_game(&crash("bad", "good")).expect("third fault in a row");
        assert!(why.contains("bad") && why.contains("3 games in a row"), "{why}");
        // Time forfeits are not faults here; 0 never stops.
        let mut never = FaultStreaks::new(0);
        for _ in 0..10 {
            assert!(never.on_game(&crash("bad", "good")).is_none());
        }
        let flag = game("bad", "good", GameResult::BlackWins, Termination::TimeForfeit);
        assert_eq!(faulting_engine(&flag), None);
    }

    #[test]
    fn warnings_name_faulty_and_starved_engines() {
        let recs = vec![
            game("bad", "good", GameResult::BlackWins, Termination::Crash),
            game("good", "bad", GameResult::WhiteWins, Termination::GarbageOutput),
            game("good", "bad", GameResult::Draw, Termination::Threefold),
        ];
        let w = fault_warnings(&recs);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("engine bad lost 2 of its 3 games"), "{w:?}");
    }
}
