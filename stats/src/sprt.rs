//! The generalized sequential probability ratio test (GSPRT) of Michel Van den Bergh, as run by
//! fishtest and fastchess.
//!
//! **Hypotheses.** `H0: elo = elo0` against `H1: elo = elo1` (`elo0 < elo1`), in logistic Elo
//! (the statistic is the expected score `s = L(elo)`) or in normalized Elo (the statistic is the
//! t-value `(mu - 1/2) / sigma`, see [`crate::elo`]).
//!
//! **Outcomes.** Trinomial counts are one game per trial with outcomes L, D, W scored
//! `a = 0, 1/2, 1`. Pentanomial counts are one game pair per trial with outcomes LL, LD, DD+WL,
//! WD, WW scored by the pair's average `a = 0, 1/4, 1/2, 3/4, 1`. For nElo bounds the pair
//! t-value is `sqrt(2)` times the per-game one (`sigma_pair = sigma_game / sqrt(2)`), so the
//! test uses `t_k = sqrt(2) nElo_k / (800 / ln 10)` for pairs.
//!
//! **Regularization.** An empty bin is replaced by `1e-3` (fishtest's prior), so that `N` is the
//! regularized total and `phat_i = n_i / N` are all positive.
//!
//! **Statistic.** The generalized log-likelihood ratio replaces the unknown distribution under
//! each hypothesis by its maximum-likelihood estimate `p^(k)` subject to the hypothesis (see
//! [`crate::mle`]):
//!
//! ```text
//! LLR = N sum_i phat_i ln(p^(1)_i / p^(0)_i)
//!     = N sum_i phat_i [ln(1 + x_0 c^(0)_i) - ln(1 + x_1 c^(1)_i)].
//! ```
//!
//! Why "generalized": a plain SPRT needs the whole outcome distribution under each hypothesis,
//! but a hypothesis only fixes one number (the score or the t-value). The GSPRT fills in the rest
//! with the distribution most compatible with the observations, so the draw ratio and the pair
//! correlations are estimated from the data instead of being assumed.
//!
//! **A useful approximation.** With `t^` the observed t-value of a trial, for large `N`
//!
//! ```text
//! LLR ~ (N/2) ln[(1 + (t^ - t0)^2) / (1 + (t^ - t1)^2)] ~ (N/2) [(t^ - t0)^2 - (t^ - t1)^2],
//! ```
//!
//! so the LLR drifts by about `(t1 - t0)^2 / 2` per trial when the truth is `t1` (and by minus
//! that at `t0`): nElo bounds `[0, 2]` (`t1 - t0 = 0.00814` per pair) need about 8 * 10^4 pairs
//! at either hypothesis with alpha = beta = 0.05. This crate computes the exact LLR, not the
//! approximation.
//!
//! **Stopping rule** (Wald's bounds): `H0` is accepted when `LLR < ln(beta / (1 - alpha))`,
//! `H1` when `LLR > ln((1 - beta) / alpha)`, otherwise the test continues. With no games at all
//! the LLR is 0 (fishtest would report the tiny LLR of its regularized empty sample).

use serde::{Deserialize, Serialize};

use crate::counts::Counts;
use crate::elo::{logistic_score, t_from_nelo};
use crate::error::StatsError;
use crate::mle::{Tilted, mle_expected, mle_t_value};

/// The pseudo-count that replaces an empty bin (fishtest's `regularize`).
pub const EMPTY_BIN: f64 = 1e-3;

/// Largest |Elo| accepted as an SPRT bound.
pub const MAX_BOUND: f64 = 2000.0;

/// The Elo scale of SPRT bounds. Serialized as `"logistic"` / `"normalized"`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EloModel {
    Logistic,
    Normalized,
}

impl std::fmt::Display for EloModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EloModel::Logistic => "logistic",
            EloModel::Normalized => "normalized",
        })
    }
}

/// An SPRT: hypotheses `elo0 < elo1`, error rates `alpha` (false H1) and `beta` (false H0).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtSpec {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub model: EloModel,
}

impl SprtSpec {
    /// Parses `"elo0=0,elo1=5,alpha=0.05,beta=0.05,model=logistic"`.
    ///
    /// `elo0` and `elo1` are required; `alpha` and `beta` default to 0.05 and `model` to
    /// `normalized` (the default of fishtest and fastchess; `logistic` is the other choice).
    /// Keys may come in any order, each at most once; spaces around items are ignored.
    pub fn parse(s: &str) -> Result<SprtSpec, StatsError> {
        let err = |m: String| StatsError::InvalidSprt(m);
        let (mut elo0, mut elo1, mut alpha, mut beta, mut model) = (None, None, None, None, None);
        for item in s.split(',').map(str::trim) {
            let Some((key, value)) = item.split_once('=') else {
                return Err(err(format!(
                    "expected key=value, got {item:?} (e.g. elo0=0,elo1=5,alpha=0.05,beta=0.05,model=normalized)"
                )));
            };
            let (key, value) = (key.trim(), value.trim());
            let slot = match key {
                "elo0" => &mut elo0,
                "elo1" => &mut elo1,
                "alpha" => &mut alpha,
                "beta" => &mut beta,
                "model" => {
                    if model.is_some() {
                        return Err(err("model given twice".into()));
                    }
                    model = Some(match value {
                        "logistic" => EloModel::Logistic,
                        "normalized" => EloModel::Normalized,
                        _ => {
                            return Err(err(format!(
                                "model must be logistic or normalized, got {value:?}"
                            )));
                        }
                    });
                    continue;
                }
                _ => {
                    return Err(err(format!(
                        "unknown key {key:?} (known: elo0, elo1, alpha, beta, model)"
                    )));
                }
            };
            if slot.is_some() {
                return Err(err(format!("{key} given twice")));
            }
            let v: f64 =
                value.parse().map_err(|_| err(format!("{key} must be a number, got {value:?}")))?;
            *slot = Some(v);
        }
        let spec = SprtSpec {
            elo0: elo0.ok_or_else(|| err("elo0 is required (e.g. elo0=0,elo1=5)".into()))?,
            elo1: elo1.ok_or_else(|| err("elo1 is required (e.g. elo0=0,elo1=5)".into()))?,
            alpha: alpha.unwrap_or(0.05),
            beta: beta.unwrap_or(0.05),
            model: model.unwrap_or(EloModel::Normalized),
        };
        spec.validate()?;
        Ok(spec)
    }

    /// Checks `elo0 < elo1` (both within +/-2000), `0 < alpha, beta` and `alpha + beta < 1`
    /// (otherwise the bounds are not on both sides of 0).
    pub fn validate(&self) -> Result<(), StatsError> {
        let err = |m: String| Err(StatsError::InvalidSprt(m));
        for (name, v) in [("elo0", self.elo0), ("elo1", self.elo1)] {
            if !v.is_finite() || v.abs() > MAX_BOUND {
                return err(format!("{name} must be a number within +/-{MAX_BOUND}, got {v}"));
            }
        }
        // Both are finite here.
        if self.elo0 >= self.elo1 {
            return err(format!(
                "elo0 must be smaller than elo1, got elo0={} elo1={}",
                self.elo0, self.elo1
            ));
        }
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v > 0.0 && v < 1.0) {
                return err(format!("{name} must be between 0 and 1 (exclusive), got {v}"));
            }
        }
        // Both are in (0, 1) here, so the sum is a number.
        if self.alpha + self.beta >= 1.0 {
            return err(format!(
                "alpha + beta must be below 1, got {} + {}",
                self.alpha, self.beta
            ));
        }
        Ok(())
    }

    /// Lower bound `ln(beta / (1 - alpha))`: accept H0 below it.
    pub fn lower_bound(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// Upper bound `ln((1 - beta) / alpha)`: accept H1 above it.
    pub fn upper_bound(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// The verdict for a log-likelihood ratio.
    pub fn verdict(&self, llr: f64) -> Verdict {
        if llr < self.lower_bound() {
            Verdict::H0
        } else if llr > self.upper_bound() {
            Verdict::H1
        } else {
            Verdict::Continue
        }
    }
}

/// The state of an SPRT. Serialized as `"H0"`, `"H1"` and `"continue"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// H0 accepted (`elo = elo0`): the change failed.
    H0,
    /// H1 accepted (`elo = elo1`): the change passed.
    H1,
    /// Neither bound reached: play more games.
    #[serde(rename = "continue")]
    Continue,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::H0 => "H0",
            Verdict::H1 => "H1",
            Verdict::Continue => "continue",
        })
    }
}

/// The state of an SPRT for given counts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtResult {
    pub llr: f64,
    pub lower_bound: f64,
    pub upper_bound: f64,
    pub verdict: Verdict,
    pub elo0: f64,
    pub elo1: f64,
    pub model: EloModel,
}

/// Runs the SPRT on the counts: pentanomial when known (also for [`Counts::Paired`]),
/// trinomial otherwise.
pub fn sprt(counts: &Counts, spec: &SprtSpec) -> Result<SprtResult, StatsError> {
    spec.validate()?;
    counts.check()?;
    let llr = match *counts {
        Counts::Wdl(w) => llr(&w.ascending(), spec.elo0, spec.elo1, spec.model)?,
        Counts::Penta(p) | Counts::Paired { penta: p, .. } => {
            llr(&p.ascending(), spec.elo0, spec.elo1, spec.model)?
        }
    };
    Ok(SprtResult {
        llr,
        lower_bound: spec.lower_bound(),
        upper_bound: spec.upper_bound(),
        verdict: spec.verdict(llr),
        elo0: spec.elo0,
        elo1: spec.elo1,
        model: spec.model,
    })
}

/// The generalized LLR of `elo1` against `elo0` for counts in ascending order of score: 3
/// counts `[L, D, W]` or 5 counts `[LL, LD, DD+WL, WD, WW]`. In general `k >= 2` counts are
/// read as trials of `(k - 1) / 2` games scored by their average (outcomes `i / (k - 1)`), and
/// nElo bounds are scaled by `sqrt((k - 1) / 2)` to the trial's t-value.
pub fn llr(counts: &[u64], elo0: f64, elo1: f64, model: EloModel) -> Result<f64, StatsError> {
    let k = counts.len();
    if k < 2 {
        return Err(StatsError::InvalidCounts("an LLR needs at least two outcomes".into()));
    }
    if counts.iter().all(|&c| c == 0) {
        return Ok(0.0);
    }
    let values: Vec<f64> = (0..k).map(|i| i as f64 / (k - 1) as f64).collect();
    let regularized: Vec<f64> =
        counts.iter().map(|&c| if c == 0 { EMPTY_BIN } else { c as f64 }).collect();
    let n: f64 = regularized.iter().sum();
    let phat: Vec<f64> = regularized.iter().map(|c| c / n).collect();
    let (h0, h1): (Tilted, Tilted) = match model {
        EloModel::Logistic => (
            mle_expected(&values, &phat, logistic_score(elo0))?,
            mle_expected(&values, &phat, logistic_score(elo1))?,
        ),
        EloModel::Normalized => {
            // A trial of g games averages them: its t-value is sqrt(g) times a game's.
            let scale = ((k - 1) as f64 / 2.0).sqrt();
            (
                mle_t_value(&values, &phat, 0.5, t_from_nelo(elo0) * scale)?,
                mle_t_value(&values, &phat, 0.5, t_from_nelo(elo1) * scale)?,
            )
        }
    };
    let per_trial: f64 = (0..k).map(|i| phat[i] * (h0.log_ratio(i) - h1.log_ratio(i))).sum();
    Ok(n * per_trial)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_defaults_and_errors() {
        let s = SprtSpec::parse("elo0=0,elo1=5").unwrap();
        assert_eq!(
            s,
            SprtSpec { elo0: 0.0, elo1: 5.0, alpha: 0.05, beta: 0.05, model: EloModel::Normalized }
        );
        let s = SprtSpec::parse(" model=logistic, beta=0.1 ,alpha=0.01,elo1=2.5,elo0=-1").unwrap();
        assert_eq!(
            s,
            SprtSpec { elo0: -1.0, elo1: 2.5, alpha: 0.01, beta: 0.1, model: EloModel::Logistic }
        );
        for bad in [
            "",
            "elo0=0",
            "elo1=5",
            "elo0=5,elo1=5",
            "elo0=6,elo1=5",
            "elo0=x,elo1=5",
            "elo0=0,elo1=5,alpha=0",
            "elo0=0,elo1=5,beta=1",
            "elo0=0,elo1=5,alpha=0.6,beta=0.5",
            "elo0=0,elo1=5,model=bayes",
            "elo0=0,elo1=5,gamma=1",
            "elo0=0,elo0=1,elo1=5",
            "elo0=0,elo1=nan",
            "elo0=0,elo1=inf",
            "elo0=0;elo1=5",
        ] {
            assert!(SprtSpec::parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn wald_bounds() {
        let s = SprtSpec::parse("elo0=0,elo1=2").unwrap();
        assert!((s.upper_bound() - (19.0f64).ln()).abs() < 1e-15);
        assert!((s.lower_bound() + (19.0f64).ln()).abs() < 1e-15);
        assert!((s.upper_bound() - 2.944_438_979_166_44).abs() < 1e-12);
        assert_eq!(s.verdict(3.0), Verdict::H1);
        assert_eq!(s.verdict(-3.0), Verdict::H0);
        assert_eq!(s.verdict(0.0), Verdict::Continue);
    }

    #[test]
    fn verdict_and_model_serialize_as_documented() {
        let names: Vec<String> = [Verdict::H0, Verdict::H1, Verdict::Continue]
            .iter()
            .map(|v| {
                let json = serde_json::to_string(v).unwrap();
                assert_eq!(json, format!("\"{v}\""));
                assert_eq!(&serde_json::from_str::<Verdict>(&json).unwrap(), v);
                json
            })
            .collect();
        assert_eq!(names, ["\"H0\"", "\"H1\"", "\"continue\""]);
        assert_eq!(serde_json::to_string(&EloModel::Normalized).unwrap(), "\"normalized\"");
        assert_eq!(serde_json::to_string(&EloModel::Logistic).unwrap(), "\"logistic\"");
    }
}
