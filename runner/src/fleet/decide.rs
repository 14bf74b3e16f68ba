//! Decisions, by the rules a local run uses: a pairing's SPRT on its paired counts (the
//! `stats` crate's LLR, as `run/` and the sweep tracker use it) and a sweep's racing
//! (`sweep::racing::Race`).
//!
//! A fleet run stores its rules when it is made ([`judge_config`]: the SPRT's bounds, racing's
//! critical values), and the server decides by them ([`Judge`], read back from the run, in
//! `queue::settle`), so a decision does not depend on the build of the server that takes it. A
//! worker's [`RunJudge`] (the same rules from the run's plan) reads the counts a report returns
//! only to know when to ask a server that does not decide by itself. (Runners up to schema
//! version 6 decided inside the database, `fleet_settle_run` of `sql/v2_trust.sql` and
//! `sql/judge.sql`, by the same rules: `runner/tests/fleet_db/queue.rs` compares the two while
//! the functions are still in the schema.)

use serde::Deserialize;
use serde_json::{Value, json};
use stats::{Counts, EloModel, Penta, SprtSpec, Wdl};

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

/// The SPRT as a run stores it (`runs.judge.sprt`): the hypotheses, the model, and Wald's
/// bounds on the LLR, computed once by the submitter's side from alpha and beta.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct StoredSprt {
    pub elo0: f64,
    pub elo1: f64,
    pub model: EloModel,
    pub lower: f64,
    pub upper: f64,
}

/// Racing as a run stores it (`runs.judge.race`): `crit[k - 1]` is the critical value with
/// `k` points racing (racing's quantiles, computed once when the run was made).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct StoredRace {
    pub min_pairs: u64,
    #[serde(default)]
    pub crit: Option<Vec<f64>>,
}

/// What a run is decided by, as stored with it (`runs.judge`, made by [`judge_config`]): the
/// rules the server applies to every stored pair ([`Judge::stops`]). A tuning run's `spsa` part
/// is read by the iteration step, not here.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Judge {
    #[serde(default)]
    pub sprt: Option<StoredSprt>,
    #[serde(default)]
    pub race: Option<StoredRace>,
}

impl Judge {
    /// The judge a run stored, checked: a part that does not parse, a bound that is not a
    /// number or bounds in the wrong order are an error saying which (such a run cannot be
    /// decided, and fails with it).
    pub fn read(stored: &Value) -> Result<Judge, String> {
        if !stored.is_object() {
            return Err("its stored judge does not parse: not an object".into());
        }
        let part = |key: &str| stored.get(key).filter(|v| !v.is_null()).cloned();
        let j = Judge {
            sprt: part("sprt")
                .map(serde_json::from_value::<StoredSprt>)
                .transpose()
                .map_err(|e| format!("its stored judge does not parse: sprt: {e}"))?,
            race: part("race")
                .map(serde_json::from_value::<StoredRace>)
                .transpose()
                .map_err(|e| format!("its stored judge does not parse: race: {e}"))?,
        };
        if let Some(s) = &j.sprt {
            let all = [s.elo0, s.elo1, s.lower, s.upper];
            if !all.iter().all(|x| x.is_finite()) || s.elo0 >= s.elo1 || s.lower >= s.upper {
                return Err(format!(
                    "its stored SPRT is not one (elo0 {}, elo1 {}, bounds [{}, {}])",
                    s.elo0, s.elo1, s.lower, s.upper
                ));
            }
        }
        if let Some(c) = j.race.as_ref().and_then(|r| r.crit.as_ref())
            && c.iter().any(|x| x.is_nan())
        {
            return Err("its stored racing critical values are not numbers".into());
        }
        Ok(j)
    }

    /// Whether deciding needs every pairing's counts (racing compares them).
    pub fn needs_all(&self) -> bool {
        self.race.is_some()
    }

    /// The pairings that stop given the counts (every pairing's, or the reported one's when
    /// only the SPRT judges), with `labels` (by pairing) in the reasons.
    pub fn stops(&self, counts: &[PairingCounts], labels: &[String]) -> Vec<Stop> {
        let mut out = self.sprt_stops(counts, labels);
        let raced = self.race_stops(counts, labels, &out);
        out.extend(raced);
        out
    }

    fn sprt_stops(&self, counts: &[PairingCounts], labels: &[String]) -> Vec<Stop> {
        let Some(s) = &self.sprt else { return Vec::new() };
        let mut out = Vec::new();
        for c in counts.iter().filter(|c| c.active) {
            let Counts::Paired { penta, .. } = stats_counts(c) else { continue };
            let Ok(llr) = stats::llr(&penta.ascending(), s.elo0, s.elo1, s.model) else {
                continue;
            };
            let verdict = if llr < s.lower {
                "H0"
            } else if llr > s.upper {
                "H1"
            } else {
                continue;
            };
            out.push(Stop {
                pairing: c.pairing,
                verdict: verdict.into(),
                why: format!(
                    "{}: SPRT accepted {verdict} after {} games (LLR {llr:.2}, bounds [{:.2}, \
                     {:.2}])",
                    label(labels, c.pairing),
                    c.games(),
                    s.lower,
                    s.upper
                ),
                games: c.games(),
                best: None,
                z: None,
            });
        }
        out
    }

    fn race_stops(
        &self,
        counts: &[PairingCounts],
        labels: &[String],
        already: &[Stop],
    ) -> Vec<Stop> {
        let Some(r) = &self.race else { return Vec::new() };
        let n = counts.len();
        // SQL's array of `crit[k]` for k = 1..: the race's by number of points, from 0.
        let criticals: Vec<f64> =
            std::iter::once(0.0).chain(r.crit.iter().flatten().copied()).collect();
        let mut race = Race::with_criticals(n, r.min_pairs, criticals);
        // A pairing stopped (by racing or by its SPRT, before or in this decision) no longer
        // races.
        for (i, c) in counts.iter().enumerate() {
            if !c.active || already.iter().any(|s| s.pairing == c.pairing) {
                race.mark_dropped(i);
            }
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
            .map(|i| {
                let c = &counts[i];
                let d = race.dropped()[i].clone();
                let (best, z) = d.map_or((i, 0.0), |d| (d.best, d.z));
                let best = counts[best].pairing;
                Stop {
                    pairing: c.pairing,
                    verdict: DROPPED.into(),
                    why: format!(
                        "{}: dropped by racing after {} games (worse than {}, z = {})",
                        label(labels, c.pairing),
                        c.games(),
                        label(labels, best),
                        fixed2(z)
                    ),
                    games: c.games(),
                    best: Some(best),
                    z: Some(z),
                }
            })
            .collect()
    }
}

/// `x` with two decimals as the reasons print it; past 1e15 (racing's z of a point with no
/// spread is the largest double) in exponent form, as PostgreSQL writes a double.
fn fixed2(x: f64) -> String {
    if x.is_finite() && x.abs() >= 1e15 {
        let e = format!("{x:e}");
        if e.contains("e-") { e } else { e.replace('e', "e+") }
    } else {
        format!("{x:.2}")
    }
}

fn label(labels: &[String], p: i32) -> String {
    usize::try_from(p)
        .ok()
        .and_then(|p| labels.get(p))
        .cloned()
        .unwrap_or_else(|| format!("pairing {p}"))
}

impl RunJudge {
    /// The judge this run stores for `points` pairings (what [`judge_config`] writes).
    pub fn stored(&self, points: usize) -> Judge {
        Judge {
            sprt: self.sprt.map(|s| StoredSprt {
                elo0: s.elo0,
                elo1: s.elo1,
                model: s.model,
                lower: s.lower_bound(),
                upper: s.upper_bound(),
            }),
            race: self.race.map(|r| StoredRace {
                min_pairs: r.min_pairs,
                crit: r.criticals(points).get(1..).map(<[f64]>::to_vec),
            }),
        }
    }

    /// Whether the judge reads every pairing's counts (racing) or the reported one's.
    pub fn needs_all(&self) -> bool {
        self.race.is_some()
    }

    /// The pairings that stop given the counts (every pairing's, or the reported one's).
    pub fn stops(&self, counts: &[PairingCounts]) -> Vec<Stop> {
        self.stored(self.labels.len()).stops(counts, &self.labels)
    }

    /// Whether a report with these counts should ask the server for a decision.
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

    #[test]
    fn the_stored_judge_is_the_one_the_runner_made() {
        let spec = SprtSpec::parse("elo0=-1,elo1=4,model=logistic").unwrap();
        let race = RaceConfig { alpha: 0.1, min_pairs: 8 };
        let stored = judge_config(Some(&spec), Some(&race), 3, None);
        let j = RunJudge { sprt: Some(spec), race: Some(race), labels: vec![String::new(); 3] };
        assert_eq!(Judge::read(&stored).unwrap(), j.stored(3));
        assert_eq!(Judge::read(&json!({})).unwrap(), Judge::default());
    }

    #[test]
    fn a_judge_that_cannot_decide_is_an_error_saying_why() {
        let bad = [
            (json!({"sprt": {"elo0": "x"}}), "does not parse"),
            (json!({"sprt": 3}), "does not parse"),
            (json!([]), "does not parse"),
            (
                json!({"sprt": {"elo0": 5, "elo1": 0, "model": "normalized", "lower": -2.9,
                                "upper": 2.9}}),
                "not one",
            ),
            (
                json!({"sprt": {"elo0": 0, "elo1": 5, "model": "normalized", "lower": 2.9,
                                "upper": -2.9}}),
                "not one",
            ),
            (
                json!({"sprt": {"elo0": 0, "elo1": 5, "model": "other", "lower": -2.9,
                                "upper": 2.9}}),
                "does not parse",
            ),
            (json!({"race": {"min_pairs": -1, "crit": [0.0]}}), "does not parse"),
        ];
        for (stored, says) in bad {
            let why = Judge::read(&stored).unwrap_err();
            assert!(why.contains(says), "{stored}: {why}");
        }
    }

    #[test]
    fn a_stop_in_the_same_decision_takes_a_point_out_of_the_race() {
        // Pairing 0 is the best by far, and its SPRT stops it: racing then compares 1 and 2
        // only, as the database's decision did (it read the counts after the SPRT's stops).
        let spec = SprtSpec::parse("elo0=0,elo1=10").unwrap();
        let race = RaceConfig { alpha: 0.05, min_pairs: 8 };
        let labels = vec!["x=1".into(), "x=2".into(), "x=3".into()];
        let j = RunJudge { sprt: Some(spec), race: Some(race), labels };
        let c = [
            counts(0, [0, 2, 10, 20, 60]),
            counts(1, [1, 4, 10, 4, 1]),
            counts(2, [1, 5, 10, 3, 1]),
        ];
        let s = j.stops(&c);
        assert_eq!(s.iter().map(|s| s.pairing).collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn reasons_print_numbers_as_the_database_did() {
        assert_eq!(fixed2(1.234), "1.23");
        assert_eq!(fixed2(f64::INFINITY), "inf");
        assert_eq!(fixed2(f64::MAX), "1.7976931348623157e+308");
    }
}
