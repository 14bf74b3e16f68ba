//! Per-search records of a search test and their per-variant summary: depth reached and nodes
//! (the Crafty seed's fixed-time depth test), and nodes, speed-up, same move and same value
//! against the first variant (Buro's fixed-depth comparison, seed 002 Table 2).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::plan::positions::Stage;
use crate::play::uci_info::Eval;

/// One search of one position by one variant (a line of searches.jsonl).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    pub position: usize,
    pub variant: usize,
    pub variant_name: String,
    pub stage: Stage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<Eval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    #[serde(default)]
    pub bestmove: String,
    #[serde(default)]
    pub wall_ms: u64,
    /// Counters from the bundled engine's `info string mpc ...` line, if any.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mpc: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
}

/// Reads `mpc tries 12 cuts 5 beta_cuts 4 ...` into name -> count (non-numeric pairs skipped).
pub fn parse_mpc_counters(strings: &[String]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for s in strings {
        let mut toks = s.split_whitespace();
        if toks.next() != Some("mpc") {
            continue;
        }
        let toks: Vec<&str> = toks.collect();
        for w in toks.windows(2) {
            if w[0].parse::<f64>().is_ok() {
                continue;
            }
            if let Ok(v) = w[1].parse::<u64>() {
                out.insert(w[0].trim_end_matches([':', '=']).to_string(), v);
            }
        }
    }
    out
}

/// The summary of one variant (summary.json `variants`, a type of the run's files).
pub use crate::store::formats::VariantSummary;

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len().is_multiple_of(2) { (v[m - 1] + v[m]) / 2.0 } else { v[m] })
}

fn sd(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    (xs.len() >= 2)
        .then(|| (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt())
}

fn pct(k: usize, n: usize) -> Option<f64> {
    (n > 0).then(|| 100.0 * k as f64 / n as f64)
}

/// Summarises `records` per variant (`names`/`options` in variant order). Every figure is taken
/// over the positions that ALL variants searched without a fault, so that variants are compared
/// on the same positions (also after a stopped run, or when one variant faulted).
pub fn summarize(
    records: &[SearchRecord],
    names: &[(String, Vec<(String, String)>)],
) -> Vec<VariantSummary> {
    let ok = |v: usize| -> BTreeMap<usize, &SearchRecord> {
        records
            .iter()
            .filter(|r| r.variant == v && r.fault.is_none())
            .map(|r| (r.position, r))
            .collect()
    };
    let per_variant: Vec<BTreeMap<usize, &SearchRecord>> = (0..names.len()).map(ok).collect();
    let common: Vec<usize> = match per_variant.first() {
        Some(first) => first
            .keys()
            .copied()
            .filter(|p| per_variant.iter().all(|m| m.contains_key(p)))
            .collect(),
        None => Vec::new(),
    };
    let base: Vec<&SearchRecord> = match per_variant.first() {
        Some(first) => common.iter().map(|p| first[p]).collect(),
        None => Vec::new(),
    };
    names
        .iter()
        .enumerate()
        .map(|(v, (name, options))| {
            let mine: Vec<&SearchRecord> = common.iter().map(|p| per_variant[v][p]).collect();
            let faults = records.iter().filter(|r| r.variant == v && r.fault.is_some()).count();
            let depths: Vec<f64> = mine.iter().filter_map(|r| r.depth).map(f64::from).collect();
            let nodes: Vec<f64> = mine.iter().filter_map(|r| r.nodes).map(|n| n as f64).collect();
            let times: Vec<f64> = mine.iter().map(|r| r.wall_ms as f64).collect();
            let total_nodes: f64 = nodes.iter().sum();
            let total_ms: f64 = times.iter().sum();
            let n = mine.len();
            let (mut base_nodes, mut my_nodes, mut bd, mut md) = (0u64, 0u64, 0.0, 0.0);
            let (mut same_move, mut same_value) = (0, 0);
            for (b, m) in base.iter().zip(&mine) {
                base_nodes += b.nodes.unwrap_or(0);
                my_nodes += m.nodes.unwrap_or(0);
                bd += b.depth.unwrap_or(0) as f64;
                md += m.depth.unwrap_or(0) as f64;
                same_move += usize::from(!b.bestmove.is_empty() && b.bestmove == m.bestmove);
                same_value += usize::from(b.score.is_some() && b.score == m.score);
            }
            let mut mpc = BTreeMap::new();
            for r in &mine {
                for (k, c) in &r.mpc {
                    *mpc.entry(k.clone()).or_insert(0) += c;
                }
            }
            VariantSummary {
                name: name.clone(),
                options: options.clone(),
                positions: n,
                faults,
                depth_mean: mean(&depths),
                depth_median: median(&depths),
                nodes_mean: mean(&nodes),
                nodes_median: median(&nodes),
                nodes_sd: sd(&nodes),
                time_ms_mean: mean(&times),
                nps: (total_ms > 0.0).then(|| total_nodes * 1000.0 / total_ms),
                paired: n,
                depth_gain: (n > 0).then(|| (md - bd) / n as f64),
                speedup: (my_nodes > 0).then(|| base_nodes as f64 / my_nodes as f64),
                same_move_pct: pct(same_move, n),
                same_value_pct: pct(same_value, n),
                mpc,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
        position: usize,
        variant: usize,
        depth: u32,
        nodes: u64,
        mv: &str,
        cp: i32,
    ) -> SearchRecord {
        SearchRecord {
            position,
            variant,
            variant_name: format!("v{variant}"),
            stage: Stage::Middlegame,
            depth: Some(depth),
            score: Some(Eval::Cp(cp)),
            nodes: Some(nodes),
            bestmove: mv.into(),
            wall_ms: 100,
            mpc: BTreeMap::new(),
            fault: None,
        }
    }

    #[test]
    fn mpc_counters() {
        let c = parse_mpc_counters(&[
            "depth 5".into(),
            "mpc tries 12 cuts 5 beta_cuts 4 alpha_cuts 1 rate 0.41".into(),
        ]);
        assert_eq!(c.get("tries"), Some(&12));
        assert_eq!(c.get("cuts"), Some(&5));
        assert_eq!(c.get("alpha_cuts"), Some(&1));
        assert_eq!(c.len(), 4, "{c:?}");
    }

    #[test]
    fn summary_compares_with_the_first_variant() {
        let mut records = vec![
            rec(0, 0, 8, 1000, "e2e4", 10),
            rec(1, 0, 9, 3000, "d2d4", 20),
            rec(2, 0, 10, 5000, "c2c4", 0),
            rec(0, 1, 9, 500, "e2e4", 10),
            rec(1, 1, 10, 1000, "g1f3", 20),
            rec(2, 1, 12, 9999, "c2c4", 5),
        ];
        records[5].fault = Some("crash".into());
        let names = vec![("base".to_string(), vec![]), ("mpc".to_string(), vec![])];
        let s = summarize(&records, &names);
        // Position 2 failed for "mpc": both variants are summarised over positions 0 and 1.
        assert_eq!((s[0].positions, s[0].faults, s[1].positions, s[1].faults), (2, 0, 2, 1));
        assert_eq!(s[0].depth_mean, Some(8.5));
        assert_eq!(s[0].depth_median, Some(8.5));
        assert_eq!(s[0].speedup, Some(1.0));
        assert_eq!(s[0].same_move_pct, Some(100.0));
        assert_eq!(s[1].paired, 2);
        assert_eq!(s[1].speedup, Some(4000.0 / 1500.0));
        assert_eq!(s[1].depth_gain, Some(1.0));
        assert_eq!(s[1].same_move_pct, Some(50.0));
        assert_eq!(s[1].same_value_pct, Some(100.0));
        assert_eq!(s[1].depth_median, Some(9.5));
        assert_eq!(s[1].nodes_sd, Some((2.0f64 * 250.0 * 250.0).sqrt()));
        assert_eq!(s[1].nps, Some(1500.0 * 1000.0 / 200.0));
    }
}
