//! The sweep table in three forms: Markdown (table.md), CSV with raw numbers (table.csv) and
//! aligned plain text for the terminal. A row per point, the swept values first, as in the
//! seed's Tables 2 and 3, then the statistics.

use std::fmt::Write as _;

use super::analysis::{PointRow, PointStatus, SweepAnalysis};
use super::surface;

use crate::report::figures::{MIN_PAIRS, csv_field, format_p, pct, prob_pct, too_few, value_ci};

/// `W-D-L` of a point (always known in a sweep, which keeps both views of its games).
fn wdl_text(s: &stats::Summary) -> String {
    match (s.wins, s.draws, s.losses) {
        (Some(w), Some(d), Some(l)) => format!("{w}-{d}-{l}"),
        _ => "n/a".to_string(),
    }
}

fn penta_text(r: &PointRow) -> String {
    match r.summary.penta {
        Some(p) => format!("{}-{}-{}-{}-{}", p.ll, p.ld, p.dd, p.wd, p.ww),
        None => "n/a".into(),
    }
}

fn shows_status(a: &SweepAnalysis) -> bool {
    a.rows.iter().any(|r| r.status.is_decision()) || a.options.sprt.is_some()
}

/// Headers and cells of the human tables (Markdown and terminal share them).
pub fn cells(a: &SweepAnalysis) -> (Vec<String>, Vec<Vec<String>>) {
    let mut head: Vec<String> = a.params.clone();
    head.extend(
        [
            "games",
            "W-D-L",
            "penta LL-LD-DD-WD-WW",
            "score %",
            "Elo [95%]",
            "nElo",
            "LOS %",
            "p",
            "significant (Holm)",
            "P(best) %",
        ]
        .map(String::from),
    );
    let sprt = a.options.sprt.is_some();
    if sprt {
        head.extend(["LLR [bounds]", "SPRT"].map(String::from));
    }
    let status = shows_status(a);
    if status {
        head.push("status".into());
    }
    let rows = a
        .rows
        .iter()
        .map(|r| {
            let s = &r.summary;
            let mut c: Vec<String> = a
                .params
                .iter()
                .map(|p| {
                    r.assignments
                        .iter()
                        .find(|(n, _)| n == p)
                        .map(|x| x.1.clone())
                        .unwrap_or_default()
                })
                .collect();
            c.push(s.games.to_string());
            c.push(wdl_text(s));
            c.push(penta_text(r));
            c.push(pct(s.score));
            c.push(value_ci(s.elo, s.elo_ci));
            c.push(s.nelo.map_or_else(|| "n/a".into(), |v| format!("{v:+.1}")));
            c.push(prob_pct(s.los));
            c.push(format_p(s.p_value));
            c.push(if r.significant { "yes" } else { "no" }.into());
            c.push(prob_pct(r.p_best));
            if sprt {
                match &s.sprt {
                    Some(t) => {
                        c.push(format!(
                            "{:+.2} [{:.2}, {:.2}]",
                            t.llr, t.lower_bound, t.upper_bound
                        ));
                        c.push(
                            match t.verdict {
                                stats::Verdict::H0 => "H0",
                                stats::Verdict::H1 => "H1",
                                stats::Verdict::Continue => "continue",
                            }
                            .into(),
                        );
                    }
                    None => c.extend(["n/a".to_string(), "n/a".to_string()]),
                }
            }
            if status {
                c.push(r.status.short());
            }
            c
        })
        .collect();
    (head, rows)
}

/// The line under the table naming the best point and how sure we are.
pub fn best_line(a: &SweepAnalysis) -> String {
    let played = a.rows.iter().filter(|r| r.summary.pairs.unwrap_or(0) > 0).count();
    match &a.best {
        None => "Best point: none yet (no finished game pairs).".into(),
        Some(b) => {
            let what = format!(
                "{} (score {:.1} %, Elo {})",
                b.label,
                100.0 * b.score,
                value_ci(b.elo, b.elo_ci)
            );
            match b.p_best {
                _ if played == 1 => {
                    format!("Only {what} has finished game pairs: nothing to compare it with yet.")
                }
                Some(p) => format!(
                    "Best point: {what}; probability it is the best of the {played} points \
                     played: {} % (normal approximation of each point's score, points \
                     independent).",
                    prob_pct(Some(p))
                ),
                None => format!(
                    "Leader so far: {what}. Not yet meaningful: a point has {} complete pair{} \
                     (P(best) is given from {MIN_PAIRS} pairs at every point).",
                    b.fewest_pairs,
                    if b.fewest_pairs == 1 { "" } else { "s" }
                ),
            }
        }
    }
}

/// Points with too few pairs, and statistics that could not be computed (empty if none).
pub fn warnings(a: &SweepAnalysis) -> String {
    let few: Vec<String> = a
        .rows
        .iter()
        .filter_map(|r| {
            let n = r.summary.pairs.unwrap_or(0);
            (n > 0 && too_few(n)).then(|| format!("{} ({n})", r.label))
        })
        .collect();
    let mut out = String::new();
    if !few.is_empty() {
        let _ = writeln!(
            out,
            "Fewer than {MIN_PAIRS} complete pairs, figures not yet meaningful: {}.",
            few.join(", ")
        );
    }
    for p in &a.problems {
        let _ = writeln!(out, "{p} (shown as n/a).");
    }
    out
}

fn notes(a: &SweepAnalysis) -> String {
    let floor = match a.options.draws_floor {
        Some(d) => {
            let observed: Vec<f64> = a.rows.iter().filter_map(|r| r.summary.draw_ratio).collect();
            let most = observed
                .iter()
                .copied()
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
            match most {
                Some(m) if m > d => format!(
                    "a draw ratio of {:.0} % assumed (the floor); points that drew more (up to \
                     {:.1} %) are tested with the floor's larger variance, which is conservative",
                    100.0 * d,
                    100.0 * m
                ),
                _ => format!("a draw ratio of at least {:.0} % assumed", 100.0 * d),
            }
        }
        None => "variance from the observed draw ratio".into(),
    };
    format!(
        "Score, Elo, the 95 % interval, LOS and P(best) use the game pairs' (pentanomial) \
         variance, so LOS above 97.5 % goes with an interval above zero. p: one-sided draw-aware \
         test that the point beats the baseline ({floor}), from the paper, which ignores the \
         pairing, so p and 1 - LOS can differ; significant: p below the Holm step-down threshold \
         across all {} points at family-wise alpha = {}.",
        a.rows.len(),
        a.options.alpha
    )
}

/// Markdown: a title, the table, the best-point line and a note on the tests.
pub fn markdown(a: &SweepAnalysis, title: &str) -> String {
    let (head, rows) = cells(a);
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = format!("# {title}\n\n");
    let _ = writeln!(out, "| {} |", head.iter().map(|h| esc(h)).collect::<Vec<_>>().join(" | "));
    let align: Vec<&str> =
        (0..head.len()).map(|i| if i < a.params.len() { ":--" } else { "--:" }).collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for r in rows {
        let _ = writeln!(out, "| {} |", r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | "));
    }
    let warn: String = warnings(a).lines().map(|l| format!("{l}\n\n")).collect();
    let _ = write!(out, "\n{}\n\n", best_line(a));
    if let Some(s) = &a.surface {
        let _ = write!(out, "{}\n\n", surface::line(s));
    }
    let _ = writeln!(out, "{warn}{}", notes(a));
    out
}

/// Aligned plain text for the terminal.
pub fn console(a: &SweepAnalysis, title: &str) -> String {
    let (head, rows) = cells(a);
    let n = head.len();
    let width: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([head[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i < a.params.len() {
                    format!("{c:<w$}", w = width[i])
                } else {
                    format!("{c:>w$}", w = width[i])
                }
            })
            .collect();
        parts.join("  ").trim_end().to_string()
    };
    let mut out = format!("{title}\n");
    let _ = writeln!(out, "{}", line(&head));
    let _ =
        writeln!(out, "{}", width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r));
    }
    let _ = writeln!(out, "{}", best_line(a));
    if let Some(s) = &a.surface {
        let _ = writeln!(out, "{}", surface::line(s));
    }
    out.push_str(&warnings(a));
    out
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| format!("{v}"))
}

/// CSV with raw numbers (empty cell = undefined), one row per point.
pub fn csv(a: &SweepAnalysis) -> String {
    let mut head: Vec<String> = a.params.clone();
    head.extend(
        [
            "games",
            "wins",
            "draws",
            "losses",
            "ll",
            "ld",
            "dd",
            "wd",
            "ww",
            "score",
            "elo",
            "elo_low",
            "elo_high",
            "nelo",
            "nelo_low",
            "nelo_high",
            "los",
            "p_value",
            "significant",
            "p_best",
            "llr",
            "llr_lower",
            "llr_upper",
            "sprt_verdict",
            "status",
            "status_after_games",
        ]
        .map(String::from),
    );
    let mut out = head.iter().map(|h| csv_field(h)).collect::<Vec<_>>().join(",");
    out.push('\n');
    for r in &a.rows {
        let s = &r.summary;
        let mut c: Vec<String> = a
            .params
            .iter()
            .map(|p| {
                r.assignments.iter().find(|(n, _)| n == p).map(|x| x.1.clone()).unwrap_or_default()
            })
            .collect();
        let p = s.penta.unwrap_or_default();
        c.extend(
            [Some(s.games), s.wins, s.draws, s.losses]
                .into_iter()
                .chain([p.ll, p.ld, p.dd, p.wd, p.ww].map(Some))
                .map(|v| v.map(|v| v.to_string()).unwrap_or_default()),
        );
        let lo = |ci: Option<[f64; 2]>| ci.map(|c| c[0]);
        let hi = |ci: Option<[f64; 2]>| ci.map(|c| c[1]);
        c.extend(
            [
                s.score,
                s.elo,
                lo(s.elo_ci),
                hi(s.elo_ci),
                s.nelo,
                lo(s.nelo_ci),
                hi(s.nelo_ci),
                s.los,
                s.p_value,
            ]
            .map(num),
        );
        c.push(r.significant.to_string());
        c.push(num(r.p_best));
        let t = s.sprt.as_ref();
        c.push(num(t.map(|t| t.llr)));
        c.push(num(t.map(|t| t.lower_bound)));
        c.push(num(t.map(|t| t.upper_bound)));
        c.push(
            t.map(|t| match t.verdict {
                stats::Verdict::H0 => "H0",
                stats::Verdict::H1 => "H1",
                stats::Verdict::Continue => "continue",
            })
            .unwrap_or("")
            .into(),
        );
        let (state, after) = match &r.status {
            PointStatus::Active => ("active", String::new()),
            PointStatus::Ended { after_games } => ("ended", after_games.to_string()),
            PointStatus::Dropped { after_games, .. } => ("dropped", after_games.to_string()),
            PointStatus::Decided { after_games } => ("decided", after_games.to_string()),
        };
        c.push(state.into());
        c.push(after);
        out.push_str(&c.iter().map(|x| csv_field(x)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::analysis::tests::sample;
    use super::super::analysis::{AnalysisOptions, PointStatus, analyze};
    use super::*;

    #[test]
    fn p_values_are_short() {
        assert_eq!(format_p(Some(0.5)), "0.50");
        assert_eq!(format_p(Some(0.0312)), "0.031");
        assert_eq!(format_p(Some(0.00123)), "0.0012");
        assert_eq!(format_p(Some(1e-7)), "<0.0001");
        assert_eq!(format_p(None), "n/a");
    }

    #[test]
    fn markdown_and_console_rows() {
        let (params, points, c) = sample();
        let a = analyze(&params, &points, &c, &[], &AnalysisOptions::default()).unwrap();
        let md = markdown(&a, "t_mid sweep");
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines[0], "# t_mid sweep");
        assert!(lines[2].starts_with("| t_mid | games | W-D-L | penta"), "{}", lines[2]);
        assert!(lines[3].starts_with("|:--|--:|"), "{}", lines[3]);
        // 0.8: 32 pairs 2-6-12-8-4, 64 games, score (6*0.25+12*0.5+8*0.75+4)/32 = 54.7 %.
        assert!(
            lines[4].starts_with("| 0.8 | 64 | 16-38-10 | 2-6-12-8-4 | 54.7 | +"),
            "{}",
            lines[4]
        );
        assert!(
            lines[6].starts_with("| 1.0 | 0 | 0-0-0 | 0-0-0-0-0 | n/a | n/a | n/a |"),
            "{}",
            lines[6]
        );
        assert!(!md.contains("NaN") && !md.contains("nan") && !md.contains("inf"));
        assert!(md.contains("Best point: t_mid=0.9"), "{md}");
        assert!(!md.contains("SPRT") && !md.contains("status"), "no SPRT/status column unasked");
        let con = console(&a, "t_mid sweep");
        let rows: Vec<&str> = con.lines().collect();
        // Columns are aligned: every data row as long as the header row.
        assert!(rows[3].starts_with("0.8  "), "{con}");
        let w = rows[1].len();
        assert!(rows[3..6].iter().all(|r| r.len() == w), "{con}");
    }

    #[test]
    fn csv_has_raw_numbers_and_status() {
        let (params, points, c) = sample();
        let st = vec![
            PointStatus::Active,
            PointStatus::Active,
            PointStatus::Dropped { after_games: 16, best: "t_mid=0.9".into(), z: 3.0 },
        ];
        let a = analyze(&params, &points, &c, &st, &AnalysisOptions::default()).unwrap();
        let text = csv(&a);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        let head: Vec<&str> = lines[0].split(',').collect();
        let row: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(head.len(), row.len());
        let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
        assert_eq!(row[col("t_mid")], "0.8");
        assert_eq!(row[col("games")], "64");
        assert_eq!(row[col("score")].parse::<f64>().unwrap(), 35.0 / 64.0);
        let empty: Vec<&str> = lines[3].split(',').collect();
        assert_eq!(empty[col("elo")], "");
        assert_eq!(empty[col("status")], "dropped");
        assert_eq!(empty[col("status_after_games")], "16");
        assert!(markdown(&a, "x").contains("dropped@16 (vs t_mid=0.9)"));
        assert_eq!(csv_field("a,b"), "\"a,b\"");
    }
}
