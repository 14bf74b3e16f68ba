//! Counting finished games per pairing and summarising them with the `stats` crate.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use stats::{Counts, GameScore, Options, Penta, SprtSpec, Summary, Wdl};

use crate::plan::run_plan::RunPlan;
use crate::plan::schedule::Pairing;
use crate::play::termination::Termination;
use crate::report::overhead::merged_overhead;
use crate::report::same_moves::{self, SameMoves};
use crate::store::formats::{MergeInfo, Origin, PairingSummary, RunSummary};
use crate::store::{GameRecord, write_summary};

/// Running counts of one pairing, from its first engine's point of view.
#[derive(Clone, Debug, Default)]
pub struct PairingTally {
    /// Every finished game.
    pub wdl_all: Wdl,
    /// Games of complete pairs only (consistent with `penta`).
    pub wdl_paired: Wdl,
    pub penta: Penta,
    /// First game of a pair waiting for its partner: pair index -> score, opening, whether the
    /// first engine had White, its moves.
    open: HashMap<usize, (GameScore, usize, bool, Vec<String>)>,
    /// Complete pairs whose two games played the same moves.
    pub same_moves: SameMoves,
    /// Finished pairs whose two games are not one opening with colours reversed (`--repeat 1`,
    /// `--noswap`): while there are any, the statistics are trinomial over every game.
    pub unreversed: u64,
    pub terminations: BTreeMap<Termination, u64>,
}

/// Why a tally's statistics are trinomial.
pub const TRINOMIAL_NOTE: &str = "pentanomial n/a: the games are not pairs of one opening with \
     colours reversed (--repeat 1 or --noswap), so the statistics are trinomial over every game";

impl PairingTally {
    pub fn add(&mut self, rec: &GameRecord) {
        let s = rec.first_score();
        self.wdl_all.add(s);
        *self.terminations.entry(rec.termination).or_default() += 1;
        let first_white = rec.first_is_white();
        match self.open.remove(&rec.pair) {
            Some((other, opening, white, moves))
                if opening == rec.opening && white != first_white =>
            {
                let (g0, g1) = if rec.game == 0 { (s, other) } else { (other, s) };
                self.penta.add_pair(g0, g1);
                self.wdl_paired.add(g0);
                self.wdl_paired.add(g1);
                self.same_moves.add(same_moves::compare(&moves, &rec.moves));
            }
            Some(_) => self.unreversed += 1,
            None => {
                self.open.insert(rec.pair, (s, rec.opening, first_white, rec.moves.clone()));
            }
        }
    }

    /// True when the statistics are trinomial (see [`PairingTally::unreversed`]).
    pub fn trinomial(&self) -> bool {
        self.unreversed > 0
    }

    /// "N of M pairs: the engines played the same moves; ..." once enough complete pairs did
    /// (see [`SameMoves::note`]).
    pub fn same_moves_note(&self) -> Option<String> {
        self.same_moves.note(self.penta.pairs())
    }

    /// Games whose partner has not finished (none left out under trinomial statistics).
    pub fn unpaired(&self) -> usize {
        if self.trinomial() { 0 } else { self.open.len() }
    }

    /// Statistics over complete pairs (`None` before the first pair completes). A statistics
    /// failure leaves the failed figures `None` (see [`summarize_or_na`]).
    pub fn summarize(&self, sprt: Option<SprtSpec>) -> Option<Summary> {
        self.summarize_why(sprt).map(|(s, _)| s)
    }

    /// [`PairingTally::summarize`] with the reason of a statistics failure, if there was one.
    pub fn summarize_why(&self, sprt: Option<SprtSpec>) -> Option<(Summary, Option<String>)> {
        if self.trinomial() {
            let counts = Counts::Wdl(self.wdl_all);
            let opts = Options { sprt, ..Options::default() };
            let (s, why) = summarize_or_na(&counts, &opts, stats::summarize);
            let why = match why {
                Some(w) => format!("{TRINOMIAL_NOTE}; {w}"),
                None => TRINOMIAL_NOTE.to_string(),
            };
            return Some((s, Some(why)));
        }
        if self.penta.pairs() == 0 {
            return None;
        }
        let counts = Counts::Paired { wdl: self.wdl_paired, penta: self.penta };
        Some(summarize_or_na(&counts, &Options { sprt, ..Options::default() }, stats::summarize))
    }
}

/// Summarises `counts` with `summarize` (`stats::summarize`; a parameter so tests can make it
/// fail). A statistics failure never stops a run: if the SPRT is what failed, the estimates are
/// kept and the SPRT is `None`; if the estimates fail too, every figure is `None` (printed
/// `n/a`). The second value says why, for a one-time message.
pub fn summarize_or_na(
    counts: &Counts,
    opts: &Options,
    summarize: impl Fn(&Counts, &Options) -> Result<Summary, stats::StatsError>,
) -> (Summary, Option<String>) {
    let err = match summarize(counts, opts) {
        Ok(s) => return (s, None),
        Err(e) => e,
    };
    if opts.sprt.is_some()
        && let Ok(s) = summarize(counts, &Options { sprt: None, ..*opts })
    {
        return (s, Some(format!("SPRT n/a: {err}")));
    }
    let wdl = counts.wdl();
    let penta = counts.penta();
    let empty = Summary {
        games: counts.games(),
        pairs: penta.map(|p| p.pairs()),
        wins: wdl.map(|w| w.wins),
        draws: wdl.map(|w| w.draws),
        losses: wdl.map(|w| w.losses),
        points: counts.points(),
        penta,
        score: None,
        draw_ratio: None,
        elo: None,
        elo_ci: None,
        nelo: None,
        nelo_ci: None,
        los: None,
        p_value: None,
        critical_score: None,
        test_basis: None,
        sprt: None,
        pair_sd: None,
        sprt_expected_pairs: None,
    };
    (empty, Some(format!("statistics n/a: {err}")))
}

/// Tallies for every pairing of a run.
#[derive(Clone, Debug)]
pub struct Tally {
    pub pairings: Vec<PairingTally>,
}

impl Tally {
    pub fn new(n_pairings: usize) -> Tally {
        Tally { pairings: vec![PairingTally::default(); n_pairings] }
    }

    pub fn add(&mut self, rec: &GameRecord) {
        if let Some(t) = self.pairings.get_mut(rec.pairing) {
            t.add(rec);
        }
    }

    pub fn games(&self) -> u64 {
        self.pairings.iter().map(|p| p.wdl_all.games()).sum()
    }

    /// The tally of `records` over `n_pairings` pairings.
    pub fn of_records(n_pairings: usize, records: &[GameRecord]) -> Tally {
        let mut t = Tally::new(n_pairings);
        for r in records {
            t.add(r);
        }
        t
    }
}

/// The summary.json of a run: how it stopped and each pairing's counts and statistics (the
/// caller adds what the run measured or where its games came from).
pub fn summary_json(
    pairings: &[Pairing],
    engine_names: &[String],
    tally: &Tally,
    sprt: Option<SprtSpec>,
    stopped_by: &str,
) -> RunSummary {
    let name = |i: usize| engine_names.get(i).cloned().unwrap_or_else(|| "?".into());
    let list: Vec<PairingSummary> = pairings
        .iter()
        .zip(&tally.pairings)
        .map(|(p, t)| PairingSummary {
            label: p.label.clone(),
            first: name(p.first),
            second: name(p.second),
            games: t.wdl_all.games(),
            wins: t.wdl_all.wins,
            draws: t.wdl_all.draws,
            losses: t.wdl_all.losses,
            unpaired_games: t.unpaired(),
            terminations: t.terminations.clone(),
            same_moves: t.same_moves,
            stats: t.summarize(sprt),
        })
        .collect();
    RunSummary { stopped_by: stopped_by.to_string(), pairings: list, ..RunSummary::default() }
}

/// The same-moves note of every pairing that has one, each with its label when the run has
/// several pairings (summary.json's `warnings`, the final report).
pub fn same_moves_warnings(pairings: &[Pairing], tally: &Tally) -> Vec<String> {
    let several = pairings.len() > 1;
    pairings
        .iter()
        .zip(&tally.pairings)
        .filter_map(|(p, t)| {
            let note = t.same_moves_note()?;
            Some(if several { format!("{}: {note}", p.label) } else { note })
        })
        .collect()
}

/// The human-readable final summary of one pairing. W-D-L counts every game; the figures below
/// it count complete game pairs only, and say so.
pub fn format_pairing(
    p: &Pairing,
    names: &[String],
    t: &PairingTally,
    sprt: Option<SprtSpec>,
) -> String {
    use crate::report::figures::{elo, nelo, pct, prob_pct, too_few, too_few_note};
    let first = names.get(p.first).map(String::as_str).unwrap_or("?");
    let second = names.get(p.second).map(String::as_str).unwrap_or("?");
    let w = &t.wdl_all;
    // The label of a plain match already is "first vs second".
    let who = if p.label == format!("{first} vs {second}") {
        p.label.clone()
    } else {
        format!("{} ({first} vs {second})", p.label)
    };
    let mut s = format!("{who}: {} games, W-D-L {}-{}-{}\n", w.games(), w.wins, w.draws, w.losses);
    match t.summarize_why(sprt) {
        Some((sum, why)) if t.trinomial() => {
            s.push_str(&format!(
                "  trinomial over {} games: score {}, Elo {}, LOS {}\n",
                w.games(),
                pct(sum.score),
                elo(&sum),
                prob_pct(sum.los)
            ));
            if let Some(r) = &sum.sprt {
                s.push_str(&format!(
                    "  SPRT [{}, {}] ({}): LLR {:.2} [{:.2}, {:.2}] -> {}\n",
                    r.elo0, r.elo1, r.model, r.llr, r.lower_bound, r.upper_bound, r.verdict
                ));
            }
            if let Some(why) = why {
                s.push_str(&format!("  ({why})\n"));
            }
        }
        Some((sum, why)) => {
            let pe = t.penta;
            s.push_str(&format!(
                "  over {} complete pair{} ({} games): pentanomial [LL LD DD WD WW] = [{} {} {} {} {}]\n",
                pe.pairs(),
                if pe.pairs() == 1 { "" } else { "s" },
                2 * pe.pairs(),
                pe.ll,
                pe.ld,
                pe.dd,
                pe.wd,
                pe.ww,
            ));
            // `50.0%`, but `n/a` without a percent sign.
            let with_pct = |t: String| if t == "n/a" { t } else { t + "%" };
            s.push_str(&format!(
                "  score {}, draw ratio {}, Elo {}, nElo {}, LOS {}\n",
                with_pct(pct(sum.score)),
                with_pct(pct(sum.draw_ratio)),
                elo(&sum),
                nelo(&sum),
                with_pct(prob_pct(sum.los))
            ));
            if too_few(pe.pairs()) {
                s.push_str(&format!("  ({})\n", too_few_note(pe.pairs())));
            }
            if let Some(r) = &sum.sprt {
                s.push_str(&format!(
                    "  SPRT [{}, {}] ({}): LLR {:.2} [{:.2}, {:.2}] -> {}\n",
                    r.elo0, r.elo1, r.model, r.llr, r.lower_bound, r.upper_bound, r.verdict
                ));
            }
            if let Some(why) = why {
                s.push_str(&format!("  ({why})\n"));
            }
        }
        None => s.push_str("  no complete game pair yet: no statistics\n"),
    }
    if t.unpaired() > 0 {
        s.push_str(&format!(
            "  ({} game(s) without their pair partner are not in the statistics)\n",
            t.unpaired()
        ));
    }
    if let Some(note) = t.same_moves_note() {
        s.push_str(&format!("  warning: {note}\n"));
    }
    let terms: Vec<String> =
        t.terminations.iter().map(|(k, v)| format!("{} {v}", k.json_str())).collect();
    s.push_str(&format!(
        "  terminations: {}\n",
        if terms.is_empty() { "none".into() } else { terms.join(", ") }
    ));
    s
}

/// Writes the summary.json of merged shards (the runner's summary plus `runner_overhead` and
/// `merge`) and returns the per-pairing text.
pub fn write_merged_summary(
    out: &Path,
    plan: &RunPlan,
    records: &[GameRecord],
    stopped_by: &str,
    merge_info: MergeInfo,
) -> anyhow::Result<String> {
    write_gathered_summary(out, plan, records, stopped_by, Origin::Merge(merge_info))
}

/// Writes the summary.json of games gathered from elsewhere (merged shards, a fleet run pulled
/// from its database): the runner's summary, the games' `runner_overhead`, and `origin` saying
/// where they come from. Returns the per-pairing text.
pub fn write_gathered_summary(
    out: &Path,
    plan: &RunPlan,
    records: &[GameRecord],
    stopped_by: &str,
    origin: Origin,
) -> anyhow::Result<String> {
    let names: Vec<String> = plan.engines.iter().map(|e| e.name.clone()).collect();
    let tally = Tally::of_records(plan.pairings.len(), records);
    let mut doc = summary_json(&plan.pairings, &names, &tally, plan.sprt, stopped_by);
    doc.runner_overhead = Some(merged_overhead(records));
    let same = same_moves_warnings(&plan.pairings, &tally);
    if !same.is_empty() {
        doc.warnings = Some(same);
    }
    doc.set_origin(origin);
    write_summary(out, &doc)?;
    Ok(plan
        .pairings
        .iter()
        .zip(&tally.pairings)
        .map(|(p, t)| format_pairing(p, &names, t, plan.sprt))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::game::GameResult;

    fn rec(pair: usize, game: u8, result: GameResult, t: Termination) -> GameRecord {
        let mut r: GameRecord = serde_json::from_value(serde_json::json!({
            "seq": pair, "pairing": 0, "label": "x", "pair": pair, "game": game, "opening": 0,
            "fen": crate::plan::openings::STARTPOS_FEN, "white": "A", "black": "B", "result": "1-0",
            "termination": "checkmate", "plies": 0, "book_plies": 0, "moves": [], "scores": [],
            "depths": [], "times_ms": [], "engine_times_ms": [], "latency": {}, "duration_ms": 0,
            "date": "2026.01.01"
        }))
        .unwrap();
        r.result = result;
        r.termination = t;
        r
    }

    #[test]
    fn pairs_complete_in_any_order() {
        let mut t = PairingTally::default();
        // Pair 0: first engine wins as White (game 0) and draws as Black.
        t.add(&rec(0, 1, GameResult::Draw, Termination::Threefold));
        assert_eq!(t.unpaired(), 1);
        assert!(t.summarize(None).is_none());
        t.add(&rec(0, 0, GameResult::WhiteWins, Termination::Checkmate));
        // Pair 1: first engine loses both.
        t.add(&rec(1, 0, GameResult::BlackWins, Termination::TimeForfeit));
        t.add(&rec(1, 1, GameResult::WhiteWins, Termination::AdjudicationResign));
        assert_eq!(t.penta, Penta { ll: 1, ld: 0, dd: 0, wd: 1, ww: 0 });
        assert_eq!(t.wdl_all, Wdl { wins: 1, draws: 1, losses: 2 });
        assert_eq!(t.unpaired(), 0);
        let s = t.summarize(None).unwrap();
        assert_eq!(s.games, 4);
        assert_eq!(t.terminations[&Termination::TimeForfeit], 1);
        let text = format_pairing(
            &Pairing { label: "x".into(), first: 0, second: 1, tc: None },
            &["A".into(), "B".into()],
            &t,
            None,
        );
        assert!(text.contains("W-D-L 1-1-2"), "{text}");
        assert!(!text.contains("SPRT"), "no SPRT line unless asked: {text}");
        assert!(!text.to_lowercase().contains("nan"), "{text}");
    }

    #[test]
    fn the_match_summary_says_what_it_counts() {
        // Two pairs, both drawn both ways: no spread, so no interval and no LOS.
        let mut t = PairingTally::default();
        for pair in 0..2 {
            for game in 0..2 {
                t.add(&rec(pair, game, GameResult::Draw, Termination::Threefold));
            }
        }
        // One more game whose partner has not finished: in W-D-L, not in the figures.
        t.add(&rec(2, 0, GameResult::WhiteWins, Termination::Checkmate));
        let p = Pairing { label: "A vs B".into(), first: 0, second: 1, tc: None };
        let text = format_pairing(&p, &["A".into(), "B".into()], &t, None);
        assert!(text.starts_with("A vs B: 5 games, W-D-L 1-4-0\n"), "header once: {text}");
        assert!(text.contains("over 2 complete pairs (4 games)"), "{text}");
        assert!(text.contains("Elo +0.0 [n/a: no spread]") && text.contains("LOS n/a\n"), "{text}");
        assert!(text.contains("2 complete pairs (< 10): figures not yet meaningful"), "{text}");
        assert!(!text.contains("n/a%") && !text.contains("+/-"), "{text}");
    }

    #[test]
    fn a_failing_statistic_gives_n_a_and_a_reason() {
        let counts = Counts::Paired {
            wdl: Wdl { wins: 3, draws: 2, losses: 1 },
            penta: Penta { ll: 0, ld: 0, dd: 1, wd: 2, ww: 0 },
        };
        let spec = SprtSpec::parse("elo0=0,elo1=5").unwrap();
        let opts = Options { sprt: Some(spec), ..Options::default() };
        // The SPRT fails: the estimates stay, the SPRT is n/a, and the reason is given.
        let fail_sprt = |c: &Counts, o: &Options| {
            if o.sprt.is_some() {
                Err(stats::StatsError::Numerical("no root".into()))
            } else {
                stats::summarize(c, o)
            }
        };
        let (s, why) = summarize_or_na(&counts, &opts, fail_sprt);
        assert!(s.score.is_some() && s.sprt.is_none());
        assert!(why.unwrap().contains("SPRT n/a: "));
        // Everything fails: every figure is n/a, the counts are kept.
        let fail = |_: &Counts, _: &Options| Err(stats::StatsError::Numerical("boom".into()));
        let (s, why) = summarize_or_na(&counts, &opts, fail);
        assert_eq!((s.games, s.wins, s.pairs), (6, Some(3), Some(3)));
        assert!(s.score.is_none() && s.elo.is_none() && s.los.is_none());
        assert!(why.unwrap().starts_with("statistics n/a: "));
        let (_, why) = summarize_or_na(&counts, &opts, stats::summarize);
        assert_eq!(why, None);
    }
}
