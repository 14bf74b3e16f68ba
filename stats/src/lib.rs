//! Draw-aware match statistics for engine testing: a pure library (no I/O).
//!
//! * [`counts`]: trinomial (W, D, L per game) and pentanomial (LL, LD, DD+WL, WD, WW per game
//!   pair) counts.
//! * [`estimate`]: score, logistic Elo and normalized Elo with 95 % intervals, LOS.
//! * [`fixed_sample`]: the draw-aware fixed-sample test of the Crafty ProbCut paper.
//! * [`sprt`](mod@sprt) and [`mle`]: the generalized SPRT of Michel Van den Bergh as run by fishtest
//!   (trinomial and pentanomial, logistic and normalized Elo bounds), solved to full precision.
//! * [`holm`](mod@holm): Holm-Bonferroni correction for many comparisons.
//! * [`selection`]: which of several candidates is best (`P(best)`), and racing's threshold for
//!   dropping one that is clearly worse.
//! * [`residual`](mod@residual): how far one worker's pairs stand from the rest of a run's
//!   (a chi-square test of homogeneity, as fishtest checks its workers).
//! * [`summarize`]: all of it in one serializable [`Summary`].
//! * Model fits: [`quadratic`] (weighted least-squares quadratic in one or two variables, its
//!   maximum and a parametric-bootstrap interval), [`bradley_terry`] (maximum-likelihood ratings
//!   of many engines with anchored error bars), [`line_fit`] (a least-squares line).
//! * [`sample`]: a mean with its t interval, a paired t test, a proportion's Wilson interval
//!   (the search test's oracle losses and best-move rates).
//!
//! Normal distribution functions come from `statrs`, linear algebra from `nalgebra` (the copy
//! statrs uses), normal draws from `rand_distr` with a generator the caller seeds.
//!
//! ```
//! use stats::{Counts, Options, Penta, SprtSpec, Verdict, summarize};
//!
//! // A fishtest run's pentanomial counts; fishtest stored its LLR as -2.936953911013966.
//! let counts = Counts::Penta(Penta { ll: 369, ld: 12695, dd: 27124, wd: 12664, ww: 332 });
//! let opts = Options { sprt: Some(SprtSpec::parse("elo0=0,elo1=2")?), ..Options::default() };
//! let s = summarize(&counts, &opts)?;
//! let sprt = s.sprt.as_ref().unwrap();
//! assert!((sprt.llr - -2.936953911013966).abs() < 1e-9);
//! assert_eq!(sprt.verdict, Verdict::Continue); // just above Wald's -ln(19) = -2.944
//! assert_eq!(s.format_elo(), "-0.3 +/- 1.1");
//! # Ok::<(), stats::StatsError>(())
//! ```

pub mod bradley_terry;
pub mod counts;
pub mod elo;
pub mod error;
pub mod estimate;
pub mod fixed_sample;
pub mod holm;
pub mod line_fit;
pub mod mle;
pub mod quadratic;
pub mod residual;
pub mod sample;
pub mod selection;
pub mod sprt;
pub mod sprt_length;
pub mod sprt_remaining;
pub mod summary;

pub use counts::{Counts, GameScore, Penta, Wdl};
pub use elo::{NELO_PER_T, logistic_elo, logistic_score};
pub use error::StatsError;
pub use estimate::{Estimates, ScoreMoments};
pub use fixed_sample::{DrawAwareTest, draw_aware_test, pair_variance_test};
pub use holm::holm;
pub use residual::{Residual, worker_residual};
pub use sprt::{EloModel, SprtResult, SprtSpec, Verdict, llr, sprt};
pub use sprt_length::{expected_pairs, expected_pairs_from};
pub use sprt_remaining::{Remaining, remaining_pairs};
pub use summary::{Options, Summary, TestBasis, summarize};
