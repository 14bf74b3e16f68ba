//! `runner stats`: match statistics from counts typed on the command line.
//!
//! ```text
//! runner stats --wdl W,D,L | --penta LL,LD,DD,WD,WW
//!              [--sprt elo0=0,elo1=5[,alpha=0.05,beta=0.05,model=logistic|normalized]]
//!              [--draws-floor 0.3] [--json]
//! ```
//!
//! Giving both `--wdl` and `--penta` describes the same games twice: the counts must agree, the
//! estimates use the pairs and the W-D-L line is exact. All statistics come from the `stats`
//! crate; this module only parses and prints. Undefined values print as `n/a` (JSON `null`).

use std::fmt::Write as _;

use anyhow::Context as _;
use serde::Serialize;
use stats::{Counts, EloModel, Options, Summary, TestBasis, summarize};

use crate::cli::StatsArgs;

/// Runs `runner stats`: prints the table (or JSON) on stdout.
pub fn run(args: &StatsArgs) -> anyhow::Result<()> {
    let out = render(args)?;
    out!("{out}");
    Ok(())
}

/// The JSON document: the [`Summary`] plus the fixed-sample test's settings.
#[derive(Serialize)]
struct JsonOut<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    draws_floor: Option<f64>,
    alpha: f64,
}

/// What [`run`] prints.
pub fn render(args: &StatsArgs) -> anyhow::Result<String> {
    let counts = match (args.wdl, args.penta) {
        (Some(wdl), Some(penta)) => Counts::Paired { wdl, penta },
        (Some(w), None) => Counts::Wdl(w),
        (None, Some(p)) => Counts::Penta(p),
        (None, None) => anyhow::bail!("give the counts with --wdl W,D,L or --penta LL,LD,DD,WD,WW"),
    };
    let opts = Options { draws_floor: args.draws_floor, sprt: args.sprt, ..Options::default() };
    let summary = summarize(&counts, &opts).context("cannot compute the statistics")?;
    if args.json {
        let doc = JsonOut { summary: &summary, draws_floor: opts.draws_floor, alpha: opts.alpha };
        let mut s = serde_json::to_string_pretty(&doc).context("cannot encode the JSON")?;
        s.push('\n');
        Ok(s)
    } else {
        Ok(table(&summary, &opts))
    }
}

fn or_na(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.filter(|v| v.is_finite()).map(f).unwrap_or_else(|| "n/a".to_string())
}

fn percent(x: f64) -> String {
    format!("{:.2} %", 100.0 * x)
}

/// A probability from a normal approximation (LOS) in percent with two decimals, never rounded
/// to a certainty: `>99.99 %`, `<0.01 %`.
fn probability_percent(p: f64) -> String {
    if p >= 0.99995 {
        ">99.99 %".into()
    } else if p < 0.00005 {
        "<0.01 %".into()
    } else {
        percent(p)
    }
}

fn probability(p: f64) -> String {
    if p != 0.0 && p < 1e-4 { format!("{p:.2e}") } else { format!("{p:.4}") }
}

fn interval(ci: Option<[f64; 2]>) -> String {
    match ci {
        Some([lo, hi]) if lo.is_finite() && hi.is_finite() => {
            format!("  (95 %: {lo:+.1} .. {hi:+.1})")
        }
        _ => String::new(),
    }
}

/// The human-readable table: one aligned `name  value` row per figure.
fn table(s: &Summary, opts: &Options) -> String {
    let mut rows: Vec<(&str, String)> = Vec::new();
    let wdl = match (s.wins, s.draws, s.losses) {
        (Some(w), Some(d), Some(l)) => format!("(W {w}  D {d}  L {l})"),
        // A DD+WL pair is two draws or a win and a loss.
        _ => "(W/D/L not known from pentanomial counts)".to_string(),
    };
    rows.push(("games", format!("{}  {wdl}", s.games)));
    if let (Some(p), Some(pairs)) = (s.penta, s.pairs) {
        rows.push((
            "pentanomial",
            format!(
                "LL {}  LD {}  DD+WL {}  WD {}  WW {}  ({pairs} pairs)",
                p.ll, p.ld, p.dd, p.wd, p.ww
            ),
        ));
    }
    let points = s.points;
    rows.push((
        "score",
        or_na(s.score, |v| format!("{}  ({points:.1} / {} points)", percent(v), s.games)),
    ));
    rows.push((
        "draw ratio",
        match (s.draw_ratio, s.draws) {
            (None, None) if s.games > 0 => "n/a (not known from pentanomial counts)".to_string(),
            (r, _) => or_na(r, percent),
        },
    ));
    rows.push(("Elo", format!("{}{}", s.format_elo(), interval(s.elo_ci))));
    rows.push(("nElo", format!("{}{}", s.format_nelo(), interval(s.nelo_ci))));
    rows.push(("LOS", or_na(s.los, probability_percent)));
    if s.pairs.is_some() {
        rows.push((
            "pair SD",
            or_na(s.pair_sd, |v| {
                format!("{v:.4}  (points per game, a pair's average; books compare by it)")
            }),
        ));
    }
    let basis = match (s.test_basis, opts.draws_floor, s.draw_ratio) {
        (Some(TestBasis::DrawsFloor), Some(d), Some(obs)) if obs > d => format!(
            "draws floor {} used; the observed {} is higher, so the floor's larger variance is \
             the conservative choice",
            percent(d),
            percent(obs)
        ),
        (Some(TestBasis::DrawsFloor), Some(d), Some(obs)) if obs < d => format!(
            "draws floor {} used; the observed {} is lower than assumed, so p may be too small",
            percent(d),
            percent(obs)
        ),
        (Some(TestBasis::DrawsFloor), Some(d), _) => format!("draws floor {}", percent(d)),
        (Some(TestBasis::PairVariance), ..) => "pair variance".to_string(),
        _ => "observed draws".to_string(),
    };
    rows.push((
        "p-value",
        or_na(s.p_value, |p| format!("{}  (one-sided, {basis})", probability(p))),
    ));
    rows.push((
        "critical score",
        or_na(s.critical_score, |c| format!("{c:.1} / {} points for p < {}", s.games, opts.alpha)),
    ));
    if let Some(r) = &s.sprt {
        let unit = match r.model {
            EloModel::Logistic => "Elo",
            EloModel::Normalized => "nElo",
        };
        rows.push((
            "SPRT",
            format!(
                "LLR {:.2}  ({:.2}, {:.2})  {unit} [{}, {}]  {}",
                r.llr, r.lower_bound, r.upper_bound, r.elo0, r.elo1, r.verdict
            ),
        ));
        if s.pairs.is_some() {
            rows.push((
                "SPRT length",
                or_na(s.sprt_expected_pairs, |n| {
                    format!("about {n:.0} pairs in all if the true difference is the measured one")
                }),
            ));
        }
    }
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (k, v) in rows {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "{k:<width$}  {v}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: StatsArgs,
    }

    fn parse(argv: &[&str]) -> Result<StatsArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("stats").chain(argv.iter().copied())).map(|c| c.args)
    }

    #[test]
    fn seed_example_table() {
        let a = parse(&["--wdl", "30,16,18", "--draws-floor", "0.3"]).unwrap();
        let out = render(&a).unwrap();
        assert!(out.contains("38.0 / 64 points for p < 0.05"), "{out}");
        assert!(!out.contains("SPRT"), "{out}");
        assert!(!out.to_lowercase().contains("nan"), "{out}");
    }

    #[test]
    fn json_has_the_documented_keys() {
        let a = parse(&["--penta", "1,5,10,8,2", "--sprt", "elo0=0,elo1=5", "--json"]).unwrap();
        let v: serde_json::Value = serde_json::from_str(&render(&a).unwrap()).unwrap();
        for k in [
            "games",
            "score",
            "draw_ratio",
            "elo",
            "elo_ci",
            "nelo",
            "nelo_ci",
            "los",
            "p_value",
            "critical_score",
            "sprt",
            "pair_sd",
            "sprt_expected_pairs",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
        assert_eq!(v["games"], 52);
        for k in ["llr", "lower_bound", "upper_bound", "verdict", "elo0", "elo1", "model"] {
            assert!(v["sprt"].get(k).is_some(), "missing sprt.{k}");
        }
        assert_eq!(v["sprt"]["model"], "normalized");
    }

    #[test]
    fn undefined_values_print_na() {
        let a = parse(&["--wdl", "0,0,0"]).unwrap();
        let out = render(&a).unwrap();
        assert!(out.contains("n/a") && !out.to_lowercase().contains("nan"), "{out}");
        let a = parse(&["--wdl", "5,0,0", "--json"]).unwrap();
        let v: serde_json::Value = serde_json::from_str(&render(&a).unwrap()).unwrap();
        assert!(v["elo"].is_null());
    }

    /// Pentanomial counts alone do not know W/D/L; the fixed-sample test uses the
    /// pair variance (Var(S) = 5.5 here, z = 1 / sqrt(5.5), p = 0.3349).
    #[test]
    fn pentanomial_only_says_wdl_unknown() {
        let a = parse(&["--penta", "1,6,20,8,1"]).unwrap();
        let out = render(&a).unwrap();
        assert!(out.contains("W/D/L not known from pentanomial counts"), "{out}");
        assert!(out.contains("0.3349  (one-sided, pair variance)"), "{out}");
        assert!(out.contains("37.0 / 72 points"), "{out}");
        assert!(!out.contains("75.00 %") && !out.contains("observed draws"), "{out}");
        let a = parse(&["--penta", "1,6,20,8,1", "--json"]).unwrap();
        let v: serde_json::Value = serde_json::from_str(&render(&a).unwrap()).unwrap();
        assert!(v["draws"].is_null() && v["draw_ratio"].is_null(), "{v}");
        assert_eq!(v["test_basis"], "pair_variance");
        // Lopsided counts that once made the solver fail: a finite LLR and H0, not an error.
        let a = parse(&["--penta", "403,642,0,10,0", "--sprt", "elo0=0,elo1=5"]).unwrap();
        let out = render(&a).unwrap();
        assert!(out.contains("LLR -17.94") && out.contains("H0"), "{out}");
    }

    /// Six won pairs do not make LOS a certainty; a draws floor below the
    /// observed draws is explained.
    #[test]
    fn los_never_prints_certainty_and_the_floor_is_explained() {
        let a = parse(&["--penta", "0,0,0,1,5"]).unwrap();
        let out = render(&a).unwrap();
        assert!(out.contains("LOS             >99.99 %"), "{out}");
        assert!(!out.contains("100.00 %"), "{out}");
        let a = parse(&["--wdl", "10,40,10", "--draws-floor", "0.3"]).unwrap();
        let out = render(&a).unwrap();
        assert!(out.contains("draws floor 30.00 % used; the observed 66.67 % is higher"), "{out}");
    }

    #[test]
    fn bad_input_is_a_parse_error() {
        for argv in [
            &["--wdl", "-1,2,3"][..],
            &["--wdl", "1,2"],
            &["--wdl", "1,x,3"],
            &["--penta", "1,2,3,4"],
            &["--wdl", "1,2,3", "--sprt", "elo0=5,elo1=0"],
            &["--wdl", "1,2,3", "--sprt", "elo0=0,elo1=5,alpha=1.5"],
            &["--wdl", "1,2,3", "--sprt", "elo0=0,elo1=5,beta=0"],
            &["--wdl", "1,2,3", "--draws-floor", "1"],
            &["--wdl", "1,2,3", "--draws-floor", "-0.1"],
            &["--wdl", "1,2,3", "--draws-floor", "abc"],
            &[],
        ] {
            assert!(parse(argv).is_err(), "{argv:?} should be rejected");
        }
        // Both views of the same games must agree.
        let a = parse(&["--wdl", "1,2,3", "--penta", "0,0,1,0,0"]).unwrap();
        let e = render(&a).unwrap_err();
        assert!(format!("{e:#}").contains("does not match"), "{e:#}");
    }
}
