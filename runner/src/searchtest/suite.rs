//! Test-suite scoring: positions with EPD `bm`/`am` operations are solved or failed by each
//! variant's move; the solve rate per variant with its Wilson 95 % interval.

use std::collections::HashMap;

use stats::sample::wilson;

use crate::plan::epd_ops::MoveOps;
use crate::plan::positions::TestPosition;
use crate::searchtest::oracle_report::rate_text;
use crate::searchtest::summary::SearchRecord;

/// One variant's solve rate (summary.json `suite`).
pub use crate::store::formats::SolveRow;

/// Solve rates of `names` (in order) over the positions of `positions` that have operations.
pub fn solve_rates(
    records: &[SearchRecord],
    positions: &[TestPosition],
    ops: &HashMap<String, MoveOps>,
    names: &[String],
) -> Vec<SolveRow> {
    let by_index: HashMap<usize, &MoveOps> =
        positions.iter().filter_map(|p| ops.get(&p.fen).map(|o| (p.index, o))).collect();
    names
        .iter()
        .enumerate()
        .map(|(v, name)| {
            let mine = records.iter().filter(|r| r.variant == v && r.fault.is_none());
            let (mut n, mut k) = (0, 0);
            for r in mine {
                if let Some(o) = by_index.get(&r.position) {
                    n += 1;
                    k += usize::from(o.solved_by(&r.bestmove));
                }
            }
            SolveRow { name: name.clone(), positions: n, solved: k, rate: wilson(k, n) }
        })
        .collect()
}

/// The Markdown table.
pub fn markdown(rows: &[SolveRow]) -> String {
    let mut t = String::from(
        "| Variant | Suite positions | Solved | Solve rate % [95%] |\n| --- | ---: | ---: | ---: |\n",
    );
    for r in rows {
        t.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            r.name,
            r.positions,
            r.solved,
            rate_text(r.rate.as_ref())
        ));
    }
    t
}
