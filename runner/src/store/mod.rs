//! The store layer: a run's directory. `run.json` (the plan and its hash), `games.jsonl` (one
//! line per finished game, appended and synced as each game ends), `games.pgn` (written only from
//! those records, [`pgn`]), `summary.json` and `logs/`; resuming, reading back, and merging the
//! shards of one run ([`merge`]). The files' types, which every writer and reader uses, are in
//! [`formats`]. Uses `plan` and the game facts of `play`.
//!
//! Resuming re-reads `games.jsonl`; a line cut short by a kill is dropped from the file. Every
//! reader that counts or continues the games checks them with [`records_check`].

pub mod dir;
pub mod files;
pub mod formats;
pub mod merge;
pub mod move_fields;
pub mod pgn;
pub mod pgnout;
pub mod records_check;
pub mod rules;

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};

use crate::plan::openings::Opening;
use crate::plan::run_plan::{RunPlan, plan_differences};
use crate::plan::schedule::GameKey;
use crate::plan::schedule::Pairing;
use crate::plan::time_control::TimeControl;
use crate::plan::variant::Variant;
use crate::play::game::{GameOutcome, GameResult, round3};
use crate::play::termination::Termination;
use crate::play::uci_info::Eval;
use crate::play::worker::GameTask;
use crate::store::move_fields::MoveFields;
use crate::store::pgn::{PgnGame, PgnMove, PgnStyle, comment_for_move, to_pgn_styled};
pub use files::{write_atomic, write_named};
pub use formats::{GameRecord, LatencyStats, RunFile, RunSummary};

impl RunFile {
    /// The run.json of a new run of `plan`, made by this runner now.
    pub fn new(plan: RunPlan) -> RunFile {
        RunFile {
            format: 1,
            runner_version: env!("CARGO_PKG_VERSION").into(),
            created: chrono::Utc::now().to_rfc3339(),
            plan_hash: plan.hash(),
            plan,
            affinity: None,
            merged: None,
            merged_from: None,
        }
    }
}

impl GameRecord {
    pub fn key(&self) -> GameKey {
        GameKey { pairing: self.pairing, pair: self.pair, game: self.game }
    }

    /// True when the pairing's first engine had White.
    pub fn first_is_white(&self) -> bool {
        self.first_white.unwrap_or(self.game == 0)
    }

    /// The result from the pairing's first engine's point of view.
    pub fn first_score(&self) -> stats::GameScore {
        use stats::GameScore::*;
        match (self.result, self.first_is_white()) {
            (GameResult::Draw, _) => Draw,
            (GameResult::WhiteWins, true) | (GameResult::BlackWins, false) => Win,
            _ => Loss,
        }
    }

    /// The PGN `Round`: `pair.game` (1-based); with several pairings (sweep points, gauntlet
    /// pairings) `pairing.pair.game`, so that no two games of a run share a round.
    pub fn pgn_round(&self, pairings: usize) -> String {
        let (pair, game) = (self.pair.saturating_add(1), u16::from(self.game) + 1);
        if pairings > 1 {
            format!("{}.{pair}.{game}", self.pairing.saturating_add(1))
        } else {
            format!("{pair}.{game}")
        }
    }

    /// The game as PGN (moves replayed for SAN, so an illegal move cannot be written), in a run
    /// of `pairings` pairings, with the run's `Event` and `Site` tags (`tags`).
    pub fn to_pgn(
        &self,
        tags: (&str, &str),
        tc: &TimeControl,
        variant: Variant,
        pairings: usize,
    ) -> Result<String> {
        let comments = self.runner_comments();
        self.pgn_text(tags, tc, variant, pairings, PgnStyle::default(), &comments)
    }

    /// The game as `--pgnout` writes it: in `style`, with one comment per move.
    pub fn to_pgn_with(
        &self,
        plan: &RunPlan,
        style: PgnStyle,
        comments: &[String],
    ) -> Result<String> {
        let (event, site) = pgn_tags(plan);
        let (tc, pairings) = (plan.pairing_tc(self.pairing), plan.pairings.len());
        self.pgn_text((&event, &site), &tc, plan.variant, pairings, style, comments)
    }

    /// How the game ended, in words: fastchess's and cutechess-cli's for a tablebase ending
    /// ("White wins by adjudication: SyzygyTB", "Draw by adjudication: SyzygyTB"), else
    /// [`Termination::describe`].
    pub fn ending_text(&self) -> String {
        if self.termination != Termination::AdjudicationTablebase {
            return self.termination.describe().to_string();
        }
        match self.result {
            GameResult::WhiteWins => "White wins by adjudication: SyzygyTB".into(),
            GameResult::BlackWins => "Black wins by adjudication: SyzygyTB".into(),
            GameResult::Draw => "Draw by adjudication: SyzygyTB".into(),
        }
    }

    /// The comments of games.pgn: `book`, or cutechess's `+0.31/12 0.153s`; the last move of a
    /// game the tables ended also says so, with their value (`White wins by adjudication:
    /// SyzygyTB, 4 pieces, WDL win for Black to move`).
    fn runner_comments(&self) -> Vec<String> {
        let mut comments = self.move_comments();
        if let (Some(tb), Some(last)) = (&self.tablebase, comments.last_mut()) {
            last.push_str(&format!(
                ", {}, {} pieces, WDL {} for {} to move",
                self.ending_text(),
                tb.pieces,
                tb.wdl.as_str(),
                if tb.turn == shakmaty::Color::White { "White" } else { "Black" }
            ));
        }
        comments
    }

    fn move_comments(&self) -> Vec<String> {
        (0..self.moves.len())
            .map(|i| {
                if i < self.book_plies {
                    return "book".to_string();
                }
                let k = i - self.book_plies;
                let score = self.scores.get(k).copied().flatten().map(Eval::to_pgn_score);
                let depth = self.depths.get(k).copied().flatten();
                let ms = self.times_ms.get(k).copied().unwrap_or(0.0).round() as u64;
                comment_for_move(score, depth, ms)
            })
            .collect()
    }

    fn pgn_text(
        &self,
        (event, site): (&str, &str),
        tc: &TimeControl,
        variant: Variant,
        pairings: usize,
        style: PgnStyle,
        comments: &[String],
    ) -> Result<String> {
        let moves = self
            .moves
            .iter()
            .enumerate()
            .map(|(i, uci)| PgnMove { uci: uci.clone(), comment: comments.get(i).cloned() })
            .collect();
        // cutechess-cli's tags: one TimeControl when both sides have the same clock, else
        // WhiteTimeControl and BlackTimeControl (time odds).
        let tc_tags: Vec<(String, String)> = match &self.limits {
            Some([w, b]) if w.pgn_tag() != b.pgn_tag() => vec![
                ("WhiteTimeControl".into(), w.pgn_tag()),
                ("BlackTimeControl".into(), b.pgn_tag()),
            ],
            Some([w, _]) => vec![("TimeControl".into(), w.pgn_tag())],
            None => vec![("TimeControl".into(), tc.pgn_tag())],
        };
        let game = PgnGame {
            event: event.to_string(),
            site: site.to_string(),
            date: self.date.clone(),
            round: self.pgn_round(pairings),
            white: self.white.clone(),
            black: self.black.clone(),
            result: self.result.pgn().into(),
            start_fen: self.fen.clone(),
            variant,
            tags: tc_tags
                .into_iter()
                .chain([
                    ("Termination".into(), self.termination.pgn_str().into()),
                    ("TerminationDetails".into(), self.termination.json_str().into()),
                    ("Opening".into(), format!("book #{}", self.opening)),
                    ("Pairing".into(), self.label.clone()),
                ])
                .collect(),
            moves,
        };
        to_pgn_styled(&game, style).map_err(|e| {
            anyhow!("game {}.{}: {e}", self.pair.saturating_add(1), u16::from(self.game) + 1)
        })
    }
}

/// The PGN `Event` and `Site` of a run: `--event`/`--site`, else `runner KIND` and `?`.
pub fn pgn_tags(plan: &RunPlan) -> (String, String) {
    let event = plan.pgn.event.clone().unwrap_or_else(|| format!("runner {}", plan.kind));
    (event, plan.pgn.site.clone().unwrap_or_else(|| "?".into()))
}

/// Builds the stored record of a finished game.
pub fn make_record(
    task: &GameTask,
    pairing: &Pairing,
    opening: &Opening,
    names: &[String; 2],
    out: GameOutcome,
) -> GameRecord {
    let first_white = task.first_white;
    let book_plies = out.book_moves.len();
    let mut moves = out.book_moves;
    moves.extend(out.moves.iter().map(|m| m.uci.clone()));
    let overheads: Vec<f64> = out
        .moves
        .iter()
        .filter_map(|m| m.engine_time_ms.map(|t| m.time_us as f64 / 1000.0 - t as f64))
        .collect();
    let turnarounds: Vec<u64> = out.moves.iter().filter_map(|m| m.turnaround_us).collect();
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let latency = LatencyStats {
        overhead_ms_mean: mean(&overheads).map(round3),
        overhead_ms_max: overheads.iter().copied().reduce(f64::max).map(round3),
        turnaround_us_mean: mean(&turnarounds.iter().map(|&t| t as f64).collect::<Vec<_>>())
            .map(|v| v.round()),
        turnaround_us_max: turnarounds.iter().copied().max(),
    };
    GameRecord {
        seq: task.job.seq,
        pairing: task.job.pairing,
        label: pairing.label.clone(),
        pair: task.job.pair,
        game: task.game,
        opening: opening.id,
        fen: opening.fen.clone(),
        white: names[0].clone(),
        black: names[1].clone(),
        result: out.result,
        termination: out.termination,
        plies: moves.len(),
        book_plies,
        scores: out.moves.iter().map(|m| m.eval).collect(),
        depths: out.moves.iter().map(|m| m.depth).collect(),
        times_ms: out.moves.iter().map(|m| round3(m.time_us as f64 / 1000.0)).collect(),
        engine_times_ms: out.moves.iter().map(|m| m.engine_time_ms).collect(),
        move_info: MoveFields::of_moves(&out.moves),
        moves,
        latency,
        illegal_move: out.illegal_move,
        forfeit: out.forfeit,
        duration_ms: out.duration.as_millis() as u64,
        date: chrono::Utc::now().format("%Y.%m.%d").to_string(),
        plan_hash: None,
        first_white: (first_white != (task.game == 0)).then_some(first_white),
        limits: Some(out.limits),
        tablebase: out.tablebase,
    }
}

/// An open run directory.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    plan: RunPlan,
    jsonl: File,
    pgn: File,
    /// `--pgnout`, `--epdout`.
    extra: Option<pgnout::ExtraFiles>,
}

pub const RUN_FILE: &str = "run.json";
pub const GAMES_FILE: &str = "games.jsonl";
pub const PGN_FILE: &str = "games.pgn";
pub const SUMMARY_FILE: &str = "summary.json";
pub const LOG_DIR: &str = "logs";

impl Store {
    /// Starts a new run in `dir` (created if needed). A directory that already holds games is
    /// refused: resume it or choose another `--out`.
    pub fn create(dir: &Path, plan: &RunPlan) -> Result<Store> {
        Self::create_with_affinity(dir, plan, None)
    }

    /// [`Store::create`], recording `--affinity` (the CPU of each slot) in run.json.
    pub fn create_with_affinity(
        dir: &Path,
        plan: &RunPlan,
        affinity: Option<&[usize]>,
    ) -> Result<Store> {
        let games = dir.join(GAMES_FILE);
        if games.exists() && fs::metadata(&games).map(|m| m.len() > 0).unwrap_or(false) {
            bail!(
                "{} already holds games: add --resume to continue it, or choose another --out",
                dir.display()
            );
        }
        files::create_dir_all(dir)
            .with_context(|| format!("cannot create results directory {}", dir.display()))?;
        files::create_subdir(dir, Path::new(LOG_DIR))?;
        let run =
            RunFile { affinity: affinity.map(<[usize]>::to_vec), ..RunFile::new(plan.clone()) };
        write_atomic(&dir.join(RUN_FILE), serde_json::to_string_pretty(&run)?.as_bytes())?;
        Self::open_files(dir, plan, true)
    }

    /// Reopens `dir` for the same plan and returns the games already finished. A plan that
    /// differs from the stored one is refused, naming what differs.
    pub fn resume(dir: &Path, plan: &RunPlan) -> Result<(Store, Vec<GameRecord>)> {
        let run = read_run_file(dir)?;
        if run.plan_hash != plan.hash() {
            bail!(
                "cannot resume {}: the plan differs from the stored one ({})",
                dir.display(),
                plan_differences(&run.plan, plan).join(", ")
            );
        }
        files::create_subdir(dir, Path::new(LOG_DIR))?;
        let games = dir.join(GAMES_FILE);
        let numbered = read_games_repairing(&games)?;
        let checked = check_file(plan, &games, numbered)
            .map_err(|e| anyhow!("cannot resume {}: {e}", dir.display()))?;
        for w in &checked.warnings {
            errln!("warning: {w}");
        }
        let records = checked.into_records();
        let mut store = Self::open_files(dir, plan, false)?;
        store.rewrite_pgn(&records)?;
        // The rewrite replaced games.pgn: new games go to the new file, not the replaced one.
        store.pgn = files::open_append(&dir.join(PGN_FILE))?;
        Ok((store, records))
    }

    fn open_files(dir: &Path, plan: &RunPlan, truncate_pgn: bool) -> Result<Store> {
        let open = |name: &str, truncate: bool| {
            let p = dir.join(name);
            if truncate { files::create_file(&p) } else { files::open_append(&p) }
        };
        Ok(Store {
            dir: dir.to_path_buf(),
            plan: plan.clone(),
            jsonl: open(GAMES_FILE, false)?,
            pgn: open(PGN_FILE, truncate_pgn)?,
            extra: None,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The PGN `Event` and `Site` tags of this run.
    pub fn pgn_tags(&self) -> (String, String) {
        pgn_tags(&self.plan)
    }

    /// Appends a finished game: the jsonl line is written and synced first (it is the record),
    /// then the PGN text.
    pub fn append(&mut self, rec: &GameRecord) -> Result<()> {
        let mut line = serde_json::to_string(rec)?;
        line.push('\n');
        let jsonl = self.dir.join(GAMES_FILE);
        write_named(&jsonl, &mut self.jsonl, line.as_bytes())?;
        self.jsonl.sync_data().with_context(|| format!("cannot write {}", jsonl.display()))?;
        let (event, site) = self.pgn_tags();
        let pgn = rec.to_pgn(
            (&event, &site),
            &self.plan.pairing_tc(rec.pairing),
            self.plan.variant,
            self.plan.pairings.len(),
        )?;
        write_named(&self.dir.join(PGN_FILE), &mut self.pgn, pgn.as_bytes())?;
        if let Some(extra) = self.extra.as_mut() {
            extra.append(rec, &self.plan)?;
        }
        Ok(())
    }

    /// Opens `--pgnout`/`--epdout` ([`pgnout::ExtraFiles`]); every game appended from now on is
    /// written there too. `done`: the games already in games.jsonl (on `--resume`).
    pub fn open_extra(
        &mut self,
        outputs: &pgnout::OutputFiles,
        done: &[GameRecord],
        resume: bool,
    ) -> Result<()> {
        if outputs.pgnout.is_some() || outputs.epdout.is_some() {
            let extra = pgnout::ExtraFiles::open(outputs, &self.dir, &self.plan, done, resume)?;
            self.extra = Some(extra);
        }
        Ok(())
    }

    /// Rewrites games.pgn from records, in schedule order.
    pub fn rewrite_pgn(&self, records: &[GameRecord]) -> Result<()> {
        let mut sorted: Vec<&GameRecord> = records.iter().collect();
        sorted.sort_by_key(|r| (r.seq, r.game));
        let mut text = String::new();
        let (event, site) = self.pgn_tags();
        for r in sorted {
            text.push_str(&r.to_pgn(
                (&event, &site),
                &self.plan.pairing_tc(r.pairing),
                self.plan.variant,
                self.plan.pairings.len(),
            )?);
        }
        write_atomic(&self.dir.join(PGN_FILE), text.as_bytes())
    }

    /// Writes summary.json.
    pub fn write_summary(&self, summary: &RunSummary) -> Result<()> {
        write_summary(&self.dir, summary)
    }
}

/// The results directory of a run: `out`, or on `resume` the newest run under results/, or a
/// new directory `results/<UTC timestamp>` ([`folder_stamp`]).
pub fn results_dir(out: Option<&Path>, resume: bool) -> Result<PathBuf> {
    if let Some(o) = out {
        return Ok(o.to_path_buf());
    }
    if resume {
        let mut runs: Vec<PathBuf> = fs::read_dir("results")
            .context("--resume without --out: no results/ directory")?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join(RUN_FILE).is_file())
            .collect();
        runs.sort();
        return runs
            .pop()
            .ok_or_else(|| anyhow!("--resume without --out: no run found in results/"));
    }
    Ok(PathBuf::from("results").join(folder_stamp(chrono::Utc::now())))
}

/// A tool's default output directory `results/<what>-<UTC timestamp>` ([`folder_stamp`]).
pub fn default_out(what: &str) -> PathBuf {
    PathBuf::from("results").join(format!("{what}-{}", folder_stamp(chrono::Utc::now())))
}

/// The one clock of default results folders: UTC, `20261127-220000Z` (the `Z` says so; the
/// names of one kind sort by time, and a folder named in local time by an older runner, without
/// the `Z`, sorts before a UTC one of the same digits).
pub fn folder_stamp(now: chrono::DateTime<chrono::Utc>) -> String {
    now.format("%Y%m%d-%H%M%SZ").to_string()
}

/// The seed of a run: `seed`, else on `resume` the one stored in `dir`, else a random one.
pub fn run_seed(seed: Option<u64>, resume: bool, dir: &Path) -> Result<u64> {
    Ok(match seed {
        Some(s) => s,
        None if resume => read_run_file(dir)?.plan.seed,
        None => rand::random(),
    })
}

/// The records of a finished or stopped run of `plan`, read back without modifying the store (a
/// last line cut short by a kill is ignored, not repaired; no games.jsonl: no records) and
/// checked as `--resume` checks them ([`records_check`]); each exact copy dropped is a warning
/// on stderr.
pub fn read_records(dir: &Path, plan: &RunPlan) -> Result<Vec<GameRecord>> {
    let p = dir.join(GAMES_FILE);
    let Some(bytes) = files::read_regular(&p, files::GAMES_CAP)? else { return Ok(Vec::new()) };
    let numbered = parse_games_numbered(&bytes).with_context(|| p.display().to_string())?.0;
    let checked = check_file(plan, &p, numbered).map_err(|e| anyhow!("{e}"))?;
    for w in &checked.warnings {
        errln!("warning: {w}");
    }
    Ok(checked.into_records())
}

/// [`records_check::check_records`] on the one games.jsonl `path` of a run of `plan`.
fn check_file(
    plan: &RunPlan,
    path: &Path,
    records: Vec<(usize, GameRecord)>,
) -> Result<records_check::CheckedRecords, String> {
    let set = merge::ShardSet::of_plan(plan);
    records_check::check_records(
        plan,
        vec![records_check::RecordsFile { path, set: &set, records }],
    )
}

/// Writes the summary.json of a run (a match, tournament, tune, merge or pulled run) in `dir`.
pub fn write_summary(dir: &Path, summary: &RunSummary) -> Result<()> {
    write_atomic(&dir.join(SUMMARY_FILE), serde_json::to_string_pretty(summary)?.as_bytes())
}

/// The summary.json in `dir` (the runner's keys of any run's, a sweep's included), if readable.
pub fn read_summary(dir: &Path) -> Option<RunSummary> {
    let text = files::read_regular_text(&dir.join(SUMMARY_FILE), files::SMALL_CAP).ok()??;
    serde_json::from_str(&text).ok()
}

/// What an earlier run recorded as its reason to stop (kept by reports), else "unknown".
pub fn stored_stopped_by(dir: &Path) -> String {
    read_summary(dir).map(|s| s.stopped_by).unwrap_or_else(|| "unknown".into())
}

/// Reads run.json.
pub fn read_run_file(dir: &Path) -> Result<RunFile> {
    let p = dir.join(RUN_FILE);
    let text = files::read_regular_text(&p, files::SMALL_CAP)
        .with_context(|| format!("cannot resume from {}", dir.display()))?
        .with_context(|| format!("cannot resume: {} not found", p.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a valid run file", p.display()))
}

/// Reads games.jsonl. A last line cut short (no newline, not valid JSON) is removed from the
/// file; a bad line elsewhere is an error naming it. Records come with their line numbers, every
/// one of them (repeated games are for [`records_check`] to judge).
pub fn read_games_repairing(path: &Path) -> Result<Vec<(usize, GameRecord)>> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let (records, good_len) =
        parse_games_numbered(&bytes).with_context(|| path.display().to_string())?;
    if good_len < bytes.len() || (good_len > 0 && bytes[good_len - 1] != b'\n') {
        let mut keep = bytes[..good_len].to_vec();
        if !keep.is_empty() && keep.last() != Some(&b'\n') {
            keep.push(b'\n');
        }
        write_atomic(path, &keep)?;
    }
    Ok(records)
}

/// Parses jsonl bytes; returns the records and the length of the valid prefix.
pub fn parse_games(bytes: &[u8]) -> Result<(Vec<GameRecord>, usize)> {
    let (records, len) = parse_games_numbered(bytes)?;
    Ok((records.into_iter().map(|(_, r)| r).collect(), len))
}

/// [`parse_games`] with each record's line number.
pub fn parse_games_numbered(bytes: &[u8]) -> Result<(Vec<(usize, GameRecord)>, usize)> {
    let mut records: Vec<(usize, GameRecord)> = Vec::new();
    let mut offset = 0;
    let mut lineno = 0;
    while offset < bytes.len() {
        lineno += 1;
        let end = bytes[offset..].iter().position(|&b| b == b'\n').map(|p| offset + p);
        let line = &bytes[offset..end.unwrap_or(bytes.len())];
        let next = end.map(|e| e + 1).unwrap_or(bytes.len());
        if line.iter().all(u8::is_ascii_whitespace) {
            offset = next;
            continue;
        }
        match serde_json::from_slice::<GameRecord>(line) {
            Ok(r) => records.push((lineno, r)),
            Err(_) if next == bytes.len() => return Ok((records, offset)),
            Err(e) => bail!("line {lineno} is not a game record: {e}"),
        }
        offset = next;
    }
    Ok((records, offset))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::play::termination::Termination;

    pub(crate) fn record(pair: usize, game: u8) -> GameRecord {
        GameRecord {
            seq: pair,
            pairing: 0,
            label: "A vs B".into(),
            pair,
            game,
            opening: 0,
            fen: crate::plan::openings::STARTPOS_FEN.into(),
            white: if game == 0 { "A" } else { "B" }.into(),
            black: if game == 0 { "B" } else { "A" }.into(),
            result: GameResult::WhiteWins,
            termination: Termination::Checkmate,
            plies: 4,
            book_plies: 1,
            moves: vec!["f2f3".into(), "e7e5".into(), "g2g4".into(), "d8h4".into()],
            scores: vec![Some(Eval::Cp(10)), None, Some(Eval::Mate(1))],
            depths: vec![Some(3), None, Some(1)],
            times_ms: vec![1.5, 2.0, 3.25],
            engine_times_ms: vec![Some(1), None, Some(3)],
            move_info: MoveFields::default(),
            latency: LatencyStats::default(),
            illegal_move: None,
            forfeit: None,
            duration_ms: 10,
            date: "2026.11.22".into(),
            plan_hash: Some(plan().merge_hash()),
            first_white: None,
            limits: None,
            tablebase: None,
        }
    }

    pub(crate) use crate::plan::run_plan::fixtures::plan;

    #[test]
    fn truncated_last_line_is_dropped_and_repaired() {
        let a = serde_json::to_string(&record(0, 0)).unwrap();
        let b = serde_json::to_string(&record(0, 1)).unwrap();
        let text = format!("{a}\n{a}\n{}", &b[..b.len() / 2]);
        let dir = std::env::temp_dir().join(format!("store-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("g.jsonl");
        fs::write(&p, &text).unwrap();
        let recs = read_games_repairing(&p).unwrap();
        assert_eq!(recs.len(), 2, "truncated line ignored, the copy left to the record check");
        assert_eq!(fs::read_to_string(&p).unwrap(), format!("{a}\n{a}\n"));
        // A corrupt line in the middle is an error.
        fs::write(&p, format!("{a}\ngarbage\n{b}\n")).unwrap();
        let e = read_games_repairing(&p).unwrap_err();
        assert!(format!("{e:#}").contains("line 2"), "{e:#}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Games appended after a resume reach the games.pgn the resume rewrote.
    #[test]
    fn games_after_a_resume_reach_the_rewritten_pgn() {
        let dir = std::env::temp_dir().join(format!("store-pgn-append-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let p = plan();
        let mut s = Store::create(&dir, &p).unwrap();
        s.append(&record(0, 0)).unwrap();
        drop(s);
        let (mut s, recs) = Store::resume(&dir, &p).unwrap();
        assert_eq!(recs.len(), 1);
        s.append(&record(0, 1)).unwrap();
        s.append(&record(1, 0)).unwrap();
        let pgn = fs::read_to_string(dir.join(PGN_FILE)).unwrap();
        assert_eq!(pgn.matches("[Event ").count(), 3, "{pgn}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A writer that fails as a full disk does.
    struct FullDisk;
    impl std::io::Write for FullDisk {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from_raw_os_error(libc::ENOSPC))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A full disk names the file (the temporary file of a rewrite too:
    /// `files::tests::temporary_files_are_new_and_cleaned_up`).
    #[test]
    fn a_full_disk_names_the_file() {
        let e = format!(
            "{:#}",
            write_named(Path::new("/r/games.pgn"), &mut FullDisk, b"x").unwrap_err()
        );
        assert!(e.contains("/r/games.pgn") && e.contains("No space left"), "{e}");
    }

    #[test]
    fn resume_refuses_a_different_plan_and_rewrites_pgn() {
        let dir = std::env::temp_dir().join(format!("store-resume-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let p = plan();
        let mut s = Store::create(&dir, &p).unwrap();
        s.append(&record(1, 0)).unwrap();
        s.append(&record(0, 0)).unwrap();
        assert!(Store::create(&dir, &p).unwrap_err().to_string().contains("--resume"));
        let mut other = p.clone();
        other.seed = 2;
        let e = Store::resume(&dir, &other).unwrap_err().to_string();
        assert!(e.contains("seed: stored 1, now 2"), "{e}");
        let (_, recs) = Store::resume(&dir, &p).unwrap();
        assert_eq!(recs.len(), 2);
        let pgn = fs::read_to_string(dir.join(PGN_FILE)).unwrap();
        let r1 = pgn.find("[Round \"1.1\"]").unwrap();
        let r2 = pgn.find("[Round \"2.1\"]").unwrap();
        assert!(r1 < r2, "schedule order");
        assert!(
            pgn.contains("1. f3 {book} 1... e5 {+0.10/3 0.002s} 2. g4 {0.002s} 2... Qh4#"),
            "{pgn}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A run.json of runner 0.1.0, written while the plan's kind was a string: it reads through
    /// `read_run_file`, its kind is the enum's, and its plan keeps the hash stored with it (so
    /// `--resume` and `runner merge` still take the run).
    #[test]
    fn a_run_json_of_an_older_runner_reads_and_keeps_its_hash() {
        use crate::plan::run_plan::RunKind;
        let dir = std::env::temp_dir().join(format!("store-old-run-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let text = include_str!("../../tests/data/run-0.1.0-round-robin.json");
        fs::write(dir.join(RUN_FILE), text).unwrap();
        let run = read_run_file(&dir).unwrap();
        assert_eq!(run.plan.kind, RunKind::RoundRobin);
        assert_eq!(run.plan.hash(), run.plan_hash);
        // Every kind is stored as the string runners always wrote.
        for (kind, name) in [
            (RunKind::Match, "match"),
            (RunKind::Gauntlet, "gauntlet"),
            (RunKind::RoundRobin, "round-robin"),
            (RunKind::Sweep, "sweep"),
            (RunKind::Tune, "tune"),
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), name);
            assert_eq!(serde_json::from_value::<RunKind>(name.into()).unwrap(), kind);
            assert_eq!(kind.to_string(), name);
        }
        assert!(serde_json::from_value::<RunKind>("matches".into()).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn default_folders_are_named_in_utc_and_sort_by_time() {
        use chrono::TimeZone as _;
        let at = |s| chrono::Utc.timestamp_opt(s, 0).unwrap();
        assert_eq!(folder_stamp(at(0)), "19700101-000000Z");
        let stamps: Vec<String> = [59, 60, 3_599, 86_400, 1_000_000_000]
            .into_iter()
            .map(|s| folder_stamp(at(s)))
            .collect();
        let mut sorted = stamps.clone();
        sorted.sort();
        assert_eq!(sorted, stamps);
        assert!(default_out("calibrate").to_string_lossy().ends_with('Z'));
        assert!(results_dir(None, false).unwrap().to_string_lossy().ends_with('Z'));
    }

    #[test]
    fn first_engine_view() {
        use stats::GameScore;
        let mut r = record(0, 1);
        assert_eq!(r.first_score(), GameScore::Loss);
        r.result = GameResult::BlackWins;
        assert_eq!(r.first_score(), GameScore::Win);
        r.result = GameResult::Draw;
        assert_eq!(r.first_score(), GameScore::Draw);
    }

    /// Per-engine limits, caps beside a clock and scheduling options are in the plan
    /// and change its hash; a plan without them keeps the hash it had (no new keys in its JSON).
    #[test]
    fn limits_and_scheduling_change_the_hash() {
        use crate::plan::run_plan::RunPlan;
        use crate::plan::schedule::Scheduling;
        use crate::plan::time_control::TimeControl;
        use std::collections::BTreeSet;
        let base = plan();
        let json = serde_json::to_value(&base).unwrap();
        for key in ["scheduling", "nodes", "depth"] {
            assert!(json.get(key).is_none(), "{key} in {json}");
        }
        assert!(json["engines"][0].get("limits").is_none(), "{json}");
        let mut hashes = vec![base.hash()];
        let mut odds = base.clone();
        odds.engines[0].limits.clock = TimeControl::parse_tc("2+0.02").ok();
        hashes.push(odds.hash());
        let mut odds2 = odds.clone();
        odds2.engines[0].limits.clock = TimeControl::parse_tc("2+0.03").ok();
        hashes.push(odds2.hash());
        let mut margin = base.clone();
        margin.engines[1].limits.timemargin_ms = Some(5);
        hashes.push(margin.hash());
        hashes.push(RunPlan { nodes: Some(5), ..base.clone() }.hash());
        for sched in [
            Scheduling { repeat: 1, ..Default::default() },
            Scheduling { noswap: true, ..Default::default() },
            Scheduling { reverse: true, ..Default::default() },
            Scheduling { book_start: 2, ..Default::default() },
            Scheduling { wait_ms: 10, ..Default::default() },
        ] {
            hashes.push(RunPlan { scheduling: sched, ..base.clone() }.hash());
        }
        let distinct: BTreeSet<&String> = hashes.iter().collect();
        assert_eq!(distinct.len(), hashes.len());
        assert!(plan_differences(&base, &odds).contains(&"engines changed".to_string()));
        // The sides' limits: engine A on its own clock, B on the run's.
        let s = odds.side_limit(0, 0);
        assert_eq!((s.pgn_tag(), s.timemargin_ms), ("2+0.02".to_string(), 100));
        assert_eq!(odds.side_limit(0, 1), odds.run_limit(0));
        assert_eq!(margin.side_limit(0, 1).timemargin_ms, 5);
        let back: RunPlan = serde_json::from_str(&serde_json::to_string(&odds).unwrap()).unwrap();
        assert_eq!(back.hash(), odds.hash());
    }

    /// The position sampler (`plan::positions`, a layer below) reads games.jsonl through its
    /// own type: a record's `fen` and `moves` must come out as they went in.
    #[test]
    fn the_sampler_reads_a_records_fen_and_moves() {
        let mut r = record(0, 0);
        r.moves = vec!["e2e4".into(), "e7e5".into()];
        let line = serde_json::to_string(&r).unwrap();
        let g: crate::plan::positions::GameMoves = serde_json::from_str(&line).unwrap();
        assert_eq!((g.fen, g.moves), (r.fen, r.moves));
    }
}
