//! A run's argument groups (`crate::cli::RunArgs`, shared by `runner match` and `runner sweep`)
//! turned into the plan and the options of a run, through the layers that own each value.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};

use crate::cli::{AdjudicationArgs, ExecArgs, MatchArgs, RunArgs};
use crate::plan::adjudication::{Adjudication, TB_MAX_PIECES, TablebaseRule};
use crate::plan::engine_spec::EngineSpec;
use crate::plan::engines::resolve_engines;
use crate::plan::openings::{Opening, book_for_plan};
use crate::plan::run_plan::{PgnTags, RunKind, RunPlan, game_pairs, games_to_play};
use crate::plan::schedule::{Pairing, Scheduling, Shard};
use crate::plan::time_control::{TimeControl, limit_caps, time_controls};
use crate::plan::tournament;
use crate::play::tablebase::Tables;
use crate::store::dir::{DirMode, RunDir};
use crate::store::{results_dir, run_seed};

/// The results directory of `--out`/`--resume`.
pub fn out_dir(x: &ExecArgs) -> Result<PathBuf> {
    results_dir(x.out.as_deref(), x.resume)
}

/// Takes the results directory `out` for the run: made exclusively (under another free name
/// when taken) for a new run without `--out`, and locked while the run writes it.
pub fn take_dir(x: &ExecArgs, out: &Path) -> Result<RunDir> {
    let mode = if x.resume {
        DirMode::Resume
    } else if x.out.is_some() {
        DirMode::New
    } else {
        DirMode::Fresh
    };
    RunDir::open(out, mode)
}

/// The plan of a run of `kind` with `engines` and `pairings` decided by the caller, and the
/// openings its book holds. `out` is the results directory (its run.json gives the seed on
/// `--resume` without `--seed`).
pub fn run_plan(
    args: &RunArgs,
    kind: RunKind,
    (engines, pairings): (Vec<EngineSpec>, Vec<Pairing>),
    tc: TimeControl,
    sprt: Option<stats::SprtSpec>,
    out: &Path,
) -> Result<(RunPlan, Vec<Opening>)> {
    let (b, a, x) = (&args.book, &args.adjudication, &args.exec);
    crate::plan::names::check_run_names(&engines, &pairings)?;
    let (openings, book) = book_for_plan(b.book.as_deref(), b.book_plies, b.variant)?;
    let mut adjudication =
        Adjudication::from_flags(a.draw.as_deref(), a.resign.as_deref(), a.maxmoves)?;
    adjudication.tablebase = tablebase_rule(a)?;
    let games = games_to_play(x.games, sprt.is_some())?;
    let pairs = game_pairs(games, pairings.len())?;
    let shard = x.shard.as_deref().map(Shard::parse).transpose().map_err(|e| anyhow!(e))?;
    let seed = run_seed(b.seed, x.resume, out)?;
    let l = &args.limit;
    let (nodes, depth) = limit_caps(&l.tc, l.st.as_deref(), l.nodes, l.depth)?;
    let scheduling = Scheduling {
        repeat: b.repeat,
        noswap: b.noswap,
        reverse: b.reverse,
        book_start: b.book_start,
        wait_ms: x.wait,
    };
    scheduling.check(openings.len()).map_err(|e| anyhow!(e))?;
    let plan = RunPlan {
        kind,
        engines,
        pairings,
        tc,
        timemargin_ms: crate::plan::time_control::check_timemargin(x.timemargin)?,
        book,
        book_order: b.book_order,
        seed,
        pairs,
        adjudication,
        sprt,
        shard,
        variant: b.variant,
        pgn: PgnTags::new(x.event.as_deref(), x.site.as_deref())?,
        nodes,
        depth,
        scheduling,
    };
    Ok((plan, openings))
}

/// The plan of `runner match` (a match, gauntlet or round-robin) and its book's openings, as
/// `runner match` and `runner submit match` build it. `out` gives the results directory once
/// the engines, time controls and SPRT are valid (its run.json gives the seed on `--resume`);
/// it is returned with the plan.
pub fn match_run_plan(
    args: &MatchArgs,
    out: impl FnOnce() -> Result<PathBuf>,
) -> Result<(RunPlan, Vec<Opening>, PathBuf)> {
    let (e, l) = (&args.run.engines, &args.run.limit);
    let mut engines = resolve_engines(&e.engines, e.each.as_deref(), e.engines_file.as_deref())?;
    if engines.len() == 2 && engines[0].name == engines[1].name {
        if engines[0] == engines[1] {
            engines.pop();
        } else {
            bail!("both engines are named {:?}: give them different name=", engines[0].name);
        }
    }
    let tcs = time_controls(&l.tc, l.st.as_deref(), l.nodes, l.depth)?;
    let t = &args.tournament;
    // Two engines (or one playing itself) at one time control: a plain match, as before.
    let (kind, pairings) = if engines.len() <= 2 && tcs.len() == 1 {
        let second = engines.len() - 1;
        let label = format!("{} vs {}", engines[0].name, engines[second].name);
        (RunKind::Match, vec![Pairing { label, first: 0, second, tc: None }])
    } else {
        if engines.len() < 2 {
            bail!("several --tc need two engines or more (give --engine twice or more)");
        }
        let names: Vec<String> = engines.iter().map(|e| e.name.clone()).collect();
        let pairings = tournament::pairings(&names, t.tournament, t.gauntlet_seats, &tcs)?;
        (RunKind::of_tournament(t.tournament), pairings)
    };
    let sprt = sprt(args.sprt.as_deref())?;
    let out = out()?;
    let (plan, openings) = run_plan(&args.run, kind, (engines, pairings), tcs[0], sprt, &out)?;
    Ok((plan, openings, out))
}

/// The tablebase rule of `--tb`, `--tbpieces`, `--tbignore50`, `--tbadjudicate`. Without
/// `--tbpieces` the tables at `--tb` are read here for their largest piece count; with it they
/// are checked where the games are played ([`tables`]), so that `runner submit` needs none.
pub fn tablebase_rule(a: &AdjudicationArgs) -> Result<Option<TablebaseRule>> {
    let Some(paths) = a.tb.as_deref() else { return Ok(None) };
    let found = match a.tbpieces {
        Some(n) => n,
        None => Tables::open(paths)?.max_pieces().min(TB_MAX_PIECES),
    };
    let rule =
        TablebaseRule::new(a.tbpieces, found, a.tbignore50, a.tbadjudicate.unwrap_or_default())?;
    Ok(Some(rule))
}

/// The tables at `--tb`, opened once for every game of the run and checked against the plan's
/// rule (none without `--tb`): called before the run's folder is taken, so that missing or
/// unreadable tables stop the run before anything is written.
pub fn tables(a: &AdjudicationArgs, plan: &RunPlan) -> Result<Option<Tables>> {
    let tables = a.tb.as_deref().map(Tables::open).transpose()?;
    if let (Some(t), Some(rule)) = (&tables, &plan.adjudication.tablebase) {
        t.check_covers(rule)?;
        if !rule.ignore50 && !t.has_dtz() {
            errln!(
                "note: no DTZ tables (*.rtbz) at --tb: won and lost positions are adjudicated \
                 only right after a capture or pawn move (draws at once); see --tbignore50"
            );
        }
    }
    Ok(tables)
}

/// `--sprt SPEC`.
pub fn sprt(spec: Option<&str>) -> Result<Option<stats::SprtSpec>> {
    spec.map(|s| stats::SprtSpec::parse(s).map_err(|e| anyhow!("bad --sprt {s:?}: {e}")))
        .transpose()
}
