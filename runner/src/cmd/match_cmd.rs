//! `runner match`: one pairing of two engines over a paired opening schedule, optional SPRT; with
//! more engines or several time controls, a gauntlet or round-robin.

use anyhow::Result;

use crate::cli::MatchArgs;
use crate::exit::Exit;
use crate::gauntlet;
use crate::plan::openings::Opening;
use crate::plan::run_plan::RunPlan;
use crate::play::cancel::{Cancel, cancel_on_signals};
use crate::play::game::GameSettings;
use crate::play::tablebase::Tables;
use crate::report::html::live::LivePage;
use crate::report::match_files;
use crate::run::args as run_args;
use crate::run::live::LiveOutputs;
use crate::run::{INTERRUPTED, RunOptions, StopReason, execute_with};
use crate::store::GameRecord;
use crate::store::dir::{RunDir, resume_command};

/// A match's plan, openings, options, folder and tablebases (`--tb`).
type MatchSetup = (RunPlan, Vec<Opening>, RunOptions, RunDir, Option<Tables>);

/// Builds the plan of a match from its arguments.
/// The folder is taken (made and locked) last, once the plan and the tables are valid.
pub fn match_plan(args: &MatchArgs) -> Result<MatchSetup> {
    let (plan, openings, out) =
        run_args::match_run_plan(args, || run_args::out_dir(&args.run.exec))?;
    let tables = run_args::tables(&args.run.adjudication, &plan)?;
    let dir = run_args::take_dir(&args.run.exec, &out)?;
    let opts = RunOptions::from_exec(&args.run.exec, dir.path().to_path_buf())?;
    Ok((plan, openings, opts, dir, tables))
}

/// `runner match`. Returns the process exit code.
pub async fn run(args: &MatchArgs) -> Result<Exit> {
    let (plan, openings, opts, dir, tables) = match_plan(args)?;
    let settings = GameSettings::of_plan(&plan, opts.stall_timeout).with_tables(tables.as_ref())?;
    let tournament = plan.kind.is_tournament();
    let anchor = gauntlet::files::anchor_index(&plan, args.tournament.anchor.as_deref())?;
    let cancel = Cancel::new();
    cancel_on_signals(cancel.clone(), INTERRUPTED);
    if tournament {
        errln!(
            "{} of {} engines: {} pairings, {} games max each, {}, {} opening(s), concurrency {}, \
             results in {}",
            plan.kind,
            plan.engines.len(),
            plan.pairings.len(),
            plan.pairs * 2,
            plan.limits_text(),
            openings.len(),
            opts.concurrency,
            opts.out_dir.display()
        );
    } else {
        errln!(
            "{}: {} games max, {}, {} opening(s), concurrency {}, results in {}",
            plan.pairings[0].label,
            plan.pairs * 2,
            plan.limits_text(),
            openings.len(),
            opts.concurrency,
            opts.out_dir.display()
        );
    }
    if let Some(why) = plan.scheduling.unpaired_reason() {
        errln!(
            "note: {why}, so no game pairs with colours reversed: the statistics are trinomial \
             (W-D-L over every game), with no pentanomial counts"
        );
    }
    let anchor_elo = args.tournament.anchor_elo;
    let out = opts.out_dir.clone();
    let page = LivePage::new(out.clone());
    let mut write = |records: &[GameRecord]| -> Result<()> {
        let written = if tournament {
            gauntlet::files::write_tables(&out, &plan, records, anchor, anchor_elo).map(|_| ())
        } else {
            match_files::write(&out, &plan, records).map(|_| ())
        };
        page.refresh();
        written
    };
    let live = Some(LiveOutputs::new(&mut write));
    let outcome = match execute_with(&plan, openings, &opts, settings, cancel, None, live).await {
        Ok(o) => o,
        Err(e) => {
            dir.discard_if_unplayed(&[]);
            return Err(e);
        }
    };
    // With --output cutechess|fastchess, stdout holds only those tools' lines.
    let own = |text: &str| {
        if opts.lines.is_runner() { outln!("{text}") } else { errln!("{text}") }
    };
    own(outcome.report.trim_end_matches('\n'));
    if !tournament {
        match_files::write(&outcome.dir, &plan, &outcome.records)?;
    } else {
        // A ratings fit that fails must not lose the run: the games are stored, the report
        // command can retry.
        match gauntlet::files::write_tables(&out, &plan, &outcome.records, anchor, anchor_elo) {
            Ok(tables) => own(&format!("\n{}", tables.markdown())),
            Err(e) => errln!(
                "warning: no ratings table: {e:#} (the games are stored; `runner report {}` \
                 tries again)",
                out.display()
            ),
        }
    }
    if let Some(line) = page.finish_line() {
        own(&line);
    }
    own(&format!("results: {}", outcome.dir.display()));
    Ok(match outcome.stop {
        StopReason::Interrupted => {
            errln!("run interrupted: continue it with:\n  {}", resume_command(&outcome.dir));
            Exit::Interrupted
        }
        _ => Exit::Done,
    })
}
