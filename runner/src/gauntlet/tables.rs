//! The tables of a gauntlet or round-robin, computed from the stored games: one row per pairing
//! and time control (W-D-L, pentanomial, score, Elo with 95% interval), a ratings table per time
//! control (and over all of them when there are several), and the Crafty paper's Table 4 layout
//! (a row per pairing, a column per time control, cells = the first engine's score).

use std::fmt::Write as _;

use stats::Summary;
use stats::bradley_terry::{Meeting, RatingError, fit};

use crate::plan::run_plan::RunPlan;
use crate::plan::tournament::tc_label;
use crate::report::summary::Tally;
use crate::store::GameRecord;

/// The tables as summary.json stores them (`gauntlet`): one pairing at one time control, the
/// ratings of one time control, and everything a gauntlet prints and stores.
pub use crate::store::formats::{GauntletTables, PairingRow, RatingsTable};

impl PairingRow {
    /// The first engine's score: over complete pairs when there are any, else over all games.
    pub fn score(&self) -> Option<f64> {
        self.stats.as_ref().and_then(|s| s.score).or_else(|| {
            let g = self.wdl.games();
            (g > 0).then(|| (self.wdl.wins as f64 + 0.5 * self.wdl.draws as f64) / g as f64)
        })
    }
}

/// Builds the tables of `plan` from its finished games, anchoring ratings on engine `anchor`.
pub fn build(
    plan: &RunPlan,
    records: &[GameRecord],
    anchor: usize,
    anchor_elo: f64,
) -> Result<GauntletTables, RatingError> {
    let engines: Vec<String> = plan.engines.iter().map(|e| e.name.clone()).collect();
    let mut tally = Tally::new(plan.pairings.len());
    for r in records {
        tally.add(r);
    }
    let mut tcs: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    for (p, (pairing, t)) in plan.pairings.iter().zip(&tally.pairings).enumerate() {
        let tc = tc_label(&plan.pairing_tc(p));
        if !tcs.contains(&tc) {
            tcs.push(tc.clone());
        }
        let name = |i: usize| engines.get(i).cloned().unwrap_or_else(|| "?".into());
        rows.push(PairingRow {
            pairing: format!("{} vs {}", name(pairing.first), name(pairing.second)),
            tc,
            first: name(pairing.first),
            second: name(pairing.second),
            wdl: t.wdl_all,
            penta: t.penta,
            stats: t.summarize(None),
        });
    }
    let meetings = |tc: Option<&str>| -> Vec<Meeting> {
        plan.pairings
            .iter()
            .zip(&rows)
            .filter(|(_, r)| tc.is_none_or(|tc| r.tc == tc))
            .map(|(p, r)| Meeting { a: p.first, b: p.second, wdl: r.wdl })
            .collect()
    };
    let mut ratings = Vec::new();
    for tc in &tcs {
        let r = fit(engines.len(), &meetings(Some(tc)), anchor, anchor_elo)?;
        ratings.push(RatingsTable { tc: tc.clone(), ratings: r });
    }
    if tcs.len() > 1 {
        let r = fit(engines.len(), &meetings(None), anchor, anchor_elo)?;
        ratings.push(RatingsTable { tc: "all".into(), ratings: r });
    }
    Ok(GauntletTables { engines, tcs, rows, ratings })
}

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}%", 100.0 * v)).unwrap_or_else(|| "n/a".into())
}

fn elo_interval(s: Option<&Summary>) -> (String, String) {
    match s {
        Some(s) => (
            s.format_elo(),
            s.elo_ci
                .map(|[lo, hi]| format!("[{lo:+.1}, {hi:+.1}]"))
                .unwrap_or_else(|| "n/a".into()),
        ),
        None => ("n/a".into(), "n/a".into()),
    }
}

impl GauntletTables {
    /// The three tables as Markdown (also what the terminal shows).
    pub fn markdown(&self) -> String {
        let mut s = String::from("## Pairings\n\n");
        s.push_str(
            "| Pairing | TC | Games | W-D-L | Penta [LL LD DD WD WW] | Score | Elo | 95% interval |\n",
        );
        s.push_str("|---|---|---:|---|---|---:|---|---|\n");
        for r in &self.rows {
            let p = r.penta;
            let (elo, ci) = elo_interval(r.stats.as_ref());
            let _ = writeln!(
                s,
                "| {} | {} | {} | {}-{}-{} | [{} {} {} {} {}] | {} | {elo} | {ci} |",
                r.pairing,
                r.tc,
                r.wdl.games(),
                r.wdl.wins,
                r.wdl.draws,
                r.wdl.losses,
                p.ll,
                p.ld,
                p.dd,
                p.wd,
                p.ww,
                pct(r.score())
            );
        }
        for t in &self.ratings {
            let r = &t.ratings;
            let anchor = self.engines.get(r.anchor).map(String::as_str).unwrap_or("?");
            let _ = write!(
                s,
                "\n## Ratings ({}; anchor {anchor} = {})\n\n\
                 | Rank | Engine | Elo | +/- | Games | Score | Draws |\n\
                 |---:|---|---:|---:|---:|---:|---:|\n",
                t.tc, r.anchor_elo
            );
            for (rank, &e) in r.ranked().iter().enumerate() {
                let x = &r.ratings[e];
                let f =
                    |v: Option<f64>| v.map(|v| format!("{v:.1}")).unwrap_or_else(|| "n/a".into());
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} |",
                    rank + 1,
                    self.engines[e],
                    f(x.elo),
                    f(x.err95),
                    x.games,
                    pct(x.score()),
                    pct(x.draw_ratio())
                );
            }
            if r.virtual_draws {
                s.push_str(
                    "\n(an engine or group won or lost every game against the rest: one virtual \
                     draw per pair of engines was added so that the fit exists)\n",
                );
            }
        }
        s.push_str(
            "\n## Score of the first engine (the Crafty paper's Table 4 layout)\n\n| Pairing |",
        );
        for tc in &self.tcs {
            let _ = write!(s, " {tc} |");
        }
        s.push_str("\n|---|");
        s.push_str(&"---:|".repeat(self.tcs.len()));
        s.push('\n');
        for label in self.labels() {
            let _ = write!(s, "| {label} |");
            for tc in &self.tcs {
                let cell = self
                    .rows
                    .iter()
                    .find(|r| &r.pairing == label && &r.tc == tc)
                    .map(|r| format!("{} ({})", pct(r.score()), r.wdl.games()))
                    .unwrap_or_else(|| "-".into());
                let _ = write!(s, " {cell} |");
            }
            s.push('\n');
        }
        s
    }

    /// Distinct pairing labels, in plan order.
    fn labels(&self) -> Vec<&String> {
        let mut v: Vec<&String> = Vec::new();
        for r in &self.rows {
            if !v.contains(&&r.pairing) {
                v.push(&r.pairing);
            }
        }
        v
    }

    /// table.csv: one line per pairing and time control.
    pub fn pairings_csv(&self) -> String {
        let mut s = String::from(
            "pairing,tc,first,second,games,wins,draws,losses,ll,ld,dd,wd,ww,score,elo,elo_lo,elo_hi\n",
        );
        let num = |v: Option<f64>| v.map(|v| format!("{v:.4}")).unwrap_or_default();
        for r in &self.rows {
            let p = r.penta;
            let st = r.stats.as_ref();
            let ci = st.and_then(|s| s.elo_ci);
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                r.pairing,
                r.tc,
                r.first,
                r.second,
                r.wdl.games(),
                r.wdl.wins,
                r.wdl.draws,
                r.wdl.losses,
                p.ll,
                p.ld,
                p.dd,
                p.wd,
                p.ww,
                num(r.score()),
                num(st.and_then(|s| s.elo)),
                num(ci.map(|c| c[0])),
                num(ci.map(|c| c[1]))
            );
        }
        s
    }

    /// ratings.csv: one line per time control (or `all`) and engine, best first.
    pub fn ratings_csv(&self) -> String {
        let mut s = String::from("tc,rank,engine,elo,err95,games,score,draw_ratio,anchor\n");
        let num = |v: Option<f64>| v.map(|v| format!("{v:.2}")).unwrap_or_default();
        for t in &self.ratings {
            for (rank, &e) in t.ratings.ranked().iter().enumerate() {
                let x = &t.ratings.ratings[e];
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{},{}",
                    t.tc,
                    rank + 1,
                    self.engines[e],
                    num(x.elo),
                    num(x.err95),
                    x.games,
                    num(x.score().map(|v| v * 100.0)),
                    num(x.draw_ratio().map(|v| v * 100.0)),
                    self.engines[t.ratings.anchor]
                );
            }
        }
        s
    }
}
