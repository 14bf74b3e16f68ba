//! One estimate across the points of a sweep: a quadratic fitted to every point's Elo, its
//! optimum, and a 95 % interval for the optimum.
//!
//! **Data.** Each point contributes its mean pair score `s` and standard error `se_s` from its
//! pentanomial counts (`stats::ScoreMoments`, the numbers behind the table), turned into logistic
//! Elo `y = L^-1(s)` with the delta-method error `se_y = se_s * 400 / (ln 10 * s (1 - s))`. A
//! point whose pairs all scored the same gets the floor error of `super::analysis::min_std_error`;
//! a 0 % or 100 % point is moved a quarter point (the smallest pair step) inside, so its Elo is
//! finite and its weight small. Every point needs `MIN_PAIRS` complete pairs (below that the
//! surface is absent and says why), at least 3 distinct values (one parameter) or 6 points (two).
//!
//! **Model.** Weighted least squares (weights `1 / se_y^2`) of Elo on the value, in a scaled
//! variable `u = (x - centre) / half_width` (the swept range maps to [-1, 1]):
//! `y = b0 + b1 u + b2 u^2` (one parameter), `y = b0 + b1 u + b2 v + b3 u^2 + b4 u v + b5 v^2`
//! (two). Why Elo and not the score: a quadratic in Elo is a logistic model whose score saturates
//! towards 0 and 1 far from the optimum, as real strength curves do, and the optimum's place is
//! the same on both scales (Elo is monotone in the score). Goodness of fit: `chi^2 = sum w r^2` on
//! `n - p` degrees of freedom; below `FIT_P_MIN` the fit is called poor and no optimum is given
//! (the curve is not quadratic over this range: narrow it around the best points).
//!
//! **Optimum.** One parameter: `u* = -b1 / (2 b2)` when `b2 < 0`. Two: the stationary point when
//! the Hessian is negative definite (a maximum, not a saddle or a minimum).
//!
//! **Interval: parametric bootstrap, percentile.** `DRAWS` draws `y*_i ~ N(yhat_i, se_y_i^2)`
//! around the fitted curve, each refitted; the interval is the 2.5 % and 97.5 % quantiles of the
//! draws' optima, per coordinate. A one-parameter draw that is not concave has no finite
//! optimum; it counts as `+inf` or `-inf` on the side where its curve is higher at the range's
//! ends (the way it rises). A two-parameter draw without a maximum counts against both ends of
//! each interval (`-inf` for the lower quantile, `+inf` for the upper): conservative. The delta
//! method was not used: `u*` is a ratio whose denominator `b2` is often near zero with sweep-sized
//! samples, where the delta method's symmetric interval is badly wrong. The draws use a ChaCha8
//! generator seeded from the run's seed, so a report reproduces the live run's numbers.
//!
//! **Where the numbers are computed.** The fit, its maximum and the bootstrap are
//! `stats::quadratic` (linear algebra by nalgebra, normal draws by rand_distr); this module turns
//! the sweep's points into observations and the result into a status and words.
//!
//! **When no number is given.** The estimate or an end of its interval outside the swept range
//! ("not bracketed", with the side the curve rises towards), no maximum, a poor fit: `optimum`
//! and `ci` are null and `note` says why in words. `estimate` and `draw_interval` keep the raw
//! figures (null where infinite) for whoever wants them.
//!
//! **Coverage** (tests below: simulated pentanomial games, 40 % draws, 6 points on [0, 1], 100
//! pairs each, true Elo `40 - 300 (x - x0)^2`, 1000 sweeps, 400 draws, fixed seeds). Optimum
//! `x0 = 0.37`: the interval as drawn (an infinite end where it leaves the range) covers the
//! truth in 94.0 % of sweeps; a number is reported in 78.0 % of them and covers in 96.9 % of
//! those. Near the edge, `x0 = 0.9`: 93.8 % as drawn, a number in only 12.2 % of sweeps (the rest
//! say "not bracketed"), and those numbers cover in 79 %: an interval that ends just inside the
//! range is less sure than it looks, which is why the range should extend past the optimum.

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use stats::ScoreMoments;
pub use stats::quadratic::Obs;
use stats::quadratic::{self, NoMaximum, Quadratic, QuadraticError};

use super::analysis::{SweepAnalysis, min_std_error};
use super::values::numeric;
use crate::report::figures::MIN_PAIRS;

/// Bootstrap draws.
pub const DRAWS: usize = 2000;
/// Goodness-of-fit p-value below which the fit is called poor.
pub const FIT_P_MIN: f64 = 0.01;
/// Mixed into the run's seed for the bootstrap generator ("surface" in ASCII).
const SEED_SALT: u64 = 0x0073_7572_6661_6365;

pub const MODEL_1D: &str = "quadratic in logistic Elo: elo = b0 + b1 u + b2 u^2, weighted least \
     squares (weights 1/se^2 from each point's pair scores), u = (x - centre) / half_width";
pub const MODEL_2D: &str = "quadratic surface in logistic Elo: elo = b0 + b1 u + b2 v + b3 u^2 + \
     b4 u v + b5 v^2, weighted least squares (weights 1/se^2 from each point's pair scores), u, v \
     = (x - centre) / half_width per parameter";
pub const INTERVAL_METHOD: &str = "parametric bootstrap (draws around the fitted curve with each \
     point's standard error, refitted), 2.5 % and 97.5 % quantiles of the draws' optima";

/// The fitted quadratic as summary.json holds it.
pub use crate::store::formats::{FitQuality, Interval, Loc, Status, Surface};

impl Surface {
    fn absent(params: &[String], model: &str, note: String) -> Surface {
        Surface {
            model: model.to_string(),
            status: Status::Absent,
            optimum: None,
            ci: None,
            note,
            interval_method: INTERVAL_METHOD.into(),
            params: params.to_vec(),
            scaling: Vec::new(),
            coefficients: None,
            fit: None,
            estimate: None,
            draw_interval: None,
            elo_at_optimum: None,
            draws: 0,
            draws_without_maximum: 0,
            brief: String::new(),
        }
    }

    /// Fitted Elo at `x` (original units), if there is a fit.
    pub fn predict(&self, x: &[f64]) -> Option<f64> {
        Some(quadratic::predict(&self.scaling, self.coefficients.as_ref()?, x))
    }
}

/// Fits the quadratic to `obs` (all with one coordinate, or all with two) over the swept box
/// `ranges` (`[min, max]` per parameter) and bootstraps the optimum's interval with `draws`
/// draws from `seed`. `params` name the coordinates; `fmt` writes a value for the note.
pub fn fit(
    params: &[String],
    obs: &[Obs],
    ranges: &[[f64; 2]],
    draws: usize,
    seed: u64,
    fmt: &dyn Fn(usize, f64) -> String,
) -> Surface {
    let dim = ranges.len();
    let model = if dim == 2 { MODEL_2D } else { MODEL_1D };
    let q = match Quadratic::fit(obs, ranges) {
        Ok(q) => q,
        Err(e) => {
            let why = no_fit_why(&e, dim);
            return Surface::absent(params, model, why);
        }
    };
    let (chi2, dof, p_value) = (q.chi2, q.dof, q.p_value);
    let quality = FitQuality { points: q.points, chi2, dof, p_value };
    let boot = q.bootstrap(draws, &mut ChaCha8Rng::seed_from_u64(seed ^ SEED_SALT));
    let ends = boot.ends;
    let without_max = boot.without_maximum;
    let draw_interval: Vec<[Option<f64>; 2]> =
        ends.iter().map(|e| e.map(|v| v.is_finite().then_some(v))).collect();

    let est = q.maximum();
    let estimate_x: Option<Vec<f64>> = est.as_ref().ok().cloned();
    let loc = |v: &[f64]| if dim == 1 { Loc::One(v[0]) } else { Loc::Two([v[0], v[1]]) };
    let mut s = Surface {
        model: model.to_string(),
        status: Status::Ok,
        optimum: None,
        ci: None,
        note: String::new(),
        interval_method: INTERVAL_METHOD.into(),
        params: params.to_vec(),
        scaling: q.scaling.clone(),
        coefficients: Some(q.coefficients.clone()),
        fit: Some(quality),
        estimate: estimate_x.as_deref().map(loc),
        draw_interval: Some(draw_interval),
        elo_at_optimum: None,
        draws,
        draws_without_maximum: without_max,
        brief: String::new(),
    };
    let fit_text = match p_value {
        Some(pv) => format!("chi-square {chi2:.1} on {dof} dof, p = {}", short_p(pv)),
        None => "no degrees of freedom left to check the fit".to_string(),
    };
    if let Some(pv) = p_value
        && (pv < FIT_P_MIN || pv.is_nan())
    {
        s.status = Status::PoorFit;
        s.note = format!(
            "poor fit: the points scatter about the quadratic more than their errors allow \
             ({fit_text}); narrow the range around the best points"
        );
        return s;
    }
    let name = |k: usize| params.get(k).cloned().unwrap_or_default();
    let Some(xs) = estimate_x else {
        s.status = Status::NoMaximum;
        s.note = match est {
            Err(NoMaximum::HigherAt { top }) => format!(
                "no maximum: the fitted curve is not concave (it is highest at {} {})",
                name(0),
                fmt(0, if top { ranges[0][1] } else { ranges[0][0] })
            ),
            _ => "no maximum: the fitted surface is a saddle or has a minimum".to_string(),
        };
        return s;
    };
    // Outside the box, in words, with the side the curve rises towards.
    for k in 0..dim {
        let f = |v: f64| fmt(k, v);
        if let Some(why) =
            unbracketed_why(&name(k), xs[k], ranges[k], ends[k], &f, without_max, draws)
        {
            s.status = Status::NotBracketed;
            s.note = format!("optimum not bracketed: {why}");
            return s;
        }
    }
    s.optimum = Some(loc(&xs));
    s.ci = Some(if dim == 1 { Interval::One(ends[0]) } else { Interval::Two([ends[0], ends[1]]) });
    s.elo_at_optimum = s.predict(&xs);
    describe_optimum(&mut s, &xs, &ends, fmt, &fit_text);
    s
}

/// The optimum `xs` with its intervals `ends` in words: [`Surface::brief`] and the note
/// (which ends with `fit_text`, the fit's quality).
fn describe_optimum(
    s: &mut Surface,
    xs: &[f64],
    ends: &[[f64; 2]],
    fmt: &dyn Fn(usize, f64) -> String,
    fit_text: &str,
) {
    let dim = xs.len();
    let name = |k: usize| s.params.get(k).cloned().unwrap_or_default();
    let at: Vec<String> = (0..dim).map(|k| format!("{} = {}", name(k), fmt(k, xs[k]))).collect();
    let cis: Vec<String> = (0..dim)
        .map(|k| format!("{} [{}, {}]", name(k), fmt(k, ends[k][0]), fmt(k, ends[k][1])))
        .collect();
    let brief = (0..dim)
        .map(|k| {
            format!(
                "{} = {} [{}, {}]",
                name(k),
                fmt(k, xs[k]),
                fmt(k, ends[k][0]),
                fmt(k, ends[k][1])
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    s.note = format!(
        "{} (95 % interval {}; Elo there {:+.1}; {fit_text})",
        at.join(", "),
        cis.join(", "),
        s.elo_at_optimum.unwrap_or(0.0)
    );
    s.brief = brief;
}

/// Why no quadratic could be fitted, in words.
fn no_fit_why(e: &QuadraticError, dim: usize) -> String {
    match e {
        QuadraticError::Dimension(_) | QuadraticError::MixedDimensions { .. } => {
            "a fit needs one or two numeric parameters".to_string()
        }
        QuadraticError::TooFewPoints { need, have } => {
            format!("a quadratic needs at least {need} points, {have} available")
        }
        QuadraticError::NonFinite => "a point has no finite Elo or error".to_string(),
        QuadraticError::Singular if dim == 1 => {
            "a quadratic needs at least 3 distinct values".to_string()
        }
        QuadraticError::Singular => "the points do not determine a quadratic surface (each \
             parameter needs at least 3 distinct values, and the grid 6 points)"
            .to_string(),
    }
}

/// Why the optimum `x` of coordinate `n` (swept over `[lo, hi]`, its interval `[a, c]`) is not
/// bracketed by the sweep, in words, with the side the curve rises towards; None when it is.
fn unbracketed_why(
    n: &str,
    x: f64,
    [lo, hi]: [f64; 2],
    [a, c]: [f64; 2],
    fmt: &dyn Fn(f64) -> String,
    without_max: usize,
    draws: usize,
) -> Option<String> {
    Some(if x > hi {
        format!("the fitted maximum lies beyond {n} {} (the curve still rises there)", fmt(hi))
    } else if x < lo {
        format!("the fitted maximum lies below {n} {} (the curve still rises there)", fmt(lo))
    } else if a < lo && c > hi {
        format!(
            "its 95 % interval is wider than the swept range of {n} ({without_max} of {draws} \
             draws without a maximum); play more games"
        )
    } else if c > hi {
        format!("its 95 % interval reaches beyond {n} {} (the curve may still rise there)", fmt(hi))
    } else if a < lo {
        format!("its 95 % interval reaches below {n} {} (the curve may still rise there)", fmt(lo))
    } else {
        return None;
    })
}

fn short_p(p: f64) -> String {
    if p < 1e-4 {
        "<0.0001".into()
    } else if p >= 0.1 {
        format!("{p:.2}")
    } else {
        format!("{p:.3}")
    }
}

/// A point's Elo and its error from pentanomial counts (see the module documentation); `None`
/// without pairs.
pub fn point_elo(penta: &stats::Penta) -> Option<(f64, f64)> {
    let n = penta.pairs();
    let m = ScoreMoments::from_penta(penta)?;
    let q = 0.25 / n as f64;
    let s = m.score.clamp(q, 1.0 - q);
    let se_s = m.std_error.max(min_std_error(n));
    let y = stats::logistic_elo(s)?;
    let se = se_s * 400.0 / (std::f64::consts::LN_10 * s * (1.0 - s));
    Some((y, se))
}

/// Decimals of the most precise value string.
fn decimals(values: &[&str]) -> usize {
    values.iter().map(|v| v.split_once('.').map_or(0, |(_, f)| f.len())).max().unwrap_or(0)
}

/// The surface of a sweep's analysis, the bootstrap seeded from `seed` (the run's seed).
pub fn of_analysis(a: &SweepAnalysis, seed: u64) -> Surface {
    let dim = a.params.len();
    let model = if dim == 2 { MODEL_2D } else { MODEL_1D };
    if !(1..=2).contains(&dim) {
        return Surface::absent(
            &a.params,
            model,
            format!("no fit over {dim} parameters (one or two only)"),
        );
    }
    let value = |r: &super::analysis::PointRow, k: usize| {
        r.assignments.iter().find(|(n, _)| *n == a.params[k]).map(|x| x.1.clone())
    };
    let mut obs = Vec::new();
    let mut few = Vec::new();
    for r in &a.rows {
        let pairs = r.summary.pairs.unwrap_or(0);
        let xs: Option<Vec<f64>> =
            (0..dim).map(|k| value(r, k).as_deref().and_then(numeric)).collect();
        let Some(xs) = xs else {
            return Surface::absent(
                &a.params,
                model,
                format!("{}: the values are not all numbers", r.label),
            );
        };
        if pairs < MIN_PAIRS {
            few.push(format!("{} ({pairs})", r.label));
            continue;
        }
        match r.summary.penta.as_ref().and_then(point_elo) {
            Some((y, se)) => obs.push(Obs { x: xs, y, se }),
            None => few.push(format!("{} ({pairs})", r.label)),
        }
    }
    if !few.is_empty() {
        return Surface::absent(
            &a.params,
            model,
            format!(
                "not yet: the fit needs {MIN_PAIRS} complete pairs at every point ({})",
                few.join(", ")
            ),
        );
    }
    let mut ranges = Vec::new();
    let mut dec = Vec::new();
    for k in 0..dim {
        let vals: Vec<String> = a.rows.iter().filter_map(|r| value(r, k)).collect();
        let nums: Vec<f64> = vals.iter().filter_map(|v| numeric(v)).collect();
        let lo = nums.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = nums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        ranges.push([lo, hi]);
        dec.push(decimals(&vals.iter().map(String::as_str).collect::<Vec<_>>()) + 1);
    }
    let fmt = |k: usize, v: f64| format!("{v:.prec$}", prec = dec[k]);
    fit(&a.params, &obs, &ranges, DRAWS, seed, &fmt)
}

/// The line under the table (table.md, the terminal).
pub fn line(s: &Surface) -> String {
    let what = if s.params.len() == 2 { "surface" } else { "curve" };
    match s.status {
        Status::Ok => format!(
            "Fitted optimum (quadratic {what} in Elo over all points, parametric bootstrap): {}.",
            s.note
        ),
        _ => format!("Fitted optimum (quadratic {what} in Elo over all points): none: {}.", s.note),
    }
}

/// The line under the plot: shorter than [`line()`].
pub fn plot_line(s: &Surface) -> String {
    match s.status {
        Status::Ok => format!(
            "Fitted optimum (quadratic in Elo{}): {} (95 % interval, parametric bootstrap{}).",
            if s.params.len() == 1 { ", orange" } else { "" },
            s.brief,
            if s.params.len() == 1 { ", shaded" } else { "; the cross and box" }
        ),
        _ => format!("Fitted optimum (quadratic in Elo): none: {}.", s.note),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    fn fmt2(_: usize, v: f64) -> String {
        format!("{v:.2}")
    }

    fn one(xs: &[f64], f: impl Fn(f64) -> f64, se: f64) -> Vec<Obs> {
        xs.iter().map(|&x| Obs { x: vec![x], y: f(x), se }).collect()
    }

    #[test]
    fn exact_quadratic_gives_its_optimum() {
        let xs = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];
        let obs = one(&xs, |x| 40.0 - 300.0 * (x - 0.37).powi(2), 5.0);
        let s = fit(&["x".into()], &obs, &[[0.0, 1.0]], 500, 1, &fmt2);
        assert_eq!(s.status, Status::Ok, "{}", s.note);
        let Some(Loc::One(x)) = s.optimum else { panic!("{s:?}") };
        assert!((x - 0.37).abs() < 1e-9, "{x}");
        let Some(Interval::One([lo, hi])) = s.ci else { panic!() };
        assert!(lo < 0.37 && hi > 0.37 && hi - lo < 0.2, "{lo} {hi}");
        assert!((s.elo_at_optimum.unwrap() - 40.0).abs() < 1e-6);
        assert!(s.fit.as_ref().unwrap().chi2 < 1e-12);
        assert!(s.note.starts_with("x = 0.37 (95 % interval x [0."), "{}", s.note);
        // Reproducible from the seed.
        assert_eq!(s, fit(&["x".into()], &obs, &[[0.0, 1.0]], 500, 1, &fmt2));
        let json = serde_json::to_value(&s).unwrap();
        assert!(json["optimum"].is_number() && json["ci"][1].is_number(), "{json}");
    }

    #[test]
    fn rising_curve_is_not_bracketed() {
        let xs = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];
        let obs = one(&xs, |x| 100.0 * x - 20.0 * x * x, 5.0);
        let s = fit(&["x".into()], &obs, &[[0.0, 1.0]], 500, 1, &fmt2);
        assert_eq!(s.status, Status::NotBracketed);
        assert!(s.optimum.is_none() && s.ci.is_none());
        assert!(s.note.contains("beyond x 1.00"), "{}", s.note);
        // A straight line: no maximum (up to noise in the draws), rising to the right.
        let obs = one(&xs, |x| 50.0 * x, 5.0);
        let s = fit(&["x".into()], &obs, &[[0.0, 1.0]], 500, 1, &fmt2);
        assert!(matches!(s.status, Status::NoMaximum | Status::NotBracketed), "{s:?}");
        assert!(s.note.contains("1.00"), "{}", s.note);
        // A convex curve.
        let obs = one(&xs, |x| 100.0 * (x - 0.5).powi(2), 5.0);
        let s = fit(&["x".into()], &obs, &[[0.0, 1.0]], 500, 1, &fmt2);
        assert_eq!(s.status, Status::NoMaximum, "{s:?}");
        assert!(s.note.starts_with("no maximum: the fitted curve is not concave"), "{}", s.note);
    }

    #[test]
    fn poor_fit_and_too_few_points() {
        let xs = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];
        // A step: far from quadratic with small errors.
        let obs = one(&xs, |x| if x < 0.5 { 0.0 } else { 100.0 }, 2.0);
        let s = fit(&["x".into()], &obs, &[[0.0, 1.0]], 200, 1, &fmt2);
        assert_eq!(s.status, Status::PoorFit);
        assert!(s.note.starts_with("poor fit") && s.optimum.is_none(), "{}", s.note);
        let s = fit(&["x".into()], &obs[..2], &[[0.0, 0.2]], 200, 1, &fmt2);
        assert_eq!(s.status, Status::Absent);
        assert!(s.note.contains("at least 3 points"), "{}", s.note);
        // Three points but two distinct values.
        let mut o = obs[..2].to_vec();
        o.push(obs[1].clone());
        let s = fit(&["x".into()], &o, &[[0.0, 0.2]], 200, 1, &fmt2);
        assert!(s.note.contains("3 distinct values"), "{}", s.note);
    }

    #[test]
    fn grid_surface_optimum() {
        let mut obs = Vec::new();
        for x in [0.8, 0.9, 1.0, 1.1, 1.2] {
            for y in [0.5, 0.9, 1.3] {
                let e = 30.0 - 2000.0 * (x - 0.97f64).powi(2) - 150.0 * (y - 0.8f64).powi(2)
                    + 100.0 * (x - 0.97) * (y - 0.8);
                obs.push(Obs { x: vec![x, y], y: e, se: 3.0 });
            }
        }
        let params = vec!["t_mid".to_string(), "t_end".to_string()];
        let s = fit(&params, &obs, &[[0.8, 1.2], [0.5, 1.3]], 500, 3, &fmt2);
        assert_eq!(s.status, Status::Ok, "{}", s.note);
        let Some(Loc::Two([x, y])) = s.optimum else { panic!("{s:?}") };
        assert!((x - 0.97).abs() < 1e-9 && (y - 0.8).abs() < 1e-9, "{x} {y}");
        let Some(Interval::Two([cx, cy])) = s.ci else { panic!() };
        assert!(cx[0] < x && x < cx[1] && cy[0] < y && y < cy[1], "{cx:?} {cy:?}");
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["ci"][1].as_array().unwrap().len(), 2, "{json}");
        assert!(s.note.contains("t_mid = 0.97, t_end = 0.80"), "{}", s.note);
        // A saddle.
        let obs: Vec<Obs> = obs
            .iter()
            .map(|o| Obs {
                y: 100.0 * (o.x[0] - 1.0).powi(2) - 100.0 * (o.x[1] - 0.9).powi(2),
                ..o.clone()
            })
            .collect();
        let s = fit(&params, &obs, &[[0.8, 1.2], [0.5, 1.3]], 200, 3, &fmt2);
        assert_eq!(s.status, Status::NoMaximum, "{s:?}");
        assert!(s.note.contains("saddle"), "{}", s.note);
    }

    /// One simulated sweep: `pairs` game pairs at each of `xs`, true Elo `truth(x)` against the
    /// baseline, 40 % draws, games independent; each point's Elo and error from its pentanomial
    /// counts, as a real sweep computes them.
    fn simulate(
        rng: &mut ChaCha8Rng,
        xs: &[f64],
        pairs: u64,
        truth: &dyn Fn(f64) -> f64,
    ) -> Vec<Obs> {
        xs.iter()
            .map(|&x| {
                let s = stats::logistic_score(truth(x));
                let d = 0.4;
                let (w, l) = (s - d / 2.0, 1.0 - s - d / 2.0);
                assert!(w >= 0.0 && l >= 0.0);
                let game = |rng: &mut ChaCha8Rng| {
                    let u: f64 = rng.random();
                    if u < w {
                        2
                    } else if u < w + d {
                        1
                    } else {
                        0
                    }
                };
                let mut p = stats::Penta::default();
                for _ in 0..pairs {
                    match game(rng) + game(rng) {
                        0 => p.ll += 1,
                        1 => p.ld += 1,
                        2 => p.dd += 1,
                        3 => p.wd += 1,
                        _ => p.ww += 1,
                    }
                }
                let (y, se) = point_elo(&p).unwrap();
                Obs { x: vec![x], y, se }
            })
            .collect()
    }

    /// Coverage of the 95 % interval over `reps` simulated sweeps: (covered, reported with a
    /// number, draw interval covers the truth).
    fn coverage(reps: usize, draws: usize, opt: f64, seed: u64) -> (f64, f64, f64) {
        let xs = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];
        let truth = move |x: f64| 40.0 - 300.0 * (x - opt).powi(2);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut covered, mut reported, mut raw) = (0, 0, 0);
        for rep in 0..reps {
            let obs = simulate(&mut rng, &xs, 100, &truth);
            let s = fit(&["x".into()], &obs, &[[0.0, 1.0]], draws, rep as u64, &fmt2);
            if let Some(Interval::One([lo, hi])) = s.ci {
                reported += 1;
                covered += usize::from(lo <= opt && opt <= hi);
            }
            // The interval as drawn (infinite ends included), whatever was reported.
            if s.status != Status::PoorFit
                && let Some(d) = &s.draw_interval
            {
                let lo = d[0][0].unwrap_or(f64::NEG_INFINITY);
                let hi = d[0][1].unwrap_or(f64::INFINITY);
                raw += usize::from(lo <= opt && opt <= hi);
            }
        }
        let r = reps as f64;
        (covered as f64 / r, reported as f64 / r, raw as f64 / r)
    }

    #[test]
    fn coverage_optimum_inside() {
        // True optimum 0.37 in [0, 1]: Elo 40 - 300 (x - 0.37)^2, i.e. -1 at 0 and -79 at 1; 100
        // pairs per point (about 19 Elo of error). 1000 sweeps, 400 draws each.
        let (covered, reported, raw) = coverage(1000, 400, 0.37, 2024);
        eprintln!("inside: covered {covered}, reported {reported}, raw {raw}");
        // Measured: raw 0.940 (the interval as drawn, an infinite end where draws had no
        // maximum on that side); a number in 78.0 % of sweeps, covering in 0.756 / 0.78 = 0.969
        // of those (the others say "not bracketed").
        assert!((0.92..=0.98).contains(&raw), "raw coverage {raw}");
        let cond = covered / reported;
        assert!((0.92..=0.99).contains(&cond), "covered when reported {cond} ({reported})");
    }

    #[test]
    fn coverage_optimum_near_edge() {
        // True optimum 0.9 (Elo 40 - 300 (x - 0.9)^2): usually not bracketed (no number), but the
        // drawn interval still covers: measured raw 0.938, a number in 12.2 % of sweeps.
        let (covered, reported, raw) = coverage(1000, 400, 0.9, 7);
        eprintln!("edge: covered {covered}, reported {reported}, raw {raw}");
        assert!((0.92..=0.99).contains(&raw), "raw coverage {raw}");
        // Given a number, coverage drops (the sweeps whose interval fits inside the range are
        // those whose estimate fell low): measured 0.096 of 0.122, i.e. 0.79.
        assert!((0.05..=0.3).contains(&reported), "reported {reported}");
        assert!(covered / reported >= 0.7, "{covered} of {reported}");
    }
}
