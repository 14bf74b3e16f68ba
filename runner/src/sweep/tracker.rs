//! Follows a sweep game by game, in the order games are stored: counts per point over complete
//! game pairs, racing (`--adaptive`) and per-point SPRT stops. The live run and `runner report`
//! feed it the same stored games in the same order, so both reach the same decisions.

use std::collections::HashMap;

use stats::{Counts, GameScore, SprtSpec, Verdict};

use super::analysis::{PointCounts, PointStatus};
use super::racing::{Race, RaceConfig};
use crate::store::GameRecord;

/// A stored game whose pairing is not a point of the sweep (the store and the plan disagree).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("stored game of pairing #{index} {label:?} does not match the plan (was it changed?)")]
pub struct UnknownPoint {
    pub index: usize,
    pub label: String,
}

/// The per-point state of a running (or replayed) sweep.
#[derive(Clone, Debug)]
pub struct Tracker {
    labels: Vec<String>,
    /// First finished game of a pair still waiting for its twin: (point, pair) -> score.
    open: HashMap<(usize, u64), GameScore>,
    counts: Vec<PointCounts>,
    race: Option<Race>,
    sprt: Option<SprtSpec>,
    status: Vec<PointStatus>,
}

impl Tracker {
    /// A tracker for points (pairings) with these labels.
    pub fn new(labels: Vec<String>, race: Option<RaceConfig>, sprt: Option<SprtSpec>) -> Tracker {
        let n = labels.len();
        Tracker {
            labels,
            open: HashMap::new(),
            counts: vec![PointCounts::default(); n],
            race: race.map(|c| Race::new(n, c)),
            sprt,
            status: vec![PointStatus::Active; n],
        }
    }

    /// Records a stored game, checking that its pairing is the expected point.
    pub fn record_game(&mut self, rec: &GameRecord) -> Result<Vec<usize>, UnknownPoint> {
        if self.labels.get(rec.pairing) != Some(&rec.label) {
            return Err(UnknownPoint { index: rec.pairing, label: rec.label.clone() });
        }
        Ok(self.record(rec.pairing, rec.pair as u64, rec.first_score()))
    }

    /// Records one finished game (`score` from the swept engine's view) of game pair `pair` of
    /// point `i` (< the number of labels). Returns the points that stopped because of it
    /// (dropped by racing or decided by their SPRT); their jobs not yet started should be
    /// skipped.
    pub fn record(&mut self, i: usize, pair: u64, score: GameScore) -> Vec<usize> {
        let Some(first) = self.open.remove(&(i, pair)) else {
            self.open.insert((i, pair), score);
            return Vec::new();
        };
        let c = &mut self.counts[i];
        c.wdl.add(first);
        c.wdl.add(score);
        c.penta.add_pair(first, score);
        let mut stopped = Vec::new();
        if let (Some(spec), PointStatus::Active) = (&self.sprt, &self.status[i]) {
            let counts = Counts::Paired { wdl: c.wdl, penta: c.penta };
            if let Ok(r) = stats::sprt(&counts, spec)
                && r.verdict != Verdict::Continue
            {
                self.status[i] = PointStatus::Decided { after_games: c.wdl.games() };
                stopped.push(i);
            }
        }
        if let Some(race) = &mut self.race {
            let pentas: Vec<_> = self.counts.iter().map(|c| c.penta).collect();
            for d in race.update(&pentas) {
                if self.status[d] == PointStatus::Active
                    && let Some(info) = &race.dropped()[d]
                {
                    self.status[d] = PointStatus::from_dropped(info, &self.labels);
                    stopped.push(d);
                }
            }
        }
        stopped
    }

    /// Whether the point still gets new games.
    pub fn is_active(&self, i: usize) -> bool {
        self.status.get(i) == Some(&PointStatus::Active)
    }

    /// Whether every point has stopped (all dropped or decided, at most one left racing alone
    /// counts as not stopped).
    pub fn all_stopped(&self) -> bool {
        self.status.iter().all(|s| *s != PointStatus::Active)
    }

    pub fn counts(&self) -> &[PointCounts] {
        &self.counts
    }

    pub fn status(&self) -> &[PointStatus] {
        &self.status
    }

    /// Finished games, including the first game of pairs whose twin has not finished.
    pub fn games(&self, i: usize) -> u64 {
        self.counts[i].wdl.games() + self.open.keys().filter(|(p, _)| *p == i).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::EloModel;

    /// A stored game of pairing 0, pair `pair`, won by White.
    pub(crate) fn game_record(pair: usize, game: u8) -> GameRecord {
        GameRecord {
            seq: pair,
            pairing: 0,
            label: "x=0".into(),
            pair,
            game,
            opening: 0,
            fen: crate::plan::openings::STARTPOS_FEN.into(),
            white: "A".into(),
            black: "B".into(),
            result: crate::play::game::GameResult::WhiteWins,
            termination: crate::play::termination::Termination::Checkmate,
            plies: 4,
            book_plies: 0,
            moves: ["f2f3", "e7e5", "g2g4", "d8h4"].map(String::from).to_vec(),
            scores: vec![None; 4],
            depths: vec![None; 4],
            times_ms: vec![1.0; 4],
            engine_times_ms: vec![None; 4],
            move_info: Default::default(),
            latency: Default::default(),
            illegal_move: None,
            forfeit: None,
            duration_ms: 10,
            date: "2026.11.22".into(),
            plan_hash: None,
            first_white: None,
            limits: None,
            tablebase: None,
        }
    }

    fn pts(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("x={i}")).collect()
    }

    #[test]
    fn pairs_are_counted_when_both_games_are_in() {
        let mut t = Tracker::new(pts(2), None, None);
        assert!(t.record(0, 0, GameScore::Win).is_empty());
        assert_eq!(t.counts()[0].penta.pairs(), 0);
        assert_eq!(t.games(0), 1);
        t.record(1, 0, GameScore::Draw);
        t.record(0, 0, GameScore::Loss);
        assert_eq!(t.counts()[0].penta.dd, 1);
        assert_eq!((t.counts()[0].wdl.wins, t.counts()[0].wdl.losses), (1, 1));
        assert_eq!(t.games(0), 2);
        let mut rec = game_record(0, 0);
        rec.label = "x=7".into();
        assert_eq!(t.record_game(&rec), Err(UnknownPoint { index: 0, label: "x=7".into() }));
        rec.label = "x=0".into();
        // Game 0 of pair 0 is won by White, the first engine: a win, and pair 0 is still open.
        let mut t = Tracker::new(pts(1), None, None);
        assert_eq!(t.record_game(&rec), Ok(vec![]));
        rec.game = 1;
        t.record_game(&rec).unwrap();
        assert_eq!(t.counts()[0].penta.dd, 1, "a win then a loss with colours reversed");
    }

    #[test]
    fn racing_drops_a_hopeless_point_and_sprt_decides() {
        let mut t = Tracker::new(pts(2), Some(RaceConfig { alpha: 0.05, min_pairs: 4 }), None);
        let mut stopped = Vec::new();
        for pair in 0..20 {
            for _ in 0..2 {
                stopped.extend(t.record(0, pair, GameScore::Win));
                let s = if pair % 4 == 0 { GameScore::Draw } else { GameScore::Loss };
                stopped.extend(t.record(1, pair, s));
            }
        }
        assert_eq!(stopped, [1]);
        assert!(t.is_active(0) && !t.is_active(1));
        assert!(matches!(t.status()[1], PointStatus::Dropped { after_games: 8, .. }));

        let spec =
            SprtSpec { elo0: 0.0, elo1: 10.0, alpha: 0.05, beta: 0.05, model: EloModel::Logistic };
        let mut t = Tracker::new(pts(1), None, Some(spec));
        let mut pair = 0;
        while t.is_active(0) && pair < 1000 {
            t.record(0, pair, GameScore::Win);
            t.record(0, pair, GameScore::Draw);
            pair += 1;
        }
        assert!(matches!(t.status()[0], PointStatus::Decided { .. }), "{:?}", t.status());
        assert!(t.all_stopped());
    }
}
