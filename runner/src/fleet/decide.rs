//! Decisions, by the rules a local run uses: a pairing's SPRT on its paired counts
//! (`stats::sprt`, as `run/` and the sweep tracker call it) and a sweep's racing
//! (`sweep::racing::Race`).
//!
//! In the fleet these are taken by the database (`fleet_settle_run` and the functions of
//! `sql/judge.sql`, which give what these Rust functions give: `runner/tests/fleet_judge_sql.rs`
//! compares them). [`judge_config`] is what the submitter stores for the database to decide
//! with; a worker's [`RunJudge`] reads the counts a report returns only to know when to ask the
//! database for a decision ([`RunJudge::may_stop`]).

use serde_json::{Value, json};
use stats::{Counts, Penta, SprtSpec, Verdict, Wdl};

use super::queue::{PairingCounts, Stop};
use crate::sweep::racing::{Race, RaceConfig};
use crate::tune::spsa::Spsa;

/// The verdict word a racing drop is stored with (racing skips those points from then on).
pub const DROPPED: &str = "dropped";

/// The judge of one run.
#[derive(Clone)]
pub struct RunJudge {
    pub sprt: Option<SprtSpec>,
    pub race: Option<RaceConfig>,
    pub labels: Vec<String>,
}

/// What the database decides run with these rules by (runs.judge): the SPRT's bounds (Wald's,
/// from alpha and beta), racing's critical value for each number of points still racing, a
/// tuning run's parameter clamps and types.
pub fn judge_config(
    sprt: Option<&SprtSpec>,
    race: Option<&RaceConfig>,
    points: usize,
    spsa: Option<&Spsa>,
) -> Value {
    let mut j = serde_json::Map::new();
    if let Some(s) = sprt {
        j.insert(
            "sprt".into(),
            json!({
                "elo0": s.elo0, "elo1": s.elo1, "model": s.model.to_string(),
                "lower": s.lower_bound(), "upper": s.upper_bound(),
            }),
        );
    }
    if let Some(r) = race {
        j.insert(
            "race".into(),
            // SQL arrays start at 1: `crit[k]` is the critical value with k points racing.
            json!({ "min_pairs": r.min_pairs, "crit": r.criticals(points).get(1..) }),
        );
    }
    if let Some(s) = spsa {
        j.insert("spsa".into(), json!({ "params": s.judge_params() }));
    }
    Value::Object(j)
}

/// Counts of a pairing in the `stats` crate's terms.
pub fn stats_counts(c: &PairingCounts) -> Counts {
    let u = |x: i64| x.max(0) as u64;
    let penta = Penta {
        ll: u(c.penta[0]),
        ld: u(c.penta[1]),
        dd: u(c.penta[2]),
        wd: u(c.penta[3]),
        ww: u(c.penta[4]),
    };
    let wdl = Wdl { wins: u(c.wdl[0]), draws: u(c.wdl[1]), losses: u(c.wdl[2]) };
    Counts::Paired { wdl, penta }
}

impl RunJudge {
    fn label(&self, p: i32) -> String {
        self.labels.get(p as usize).cloned().unwrap_or_else(|| format!("pairing {p}"))
    }

    fn sprt_stops(&self, counts: &[PairingCounts]) -> Vec<Stop> {
        let Some(spec) = &self.sprt else { return Vec::new() };
        let mut out = Vec::new();
        for c in counts.iter().filter(|c| c.active) {
            let Ok(r) = stats::sprt(&stats_counts(c), spec) else { continue };
            let verdict = match r.verdict {
                Verdict::H0 => "H0",
                Verdict::H1 => "H1",
                Verdict::Continue => continue,
            };
            let games = 2 * c.penta.iter().sum::<i64>();
            out.push(Stop {
                pairing: c.pairing,
                verdict: verdict.into(),
                why: format!(
                    "{}: SPRT accepted {verdict} after {games} games (LLR {:.2}, bounds [{:.2}, \
                     {:.2}])",
                    self.label(c.pairing),
                    r.llr,
                    r.lower_bound,
                    r.upper_bound
                ),
            });
        }
        out
    }

    fn race_stops(&self, counts: &[PairingCounts], already: &[Stop]) -> Vec<Stop> {
        let Some(config) = self.race else { return Vec::new() };
        let n = self.labels.len();
        if counts.len() != n {
            return Vec::new();
        }
        let mut race = Race::new(n, config);
        for c in counts.iter().filter(|c| c.dropped) {
            race.mark_dropped(c.pairing as usize);
        }
        let pentas: Vec<Penta> = counts
            .iter()
            .map(|c| match stats_counts(c) {
                Counts::Paired { penta, .. } => penta,
                _ => Penta::default(),
            })
            .collect();
        race.update(&pentas)
            .into_iter()
            .filter(|&i| counts[i].active && !already.iter().any(|s| s.pairing as usize == i))
            .map(|i| {
                let d = race.dropped()[i].clone();
                let (best, z) = d.map_or((0, 0.0), |d| (d.best, d.z));
                Stop {
                    pairing: i as i32,
                    verdict: DROPPED.into(),
                    why: format!(
                        "{}: dropped by racing after {} games (worse than {}, z = {z:.2})",
                        self.label(i as i32),
                        2 * counts[i].penta.iter().sum::<i64>(),
                        self.label(best as i32)
                    ),
                }
            })
            .collect()
    }
}

impl RunJudge {
    /// Whether the judge reads every pairing's counts (racing) or the reported one's.
    pub fn needs_all(&self) -> bool {
        self.race.is_some()
    }

    /// The pairings that stop given the counts (every pairing's, or the reported one's).
    pub fn stops(&self, counts: &[PairingCounts]) -> Vec<Stop> {
        let mut out = self.sprt_stops(counts);
        let raced = self.race_stops(counts, &out);
        out.extend(raced);
        out
    }

    /// Whether a report with these counts should ask the database for a decision.
    pub fn may_stop(&self, counts: &[PairingCounts]) -> bool {
        !self.stops(counts).is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pairing: i32, penta: [i64; 5]) -> PairingCounts {
        let wins = penta[3] + 2 * penta[4];
        let losses = penta[1] + 2 * penta[0];
        let draws = penta[1] + 2 * penta[2] + penta[3];
        PairingCounts { pairing, active: true, dropped: false, penta, wdl: [wins, draws, losses] }
    }

    #[test]
    fn the_sprt_stops_a_pairing_as_a_local_run_would() {
        let spec = SprtSpec::parse("elo0=0,elo1=10").unwrap();
        let j = RunJudge { sprt: Some(spec), race: None, labels: vec!["a vs b".into()] };
        assert!(j.stops(&[counts(0, [1, 2, 3, 2, 1])]).is_empty());
        let s = j.stops(&[counts(0, [0, 2, 10, 20, 60])]);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].verdict, "H1");
        assert!(s[0].why.contains("a vs b: SPRT accepted H1 after 184 games"), "{}", s[0].why);
        let mut inactive = counts(0, [0, 2, 10, 20, 60]);
        inactive.active = false;
        assert!(j.stops(&[inactive]).is_empty());
    }

    #[test]
    fn racing_drops_a_clearly_worse_point_once() {
        let race = RaceConfig { alpha: 0.05, min_pairs: 8 };
        let labels = vec!["x=1".into(), "x=2".into(), "x=3".into()];
        let j = RunJudge { sprt: None, race: Some(race), labels };
        let mut c = vec![
            counts(0, [1, 4, 10, 4, 1]),
            counts(1, [10, 6, 4, 0, 0]),
            counts(2, [1, 5, 10, 3, 1]),
        ];
        let s = j.stops(&c);
        assert_eq!(s.iter().map(|s| s.pairing).collect::<Vec<_>>(), [1]);
        assert_eq!(s[0].verdict, DROPPED);
        c[1].active = false;
        c[1].dropped = true;
        assert!(j.stops(&c).is_empty());
    }
}
