//! The oracle phase of a search test: after every variant has chosen its move in every position,
//! the oracle searches each position once (all moves: its best move and score) and then each
//! chosen move that is not its best alone (`go ... searchmoves MOVE`), so
//! `loss = oracle(best) - oracle(chosen)` in bounded centipawns from the mover's view. Searches
//! already in the cache are not repeated.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use shakmaty::uci::UciMove;

use crate::plan::positions::{Stage, TestPosition, chess_from_fen};
use crate::play::cancel::Cancel;
use crate::play::probe_pool::{EngineSetup, Job, PoolConfig, spawn_pool, start_engine};
use crate::report::progress::Progress;
use crate::searchtest::oracle_cache::{CacheLine, OracleCache, oracle_identity};
use crate::searchtest::oracle_spec::{OracleSpec, bounded_cp};
use crate::searchtest::summary::SearchRecord;

/// How the oracle phase runs.
#[derive(Clone, Debug)]
pub struct OraclePlan {
    pub spec: OracleSpec,
    pub cache: PathBuf,
    pub concurrency: usize,
    pub start_timeout: Duration,
    pub search_timeout: Duration,
    pub logs: Option<PathBuf>,
}

/// One variant's move in one position, as the oracle scored it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScoredMove {
    pub position: usize,
    pub variant: usize,
    pub variant_name: String,
    pub stage: Stage,
    pub chosen: String,
    pub oracle_best: String,
    /// Bounded centipawns (see `oracle_spec::bounded_cp`), from the mover's view.
    pub best_score: i32,
    pub chosen_score: i32,
    /// `best_score - chosen_score`, at least 0 (0 when the move is the oracle's).
    pub loss: i32,
    /// The difference before the floor at 0: a one-move search may score the chosen move above
    /// the oracle's own best (a different tree); such cases are counted in the summary.
    pub raw_loss: i32,
    /// The loss in expected score (percentage points, logistic: 1 / (1 + 10^(-cp/400))), at
    /// least 0: a loss between two lost (or two won) positions counts little.
    pub es_loss: f64,
    pub is_best: bool,
}

/// What the oracle phase did (oracle.json `run`).
pub use crate::store::formats::OracleRun;

/// Starts the oracle once (a missing or silent engine is an error before any search) and
/// returns the `id name` it gave.
pub async fn check(plan: &OraclePlan) -> Result<Option<String>> {
    let (engine, _) = start_engine(&oracle_setup(&plan.spec), &pool_config(plan), 0)
        .await
        .with_context(|| format!("starting the oracle {}", plan.spec.engine.cmd))?;
    let id_name = engine.id_name.clone();
    engine.shutdown().await;
    Ok(id_name)
}

fn pool_config(plan: &OraclePlan) -> PoolConfig {
    PoolConfig {
        concurrency: plan.concurrency.max(1),
        start_timeout: plan.start_timeout,
        search_timeout: plan.search_timeout,
        logs: plan.logs.clone(),
    }
}

/// Scores every record's move with the oracle (`id_name`: what [`check`] returned).
pub async fn score_moves(
    plan: &OraclePlan,
    id_name: Option<String>,
    positions: &[TestPosition],
    records: &[SearchRecord],
    cancel: &Cancel,
) -> Result<(Vec<ScoredMove>, OracleRun)> {
    let started = std::time::Instant::now();
    let oracle = oracle_identity(&plan.spec, id_name.as_deref());
    let mut cache = OracleCache::open(&plan.cache, &oracle)?;
    let mut run = OracleRun {
        oracle: oracle.clone(),
        id_name,
        cache_file: plan.cache.display().to_string(),
        ..Default::default()
    };
    let by_index: HashMap<usize, &TestPosition> = positions.iter().map(|p| (p.index, p)).collect();
    // Legal chosen moves per position (others are unscored).
    let mut chosen: HashMap<usize, BTreeSet<String>> = HashMap::new();
    for r in records {
        if let Some(p) = by_index.get(&r.position)
            && is_legal(&p.fen, &r.bestmove)
        {
            chosen.entry(r.position).or_default().insert(r.bestmove.clone());
        }
    }
    let mut order: Vec<usize> = chosen.keys().copied().collect();
    order.sort_unstable();

    // Phase 1: every position, all moves. Phase 2: chosen moves other than the oracle's best.
    let full: Vec<(usize, String)> = order.iter().map(|&i| (i, String::new())).collect();
    search_missing(&full, plan, &by_index, cancel, &mut cache, &mut run).await?;
    let mut single = Vec::new();
    for &i in &order {
        let Some(best) = cache.get(&by_index[&i].fen, "") else { continue };
        for m in &chosen[&i] {
            if *m != best.bestmove {
                single.push((i, m.clone()));
            }
        }
    }
    search_missing(&single, plan, &by_index, cancel, &mut cache, &mut run).await?;

    let mut scored = Vec::new();
    for r in records {
        let Some(p) = by_index.get(&r.position) else { continue };
        match score_one(&cache, p, r) {
            Some(s) => scored.push(s),
            None => run.unscored += 1,
        }
    }
    run.wall_ms = started.elapsed().as_millis() as u64;
    Ok((scored, run))
}

fn score_one(cache: &OracleCache, p: &TestPosition, r: &SearchRecord) -> Option<ScoredMove> {
    if !is_legal(&p.fen, &r.bestmove) {
        return None;
    }
    let best = cache.get(&p.fen, "")?;
    let best_score = bounded_cp(best.score);
    let is_best = r.bestmove == best.bestmove;
    let chosen_score =
        if is_best { best_score } else { bounded_cp(cache.get(&p.fen, &r.bestmove)?.score) };
    let raw_loss = best_score - chosen_score;
    Some(ScoredMove {
        position: r.position,
        variant: r.variant,
        variant_name: r.variant_name.clone(),
        stage: p.stage,
        chosen: r.bestmove.clone(),
        oracle_best: best.bestmove.clone(),
        best_score,
        chosen_score,
        loss: raw_loss.max(0),
        raw_loss,
        es_loss: (expected_score(best_score) - expected_score(chosen_score)).max(0.0),
        is_best,
    })
}

/// Expected score in percent of a bounded centipawn value (logistic, 400 cp per factor 10).
pub fn expected_score(cp: i32) -> f64 {
    100.0 / (1.0 + 10f64.powf(-cp as f64 / 400.0))
}

/// The oracle's engine setup: one thread and a fixed hash unless the spec sets them, so that its
/// searches (each after `ucinewgame`) repeat exactly.
fn oracle_setup(spec: &OracleSpec) -> EngineSetup {
    let set = |k: &str| spec.engine.options.iter().any(|(n, _)| n.eq_ignore_ascii_case(k));
    let mut if_declared = Vec::new();
    if !set("Threads") {
        if_declared.push(("Threads".to_string(), "1".to_string()));
    }
    if !set("Hash") {
        if_declared.push(("Hash".to_string(), "16".to_string()));
    }
    EngineSetup { label: "oracle".into(), spec: spec.engine.clone(), if_declared }
}

/// Whether `mv` (UCI) is a legal move in `fen`.
pub fn is_legal(fen: &str, mv: &str) -> bool {
    let Ok(pos) = chess_from_fen(fen) else { return false };
    mv.parse::<UciMove>().ok().is_some_and(|u| u.to_move(&pos).is_ok())
}

/// Runs the searches of `wanted` that the cache does not hold and records them.
async fn search_missing(
    wanted: &[(usize, String)],
    plan: &OraclePlan,
    by_index: &HashMap<usize, &TestPosition>,
    cancel: &Cancel,
    cache: &mut OracleCache,
    run: &mut OracleRun,
) -> Result<()> {
    run.needed += wanted.len();
    let missing: Vec<&(usize, String)> =
        wanted.iter().filter(|(i, m)| cache.get(&by_index[i].fen, m).is_none()).collect();
    run.cached += wanted.len() - missing.len();
    if missing.is_empty() || cancel.is_cancelled() {
        return Ok(());
    }
    let (setup, cfg, limit) = (oracle_setup(&plan.spec), pool_config(plan), plan.spec.limit);
    let jobs: Vec<Job> = missing
        .iter()
        .enumerate()
        .map(|(k, (i, m))| Job {
            position: k,
            setup: 0,
            fen: by_index[i].fen.clone(),
            limits: vec![limit],
            searchmoves: if m.is_empty() { Vec::new() } else { vec![m.clone()] },
        })
        .collect();
    let mut progress = Progress::positions("oracle", jobs.len() as u64, 0);
    let (mut rx, handle) = spawn_pool(vec![setup], jobs, cfg, cancel.clone());
    while let Some(res) = rx.recv().await {
        let (i, m) = missing[res.position];
        match res.outcome {
            Ok(reports) => match reports.first().and_then(|r| r.score.map(|s| (r, s))) {
                Some((r, score)) => {
                    let bestmove = if m.is_empty() { r.bestmove.clone() } else { m.clone() };
                    cache.put(CacheLine {
                        oracle: run.oracle.clone(),
                        fen: by_index[i].fen.clone(),
                        mv: m.clone(),
                        score,
                        bestmove,
                        depth: r.depth,
                    })?;
                    run.searched += 1;
                }
                None => {
                    run.faults += 1;
                    progress.println(&format!(
                        "oracle: position {} {}: no score reported",
                        i + 1,
                        if m.is_empty() { "(all moves)" } else { m }
                    ));
                }
            },
            Err(fault) => {
                run.faults += 1;
                progress.println(&format!("oracle: position {} skipped: {fault}", i + 1));
            }
        }
        progress.inc(&format!("{} faults", run.faults));
    }
    progress.finish();
    handle.await.context("oracle workers")??;
    Ok(())
}
