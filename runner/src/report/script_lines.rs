//! `--output cutechess|fastchess`: the lines those tools print while a match goes, for scripts
//! that already parse them (`Score of A vs B: ...`, `Elo difference: ...`, `SPRT: llr ...`;
//! fastchess's `Results of A vs B` block). Every number comes from the `stats` crate: the
//! cutechess lines from the games' W/D/L ([`stats::ScoreMoments::from_wdl`], as cutechess-cli
//! counts), the fastchess block and every LLR from the run's own pentanomial summary
//! ([`PairingTally::summarize`]). A `+/-` is half the width of the 95 % interval.

use std::collections::HashMap;

use stats::{GameScore, ScoreMoments, Summary, Wdl};

use crate::plan::run_plan::RunPlan;
use crate::plan::time_control::TimeControl;
use crate::report::summary::{PairingTally, Tally};
use crate::store::GameRecord;

/// Which tool's lines are printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    /// The runner's own output only.
    #[default]
    Runner,
    Cutechess,
    Fastchess,
}

/// `--output`, `--ratinginterval`, `--scoreinterval`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScriptLines {
    pub style: Style,
    /// Elo and SPRT lines every N games (0: at the end only).
    pub rating_interval: u64,
    /// The "Score of" line every N games (0: at the end only; cutechess only).
    pub score_interval: u64,
}

impl ScriptLines {
    pub fn new(style: &str, rating_interval: u64, score_interval: u64) -> ScriptLines {
        let style = match style {
            "cutechess" => Style::Cutechess,
            "fastchess" => Style::Fastchess,
            _ => Style::Runner,
        };
        ScriptLines { style, rating_interval, score_interval }
    }

    pub fn is_runner(&self) -> bool {
        self.style == Style::Runner
    }
}

/// Counts the tools print that the run's tally does not keep: per pairing, the first engine's
/// results with White and with Black, and the pairs split one win, one loss (fastchess's WL).
#[derive(Clone, Debug, Default)]
pub struct ColourTally {
    white: Vec<Wdl>,
    black: Vec<Wdl>,
    wl_pairs: Vec<u64>,
    open: HashMap<(usize, usize), GameScore>,
}

impl ColourTally {
    pub fn new(pairings: usize) -> ColourTally {
        ColourTally {
            white: vec![Wdl::default(); pairings],
            black: vec![Wdl::default(); pairings],
            wl_pairs: vec![0; pairings],
            open: HashMap::new(),
        }
    }

    pub fn add(&mut self, rec: &GameRecord) {
        let p = rec.pairing;
        if p >= self.white.len() {
            return;
        }
        let s = rec.first_score();
        if rec.game == 0 { &mut self.white[p] } else { &mut self.black[p] }.add(s);
        match self.open.remove(&(p, rec.pair)) {
            Some(o) if matches!((o, s), (GameScore::Win, GameScore::Loss)) => self.wl_pairs[p] += 1,
            Some(o) if matches!((o, s), (GameScore::Loss, GameScore::Win)) => self.wl_pairs[p] += 1,
            Some(_) => {}
            None => {
                self.open.insert((p, rec.pair), s);
            }
        }
    }
}

/// What the lines are made of.
pub struct LinesInput<'a> {
    pub plan: &'a RunPlan,
    pub tally: &'a Tally,
    pub colours: &'a ColourTally,
}

impl ScriptLines {
    /// The lines after the game `rec` (already counted), `done` games finished in all.
    pub fn after_game(&self, input: &LinesInput<'_>, rec: &GameRecord, done: u64) -> Vec<String> {
        if self.is_runner() {
            return Vec::new();
        }
        let number = rec.seq.saturating_mul(2).saturating_add(usize::from(rec.game) + 1);
        let mut lines = vec![format!(
            "Finished game {number} ({} vs {}): {} {{{}}}",
            rec.white,
            rec.black,
            rec.result.pgn(),
            rec.ending_text()
        )];
        let due = |n: u64| n > 0 && done.is_multiple_of(n);
        let p = rec.pairing;
        if self.style == Style::Cutechess && due(self.score_interval) {
            lines.push(cutechess_score(input, p));
        }
        if due(self.rating_interval) {
            lines.extend(self.rating(input, p));
        }
        lines
    }

    /// The lines at the end of the run (every pairing), unless they were just printed.
    pub fn at_end(&self, input: &LinesInput<'_>, done: u64) -> Vec<String> {
        if self.is_runner() {
            return Vec::new();
        }
        let mut lines = Vec::new();
        let printed = |n: u64| n > 0 && done > 0 && done.is_multiple_of(n);
        for p in 0..input.plan.pairings.len() {
            if self.style == Style::Cutechess && !printed(self.score_interval) {
                lines.push(cutechess_score(input, p));
            }
            if !printed(self.rating_interval) || input.plan.pairings.len() > 1 {
                lines.extend(self.rating(input, p));
            }
        }
        lines.push("Finished match".into());
        lines
    }

    fn rating(&self, input: &LinesInput<'_>, p: usize) -> Vec<String> {
        match self.style {
            Style::Cutechess => cutechess_rating(input, p),
            Style::Fastchess => fastchess_block(input, p),
            Style::Runner => Vec::new(),
        }
    }
}

fn names(plan: &RunPlan, p: usize) -> (&str, &str) {
    let pairing = &plan.pairings[p];
    let name = |i: usize| plan.engines.get(i).map(|e| e.name.as_str()).unwrap_or("?");
    (name(pairing.first), name(pairing.second))
}

/// `W - L - D  [score] games`, as cutechess writes a score.
fn wld(w: &Wdl) -> String {
    let n = w.games();
    let score = if n == 0 { f64::NAN } else { w.points() / n as f64 };
    format!("{} - {} - {}  [{}] {n}", w.wins, w.losses, w.draws, fixed(Some(score), 3))
}

/// A number with `decimals` decimals; undefined: `nan` (as those tools print it).
fn fixed(x: Option<f64>, decimals: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        Some(v) if v.is_infinite() => if v > 0.0 { "inf" } else { "-inf" }.into(),
        _ => "nan".into(),
    }
}

/// Half the width of an interval.
fn half(ci: Option<[f64; 2]>) -> Option<f64> {
    ci.map(|[lo, hi]| (hi - lo) / 2.0)
}

/// printf's `%.3g` (three significant digits, trailing zeros dropped), as cutechess's SPRT line.
fn g3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return fixed(Some(x), 0);
    }
    let exp = x.abs().log10().floor() as i32;
    let decimals = (2 - exp).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

fn cutechess_score(input: &LinesInput<'_>, p: usize) -> String {
    let (a, b) = names(input.plan, p);
    format!("Score of {a} vs {b}: {}", wld(&input.tally.pairings[p].wdl_all))
}

fn cutechess_rating(input: &LinesInput<'_>, p: usize) -> Vec<String> {
    let (a, _) = names(input.plan, p);
    let t = &input.tally.pairings[p];
    let (white, black) = (input.colours.white[p], input.colours.black[p]);
    let mut lines = Vec::new();
    if white.games() > 0 {
        lines.push(format!("...      {a} playing White: {}", wld(&white)));
    }
    if black.games() > 0 {
        lines.push(format!("...      {a} playing Black: {}", wld(&black)));
    }
    // White's results: the first engine's with White, the second engine's with White.
    let sides = Wdl {
        wins: white.wins + black.losses,
        draws: white.draws + black.draws,
        losses: white.losses + black.wins,
    };
    if sides.games() > 0 {
        lines.push(format!("...      White vs Black: {}", wld(&sides)));
    }
    let w = t.wdl_all;
    let est = ScoreMoments::from_wdl(&w).map(|m| m.estimates()).unwrap_or_default();
    let elo = est.elo.or_else(|| {
        (w.games() > 0).then_some(if w.losses == 0 { f64::INFINITY } else { f64::NEG_INFINITY })
    });
    let draws = (w.games() > 0).then(|| w.draws as f64 * 100.0 / w.games() as f64);
    lines.push(format!(
        "Elo difference: {} +/- {}, LOS: {} %, DrawRatio: {} %",
        fixed(elo, 1),
        fixed(half(est.elo_ci), 1),
        fixed(est.los.map(|l| l * 100.0), 1),
        fixed(draws, 1)
    ));
    if let Some(s) = sprt_of(input, t) {
        let verdict = if s.llr >= s.upper_bound {
            " - H1 was accepted"
        } else if s.llr <= s.lower_bound {
            " - H0 was accepted"
        } else {
            ""
        };
        lines.push(format!(
            "SPRT: llr {} ({:.1}%), lbound {}, ubound {}{verdict}",
            g3(s.llr),
            s.llr / s.upper_bound * 100.0,
            g3(s.lower_bound),
            g3(s.upper_bound)
        ));
    }
    lines
}

/// The run's summary of pairing `p` (over complete pairs) and its SPRT, when it has one.
fn sprt_of(input: &LinesInput<'_>, t: &PairingTally) -> Option<stats::SprtResult> {
    input.plan.sprt?;
    t.summarize(input.plan.sprt)?.sprt
}

/// fastchess's time control in its header: `10+0.1`, `40/60+0.6`, `0.1/move`, `N nodes`,
/// `N plies`.
fn fastchess_tc(tc: &TimeControl) -> String {
    let secs = |ms: u64| format!("{}", ms as f64 / 1000.0);
    match *tc {
        TimeControl::Fischer { moves, base_ms, inc_ms } => {
            let moves = moves.map(|m| format!("{m}/")).unwrap_or_default();
            let inc = if inc_ms > 0 { format!("+{}", secs(inc_ms)) } else { String::new() };
            format!("{moves}{}{inc}", secs(base_ms))
        }
        TimeControl::MoveTime { ms } => format!("{}/move", secs(ms)),
        TimeControl::Nodes { nodes } => format!("{nodes} nodes"),
        TimeControl::Depth { depth } => format!("{depth} plies"),
    }
}

/// The first and second engine's values of a UCI option as fastchess shows them (`NULL` when
/// the command line does not set it), joined with ` - ` when they differ.
fn option_pair(plan: &RunPlan, p: usize, option: &str, unit: &str) -> String {
    let pairing = &plan.pairings[p];
    let value = |i: usize| {
        plan.engines
            .get(i)
            .and_then(|e| e.options.iter().find(|(k, _)| k.eq_ignore_ascii_case(option)))
            .map(|(_, v)| format!("{v}{unit}"))
            .unwrap_or_else(|| "NULL".into())
    };
    let (a, b) = (value(pairing.first), value(pairing.second));
    if a == b { a } else { format!("{a} - {b}") }
}

fn fastchess_block(input: &LinesInput<'_>, p: usize) -> Vec<String> {
    let plan = input.plan;
    let (a, b) = names(plan, p);
    let t = &input.tally.pairings[p];
    let summary: Option<Summary> = t.summarize(plan.sprt);
    let book = plan
        .book
        .path
        .as_deref()
        .and_then(|b| b.rsplit(['/', '\\']).next())
        .map(|b| format!(", {b}"))
        .unwrap_or_default();
    let get = |f: fn(&Summary) -> Option<f64>| summary.as_ref().and_then(f);
    let pm = |v: Option<f64>, ci: Option<[f64; 2]>| {
        format!("{} +/- {}", fixed(v, 2), fixed(half(ci), 2))
    };
    let pen = t.penta;
    let pairs = pen.pairs();
    let ratio = |x: u64, y: u64| if y == 0 { f64::NAN } else { x as f64 / y as f64 };
    let wl = input.colours.wl_pairs[p];
    let w = t.wdl_all;
    let points = w.points();
    let mut lines = vec![
        "-".repeat(50),
        format!(
            "Results of {a} vs {b} ({}, {}, {}{book}):",
            fastchess_tc(&plan.pairing_tc(p)),
            option_pair(plan, p, "Threads", "t"),
            option_pair(plan, p, "Hash", "MB")
        ),
        format!(
            "Elo: {}, nElo: {}",
            pm(get(|s| s.elo), summary.as_ref().and_then(|s| s.elo_ci)),
            pm(get(|s| s.nelo), summary.as_ref().and_then(|s| s.nelo_ci))
        ),
        format!(
            "LOS: {} %, DrawRatio: {} %, PairsRatio: {}",
            fixed(get(|s| s.los).map(|l| l * 100.0), 2),
            fixed(Some(ratio(pen.dd, pairs) * 100.0), 2),
            fixed(Some(ratio(pen.ww + pen.wd, pen.ld + pen.ll)), 2)
        ),
        format!(
            "Games: {}, Wins: {}, Losses: {}, Draws: {}, Points: {points:.1} ({} %)",
            w.games(),
            w.wins,
            w.losses,
            w.draws,
            fixed(Some(ratio(w.wins * 2 + w.draws, w.games() * 2) * 100.0), 2)
        ),
        format!(
            "Ptnml(0-2): [{}, {}, {}, {}, {}], WL/DD Ratio: {}",
            pen.ll,
            pen.ld,
            pen.dd,
            pen.wd,
            pen.ww,
            fixed(Some(ratio(wl, pen.dd.saturating_sub(wl))), 2)
        ),
    ];
    if let Some(s) = sprt_of(input, t) {
        let fraction = if s.llr >= 0.0 { s.llr / s.upper_bound } else { -s.llr / s.lower_bound };
        lines.push(format!(
            "LLR: {:.2} ({:.1}%) ({:.2}, {:.2}) [{:.2}, {:.2}]",
            s.llr,
            fraction * 100.0,
            s.lower_bound,
            s.upper_bound,
            s.elo0,
            s.elo1
        ));
    }
    lines.push("-".repeat(50));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::game::GameResult;
    use crate::store::tests::{plan, record};

    fn run(results: &[GameResult]) -> (RunPlan, Tally, ColourTally, Vec<GameRecord>) {
        let mut p = plan();
        p.pairs = results.len().div_ceil(2);
        p.sprt = Some(stats::SprtSpec::parse("elo0=0,elo1=10").unwrap());
        let mut t = Tally::new(1);
        let mut c = ColourTally::new(1);
        let mut recs = Vec::new();
        for (i, r) in results.iter().enumerate() {
            let mut rec = record(i / 2, (i % 2) as u8);
            rec.result = *r;
            t.add(&rec);
            c.add(&rec);
            recs.push(rec);
        }
        (p, t, c, recs)
    }

    #[test]
    fn cutechess_lines_as_scripts_read_them() {
        use GameResult::*;
        let (plan, tally, colours, recs) = run(&[WhiteWins, Draw, WhiteWins, BlackWins]);
        let input = LinesInput { plan: &plan, tally: &tally, colours: &colours };
        let lines = ScriptLines::new("cutechess", 2, 1).after_game(&input, &recs[3], 4);
        // First engine: wins 1-0 as White twice, draws and wins as Black: 3 - 0 - 1.
        assert_eq!(lines[0], "Finished game 4 (B vs A): 0-1 {checkmate}");
        assert_eq!(lines[1], "Score of A vs B: 3 - 0 - 1  [0.875] 4");
        assert_eq!(lines[2], "...      A playing White: 2 - 0 - 0  [1.000] 2");
        assert_eq!(lines[3], "...      A playing Black: 1 - 0 - 1  [0.750] 2");
        assert_eq!(lines[4], "...      White vs Black: 2 - 1 - 1  [0.625] 4");
        assert!(lines[5].starts_with("Elo difference: 338.0 +/- "), "{}", lines[5]);
        assert!(lines[5].ends_with(", DrawRatio: 25.0 %"), "{}", lines[5]);
        assert!(
            lines[6].starts_with("SPRT: llr ") && lines[6].contains(", lbound -2.94, ubound 2.94")
        );
        assert_eq!(lines.len(), 7);
        assert_eq!(g3(0.1234), "0.123");
        assert_eq!(g3(-2.944), "-2.94");
        assert_eq!(g3(12.0), "12");
    }

    #[test]
    fn fastchess_block_as_scripts_read_it() {
        use GameResult::*;
        let (plan, tally, colours, _) = run(&[WhiteWins, WhiteWins, Draw, Draw]);
        let input = LinesInput { plan: &plan, tally: &tally, colours: &colours };
        let lines = ScriptLines::new("fastchess", 10, 1).at_end(&input, 4);
        assert_eq!(lines[0], "-".repeat(50));
        assert_eq!(lines[1], "Results of A vs B (100 nodes, NULL, NULL):");
        assert!(lines[2].starts_with("Elo: ") && lines[2].contains(", nElo: "), "{}", lines[2]);
        assert!(lines[3].starts_with("LOS: ") && lines[3].contains("DrawRatio: 100.00 %"));
        assert_eq!(lines[4], "Games: 4, Wins: 1, Losses: 1, Draws: 2, Points: 2.0 (50.00 %)");
        assert_eq!(lines[5], "Ptnml(0-2): [0, 0, 2, 0, 0], WL/DD Ratio: 1.00");
        assert!(lines[6].starts_with("LLR: ") && lines[6].ends_with("(-2.94, 2.94) [0.00, 10.00]"));
        assert_eq!(lines[7], "-".repeat(50));
        assert_eq!(lines[8], "Finished match");
        assert!(ScriptLines::new("runner", 10, 1).at_end(&input, 4).is_empty());
    }
}
