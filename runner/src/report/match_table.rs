//! A match's table (table.md, table.csv): a row per pairing with its counts and statistics over
//! complete game pairs, the small-sample warning, and the SPRT when one was asked for. Written as
//! the run goes and at its end; `runner report` on a match rewrites the same files.

use std::fmt::Write as _;

use stats::Summary;

use super::figures;
use crate::report::summary::PairingTally;

/// One pairing's row.
pub struct MatchRow<'a> {
    pub label: &'a str,
    pub tally: &'a PairingTally,
    /// The statistics (`None` before the first complete pair).
    pub stats: Option<Summary>,
    /// Why some statistics could not be computed (they are `None`, printed n/a).
    pub problem: Option<String>,
}

const HEAD: [&str; 11] = [
    "pairing",
    "games",
    "W-D-L",
    "pairs",
    "penta LL-LD-DD-WD-WW",
    "score %",
    "draws %",
    "Elo [95%]",
    "nElo [95%]",
    "LOS %",
    "p",
];

fn cells(r: &MatchRow) -> Vec<String> {
    let w = &r.tally.wdl_all;
    let pe = &r.tally.penta;
    let mut c = vec![
        r.label.to_string(),
        w.games().to_string(),
        format!("{}-{}-{}", w.wins, w.draws, w.losses),
        pe.pairs().to_string(),
        format!("{}-{}-{}-{}-{}", pe.ll, pe.ld, pe.dd, pe.wd, pe.ww),
    ];
    match &r.stats {
        Some(s) => c.extend([
            figures::pct(s.score),
            figures::pct(s.draw_ratio),
            figures::elo(s),
            figures::nelo(s),
            figures::prob_pct(s.los),
            figures::format_p(s.p_value),
        ]),
        None => c.extend(std::iter::repeat_n("n/a".to_string(), 6)),
    }
    c
}

/// table.md of a match (or of any run's pairings).
pub fn markdown(title: &str, rows: &[MatchRow]) -> String {
    let mut out = format!("# {title}\n\n");
    let _ = writeln!(out, "| {} |", HEAD.join(" | "));
    let align: Vec<&str> = (0..HEAD.len()).map(|i| if i == 0 { ":--" } else { "--:" }).collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for r in rows {
        let c: Vec<String> = cells(r).iter().map(|x| x.replace('|', "\\|")).collect();
        let _ = writeln!(out, "| {} |", c.join(" | "));
    }
    out.push('\n');
    out.push_str(
        "Score, draws, Elo, nElo, LOS and p count complete game pairs only; 95 % intervals from \
         the pair scores' variance (asymmetric for Elo). p: the paper's one-sided draw-aware test \
         that the first engine is stronger (null variance (1 - d)/4 per game from the observed \
         draws, pairing ignored), so p and 1 - LOS can differ.\n",
    );
    for r in rows {
        let pairs = r.tally.penta.pairs();
        if r.tally.unpaired() > 0 {
            let _ = writeln!(
                out,
                "\n{}: {} game(s) whose pair partner has not finished are not in the statistics.",
                r.label,
                r.tally.unpaired()
            );
        }
        if figures::too_few(pairs) {
            let _ = writeln!(out, "\n{}: {}.", r.label, figures::too_few_note(pairs));
        }
        if let Some(t) = r.stats.as_ref().and_then(|s| s.sprt.as_ref()) {
            let _ = writeln!(
                out,
                "\n{}: SPRT [{}, {}] ({}): LLR {:.2} [{:.2}, {:.2}] -> {}",
                r.label, t.elo0, t.elo1, t.model, t.llr, t.lower_bound, t.upper_bound, t.verdict
            );
        }
        if let Some(why) = &r.problem {
            let _ = writeln!(out, "\n{}: {why} (shown as n/a).", r.label);
        }
    }
    out
}

/// table.csv of a match: raw numbers, empty where undefined.
pub fn csv(rows: &[MatchRow]) -> String {
    let num = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    let mut out = String::from(
        "pairing,games,wins,draws,losses,pairs,ll,ld,dd,wd,ww,score,draw_ratio,elo,elo_lo,elo_hi,\
         nelo,nelo_lo,nelo_hi,los,p_value\n",
    );
    for r in rows {
        let w = &r.tally.wdl_all;
        let pe = &r.tally.penta;
        let s = r.stats.as_ref();
        let ci = |f: fn(&Summary) -> Option<[f64; 2]>, k: usize| num(s.and_then(f).map(|c| c[k]));
        let fields = [
            figures::csv_field(r.label),
            w.games().to_string(),
            w.wins.to_string(),
            w.draws.to_string(),
            w.losses.to_string(),
            pe.pairs().to_string(),
            pe.ll.to_string(),
            pe.ld.to_string(),
            pe.dd.to_string(),
            pe.wd.to_string(),
            pe.ww.to_string(),
            num(s.and_then(|s| s.score)),
            num(s.and_then(|s| s.draw_ratio)),
            num(s.and_then(|s| s.elo)),
            ci(|s| s.elo_ci, 0),
            ci(|s| s.elo_ci, 1),
            num(s.and_then(|s| s.nelo)),
            ci(|s| s.nelo_ci, 0),
            ci(|s| s.nelo_ci, 1),
            num(s.and_then(|s| s.los)),
            num(s.and_then(|s| s.p_value)),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::GameScore;

    fn tally(pairs: &[(GameScore, GameScore)]) -> PairingTally {
        let mut t = PairingTally::default();
        for &(a, b) in pairs {
            t.penta.add_pair(a, b);
            for s in [a, b] {
                t.wdl_all.add(s);
                t.wdl_paired.add(s);
            }
        }
        t
    }

    #[test]
    fn a_match_table_is_not_a_sweep_table() {
        use GameScore::*;
        let t = tally(&[(Win, Loss), (Win, Draw), (Draw, Draw)]);
        let stats = t.summarize(None);
        let rows = [MatchRow { label: "a vs b", tally: &t, stats, problem: None }];
        let md = markdown("a vs b: 6 games, 10+0.1", &rows);
        assert!(md.starts_with("# a vs b: 6 games, 10+0.1\n\n| pairing | games | W-D-L |"), "{md}");
        assert!(md.contains("| a vs b | 6 | 2-3-1 | 3 | 0-0-2-1-0 | 58.3 |"), "{md}");
        assert!(md.contains("3 complete pairs (< 10): figures not yet meaningful"), "{md}");
        for sweep_word in ["Holm", "P(best)", "Only", "best"] {
            assert!(!md.contains(sweep_word), "{sweep_word}: {md}");
        }
        let c = csv(&rows);
        assert_eq!(c.lines().count(), 2);
        assert!(c.lines().nth(1).unwrap().starts_with("a vs b,6,2,3,1,3,0,0,2,1,0,"), "{c}");
        // Failed statistics are n/a with the reason.
        let problem = Some("statistics n/a: x".to_string());
        let rows = [MatchRow { label: "a vs b", tally: &t, stats: None, problem }];
        let md = markdown("t", &rows);
        assert!(md.contains("a vs b: statistics n/a: x (shown as n/a)."), "{md}");
        assert!(md.contains("| a vs b | 6 | 2-3-1 | 3 | 0-0-2-1-0 | n/a |"), "{md}");
    }
}
