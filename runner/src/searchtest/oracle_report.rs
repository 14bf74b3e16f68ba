//! The oracle's figures: per variant the mean loss (95 % t interval) and the best-move rate
//! (Wilson 95 % interval); per pair of variants the paired difference of losses over the
//! positions both were scored on (paired t: interval and two-sided p); per stage the same; and
//! the Markdown table.

use std::collections::BTreeMap;

use stats::sample::{MeanInterval, Proportion, mean_interval, paired_t, wilson};

use crate::plan::positions::Stage;
use crate::play::probe::Limit;
use crate::report::figures::format_p;
use crate::searchtest::oracle::{OraclePlan, OracleRun, ScoredMove};
use crate::searchtest::oracle_spec::MAPPING_NOTE;

/// The oracle's figures as oracle.json holds them.
pub use crate::store::formats::{LossRow, LossSummary, PairRow};

/// Figures for `names` (in order) from `moves`.
pub fn summarize_losses(moves: &[ScoredMove], names: &[String]) -> LossSummary {
    let per: Vec<BTreeMap<usize, &ScoredMove>> = (0..names.len())
        .map(|v| moves.iter().filter(|m| m.variant == v).map(|m| (m.position, m)).collect())
        .collect();
    let variants = names
        .iter()
        .zip(&per)
        .map(|(name, ms)| {
            let losses: Vec<f64> = ms.values().map(|m| m.loss as f64).collect();
            let es: Vec<f64> = ms.values().map(|m| m.es_loss).collect();
            LossRow {
                name: name.clone(),
                scored: ms.len(),
                loss: mean_interval(&losses),
                es_loss: mean_interval(&es),
                best_move: wilson(ms.values().filter(|m| m.is_best).count(), ms.len()),
                negative_raw: ms.values().filter(|m| m.raw_loss < 0).count(),
            }
        })
        .collect();
    let mut pairs = Vec::new();
    for a in 0..names.len() {
        for b in a + 1..names.len() {
            let (mut la, mut lb, mut ea, mut eb) = (vec![], vec![], vec![], vec![]);
            for (pos, m) in &per[a] {
                if let Some(o) = per[b].get(pos) {
                    la.push(m.loss as f64);
                    lb.push(o.loss as f64);
                    ea.push(m.es_loss);
                    eb.push(o.es_loss);
                }
            }
            pairs.push(PairRow {
                a: names[a].clone(),
                b: names[b].clone(),
                positions: la.len(),
                test: paired_t(&la, &lb),
                es_test: paired_t(&ea, &eb),
            });
        }
    }
    LossSummary { variants, pairs }
}

/// The summary overall and per stage.
pub fn summarize_by_stage(
    moves: &[ScoredMove],
    names: &[String],
) -> (LossSummary, BTreeMap<String, LossSummary>) {
    let all = summarize_losses(moves, names);
    let mut by_stage = BTreeMap::new();
    for stage in Stage::ALL {
        let subset: Vec<ScoredMove> = moves.iter().filter(|m| m.stage == stage).cloned().collect();
        by_stage.insert(stage.to_string(), summarize_losses(&subset, names));
    }
    (all, by_stage)
}

/// `12.3 [8.1, 16.5]` (or with a sign), `n/a`, or the mean alone when there is no interval.
pub fn mean_text(m: Option<&MeanInterval>, signed: bool) -> String {
    let f = |x: f64| if signed { format!("{x:+.1}") } else { format!("{x:.1}") };
    match m {
        None => "n/a".into(),
        Some(m) => match (m.lo, m.hi) {
            (Some(lo), Some(hi)) => format!("{} [{}, {}]", f(m.mean), f(lo), f(hi)),
            _ => format!("{} [n/a: {} value]", f(m.mean), m.n),
        },
    }
}

/// `76.0 [65.2, 84.3]` in percent.
pub fn rate_text(p: Option<&Proportion>) -> String {
    p.map_or_else(
        || "n/a".into(),
        |p| format!("{:.1} [{:.1}, {:.1}]", 100.0 * p.rate, 100.0 * p.lo, 100.0 * p.hi),
    )
}

/// The Markdown tables of one summary: variants, then pairs.
pub fn markdown(s: &LossSummary) -> String {
    let mut t = String::from(
        "| Variant | Scored | Mean loss cp [95%] | Mean loss, expected score pp [95%] | Best move % \
         [95%] | Above oracle's best |\n| --- | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in &s.variants {
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            r.name,
            r.scored,
            mean_text(r.loss.as_ref(), false),
            mean_text(r.es_loss.as_ref(), false),
            rate_text(r.best_move.as_ref()),
            r.negative_raw
        ));
    }
    if !s.pairs.is_empty() {
        t.push_str(
            "\n| A | B | Positions | Loss A - B cp [95%] | p | Loss A - B, expected score pp \
             [95%] | p |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |\n",
        );
        for p in &s.pairs {
            t.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                p.a,
                p.b,
                p.positions,
                mean_text(p.test.as_ref().map(|t| &t.diff), true),
                format_p(p.test.as_ref().and_then(|t| t.p)),
                mean_text(p.es_test.as_ref().map(|t| &t.diff), true),
                format_p(p.es_test.as_ref().and_then(|t| t.p)),
            ));
        }
    }
    t
}

/// The oracle's section of table.md: what scored the moves, what the cache saved, the tables
/// overall and per stage.
pub fn document(
    plan: &OraclePlan,
    run: &OracleRun,
    all: &LossSummary,
    stages: &BTreeMap<String, LossSummary>,
) -> String {
    let limit = match plan.spec.limit {
        Limit::Depth(d) => format!("depth {d}"),
        Limit::Nodes(n) => format!("{n} nodes"),
        Limit::Movetime(ms) => format!("{ms} ms"),
    };
    let mut t = format!(
        "\n# Oracle: `{}` ({}) at {limit}\n\n\
         Loss = the oracle's score of its best move minus its score of the variant's move \
         (`go ... searchmoves MOVE`), in centipawns from the mover's view ({MAPPING_NOTE}); 0 \
         when the variant chose the oracle's move. Expected score: 100 / (1 + 10^(-cp/400)) \
         of those values, its loss in percentage points (pp). Intervals: 95 % (t for means, Wilson for \
         rates); pairs: paired t over the positions both variants were scored on.\n\n\
         Oracle searches: {} needed, {} from the cache `{}`, {} run now ({} faults); {} moves \
         unscored; {:.1} s.\n\n",
        plan.spec.engine.name,
        run.id_name.as_deref().unwrap_or("no id name"),
        run.needed,
        run.cached,
        run.cache_file,
        run.searched,
        run.faults,
        run.unscored,
        run.wall_ms as f64 / 1000.0,
    );
    t.push_str(&markdown(all));
    for (stage, s) in stages {
        t.push_str(&format!("\n## Oracle, {stage} positions\n\n{}", markdown(s)));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(position: usize, variant: usize, loss: i32) -> ScoredMove {
        ScoredMove {
            position,
            variant,
            variant_name: format!("v{variant}"),
            stage: if position.is_multiple_of(2) { Stage::Middlegame } else { Stage::Endgame },
            chosen: "e2e4".into(),
            oracle_best: "e2e4".into(),
            best_score: 50,
            chosen_score: 50 - loss,
            loss: loss.max(0),
            raw_loss: loss,
            es_loss: loss.max(0) as f64 / 10.0,
            is_best: loss == 0,
        }
    }

    #[test]
    fn pairs_use_positions_both_variants_were_scored_on() {
        let names = vec!["good".to_string(), "bad".to_string()];
        let mut moves = Vec::new();
        for p in 0..20 {
            moves.push(mv(p, 0, if p % 5 == 0 { 10 } else { 0 }));
            moves.push(mv(p, 1, 30 + (p as i32 % 3) * 10));
        }
        moves.push(mv(20, 0, 0)); // only "good" has position 20
        moves.push(mv(21, 1, -5)); // only "bad": scored above the oracle's best
        let s = summarize_losses(&moves, &names);
        assert_eq!((s.variants[0].scored, s.variants[1].scored), (21, 21));
        assert_eq!(s.variants[1].negative_raw, 1);
        assert_eq!(s.variants[0].best_move.unwrap().k, 17);
        let pair = &s.pairs[0];
        assert_eq!(pair.positions, 20);
        let t = pair.test.unwrap();
        assert!(t.diff.hi.unwrap() < 0.0 && t.p.unwrap() < 1e-6, "{t:?}");
        let (_, stages) = summarize_by_stage(&moves, &names);
        assert_eq!(stages["middlegame"].pairs[0].positions, 10);
        let md = markdown(&s);
        assert!(md.contains("| good | bad | 20 | -"), "{md}");
    }
}
