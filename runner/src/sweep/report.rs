//! Writes a sweep's outputs from its stored games (replayed through the tracker and analysed):
//! table.md, table.csv, summary.json, plot.svg, and points/<label>/summary.json (one sub-result
//! per point). Files are written to a temporary name and renamed, so a run killed while writing
//! leaves the previous version intact.

use std::path::Path;

use anyhow::{Context, Result};

use super::analysis::{PointStatus, SweepAnalysis, analyze};
use super::plan::SweepPlan;
use super::plot;
use super::surface;
use super::table;
use super::tracker::Tracker;
use super::values::Point;
use crate::plan::run_plan::RunPlan;
use crate::report::overhead::merged_overhead;
use crate::report::summary::{Tally, summary_json as run_summary_json};
use crate::run::StopReason;
use crate::store::files::{SMALL_CAP, read_regular_text};
use crate::store::formats::{MergeInfo, Origin, SweepContext, SweepSummary};
use crate::store::{GameRecord, RunSummary, SUMMARY_FILE, read_summary};

/// Writes `text` to `path` through a new temporary file in the same directory
/// ([`crate::store::files::write_atomic`]: symlinks are never followed).
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    crate::store::files::write_atomic(path, text.as_bytes())
}

/// The summary.json document: the analysis plus `context` (the plan, what was compared), with
/// the keys of the runner's own summary (`run_summary`: `stopped_by`, `pairings` with
/// terminations) kept at the top level, so tools reading a match summary read a sweep's too.
pub fn summary_json(
    a: &SweepAnalysis,
    context: &SweepContext,
    run_summary: &RunSummary,
) -> SweepSummary {
    SweepSummary {
        kind: "sweep".into(),
        context: context.clone(),
        params: a.params.clone(),
        options: a.options,
        best: a.best.clone(),
        points: a.rows.clone(),
        surface: a.surface.clone(),
        run: run_summary.clone(),
    }
}

/// Writes the outputs into `dir` and returns the terminal table.
pub fn write_all(
    dir: &Path,
    a: &SweepAnalysis,
    points: &[Point],
    title: &str,
    context: &SweepContext,
    run_summary: &RunSummary,
) -> Result<String> {
    crate::store::files::create_dir_all(dir)?;
    write_atomic(&dir.join("table.md"), &table::markdown(a, title))?;
    write_atomic(&dir.join("table.csv"), &table::csv(a))?;
    let svg = plot::svg(a, title)?;
    write_atomic(&dir.join("plot.svg"), &svg)?;
    let doc = summary_json(a, context, run_summary);
    write_atomic(&dir.join("summary.json"), &(serde_json::to_string_pretty(&doc)? + "\n"))?;
    for (p, row) in points.iter().zip(&a.rows) {
        let pdir = crate::store::files::create_subdir(
            dir,
            &std::path::Path::new("points").join(p.dir_name()),
        )?;
        write_atomic(&pdir.join("summary.json"), &(serde_json::to_string_pretty(row)? + "\n"))?;
    }
    Ok(table::console(a, title))
}

/// Replays the stored games through a tracker (racing and SPRT decisions included).
fn replay(
    labels: Vec<String>,
    sweep: Option<&SweepPlan>,
    plan: &RunPlan,
    records: &[GameRecord],
) -> Result<Tracker> {
    let race = sweep.and_then(|s| s.race);
    let mut t = Tracker::new(labels, race, plan.sprt);
    for r in records {
        t.record_game(r)?;
    }
    Ok(t)
}

/// Whether a run stopped by `stopped_by` (summary.json's word) has ended: its open points are
/// then `ended`, not `active`.
pub fn has_ended(stopped_by: &str) -> bool {
    matches!(stopped_by, "complete" | "sprt" | "cancelled" | "failed")
}

/// Writes a sweep's table.md, table.csv, summary.json, plot.svg and points/*/summary.json from
/// the stored games (in store order); returns the terminal table.
pub fn write_sweep(
    dir: &Path,
    sweep: &SweepPlan,
    plan: &RunPlan,
    records: &[GameRecord],
    stop: StopReason,
) -> Result<String> {
    write_sweep_stopped_by(dir, sweep, plan, records, stop.as_str(), None)
}

/// [`write_sweep`] with the reason to stop as text (a report keeps the stored one).
pub fn write_sweep_stopped_by(
    dir: &Path,
    sweep: &SweepPlan,
    plan: &RunPlan,
    records: &[GameRecord],
    stopped_by: &str,
    decided: Option<&[PointStatus]>,
) -> Result<String> {
    let labels: Vec<String> = plan.pairings.iter().map(|p| p.label.clone()).collect();
    let tracker = replay(labels, Some(sweep), plan, records)?;
    // Decisions taken elsewhere (a fleet's database) are the run's story; a replay in schedule
    // order could drop a point at another moment.
    let status = match decided {
        Some(d) if d.len() == tracker.status().len() => d,
        _ => tracker.status(),
    };
    // A run that has ended leaves no point "active" (summary.json says `ended` with its games).
    let ended = has_ended(stopped_by);
    let status: Vec<PointStatus> = status
        .iter()
        .zip(tracker.counts())
        .map(|(s, c)| if ended { s.at_end(c.wdl.games()) } else { s.clone() })
        .collect();
    let mut a = analyze(
        &sweep.param_names(),
        &sweep.points,
        tracker.counts(),
        &status,
        &sweep.analysis_options(),
    )?;
    a.surface = Some(surface::of_analysis(&a, plan.seed));
    let names: Vec<String> = plan.engines.iter().map(|e| e.name.clone()).collect();
    let mut run_summary = run_summary_json(
        &plan.pairings,
        &names,
        &Tally::of_records(plan.pairings.len(), records),
        plan.sprt,
        stopped_by,
    );
    // Keep what only the live run could measure (e.g. the runner's overhead figures).
    if let Some(old) = read_summary(dir) {
        run_summary.keep_measured(old);
    }
    let context = SweepContext {
        engine: sweep.engine.clone(),
        baseline: sweep.baseline.clone(),
        fixed: sweep.fixed.clone(),
        tc: plan.limits_text(),
        book: plan.book.clone(),
        book_order: plan.book_order,
        seed: plan.seed,
        games_per_point: plan.pairs * 2,
        sprt: plan.sprt,
        adaptive: sweep.race,
        draws_floor: sweep.draws_floor,
    };
    write_all(dir, &a, &sweep.points, &sweep.title(), &context, &run_summary)
}

/// The outputs of merged sweep shards: sweep.json, the tables and plot, and summary.json with the
/// merge's `stopped_by`, the games' `runner_overhead` and the `merge` entry. Returns the table.
pub fn write_merged_sweep(
    out: &Path,
    sweep: &SweepPlan,
    plan: &RunPlan,
    records: &[GameRecord],
    stopped_by: &str,
    merge_info: MergeInfo,
) -> Result<String> {
    let stop = match stopped_by {
        "complete" => StopReason::Complete,
        "sprt" => StopReason::Sprt,
        _ => StopReason::Interrupted,
    };
    write_gathered_sweep(
        out,
        sweep,
        plan,
        records,
        (stop.as_str(), stopped_by),
        Origin::Merge(merge_info),
        None,
    )
}

/// The outputs of a sweep whose games were gathered from elsewhere (merged shards, a fleet run
/// pulled from its database): sweep.json, the tables and plot (computed as if the run stopped by
/// `stopped_by.0`), and summary.json with `stopped_by.1`, the games' `runner_overhead` and
/// `origin` saying where they come from. Returns the table.
pub fn write_gathered_sweep(
    out: &Path,
    sweep: &SweepPlan,
    plan: &RunPlan,
    records: &[GameRecord],
    stopped_by: (&str, &str),
    origin: Origin,
    decided: Option<&[PointStatus]>,
) -> Result<String> {
    sweep.save(out)?;
    let table = write_sweep_stopped_by(out, sweep, plan, records, stopped_by.0, decided)?;
    let path = out.join(SUMMARY_FILE);
    let text = read_regular_text(&path, SMALL_CAP)?
        .with_context(|| format!("cannot read {}: it is missing", path.display()))?;
    let mut doc: SweepSummary = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a sweep's summary", path.display()))?;
    doc.run.stopped_by = stopped_by.1.to_string();
    doc.run.runner_overhead = Some(merged_overhead(records));
    doc.run.set_origin(origin);
    crate::store::write_atomic(&path, (serde_json::to_string_pretty(&doc)? + "\n").as_bytes())?;
    Ok(table)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::super::analysis::tests::sample;
    use super::super::analysis::{AnalysisOptions, PointRow, analyze};
    use super::*;

    /// A sweep's context with the store tests' engines.
    fn context() -> SweepContext {
        let plan = crate::store::tests::plan();
        SweepContext {
            engine: plan.engines[0].clone(),
            baseline: plan.engines[1].clone(),
            fixed: Vec::new(),
            tc: plan.tc.to_string(),
            book: plan.book.clone(),
            book_order: plan.book_order,
            seed: plan.seed,
            games_per_point: plan.pairs * 2,
            sprt: None,
            adaptive: None,
            draws_floor: None,
        }
    }

    #[test]
    fn writes_every_file_and_rewrites_identically() {
        let dir = std::env::temp_dir().join(format!("sweep-report-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let (params, points, c) = sample();
        let a = analyze(&params, &points, &c, &[], &AnalysisOptions::default()).unwrap();
        let ctx = context();
        let run = RunSummary { stopped_by: "complete".into(), ..RunSummary::default() };
        let con = write_all(&dir, &a, &points, "t", &ctx, &run).unwrap();
        assert!(con.contains("t_mid"));
        let read = |n: &str| fs::read_to_string(dir.join(n)).unwrap();
        let first: Vec<String> =
            ["table.md", "table.csv", "summary.json", "plot.svg"].iter().map(|n| read(n)).collect();
        let doc: SweepSummary = serde_json::from_str(&first[2]).unwrap();
        assert_eq!(doc.points.len(), 3);
        assert_eq!(doc.best.as_ref().map(|b| b.label.as_str()), Some("t_mid=0.9"));
        assert_eq!((doc.run.stopped_by.as_str(), doc.kind.as_str()), ("complete", "sweep"));
        assert_eq!(doc.points[2].summary.elo, None);
        // No surface without the seed (`analyze` alone): the key is there, null.
        assert!(first[2].contains("\"surface\": null") && doc.surface.is_none());
        let p: PointRow = serde_json::from_str(&read("points/t_mid=0.8/summary.json")).unwrap();
        assert_eq!(p.summary.games, 64);
        let row = doc.points.iter().find(|r| r.label == "t_mid=0.8").expect("the point's row");
        assert_eq!(&p, row);
        write_all(&dir, &a, &points, "t", &ctx, &run).unwrap();
        let again: Vec<String> =
            ["table.md", "table.csv", "summary.json", "plot.svg"].iter().map(|n| read(n)).collect();
        assert_eq!(first, again);
        assert!(
            fs::read_dir(&dir).unwrap().all(|e| !e
                .unwrap()
                .path()
                .to_string_lossy()
                .ends_with(".tmp"))
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_fitted_optimum_is_in_every_output() {
        use super::super::analysis::tests::counts;
        use stats::Penta;
        let dir = std::env::temp_dir().join(format!("sweep-surface-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let pentas = [
            (0, Penta { ll: 8, ld: 12, dd: 12, wd: 6, ww: 2 }),
            (20, Penta { ll: 3, ld: 8, dd: 14, wd: 10, ww: 5 }),
            (40, Penta { ll: 2, ld: 6, dd: 14, wd: 12, ww: 6 }),
            (60, Penta { ll: 4, ld: 9, dd: 14, wd: 9, ww: 4 }),
            (80, Penta { ll: 8, ld: 12, dd: 12, wd: 6, ww: 2 }),
            (100, Penta { ll: 14, ld: 12, dd: 10, wd: 3, ww: 1 }),
        ];
        let points: Vec<Point> = pentas
            .iter()
            .map(|(x, _)| Point { assignments: vec![("X".into(), x.to_string())] })
            .collect();
        let c: Vec<_> = pentas.iter().map(|(_, p)| counts(*p)).collect();
        let mut a = analyze(&["X".into()], &points, &c, &[], &AnalysisOptions::default()).unwrap();
        a.surface = Some(surface::of_analysis(&a, 42));
        let con =
            write_all(&dir, &a, &points, "X sweep", &context(), &RunSummary::default()).unwrap();
        let read = |n: &str| fs::read_to_string(dir.join(n)).unwrap();
        let doc: SweepSummary = serde_json::from_str(&read("summary.json")).unwrap();
        let sf = doc.surface.expect("a surface");
        assert_eq!(sf.status, surface::Status::Ok, "{sf:?}");
        let Some(surface::Loc::One(opt)) = sf.optimum else { panic!("{sf:?}") };
        let Some(surface::Interval::One(ci)) = sf.ci else { panic!("{sf:?}") };
        assert!(ci[0] < opt && opt < ci[1] && ci[0] > 0.0 && ci[1] < 100.0, "{sf:?}");
        assert!(sf.model.starts_with("quadratic in logistic Elo"));
        assert_eq!(sf.fit.as_ref().map(|f| f.dof), Some(3));
        let line = format!(
            "Fitted optimum (quadratic curve in Elo over all points, parametric bootstrap): X = {opt:.1}"
        );
        assert!(read("table.md").contains(&line), "{}", read("table.md"));
        assert!(con.contains(&line), "{con}");
        let svg = read("plot.svg");
        assert!(svg.contains(&format!("X = {opt:.1} [")), "plot footer");
        assert!(svg.contains("fill=\"#E67800\"") || svg.contains("opacity=\"0.15\""), "band");
        eprintln!("{sf:?}");
        let _ = fs::remove_dir_all(&dir);
    }

    /// What racing (`--adaptive` at its defaults) and a per-point SPRT would have done on a
    /// stored sweep that played every game: the games each point would have played (in the
    /// store's order, a point stops getting games at its decision) and their share of the
    /// games' summed durations. A measurement on real games, not a test:
    /// `SWEEP_DIR=results/<run> [SWEEP_SPRT=elo0=0,elo1=10] cargo test -p runner --lib
    /// stopping_rules_replayed_on_a_stored_sweep -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn stopping_rules_replayed_on_a_stored_sweep() {
        let dir = std::path::PathBuf::from(std::env::var_os("SWEEP_DIR").expect("SWEEP_DIR"));
        let spec = std::env::var("SWEEP_SPRT").unwrap_or_else(|_| "elo0=0,elo1=10".into());
        let plan = crate::store::read_run_file(&dir).unwrap().plan;
        let records = crate::store::read_records(&dir, &plan).unwrap();
        let labels: Vec<String> = plan.pairings.iter().map(|p| p.label.clone()).collect();
        let all_ms: u64 = records.iter().map(|r| r.duration_ms).sum();
        let rules = [
            ("racing (--adaptive)", Some(crate::sweep::racing::RaceConfig::default()), None),
            ("SPRT per point", None, Some(stats::SprtSpec::parse(&spec).unwrap())),
        ];
        for (name, race, sprt) in rules {
            let mut t = Tracker::new(labels.clone(), race, sprt);
            let mut stopped = vec![false; labels.len()];
            let (mut games, mut ms) = (vec![0u64; labels.len()], 0u64);
            for r in &records {
                if stopped[r.pairing] {
                    continue;
                }
                games[r.pairing] += 1;
                ms += r.duration_ms;
                for i in t.record_game(r).unwrap() {
                    stopped[i] = true;
                }
            }
            let total: u64 = games.iter().sum();
            eprintln!(
                "{name}: {total} of {} games, {:.1} % of the games' time; per point: {}",
                records.len(),
                100.0 * ms as f64 / all_ms.max(1) as f64,
                labels
                    .iter()
                    .zip(&games)
                    .zip(t.status())
                    .map(|((l, g), s)| format!("{l} {g} ({})", s.short()))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
}
