//! `--adaptive`: racing. Points that are clearly worse than the current best stop getting games,
//! so the remaining games go to the contenders.
//!
//! The test, run after every finished game pair (in the order pairs are stored, so replaying the
//! store reproduces every decision):
//! - Only active points with at least `min_pairs` finished pairs take part; the current best is
//!   the one with the highest mean score among them.
//! - For each other participant `i`, with pair-score means `m` and standard errors `s` (from the
//!   pentanomial counts, as in `stats::ScoreMoments`):
//!   `z = (m_best - m_i) / sqrt(s_best^2 + s_i^2)` (a one-sided Welch-type z test of "i is worse
//!   than the best").
//! - `i` is dropped when `z > Phi^-1(1 - alpha / (k - 1))`, `k` the number of active points:
//!   a Bonferroni correction over the `k - 1` comparisons made at that look
//!   (`stats::selection::drop_threshold`).
//!
//! Honest caveat: the test is repeated after every pair, which inflates the chance of dropping a
//! point that is in fact as good as the best above `alpha` (the usual cost of peeking; racing
//! methods such as Hoeffding or F-races accept it for speed). `min_pairs` and the Bonferroni
//! factor keep it modest; a dropped point's figures stay in the table, marked as dropped.

use serde::{Deserialize, Serialize};

use stats::{Penta, ScoreMoments};

/// Racing settings (sweep.json `race`).
pub use crate::store::formats::RaceConfig;

impl RaceConfig {
    /// The critical values of a look: entry `k` (for `k` in `0..=points`) is the `z` a point
    /// must exceed to be dropped when `k` points are active, `Phi^-1(1 - alpha / (k - 1))`
    /// (the level clamped to [0.5, 1 - 1e-15]); entries for `k < 2` are 0 (no look happens).
    /// [`Race::update`] uses exactly these; the fleet passes them to its SQL judge
    /// (`fleet_race_drops` in `fleet/sql/judge.sql`), which cannot compute normal quantiles.
    pub fn criticals(&self, points: usize) -> Vec<f64> {
        (0..=points).map(|k| if k < 2 { 0.0 } else { self.critical(k) }).collect()
    }

    /// The critical value with `k >= 2` active points.
    fn critical(&self, k: usize) -> f64 {
        stats::selection::drop_threshold(self.alpha, k - 1)
    }
}

impl Default for RaceConfig {
    fn default() -> Self {
        RaceConfig { alpha: 0.05, min_pairs: 8 }
    }
}

/// Why and when a point left the race.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dropped {
    /// Games the point had played when dropped.
    pub after_games: u64,
    /// Index of the best point at that moment.
    pub best: usize,
    /// The test statistic that dropped it.
    pub z: f64,
}

/// The race state: which points are still in.
#[derive(Clone, Debug)]
pub struct Race {
    config: RaceConfig,
    /// The critical value by number of active points, when given rather than computed from
    /// `config.alpha` (the fleet's stored judge: [`Race::with_criticals`]).
    criticals: Option<Vec<f64>>,
    dropped: Vec<Option<Dropped>>,
}

impl Race {
    pub fn new(points: usize, config: RaceConfig) -> Race {
        Race { config, criticals: None, dropped: vec![None; points] }
    }

    /// A race that looks with the critical values given: `criticals[k]` for `k` active points,
    /// as [`RaceConfig::criticals`] makes them (a look with `k` past the end drops nothing).
    /// The fleet stores them with a run, so a decision does not depend on the server's build.
    pub fn with_criticals(points: usize, min_pairs: u64, criticals: Vec<f64>) -> Race {
        let config = RaceConfig { alpha: f64::NAN, min_pairs };
        Race { config, criticals: Some(criticals), dropped: vec![None; points] }
    }

    pub fn is_active(&self, i: usize) -> bool {
        self.dropped.get(i).is_some_and(Option::is_none)
    }

    pub fn dropped(&self) -> &[Option<Dropped>] {
        &self.dropped
    }

    /// Takes point `i` out of the race (a race rebuilt from stored decisions: the fleet).
    pub fn mark_dropped(&mut self, i: usize) {
        if let Some(d) = self.dropped.get_mut(i)
            && d.is_none()
        {
            *d = Some(Dropped { after_games: 0, best: i, z: 0.0 });
        }
    }

    pub fn active_count(&self) -> usize {
        self.dropped.iter().filter(|d| d.is_none()).count()
    }

    /// Runs one look over the current counts (one per point) and returns the points dropped now.
    pub fn update(&mut self, counts: &[Penta]) -> Vec<usize> {
        let k = self.active_count();
        if k < 2 || counts.len() != self.dropped.len() {
            return Vec::new();
        }
        let est: Vec<Option<(f64, f64)>> = counts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if !self.is_active(i) || p.pairs() < self.config.min_pairs {
                    return None;
                }
                ScoreMoments::from_penta(p).map(|m| (m.score, m.std_error))
            })
            .collect();
        let Some(best) = (0..est.len())
            .filter(|&i| est[i].is_some())
            .max_by(|&a, &b| est[a].unwrap().0.total_cmp(&est[b].unwrap().0).then(b.cmp(&a)))
        else {
            return Vec::new();
        };
        let (mb, sb) = est[best].unwrap_or((0.0, 0.0));
        let crit = match &self.criticals {
            Some(c) => c.get(k).copied().unwrap_or(f64::INFINITY),
            None => self.config.criticals(k)[k],
        };
        let mut out = Vec::new();
        for (i, e) in est.iter().enumerate() {
            let Some((mi, si)) = *e else { continue };
            if i == best {
                continue;
            }
            let diff = mb - mi;
            let se = (sb * sb + si * si).sqrt();
            let z = if se > 0.0 {
                diff / se
            } else if diff > 0.0 {
                f64::INFINITY
            } else {
                0.0
            };
            if z > crit {
                self.dropped[i] = Some(Dropped {
                    after_games: 2 * counts[i].pairs(),
                    best,
                    z: if z.is_finite() { z } else { f64::MAX },
                });
                out.push(i);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn penta(ll: u64, ld: u64, dd: u64, wd: u64, ww: u64) -> Penta {
        Penta { ll, ld, dd, wd, ww }
    }

    #[test]
    fn clearly_worse_point_is_dropped_and_close_ones_stay() {
        let mut race = Race::new(3, RaceConfig::default());
        let counts = [penta(1, 4, 10, 4, 1), penta(10, 6, 4, 0, 0), penta(1, 5, 10, 3, 1)];
        let dropped = race.update(&counts);
        assert_eq!(dropped, [1]);
        assert!(!race.is_active(1) && race.is_active(0) && race.is_active(2));
        let d = race.dropped()[1].clone().unwrap();
        assert_eq!((d.after_games, d.best), (40, 0));
        assert!(d.z > 2.0);
        // Dropped points are not looked at again; nothing else goes.
        assert!(race.update(&counts).is_empty());
    }

    #[test]
    fn nothing_happens_before_min_pairs() {
        let mut race = Race::new(2, RaceConfig { alpha: 0.05, min_pairs: 8 });
        assert!(race.update(&[penta(0, 0, 0, 0, 7), penta(7, 0, 0, 0, 0)]).is_empty());
        assert_eq!(race.update(&[penta(0, 0, 0, 0, 8), penta(8, 0, 0, 0, 0)]), [1]);
        // The last point is never dropped.
        assert!(race.update(&[penta(0, 0, 0, 0, 8), penta(8, 0, 0, 0, 0)]).is_empty());
        assert_eq!(race.active_count(), 1);
    }

    #[test]
    fn criticals_are_bonferroni_quantiles() {
        let c = RaceConfig { alpha: 0.1, min_pairs: 8 }.criticals(4);
        assert_eq!(c.len(), 5);
        assert_eq!((c[0], c[1]), (0.0, 0.0));
        let phi = |comparisons: usize| stats::selection::drop_threshold(0.1, comparisons);
        assert_eq!(c[2], phi(1));
        assert_eq!(c[3], phi(2));
        assert_eq!(c[4], phi(3));
        assert!((c[2] - 1.2815515655446004).abs() < 1e-12, "Phi^-1(0.9) = {}", c[2]);
        // alpha / (k - 1) above 1/2: the level is clamped to 1/2, z = 0.
        assert!(RaceConfig { alpha: 0.9, min_pairs: 1 }.criticals(2)[2].abs() < 1e-12);
    }

    #[test]
    fn bonferroni_makes_more_points_harder_to_drop() {
        // Same pair of counts: dropped when racing two points, not among twenty.
        let good = penta(2, 6, 14, 8, 4);
        let worse = penta(4, 9, 14, 5, 2);
        let mut two = Race::new(2, RaceConfig { alpha: 0.2, min_pairs: 8 });
        assert_eq!(two.update(&[good, worse]), [1]);
        let mut many = Race::new(20, RaceConfig { alpha: 0.2, min_pairs: 8 });
        let mut counts = vec![penta(0, 0, 0, 0, 0); 20];
        counts[0] = good;
        counts[1] = worse;
        assert!(many.update(&counts).is_empty());
    }
}
