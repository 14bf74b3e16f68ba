//! The SPSA arithmetic, as fishtest does it, and nothing else (no I/O).
//!
//! Over N planned iterations, with A (10 % of N by default), for each parameter:
//! c = c_end * N^0.101, a_end = r_end * c_end^2, a = a_end * (A + N)^0.602, and at iteration k
//! (from 0) c_k = c / (k+1)^0.101, a_k = a / (A+k+1)^0.602; so the last iteration has
//! c_k = c_end and a_k = a_end. An iteration plays theta + c_k*Delta against theta - c_k*Delta
//! (each clamped to [min, max], integer options rounded stochastically), Delta_i = +-1; when its
//! pair finishes, theta_i += a_k / c_k * result * Delta_i (result: the plus side's wins minus
//! losses over the pair, -2..2), clamped to [min, max].

use std::collections::BTreeMap;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

/// Exponent of a_k.
pub const ALPHA: f64 = 0.602;
/// Exponent of c_k.
pub const GAMMA: f64 = 0.101;

/// The gain sequences of one parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gains {
    pub a: f64,
    pub c: f64,
    /// fishtest's A (stability constant).
    pub big_a: f64,
}

impl Gains {
    /// The gains that reach `c_end` and a_end = `r_end` * `c_end`^2 at the last of `iterations`.
    pub fn derive(c_end: f64, r_end: f64, iterations: u64, big_a: f64) -> Gains {
        let n = iterations as f64;
        let a_end = r_end * c_end * c_end;
        Gains { a: a_end * (big_a + n).powf(ALPHA), c: c_end * n.powf(GAMMA), big_a }
    }

    /// c_k (k from 0).
    pub fn c_k(&self, k: u64) -> f64 {
        self.c / (k as f64 + 1.0).powf(GAMMA)
    }

    /// a_k (k from 0).
    pub fn a_k(&self, k: u64) -> f64 {
        self.a / (self.big_a + k as f64 + 1.0).powf(ALPHA)
    }
}

/// `x` rounded down or up, up with probability frac(x) (fishtest's rounding of integer
/// parameters): the mean is preserved.
pub fn stochastic_round(x: f64, rng: &mut impl RngExt) -> f64 {
    round_with(x, rng.random::<f64>())
}

/// [`stochastic_round`] with its uniform number `u` in [0, 1) given: up when `u < frac(x)`.
pub fn round_with(x: f64, u: f64) -> f64 {
    let f = x.floor();
    if u < x - f { f + 1.0 } else { f }
}

/// The settings and a started iteration, as tune.jsonl holds them.
pub use crate::store::formats::{Iteration, Spsa};

/// The random numbers and gains of iteration `k` ([`Spsa::draws`]): everything
/// [`Spsa::begin_with`] needs besides theta, so that a database can start an iteration without
/// the seed (the fleet's `fleet_spsa_begin` in `fleet/sql/judge.sql`). Serialized with these
/// field names; every list has one entry per parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Draws {
    /// The iteration.
    pub k: u64,
    /// +1 or -1 per parameter (Delta).
    pub delta: Vec<i8>,
    /// The uniform number in [0, 1) that rounds the plus side's value of an integer parameter
    /// (up when it is below the fractional part); `null` for other parameters.
    pub round_plus: Vec<Option<f64>>,
    /// The same for the minus side.
    pub round_minus: Vec<Option<f64>>,
    /// c_k per parameter.
    pub c_k: Vec<f64>,
    /// a_k per parameter.
    pub a_k: Vec<f64>,
}

/// One parameter's range and kind: what starting an iteration from its [`Draws`] and applying
/// one need besides theta, so that the fleet's server does both from what a run stores
/// (`runs.judge->'spsa'->'params'`, written from [`Spsa::judge_params`]) without the settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub min: f64,
    pub max: f64,
    /// An integer option (its values are rounded by the draws' numbers).
    pub integer: bool,
}

impl Limits {
    /// `x` raised to min, then lowered to max (as `f64::clamp` for a range in order, without
    /// its panic for one upside down: what the SQL judge did).
    fn clamp(&self, x: f64) -> f64 {
        let x = if x < self.min { self.min } else { x };
        if x > self.max { self.max } else { x }
    }
}

/// The iteration `draws` start from `theta`, one entry per parameter of `limits`: each side's
/// values theta +- c_k Delta, clamped to [min, max], integer parameters (those with a rounding
/// number) rounded. Every list must have an entry per parameter.
pub fn begin_within(limits: &[Limits], draws: &Draws, theta: &[f64]) -> Iteration {
    let Draws { k, delta, c_k, a_k, .. } = draws;
    let side = |sign: f64, round: &[Option<f64>]| -> Vec<f64> {
        limits
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let x = l.clamp(theta[i] + sign * c_k[i] * f64::from(delta[i]));
                match round[i] {
                    Some(u) => round_with(x, u),
                    None => x,
                }
            })
            .collect()
    };
    let plus = side(1.0, &draws.round_plus);
    let minus = side(-1.0, &draws.round_minus);
    Iteration {
        k: *k,
        theta: theta.to_vec(),
        delta: delta.clone(),
        plus,
        minus,
        c_k: c_k.clone(),
        a_k: a_k.clone(),
    }
}

/// Applies a finished iteration (its `delta`, `c_k`, `a_k`) with `result` to `theta`, one entry
/// per parameter of `limits`: theta_i + a_k / c_k * result * Delta_i, clamped to [min, max].
pub fn update_within(
    limits: &[Limits],
    theta: &mut [f64],
    delta: &[i8],
    c_k: &[f64],
    a_k: &[f64],
    result: f64,
) {
    for (i, l) in limits.iter().enumerate() {
        let step = a_k[i] / c_k[i] * result * f64::from(delta[i]);
        theta[i] = l.clamp(theta[i] + step);
    }
}

/// A finished pair: its iteration, result, and the games stored once it was finished.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Finished {
    pub k: u64,
    pub result: f64,
    pub games: u64,
}

/// One applied update (tune.json's history).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub k: u64,
    /// Games of the run once this pair was finished.
    pub games: u64,
    /// theta after the update.
    pub theta: Vec<f64>,
    pub c_k: Vec<f64>,
    pub a_k: Vec<f64>,
    pub result: f64,
}

impl Spsa {
    pub fn gains(&self, i: usize) -> Gains {
        let p = &self.params[i];
        Gains::derive(p.c_end, p.r_end, self.iterations, self.big_a)
    }

    pub fn start_theta(&self) -> Vec<f64> {
        self.params.iter().map(|p| p.start).collect()
    }

    /// The random numbers of iteration `k`: one stream per (seed, k).
    fn rng(&self, k: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(k);
        rng
    }

    /// Iteration `k` from `theta`: Delta, the clamped and rounded values of both sides, gains.
    pub fn begin(&self, k: u64, theta: &[f64]) -> Iteration {
        self.begin_with(&self.draws(k), theta)
    }

    /// The random numbers of iteration `k` from its stream, in the order they are drawn: the
    /// signs of Delta, then a rounding uniform per integer parameter for the plus side, then
    /// for the minus side; and the gains c_k, a_k.
    pub fn draws(&self, k: u64) -> Draws {
        let mut rng = self.rng(k);
        let delta: Vec<i8> =
            self.params.iter().map(|_| if rng.random::<bool>() { 1 } else { -1 }).collect();
        let mut side = || -> Vec<Option<f64>> {
            (0..self.params.len()).map(|i| self.integer[i].then(|| rng.random::<f64>())).collect()
        };
        let round_plus = side();
        let round_minus = side();
        let c_k: Vec<f64> = (0..self.params.len()).map(|i| self.gains(i).c_k(k)).collect();
        let a_k: Vec<f64> = (0..self.params.len()).map(|i| self.gains(i).a_k(k)).collect();
        Draws { k, delta, round_plus, round_minus, c_k, a_k }
    }

    /// The iteration `draws` start from `theta` ([`begin_within`] this run's parameters).
    pub fn begin_with(&self, draws: &Draws, theta: &[f64]) -> Iteration {
        begin_within(&self.limits(), draws, theta)
    }

    /// Each parameter's range and kind, as [`begin_within`] and [`update_within`] read them.
    pub fn limits(&self) -> Vec<Limits> {
        self.params
            .iter()
            .zip(&self.integer)
            .map(|(p, &integer)| Limits { min: p.min, max: p.max, integer })
            .collect()
    }

    /// The parameters as the fleet's database keeps them ([`Limits`], serialized):
    /// `[{"min": f, "max": f, "integer": bool}, ...]`, one object per parameter.
    pub fn judge_params(&self) -> serde_json::Value {
        serde_json::to_value(self.limits()).unwrap_or_default()
    }

    /// Applies a finished iteration's `result` to `theta` (the current one, which may have
    /// moved since the iteration started, when several play at once).
    pub fn update(&self, theta: &mut [f64], it: &Iteration, result: f64) {
        update_within(&self.limits(), theta, &it.delta, &it.c_k, &it.a_k, result);
    }

    /// theta and the history from the iterations as started and the pairs in the order they
    /// finished; an iteration finished but never started is an error.
    pub fn replay(
        &self,
        started: &BTreeMap<u64, Iteration>,
        finished: &[Finished],
    ) -> Result<(Vec<f64>, Vec<Step>), String> {
        let mut theta = self.start_theta();
        let mut history = Vec::with_capacity(finished.len());
        for &Finished { k, result, games } in finished {
            let it = started.get(&k).ok_or_else(|| {
                format!("the games of iteration {k} are stored, but not what it played")
            })?;
            self.update(&mut theta, it, result);
            history.push(Step {
                k,
                games,
                theta: theta.clone(),
                c_k: it.c_k.clone(),
                a_k: it.a_k.clone(),
                result,
            });
        }
        Ok((theta, history))
    }
}

/// An option value as sent with `setoption` (integers without a decimal point).
pub fn option_text(value: f64, integer: bool) -> String {
    if integer { format!("{}", value.round() as i64) } else { format!("{value}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spsa(params: &[&str], integer: &[bool], iterations: u64) -> Spsa {
        let texts: Vec<String> = params.iter().map(|s| s.to_string()).collect();
        Spsa {
            params: super::super::params::parse_params(&texts).unwrap(),
            integer: integer.to_vec(),
            iterations,
            big_a: iterations as f64 / 10.0,
            seed: 7,
        }
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} != {b}");
    }

    /// Hand-computed: N = 100, A = 10, c_end = 10, r_end = 0.002: c = 10 * 100^0.101 =
    /// 15.92209, a_end = 0.2, a = 0.2 * 110^0.602 = 3.38804, a_0 = a / 11^0.602 = 0.79989
    #[test]
    fn gains_as_fishtest() {
        let g = Gains::derive(10.0, 0.002, 100, 10.0);
        close(g.c, 15.922087270511703);
        close(g.a, 3.3880389316745125);
        close(g.c_k(0), g.c);
        close(g.a_k(0), 0.7998894995221949);
        // The last iteration reaches c_end and a_end.
        close(g.c_k(99), 10.0);
        close(g.a_k(99), 0.2);
        // The step per game point at the end: a_end / c_end = r_end * c_end.
        close(g.a_k(99) / g.c_k(99), 0.02);
        close(g.c_k(9), g.c / 10f64.powf(0.101));
    }

    #[test]
    fn stochastic_rounding_keeps_the_mean() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 100_000;
        let sum: f64 = (0..n).map(|_| stochastic_round(37.3, &mut rng)).sum();
        let mean = sum / n as f64;
        // Seeded: this mean is the same on every run (0.3 +- 3 sigma is 0.0043).
        assert!((mean - 37.3).abs() < 0.005, "{mean}");
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for _ in 0..1000 {
            let r = stochastic_round(4.75, &mut rng);
            assert!(r == 4.0 || r == 5.0);
        }
        assert_eq!(stochastic_round(6.0, &mut rng), 6.0);
    }

    #[test]
    fn iterations_are_seeded_clamped_and_rounded() {
        let s = spsa(&["X,98,0,100,10,0.002", "f,0.5,0,1,0.1,0.002"], &[true, false], 50);
        let it = s.begin(3, &[98.0, 0.5]);
        assert_eq!(it, s.begin(3, &[98.0, 0.5]), "same seed and k: same iteration");
        assert_ne!(
            (0..8).map(|k| s.begin(k, &[98.0, 0.5]).delta).collect::<Vec<_>>(),
            vec![it.delta.clone(); 8]
        );
        let up = if it.delta[0] > 0 { &it.plus } else { &it.minus };
        let down = if it.delta[0] > 0 { &it.minus } else { &it.plus };
        assert_eq!(up[0], 100.0, "clamped to max");
        assert_eq!(down[0].fract(), 0.0, "integer option rounded");
        assert!((down[0] - (98.0 - it.c_k[0])).abs() < 1.0);
        close(it.plus[1] - it.minus[1], 2.0 * it.c_k[1] * f64::from(it.delta[1]));
    }

    #[test]
    fn update_moves_towards_the_winner_and_clamps() {
        let s = spsa(&["X,50,0,100,10,0.002"], &[true], 100);
        let it = s.begin(0, &[50.0]);
        let mut theta = vec![50.0];
        s.update(&mut theta, &it, 2.0);
        close(theta[0], 50.0 + 2.0 * it.a_k[0] / it.c_k[0] * f64::from(it.delta[0]));
        let mut edge = vec![100.0];
        let big = Iteration { a_k: vec![1e6], delta: vec![1], ..it.clone() };
        s.update(&mut edge, &big, 2.0);
        assert_eq!(edge, [100.0]);
    }

    #[test]
    fn replay_applies_updates_in_finishing_order() {
        let s = spsa(&["X,50,0,100,10,0.5", "Y,5,0,10,1,0.5"], &[true, false], 20);
        let mut theta = s.start_theta();
        let mut started = BTreeMap::new();
        // Iterations 0 and 1 start from the same theta (two at once); 1 finishes first.
        let i0 = s.begin(0, &theta);
        let i1 = s.begin(1, &theta);
        started.insert(0, i0.clone());
        started.insert(1, i1.clone());
        s.update(&mut theta, &i1, -1.0);
        s.update(&mut theta, &i0, 2.0);
        let i2 = s.begin(2, &theta);
        started.insert(2, i2.clone());
        s.update(&mut theta, &i2, 0.5);
        let f = |k, result, games| Finished { k, result, games };
        let order = [f(1, -1.0, 2), f(0, 2.0, 4), f(2, 0.5, 6)];
        let (back, history) = s.replay(&started, &order).unwrap();
        assert_eq!(back, theta);
        assert_eq!(
            history.iter().map(|h| (h.k, h.games)).collect::<Vec<_>>(),
            [(1, 2), (0, 4), (2, 6)]
        );
        assert_eq!(history[2].theta, theta);
        let e = s.replay(&started, &[f(5, 1.0, 2)]).unwrap_err();
        assert!(e.contains("iteration 5"), "{e}");
    }

    #[test]
    fn draws_are_what_begin_uses_and_serialize_as_documented() {
        let s = spsa(&["X,98,0,100,10,0.002", "f,0.5,0,1,0.1,0.002"], &[true, false], 50);
        let d = s.draws(3);
        assert_eq!(s.begin_with(&d, &[97.2, 0.5]), s.begin(3, &[97.2, 0.5]));
        assert!(d.round_plus[0].is_some() && d.round_minus[0].is_some());
        assert_eq!((d.round_plus[1], d.round_minus[1]), (None, None));
        let json = serde_json::to_value(&d).unwrap();
        let mut keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["a_k", "c_k", "delta", "k", "round_minus", "round_plus"]);
        assert_eq!(json["round_plus"][1], serde_json::Value::Null);
        assert_eq!(serde_json::from_value::<Draws>(json).unwrap(), d);
        assert_eq!(
            s.judge_params(),
            serde_json::json!([
                {"min": 0.0, "max": 100.0, "integer": true},
                {"min": 0.0, "max": 1.0, "integer": false}
            ])
        );
    }

    #[test]
    fn option_values_as_sent() {
        assert_eq!(option_text(37.0, true), "37");
        assert_eq!(option_text(0.85, false), "0.85");
    }
}
