//! Playing one leased game pair on a worker: both games of the pair with engines from the run's
//! pools (a tuning iteration's values set on both sides before each game), as a local run plays
//! them, and the two records it produces.

use std::sync::Arc;

use anyhow::Result;

use crate::plan::openings::Opening;
use crate::plan::run_plan::RunPlan;
use crate::plan::schedule::Job;
use crate::play::cancel::Cancel;
use crate::play::game::{GameSettings, play_game};
use crate::play::pause::PauseWatch;
use crate::play::uci::UciEngine;
use crate::play::worker::{EnginePool, GameTask, acquire_two, give_back};
use crate::store::{GameRecord, make_record};
use crate::tune::spsa::{Iteration, option_text};

/// What a worker knows of a run it serves.
pub struct RunSpec {
    pub id: i64,
    pub plan: RunPlan,
    pub plan_hash: String,
    pub openings: Vec<Opening>,
    pub settings: GameSettings,
    pub pools: Vec<Arc<EnginePool>>,
    /// Names of a tuning run's options, and which are integers.
    pub tuned: Option<(Vec<String>, Vec<bool>)>,
}

/// How playing a pair ended.
pub enum PairEnd {
    /// Both games: records of game 0 and game 1.
    Played(Box<[GameRecord; 2]>),
    /// Stopped (lease lost, run stopped, worker stopping): nothing to report.
    Stopped,
    /// The worker was paused during a game: played again by the caller.
    Paused(String),
    /// The run cannot be played here (an engine cannot start): the reason.
    Failed(String),
}

/// Plays the two games of `job` of run `spec`; `iteration` gives a tuning run's values.
pub async fn play_pair(
    spec: &RunSpec,
    job: Job,
    iteration: Option<&Iteration>,
    cancel: &Cancel,
    pause: &PauseWatch,
) -> Result<PairEnd> {
    let plan = &spec.plan;
    let Some(pairing) = plan.pairings.get(job.pairing) else {
        return Ok(PairEnd::Failed(format!("pairing {} is not in the plan", job.pairing)));
    };
    let Some(opening) = spec.openings.get(job.opening) else {
        return Ok(PairEnd::Failed(format!("opening {} is not in the book", job.opening)));
    };
    let settings = spec.settings.with_pairing_tc(pairing.tc);
    let mut records = Vec::with_capacity(2);
    for game in 0u8..2 {
        let (wi, bi) = if plan.scheduling.first_is_white(game) {
            (pairing.first, pairing.second)
        } else {
            (pairing.second, pairing.first)
        };
        let (mut white, mut black) = match acquire(spec, wi, bi, cancel).await {
            Ok(engines) => engines,
            Err(end) => return Ok(end),
        };
        if let (Some(it), Some(tuned)) = (iteration, &spec.tuned) {
            set_tuned_values([&mut white, &mut black], game, it, tuned).await;
        }
        let epoch = pause.observe();
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            o = play_game(&mut white, &mut black, opening, &settings) => Some(o),
        };
        let paused = pause.observe() != epoch;
        let Some(outcome) = outcome else {
            spec.pools[wi].discard(white);
            spec.pools[bi].discard(black);
            return Ok(PairEnd::Stopped);
        };
        let out = match outcome {
            Ok(out) => out,
            Err(e) => {
                spec.pools[wi].discard(white);
                spec.pools[bi].discard(black);
                return Ok(PairEnd::Failed(format!("{e:#}")));
            }
        };
        let names = [spec.pools[wi].spec().name.clone(), spec.pools[bi].spec().name.clone()];
        give_back(&spec.pools, [(wi, white), (bi, black)], out.faulty);
        if paused {
            return Ok(PairEnd::Paused(format!(
                "the worker was paused during game {} of pair {} of run {} ({} vs {}): \
                 the pair is played again",
                game + 1,
                job.pair + 1,
                spec.id,
                names[0],
                names[1]
            )));
        }
        let task = GameTask { job, game, first_white: plan.scheduling.first_is_white(game) };
        let mut rec = make_record(&task, pairing, opening, &names, out);
        rec.plan_hash = Some(spec.plan_hash.clone());
        records.push(rec);
        if !settings.wait.is_zero() {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Ok(PairEnd::Stopped),
                _ = tokio::time::sleep(settings.wait) => {}
            }
        }
    }
    let [g0, g1]: [GameRecord; 2] = match records.try_into() {
        Ok(r) => r,
        Err(_) => return Ok(PairEnd::Stopped),
    };
    Ok(PairEnd::Played(Box::new([g0, g1])))
}

/// The engines of pools `wi` (White) and `bi` (Black), started if none is idle; `Err` is how
/// the pair ends instead (stopped, or an engine cannot start).
async fn acquire(
    spec: &RunSpec,
    wi: usize,
    bi: usize,
    cancel: &Cancel,
) -> Result<(UciEngine, UciEngine), PairEnd> {
    let acquired = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(PairEnd::Stopped),
        r = acquire_two(&spec.pools, wi, bi) => r,
    };
    acquired.map_err(|e| PairEnd::Failed(format!("cannot start an engine: {e}")))
}

/// Sets a tuning iteration's values on White and Black (`engines`) before game `game`: game 0
/// has the plus side (the pairing's first engine) as White. `tuned` names the options and says
/// which are integers.
async fn set_tuned_values(
    engines: [&mut UciEngine; 2],
    game: u8,
    it: &Iteration,
    (names, integer): &(Vec<String>, Vec<bool>),
) {
    let (w_vals, b_vals) = if game == 0 { (&it.plus, &it.minus) } else { (&it.minus, &it.plus) };
    for (eng, values) in engines.into_iter().zip([w_vals, b_vals]) {
        let mut cmds = String::new();
        for ((name, v), int) in names.iter().zip(values).zip(integer) {
            cmds.push_str(&format!("setoption name {name} value {}\n", option_text(*v, *int)));
        }
        // An engine that is gone fails the game's own `isready` and loses by its fault.
        let _ = eng.send(&cmds).await;
    }
}
