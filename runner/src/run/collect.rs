//! While games are played: the workers run, each finished game is recorded (tallied, measured,
//! appended to the store by a writer thread, shown to the hook) and the progress display
//! follows.

use std::collections::HashSet;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use tokio::sync::mpsc;

use super::live::LiveOutputs;
use super::prepare::sprt_decided;
use super::{GameHook, RunOptions};
use crate::plan::run_plan::{RunKind, RunPlan};
use crate::play::cancel::Cancel;
use crate::play::worker::{FinishedGame, WorkerContext, WorkerEvent, worker_loop};
use crate::report::overhead::OverheadMeter;
use crate::report::progress::Progress;
use crate::report::script_lines::{ColourTally, LinesInput, ScriptLines};
use crate::report::summary::Tally;
use crate::report::warnings::FaultStreaks;
use crate::store::{GameRecord, Store, make_record};

/// What playing left: the store (every game appended), all records (resumed ones first), the
/// tally, the overhead meter, the first fatal error, and whether a hook was used.
pub(super) struct Played {
    pub store: Store,
    pub records: Vec<GameRecord>,
    pub tally: Tally,
    pub meter: OverheadMeter,
    pub fatal: Option<String>,
    pub hooked: bool,
    /// One warning per game not scored because the runner was paused during it.
    pub replayed: Vec<String>,
}

/// The state of the receiving end while games arrive.
struct Collector<'a, 'h, 'l> {
    plan: &'a RunPlan,
    ctx: &'a WorkerContext,
    cancel: Cancel,
    writer: std::sync::mpsc::Sender<GameRecord>,
    hook: Option<GameHook<'h>>,
    progress: Progress,
    records: Vec<GameRecord>,
    tally: Tally,
    meter: OverheadMeter,
    fatal: Option<String>,
    /// Stamped on every record ([`GameRecord::plan_hash`]).
    plan_hash: String,
    streaks: FaultStreaks,
    /// Pairing labels, for the progress line.
    labels: Vec<String>,
    /// Pairings whose statistics failure was already said (once each).
    stats_said: HashSet<usize>,
    /// Pairings whose same-moves note was already said (once each).
    same_said: HashSet<usize>,
    live: Option<LiveOutputs<'l>>,
    /// Whether a live write failure was already said (once per run).
    live_said: bool,
    replayed: Vec<String>,
    /// `--output cutechess|fastchess` lines, and the counts they need beyond the tally.
    lines: ScriptLines,
    colours: ColourTally,
}

/// Plays the queued games on `opts.concurrency` workers and records them as they finish.
#[allow(clippy::too_many_arguments)]
pub(super) async fn play_pending(
    plan: &RunPlan,
    opts: &RunOptions,
    ctx: &Arc<WorkerContext>,
    mut store: Store,
    tally: Tally,
    done: Vec<GameRecord>,
    meter: OverheadMeter,
    hook: Option<GameHook<'_>>,
    live: Option<LiveOutputs<'_>>,
    total_games: u64,
) -> Result<Played> {
    // The writer thread: games are written and synced off the async workers.
    let (wtx, wrx) = std::sync::mpsc::channel::<GameRecord>();
    let writer = std::thread::spawn(move || -> Result<Store> {
        for rec in wrx {
            store.append(&rec)?;
        }
        Ok(store)
    });
    let (tx, mut rx) = mpsc::unbounded_channel();
    let workers = opts.concurrency.max(1).min(ctx.queued().max(1));
    let handles: Vec<_> =
        (0..workers).map(|i| tokio::spawn(worker_loop(ctx.clone(), tx.clone(), i))).collect();
    drop(tx);
    let ticker = ctx.pause.spawn_ticker();
    let progress = Progress::new(opts.progress, total_games, tally.games());
    let mut colours = ColourTally::new(plan.pairings.len());
    done.iter().for_each(|r| colours.add(r));
    let mut c = Collector {
        plan,
        ctx,
        cancel: ctx.cancel.clone(),
        writer: wtx,
        hook,
        progress,
        records: done,
        tally,
        meter,
        fatal: None,
        plan_hash: plan.merge_hash(),
        streaks: FaultStreaks::new(opts.fault_limit),
        labels: plan.pairings.iter().map(|p| p.label.clone()).collect(),
        stats_said: HashSet::new(),
        same_said: HashSet::new(),
        live,
        live_said: false,
        replayed: Vec::new(),
        lines: opts.lines,
        colours,
    };
    while let Some(ev) = rx.recv().await {
        match ev {
            WorkerEvent::Finished(game) => c.finished(*game),
            WorkerEvent::Fatal(msg) => {
                c.progress.println(&format!("error: {msg}"));
                c.fatal.get_or_insert(msg);
            }
            WorkerEvent::Replayed(why) => {
                c.progress.warn(&format!("warning: {why}"));
                c.replayed.push(why);
            }
        }
    }
    for h in handles {
        let _ = h.await;
    }
    ticker.abort();
    let input = LinesInput { plan, tally: &c.tally, colours: &c.colours };
    for line in c.lines.at_end(&input, c.tally.games()) {
        c.progress.stdout(&line);
    }
    c.progress.finish();
    let hooked = c.hook.is_some();
    let Collector { writer: wtx, records, tally, meter, fatal, replayed, .. } = c;
    drop(wtx);
    let store = writer.join().map_err(|_| anyhow!("the game writer panicked"))??;
    Ok(Played { store, records, tally, meter, fatal, hooked, replayed })
}

impl Collector<'_, '_, '_> {
    /// Records one finished game and stops the pairings it decides.
    fn finished(&mut self, game: FinishedGame) {
        let FinishedGame { task, names, outcome } = game;
        let (plan, ctx) = (self.plan, self.ctx);
        let p = task.job.pairing;
        let Some(opening) = ctx.openings.get(task.job.opening_of(task.game)) else { return };
        self.meter.add_turnarounds(outcome.moves.iter().filter_map(|m| m.turnaround_us));
        let mut rec = make_record(&task, &ctx.pairings[p], opening, &names, outcome);
        rec.plan_hash = Some(self.plan_hash.clone());
        self.tally.add(&rec);
        self.colours.add(&rec);
        self.meter.add(&rec);
        if let Some(why) = self.streaks.on_game(&rec) {
            self.progress.println(&format!("error: {why}"));
            self.fatal.get_or_insert(why);
            self.cancel.cancel();
        }
        if self.writer.send(rec.clone()).is_err() {
            self.fatal.get_or_insert_with(|| "the game writer stopped".into());
            self.cancel.cancel();
        }
        if let Some(h) = self.hook.as_mut() {
            match h(&rec) {
                Ok(stopped) => {
                    for (q, why) in stopped {
                        ctx.mark_decided(q);
                        self.progress.println(&format!("{}: {why}", plan.pairings[q].label));
                    }
                }
                Err(e) => {
                    self.fatal.get_or_insert(e.to_string());
                    self.cancel.cancel();
                }
            }
        }
        self.records.push(rec);
        if sprt_decided(plan, &self.tally, p) {
            ctx.mark_decided(p);
        }
        if let Some((_, Some(why))) = self.tally.pairings[p].summarize_why(plan.sprt)
            && self.stats_said.insert(p)
        {
            let label = &plan.pairings[p].label;
            let tail = if why == crate::report::summary::TRINOMIAL_NOTE {
                ""
            } else {
                " (the run goes on; shown as n/a)"
            };
            self.progress.println(&format!("{label}: {why}{tail}"));
        }
        if let Some(note) = self.tally.pairings[p].same_moves_note()
            && self.same_said.insert(p)
        {
            let label = &plan.pairings[p].label;
            self.progress.warn(&format!("warning: {label}: {note}"));
        }
        let input = LinesInput { plan, tally: &self.tally, colours: &self.colours };
        if let Some(rec) = self.records.last() {
            for line in self.lines.after_game(&input, rec, self.tally.games()) {
                self.progress.stdout(&line);
            }
        }
        let leader = plan.kind == RunKind::Sweep;
        let status = Progress::run_status_parts(&self.labels, &self.tally, p, plan.sprt, leader);
        self.progress.update_parts(self.tally.games(), &status);
        self.write_live();
    }

    /// The live outputs, when due; a failure to write is said once and the run goes on.
    fn write_live(&mut self) {
        let Some(live) = self.live.as_mut() else { return };
        if !live.due() {
            return;
        }
        if let Err(e) = (live.write)(&self.records)
            && !self.live_said
        {
            self.live_said = true;
            self.progress.println(&format!("warning: cannot write the live outputs: {e:#}"));
        }
    }
}
