//! Ratings from every game of a gauntlet or round-robin: a maximum-likelihood fit of the
//! logistic (Bradley-Terry) model over all pairings, anchored on one engine.
//!
//! Model: engine `i` scores `E = 1 / (1 + 10^(-(r_i - r_j) / 400))` per game against `j`. A draw
//! counts as half a win and half a loss, so the log-likelihood is
//! `sum over games of s ln E + (1 - s) ln(1 - E)` with `s` in {0, 1/2, 1} (the same quasi-
//! likelihood as Ordo's). It is maximised by Newton's method with the anchor held at its
//! given Elo.
//!
//! Error bars: the observed information matrix (the negative Hessian of the log-likelihood at the
//! maximum, `I_ii = c^2 sum_j n_ij E_ij (1 - E_ij)`, `I_ij = -c^2 n_ij E_ij (1 - E_ij)`, with
//! `c = ln 10 / 400`) is inverted over the free engines; `+/-` is 1.96 times the square root of
//! its diagonal, a 95% interval for each rating RELATIVE TO THE ANCHOR (the anchor's own is 0).
//! For the logistic model the Hessian does not depend on the outcomes, so observed and expected
//! (Fisher) information coincide. Draws make real games less variable than the binomial
//! `E (1 - E)` assumes, so with many draws the intervals are somewhat wide (conservative).
//!
//! The maximum exists only when the "scored at least half a point against" graph is strongly
//! connected (no engine or group won or lost everything against the rest). When it is not, one
//! virtual draw is added to every pair of engines that met, and the result says so.
//!
//! Linear algebra by nalgebra: each Newton step and the covariance come from a Cholesky
//! factorisation of the information matrix (symmetric positive definite over the free engines);
//! a matrix that is not is the error [`RatingError::Singular`], never a panic.

use nalgebra::{DMatrix, DVector};

use crate::counts::Wdl;

/// Games between two engines, from `a`'s point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meeting {
    pub a: usize,
    pub b: usize,
    pub wdl: Wdl,
}

/// One engine's fitted rating and its record.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Rating {
    pub engine: usize,
    /// `None`: no games connect this engine to the anchor.
    pub elo: Option<f64>,
    /// Half-width of the 95% interval relative to the anchor (`Some(0)` for the anchor).
    pub err95: Option<f64>,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Rating {
    /// Points per game, `None` without games.
    pub fn score(&self) -> Option<f64> {
        (self.games > 0).then(|| (self.wins as f64 + 0.5 * self.draws as f64) / self.games as f64)
    }

    pub fn draw_ratio(&self) -> Option<f64> {
        (self.games > 0).then(|| self.draws as f64 / self.games as f64)
    }
}

/// The fit over all engines.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ratings {
    pub anchor: usize,
    pub anchor_elo: f64,
    /// Indexed by engine.
    pub ratings: Vec<Rating>,
    /// One draw per pair of engines that met was added because the plain maximum does not exist.
    pub virtual_draws: bool,
    pub iterations: usize,
}

impl Ratings {
    /// Engine indices ordered best first (engines without a rating last).
    pub fn ranked(&self) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..self.ratings.len()).collect();
        idx.sort_by(|&x, &y| {
            let (ex, ey) = (self.ratings[x].elo, self.ratings[y].elo);
            ey.unwrap_or(f64::NEG_INFINITY).total_cmp(&ex.unwrap_or(f64::NEG_INFINITY))
        });
        idx
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RatingError {
    #[error("anchor engine index {0} is out of range")]
    BadAnchor(usize),
    #[error("meeting names engine {0}, but there are only {1} engines")]
    BadEngine(usize, usize),
    #[error("the ratings fit did not converge")]
    NoConvergence,
    #[error("the ratings' information matrix is singular (the games do not determine them)")]
    Singular,
}

/// Natural units per Elo point.
const C: f64 = std::f64::consts::LN_10 / 400.0;
/// Two-sided 95% normal quantile.
const Z95: f64 = 1.959_963_984_540_054;

/// Fits ratings of `n` engines from `meetings`, with engine `anchor` held at `anchor_elo`.
pub fn fit(
    n: usize,
    meetings: &[Meeting],
    anchor: usize,
    anchor_elo: f64,
) -> Result<Ratings, RatingError> {
    if anchor >= n {
        return Err(RatingError::BadAnchor(anchor));
    }
    let (mut table, mut ratings) = Crosstable::tally(n, meetings)?;
    // Engines connected to the anchor by games; the others cannot be rated against it.
    let comp = reachable(n, anchor, |i, j| table.games[i][j] > 0.0);
    let virtual_draws = !table.strongly_connected(anchor, &comp);
    if virtual_draws {
        table.add_virtual_draws(&comp);
    }
    // Free parameters: the anchor's component minus the anchor, in natural units.
    let free: Vec<usize> = comp.iter().copied().filter(|&e| e != anchor).collect();
    let (x, iterations) = table.newton(&free, &comp)?;
    let (h, _) = table.information(&free, &comp, &x);
    let cov = h.cholesky().ok_or(RatingError::Singular)?.inverse();
    for &e in &comp {
        ratings[e].elo = Some(anchor_elo + x[e] / C);
        ratings[e].err95 = Some(match free.iter().position(|&f| f == e) {
            Some(a) => Z95 * cov[(a, a)].max(0.0).sqrt() / C,
            None => 0.0,
        });
    }
    Ok(Ratings { anchor, anchor_elo, ratings, virtual_draws, iterations })
}

/// Games and points of engine i against engine j (`games[i][j]`, `points[i][j]`).
struct Crosstable {
    games: Vec<Vec<f64>>,
    points: Vec<Vec<f64>>,
}

impl Crosstable {
    /// The crosstable of `meetings` and each engine's record (not yet rated).
    fn tally(n: usize, meetings: &[Meeting]) -> Result<(Crosstable, Vec<Rating>), RatingError> {
        let mut games = vec![vec![0.0f64; n]; n];
        let mut points = vec![vec![0.0f64; n]; n];
        let mut ratings: Vec<Rating> = (0..n)
            .map(|engine| Rating {
                engine,
                elo: None,
                err95: None,
                games: 0,
                wins: 0,
                draws: 0,
                losses: 0,
            })
            .collect();
        for m in meetings {
            for e in [m.a, m.b] {
                if e >= n {
                    return Err(RatingError::BadEngine(e, n));
                }
            }
            if m.a == m.b {
                continue;
            }
            let (w, d, l) = (m.wdl.wins as f64, m.wdl.draws as f64, m.wdl.losses as f64);
            games[m.a][m.b] += w + d + l;
            games[m.b][m.a] += w + d + l;
            points[m.a][m.b] += w + 0.5 * d;
            points[m.b][m.a] += l + 0.5 * d;
            let sides = [(m.a, (m.wdl.wins, m.wdl.losses)), (m.b, (m.wdl.losses, m.wdl.wins))];
            for (e, (w, l)) in sides {
                let r = &mut ratings[e];
                r.games += m.wdl.games();
                r.wins += w;
                r.draws += m.wdl.draws;
                r.losses += l;
            }
        }
        Ok((Crosstable { games, points }, ratings))
    }

    /// Whether every engine of `comp` scored points on a path to the anchor and back: if not,
    /// the maximum-likelihood ratings do not exist (an engine that never lost is infinitely
    /// strong).
    fn strongly_connected(&self, anchor: usize, comp: &[usize]) -> bool {
        let n = self.games.len();
        let scored = |i: usize, j: usize| self.points[i][j] > 0.0;
        comp.iter().all(|&e| {
            reachable(n, anchor, scored).contains(&e) && reachable(n, e, scored).contains(&anchor)
        })
    }

    /// One virtual draw added to every pairing of `comp` that played.
    fn add_virtual_draws(&mut self, comp: &[usize]) {
        for &i in comp {
            for &j in comp {
                if i != j && self.games[i][j] > 0.0 {
                    self.games[i][j] += 1.0;
                    self.points[i][j] += 0.5;
                }
            }
        }
    }

    /// The information matrix and the gradient of the log-likelihood over the `free` engines
    /// at ratings `x` (natural units), from the games within `comp`.
    fn information(
        &self,
        free: &[usize],
        comp: &[usize],
        x: &[f64],
    ) -> (DMatrix<f64>, DVector<f64>) {
        let (games, points) = (&self.games, &self.points);
        let k = free.len();
        let mut h = DMatrix::zeros(k, k);
        let mut g = DVector::zeros(k);
        for (a, &i) in free.iter().enumerate() {
            for &j in comp {
                if i == j || games[i][j] == 0.0 {
                    continue;
                }
                let e = 1.0 / (1.0 + (x[j] - x[i]).exp());
                let w = games[i][j] * e * (1.0 - e);
                g[a] += points[i][j] - games[i][j] * e;
                h[(a, a)] += w;
                if let Some(b) = free.iter().position(|&f| f == j) {
                    h[(a, b)] -= w;
                }
            }
        }
        (h, g)
    }

    /// Damped Newton steps from all ratings 0 until the largest step is below 1e-10 (at most
    /// 200): the ratings (natural units, 0 for the anchor and the engines not in `comp`) and
    /// the number of steps.
    fn newton(&self, free: &[usize], comp: &[usize]) -> Result<(Vec<f64>, usize), RatingError> {
        let mut x = vec![0.0f64; self.games.len()];
        let mut iterations = 0;
        let mut converged = free.is_empty();
        while !converged && iterations < 200 {
            iterations += 1;
            let (h, g) = self.information(free, comp, &x);
            let step = h.cholesky().ok_or(RatingError::Singular)?.solve(&g);
            let biggest = step.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            if !biggest.is_finite() {
                return Err(RatingError::NoConvergence);
            }
            // Damped: at most 2 natural units (~350 Elo) per iteration.
            let damp = if biggest > 2.0 { 2.0 / biggest } else { 1.0 };
            for (a, &i) in free.iter().enumerate() {
                x[i] += damp * step[a];
            }
            converged = biggest < 1e-10;
        }
        if !converged || x.iter().any(|v| !v.is_finite()) {
            return Err(RatingError::NoConvergence);
        }
        Ok((x, iterations))
    }
}

/// Engines reachable from `start` along edges `edge(i, j)`, `start` included, in index order.
fn reachable(n: usize, start: usize, edge: impl Fn(usize, usize) -> bool) -> Vec<usize> {
    let mut seen = vec![false; n];
    seen[start] = true;
    let mut stack = vec![start];
    while let Some(i) = stack.pop() {
        for (j, s) in seen.iter_mut().enumerate() {
            if !*s && edge(i, j) {
                *s = true;
                stack.push(j);
            }
        }
    }
    (0..n).filter(|&i| seen[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    fn expected(d: f64) -> f64 {
        1.0 / (1.0 + 10f64.powf(-d / 400.0))
    }

    fn meet(a: usize, b: usize, w: u64, d: u64, l: u64) -> Meeting {
        Meeting { a, b, wdl: Wdl { wins: w, draws: d, losses: l } }
    }

    #[test]
    fn recovers_known_strengths_from_exact_scores() {
        // True ratings; every pair plays 10000 games scoring exactly its expectation (10% draws).
        let truth = [0.0, 60.0, -120.0, 250.0];
        let mut ms = Vec::new();
        for a in 0..4 {
            for b in a + 1..4 {
                let e = expected(truth[a] - truth[b]);
                let d = 1000u64;
                let w = (10000.0 * e - 0.5 * d as f64).round() as u64;
                ms.push(meet(a, b, w, d, 10000 - d - w));
            }
        }
        let r = fit(4, &ms, 0, 0.0).unwrap();
        assert!(!r.virtual_draws);
        for (i, t) in truth.iter().enumerate() {
            let got = r.ratings[i].elo.unwrap();
            assert!((got - t).abs() < 0.5, "engine {i}: {got} vs {t}");
        }
        assert_eq!(r.ranked(), [3, 1, 0, 2]);
        // Re-anchoring shifts every rating by the same amount.
        let r2 = fit(4, &ms, 3, 2500.0).unwrap();
        let shift = 2500.0 - r.ratings[3].elo.unwrap();
        for i in 0..4 {
            let d = r2.ratings[i].elo.unwrap() - r.ratings[i].elo.unwrap();
            assert!((d - shift).abs() < 1e-6, "{d} vs {shift}");
        }
        assert_eq!(r2.ratings[3].err95, Some(0.0));
    }

    #[test]
    fn recovers_strengths_from_a_sampled_gauntlet_within_the_intervals() {
        // A gauntlet (engine 0 vs each other) sampled from the model: the true differences must
        // lie inside the 95% intervals (with a margin: this is one seeded sample).
        let truth = [0.0, -50.0, 80.0, 150.0];
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(11);
        let mut ms = Vec::new();
        for b in 1..4 {
            let e = expected(truth[0] - truth[b]);
            let (mut w, mut d, mut l) = (0, 0, 0);
            for _ in 0..2000 {
                // Draw ratio 40%; wins make up the rest of the expectation.
                let u: f64 = rng.random();
                if u < e - 0.2 {
                    w += 1;
                } else if u < e + 0.2 {
                    d += 1;
                } else {
                    l += 1;
                }
            }
            ms.push(meet(0, b, w, d, l));
        }
        let r = fit(4, &ms, 0, 0.0).unwrap();
        for (b, want) in truth.iter().enumerate().skip(1) {
            let got = r.ratings[b].elo.unwrap();
            let err = r.ratings[b].err95.unwrap();
            assert!(err > 5.0 && err < 30.0, "{err}");
            assert!((got - want).abs() < err, "engine {b}: {got} +/- {err} vs {want}");
        }
    }

    #[test]
    fn error_bar_matches_the_two_player_formula() {
        // Two players, n games, score p: var(x) = 1 / (n p (1 - p)) in natural units.
        let r = fit(2, &[meet(0, 1, 30, 40, 30)], 0, 0.0).unwrap();
        assert!(r.ratings[1].elo.unwrap().abs() < 1e-9);
        let want = Z95 * (1.0 / (100.0 * 0.25f64)).sqrt() / C;
        assert!((r.ratings[1].err95.unwrap() - want).abs() < 1e-6);
        assert_eq!(r.ratings[0].score(), Some(0.5));
        assert_eq!(r.ratings[0].draw_ratio(), Some(0.4));
    }

    #[test]
    fn perfect_scores_and_unconnected_engines() {
        // Engine 1 lost every game: no finite maximum, so virtual draws are added.
        let r = fit(3, &[meet(0, 1, 10, 0, 0)], 0, 0.0).unwrap();
        assert!(r.virtual_draws);
        let e1 = r.ratings[1].elo.unwrap();
        assert!(e1 < -300.0 && e1.is_finite(), "{e1}");
        // Engine 2 never played: no rating, ranked last.
        assert_eq!(r.ratings[2].elo, None);
        assert_eq!(r.ranked(), [0, 1, 2]);
        assert_eq!(r.ratings[2].score(), None);
        assert!(matches!(fit(2, &[], 5, 0.0), Err(RatingError::BadAnchor(5))));
        // Nobody to rate against the anchor: an empty information matrix, no error.
        let r = fit(1, &[], 0, 1500.0).unwrap();
        assert_eq!(
            (r.ratings[0].elo, r.ratings[0].err95, r.iterations),
            (Some(1500.0), Some(0.0), 0)
        );
        assert!(matches!(
            fit(2, &[meet(0, 3, 1, 0, 0)], 0, 0.0),
            Err(RatingError::BadEngine(3, 2))
        ));
    }
}
