//! What the page's sections need of the games, gathered one record at a time: each pairing's
//! tally, the LLR or Elo trace, terminations by kind and by engine, time use, the clock left
//! and the faults. A page is made from a [`Digest`] rather than from the records themselves, so
//! a caller that reads games as a stream (a server paging through a 100,000-game games.jsonl,
//! or a database's rows) never holds them: what it holds is bounded by the pairings, engines
//! and termination kinds, plus at most [`MAX_FAULTS`] fault rows and the trace's points.
//!
//! `report.html` gathers its digest from the records it read ([`Digest::of`]), with each
//! pairing's pair count known beforehand, so its trace keeps every k-th pair exactly as
//! before. A digest fed as games arrive ([`Digest::new`] without totals) thins its trace as it
//! grows instead (every other point dropped when a line passes twice its bound).

use std::collections::BTreeMap;
use std::time::Duration;

use stats::SprtSpec;

use super::charts::Series;
use super::games::loser;
use super::timing::side_times;
use crate::plan::run_plan::RunPlan;
use crate::plan::time_control::TimeControl;
use crate::play::clock::Clock;
use crate::play::termination::Termination;
use crate::report::summary::PairingTally;
use crate::store::GameRecord;

/// At most this many points per trace line (every k-th completed pair, and the last).
pub const MAX_POINTS: u64 = 400;
/// Fault rows kept (the count is of every one).
pub const MAX_FAULTS: usize = 1000;
/// Notes about skipped lines kept (the count is of every one).
pub const MAX_SKIPPED: usize = 100;

/// One fault of the faults table.
#[derive(Clone, Debug)]
pub struct Fault {
    /// 1-based game number in the order the games were read.
    pub game: u64,
    pub label: String,
    pub engine: String,
    pub why: String,
}

/// One pairing's trace as it is gathered.
#[derive(Clone, Debug, Default)]
struct Line {
    /// Every `every` pairs a point; with `total` known the last pair is always one.
    every: u64,
    total: Option<u64>,
    points: Vec<(f64, f64)>,
    /// The newest point, kept apart so the line always ends at the last pair.
    last: Option<(u64, (f64, f64))>,
}

/// Everything the sections take from the games.
#[derive(Clone, Debug, Default)]
pub struct Digest {
    /// Pairing labels, from the plan, extended by the records' labels.
    pub labels: Vec<String>,
    pub tallies: Vec<PairingTally>,
    /// Records gathered.
    pub games: u64,
    sprt: Option<SprtSpec>,
    plan: Option<RunPlan>,
    lines: Vec<Line>,
    /// Termination kind -> (games, meaning).
    pub by_kind: BTreeMap<&'static str, (u64, &'static str)>,
    /// Engine -> termination kind -> (games, lost).
    pub by_engine: BTreeMap<String, BTreeMap<&'static str, (u64, u64)>>,
    /// Engine -> (moves, sum ms, longest ms).
    pub times: BTreeMap<String, (u64, f64, f64)>,
    /// Engine -> (games, sum ms left, least ms left) under a Fischer clock.
    pub clock: BTreeMap<String, (u64, f64, u64)>,
    pub faults: Vec<Fault>,
    pub fault_count: u64,
    /// Notes about lines that were not game records (the first [`MAX_SKIPPED`]).
    pub skipped: Vec<String>,
    pub skipped_count: u64,
}

impl Digest {
    /// An empty digest for a run with `labels` (the plan's), its SPRT and plan; `totals`, each
    /// pairing's pairs when known beforehand (then the trace keeps every k-th pair exactly).
    pub fn new(
        labels: Vec<String>,
        sprt: Option<SprtSpec>,
        plan: Option<RunPlan>,
        totals: Option<Vec<u64>>,
    ) -> Digest {
        let n = labels.len();
        let mut d = Digest {
            tallies: vec![PairingTally::default(); n],
            labels,
            sprt,
            plan,
            ..Digest::default()
        };
        d.lines = (0..n)
            .map(|i| Self::new_line(totals.as_ref().map(|t| t.get(i).copied().unwrap_or(0))))
            .collect();
        d
    }

    fn new_line(total: Option<u64>) -> Line {
        let every = total.map_or(1, |t| t.div_ceil(MAX_POINTS).max(1));
        Line { every, total, ..Line::default() }
    }

    /// The digest of records already read: what `report.html` is made from.
    pub fn of(
        labels: Vec<String>,
        sprt: Option<SprtSpec>,
        plan: Option<&RunPlan>,
        records: &[GameRecord],
    ) -> Digest {
        let mut totals = vec![0u64; labels.len()];
        for r in records {
            if r.game == 1
                && let Some(n) = totals.get_mut(r.pairing)
            {
                *n += 1;
            }
        }
        let mut d = Digest::new(labels, sprt, plan.cloned(), Some(totals));
        for r in records {
            d.add(r);
        }
        d
    }

    /// The digest of a folder read whole ([`super::input::read`]).
    pub fn of_files(files: &super::input::RunFiles) -> Digest {
        Digest::of(files.pairing_labels(), files.sprt(), files.plan(), &files.records)
    }

    /// Sets pairing `i`'s counts to what another source holds (a database's tallies, which
    /// its decisions are made on): the score table, the Elo and the verdict then say them,
    /// whatever games were gathered.
    pub fn set_counts(&mut self, i: usize, wdl: stats::Wdl, penta: stats::Penta) {
        if let Some(t) = self.tallies.get_mut(i) {
            t.wdl_all = wdl;
            t.wdl_paired = wdl;
            t.penta = penta;
        }
    }

    /// Notes a line that was not a game record.
    pub fn skip(&mut self, note: String) {
        self.skipped_count += 1;
        if self.skipped.len() < MAX_SKIPPED {
            self.skipped.push(note);
        }
    }

    /// Adds one game record.
    pub fn add(&mut self, r: &GameRecord) {
        self.games += 1;
        if self.labels.len() <= r.pairing && self.plan.is_none() {
            // Without a plan the records name the pairings (bounded: a pairing index past
            // what a plan could hold is not given a line of its own).
            if r.pairing < 4096 {
                self.labels.resize(r.pairing + 1, String::new());
                self.tallies.resize(r.pairing + 1, PairingTally::default());
                let line = Self::new_line(None);
                self.lines.resize(r.pairing + 1, line);
            }
        }
        if self.plan.is_none()
            && let Some(l) = self.labels.get_mut(r.pairing)
        {
            l.clone_from(&r.label);
        }
        self.add_tally_and_trace(r);
        let k = r.termination.json_str();
        self.by_kind.entry(k).or_insert((0, r.termination.describe())).0 += 1;
        let lost = loser(r).map(str::to_string);
        for e in [&r.white, &r.black] {
            let c = self.by_engine.entry(e.clone()).or_default().entry(k).or_default();
            c.0 += 1;
            if lost.as_ref() == Some(e) {
                c.1 += 1;
            }
        }
        for (white, ms) in side_times(r) {
            let e = if white { &r.white } else { &r.black };
            let t = self.times.entry(e.clone()).or_insert((0, 0.0, 0.0));
            t.0 += 1;
            t.1 += ms;
            t.2 = t.2.max(ms);
        }
        self.add_clock(r);
        if r.termination.is_fault() {
            self.fault_count += 1;
            if self.faults.len() < MAX_FAULTS {
                let mut why = r.termination.describe().to_string();
                if let Some(m) = &r.illegal_move {
                    why.push_str(&format!(": {m}"));
                }
                if let Some(f) = &r.forfeit {
                    why.push_str(&format!(
                        ": thought {} ms with {} ms on the clock (margin {} ms)",
                        super::text::num(Some(f.think_ms), 1),
                        super::text::num(Some(f.clock_ms), 1),
                        super::text::num(Some(f.margin_ms), 0)
                    ));
                }
                self.faults.push(Fault {
                    game: self.games,
                    label: r.label.clone(),
                    engine: lost.unwrap_or_else(|| "?".into()),
                    why,
                });
            }
        }
    }

    fn add_tally_and_trace(&mut self, r: &GameRecord) {
        let sprt = self.sprt;
        let (Some(t), Some(line)) =
            (self.tallies.get_mut(r.pairing), self.lines.get_mut(r.pairing))
        else {
            return;
        };
        let before = t.penta.pairs();
        t.add(r);
        let pairs = t.penta.pairs();
        if pairs == before {
            return;
        }
        let at_end = line.total.is_some_and(|n| pairs >= n);
        if pairs % line.every != 0 && !at_end {
            // Not a kept point; an open-ended line still remembers it as its newest.
            if line.total.is_none()
                && let Some(v) = value(&t.penta, sprt)
            {
                line.last = Some((pairs, (t.wdl_all.games() as f64, v)));
            }
            return;
        }
        let Some(v) = value(&t.penta, sprt) else { return };
        line.points.push((t.wdl_all.games() as f64, v));
        line.last = None;
        if line.total.is_none() && line.points.len() as u64 > 2 * MAX_POINTS {
            // Thinned: every other point, and twice the stride from now on.
            let kept: Vec<(f64, f64)> = line.points.iter().skip(1).step_by(2).copied().collect();
            line.points = kept;
            line.every *= 2;
        }
    }

    fn add_clock(&mut self, r: &GameRecord) {
        let Some(plan) = &self.plan else { return };
        // Each side's own limits (time odds), else the plan's for older records.
        let run = plan.run_limit(r.pairing);
        let [wl, bl] = r.limits.unwrap_or([run, run]);
        if ![wl, bl].iter().all(|l| matches!(l.clock, Some(TimeControl::Fischer { .. }))) {
            return;
        }
        let (mut white, mut black) = (Clock::new(wl.clock), Clock::new(bl.clock));
        for (is_white, ms) in side_times(r) {
            let (clock, l) = if is_white { (&mut white, wl) } else { (&mut black, bl) };
            let margin = Duration::from_millis(l.timemargin_ms);
            clock.charge(Duration::from_secs_f64(ms.max(0.0) / 1000.0), margin);
        }
        // On time forfeit the side to move after the last recorded move flagged (its late move,
        // if any, is not part of the game).
        let white_first = r.fen.split_whitespace().nth(1) != Some("b");
        let white_to_move = (r.book_plies + r.times_ms.len()).is_multiple_of(2) == white_first;
        let lost_on_time = |white_side: bool| {
            r.termination == Termination::TimeForfeit && white_side == white_to_move
        };
        for (is_white, name, clock) in [(true, &r.white, &white), (false, &r.black, &black)] {
            let left = if lost_on_time(is_white) { 0 } else { clock.remaining_ms() };
            let t = self.clock.entry(name.clone()).or_insert((0, 0.0, u64::MAX));
            t.0 += 1;
            t.1 += left as f64;
            t.2 = t.2.min(left);
        }
    }

    /// The traced value of each pairing: `(games played, value)` after its kept pairs, ending
    /// at its last pair; pairings without a point are left out.
    pub fn trace(&self) -> Vec<Series> {
        self.labels
            .iter()
            .zip(&self.lines)
            .map(|(label, line)| {
                let mut points = line.points.clone();
                if let Some((_, p)) = line.last {
                    points.push(p);
                }
                Series { label: label.clone(), points }
            })
            .filter(|s| !s.points.is_empty())
            .collect()
    }

    /// The SPRT the trace and the rows are computed with.
    pub fn sprt(&self) -> Option<SprtSpec> {
        self.sprt
    }
}

fn value(penta: &stats::Penta, sprt: Option<SprtSpec>) -> Option<f64> {
    super::trace::value(penta, sprt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_ended_trace_stays_bounded_and_ends_at_the_last_pair() {
        let mut line = Line { every: 1, ..Line::default() };
        // Simulate the thinning rule alone: 10,000 pairs.
        for pairs in 1..=10_000u64 {
            if pairs % line.every != 0 {
                line.last = Some((pairs, (pairs as f64, 0.0)));
                continue;
            }
            line.points.push((pairs as f64, 0.0));
            line.last = None;
            if line.points.len() as u64 > 2 * MAX_POINTS {
                line.points = line.points.iter().skip(1).step_by(2).copied().collect();
                line.every *= 2;
            }
        }
        assert!(line.points.len() as u64 <= 2 * MAX_POINTS && line.points.len() > 100);
        let end = line.last.map(|l| l.1.0).or(line.points.last().map(|p| p.0));
        assert_eq!(end, Some(10_000.0));
    }
}
