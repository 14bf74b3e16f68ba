//! What a report transaction decides, by the rules a local run uses: a pairing's SPRT on its
//! paired counts (`stats::sprt`, as `run/` and the sweep tracker call it), a sweep's racing
//! (`sweep::racing::Race`), and a tuning iteration's update (`tune::spsa::Spsa::update`).

use anyhow::{Context, Result};
use serde_json::Value;
use stats::{Counts, Penta, SprtSpec, Verdict, Wdl};

use super::queue::{Judge, PairingCounts, Stop};
use crate::sweep::racing::{Race, RaceConfig};
use crate::tune::spsa::{Iteration, Spsa, Step};

/// The verdict word a racing drop is stored with (racing skips those points from then on).
pub const DROPPED: &str = "dropped";

/// The judge of one run.
#[derive(Clone)]
pub struct RunJudge {
    pub sprt: Option<SprtSpec>,
    pub race: Option<RaceConfig>,
    pub labels: Vec<String>,
    pub spsa: Option<Spsa>,
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

impl Judge for RunJudge {
    fn needs_all(&self) -> bool {
        self.race.is_some()
    }

    fn stops(&mut self, counts: &[PairingCounts]) -> Vec<Stop> {
        let mut out = self.sprt_stops(counts);
        let raced = self.race_stops(counts, &out);
        out.extend(raced);
        out
    }

    fn tune(&mut self, theta: &Value, spsa: &Value, result: f64) -> Result<(Value, Value)> {
        let s = self.spsa.as_ref().context("this run is not a tuning run")?;
        let mut theta: Vec<f64> =
            serde_json::from_value(theta.clone()).context("the stored theta is not a list")?;
        let it: Iteration =
            serde_json::from_value(spsa.clone()).context("a logged iteration does not parse")?;
        s.update(&mut theta, &it, result);
        let step = Step {
            k: it.k,
            games: 0,
            theta: theta.clone(),
            c_k: it.c_k.clone(),
            a_k: it.a_k.clone(),
            result,
        };
        Ok((serde_json::to_value(&theta)?, serde_json::to_value(&step)?))
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
        let mut j =
            RunJudge { sprt: Some(spec), race: None, labels: vec!["a vs b".into()], spsa: None };
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
        let mut j = RunJudge { sprt: None, race: Some(race), labels, spsa: None };
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
