//! The fleet source: the database's runs as [`RunView`]s, read by one statement for the whole
//! list ([`dashboard::run_list`]) plus the fleet's shares ([`share::shares`]); a run's page
//! made by the report renderer from the run's stored submission and a [`Digest`] of its games,
//! gathered from the database as a stream and kept per run, so that a later page reads only
//! the games stored since; its games paged from the database by schedule position; and the
//! workers table of `runner workers`. Every statement is the fleet queue's (`fleet/queue/`);
//! the server connects as the role its URL names, meant to be the read-only `fleet_reader`
//! (docs/fleet-reader-role.sql).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use stats::Options;
use tokio::sync::Mutex;
use tokio_postgres::Client;

use crate::fleet::connect::connect;
use crate::fleet::decide::stats_counts;
use crate::fleet::queue::builds::{BuildRow, run_builds};
use crate::fleet::queue::dashboard::{self, ListRow, RunArtifact};
use crate::fleet::queue::share::{ShareRow, shares};
use crate::fleet::queue::workers::{WorkerRow, key_tallies, workers};
use crate::fleet::queue::{self, Refusal};
use crate::fleet::schema;
use crate::fleet::share::{pairs_left, pairs_per_hour, time_left};
use crate::fleet::submission::{Submission, SubmissionHead};
use crate::fleet::worker_stats::{KeyStat, key_stats};
use crate::plan::run_plan::RunKind;
use crate::report::html::digest::Digest;
use crate::report::html::input::{Kind, RunFiles};
use crate::report::summary::summarize_or_na;
use crate::store::GameRecord;
use crate::store::pgn::PgnStyle;

use super::view::{PairingView, RunView, State};
use super::{App, FLEET_PREFIX};

/// Finished runs listed at the most (newest first); pending and active runs are all listed.
pub const LIST_LIMIT: i64 = 1000;

/// Digests kept at the most (one per run whose page was asked for); past that they start afresh.
const DIGESTS: usize = 16;

/// Games a page request reads itself to bring a run's digest up to date. A run further behind
/// (the first visit to a long run: 100,000 stored games take about 7 s to read) is caught up by
/// a task in the background, [`CHUNK`] games per statement so that other pages' statements get
/// the connection in between, and the page says how far it got.
const INLINE: i64 = 10_000;
const CHUNK: i64 = 5_000;

/// A run's digest, the newest stored game it holds, and whether a background task is adding
/// games to it.
struct Kept {
    last: i64,
    digest: Digest,
    catching: bool,
}

impl Kept {
    fn held(&self) -> i64 {
        (self.digest.games + self.digest.skipped_count) as i64
    }

    /// Adds the stored games after the newest held, at most `limit` of them; how many.
    async fn read(&mut self, db: &Client, id: i64, limit: Option<i64>) -> Result<i64> {
        let before = self.held();
        let (last, digest) = (&mut self.last, &mut self.digest);
        dashboard::games_after(db, id, *last, limit, |gid, text| {
            *last = (*last).max(gid);
            match serde_json::from_str::<GameRecord>(text) {
                Ok(r) => digest.add(&r),
                Err(e) => digest.skip(format!("stored game {gid}: not a game record ({e})")),
            }
        })
        .await?;
        Ok(self.held() - before)
    }
}

type Digests = Arc<Mutex<HashMap<i64, Kept>>>;

/// The database, and the digests of the runs whose pages were made.
pub struct Fleet {
    db: Arc<Client>,
    digests: Digests,
}

/// What a fleet run's page is made from besides its digest.
pub struct RunPage {
    pub view: RunView,
    pub files: RunFiles,
    pub digest: Digest,
    /// (games in the digest, games stored) while the digest is still being gathered.
    pub partial: Option<(i64, i64)>,
    pub keys: Vec<KeyStat>,
    pub refusals: Vec<Refusal>,
    pub artifacts: Vec<RunArtifact>,
    pub builds: Vec<BuildRow>,
}

impl Fleet {
    /// Connects with `url` and checks the schema version.
    pub async fn connect(url: &str) -> Result<Fleet> {
        let (_, db) = connect(Some(url)).await?;
        schema::check(&db).await?;
        // The list is one statement with a subquery per run, which the planner costs high
        // enough to compile with LLVM: 0.4-0.6 s of compiling for a 0.3 s query over 1,000
        // runs (measured with runner/benches/serve_bench.sh). The pages' statements are short:
        // no JIT for this session.
        db.batch_execute("SET jit = off").await.context("cannot turn JIT off")?;
        Ok(Fleet { db: Arc::new(db), digests: Arc::default() })
    }

    /// The list: two statements whatever the number of runs.
    pub async fn runs(&self) -> Result<Vec<RunView>> {
        let rows = dashboard::run_list(&self.db, LIST_LIMIT, None).await?;
        let now = self.shares(&rows).await?;
        Ok(rows.iter().map(|r| view(r, now.get(&r.run.id))).collect())
    }

    async fn shares(&self, rows: &[ListRow]) -> Result<HashMap<i64, ShareRow>> {
        if !rows.iter().any(|r| r.run.state == "active") {
            return Ok(HashMap::new());
        }
        Ok(shares(&self.db).await?.into_iter().map(|s| (s.run, s)).collect())
    }

    pub async fn run(&self, id: i64) -> Result<Option<RunView>> {
        let rows = dashboard::run_list(&self.db, 0, Some(id)).await?;
        let now = self.shares(&rows).await?;
        Ok(rows.first().map(|r| view(r, now.get(&r.run.id))))
    }

    /// Run `id`'s page parts: its row, its submission as a folder's files would hold it, the
    /// digest of its games (the games stored since the last page read and added), and the
    /// fleet's own parts.
    pub async fn page(&self, id: i64) -> Result<Option<RunPage>> {
        let rows = dashboard::run_list(&self.db, 0, Some(id)).await?;
        let Some(row) = rows.first() else { return Ok(None) };
        let now = self.shares(&rows).await?;
        let view = view(row, now.get(&id));
        let sub = SubmissionHead::from_stored(&row.run.submission).ok();
        let files = files_of(id, sub.as_ref());
        let (mut digest, partial) = self.digest(id, &files, &row.labels).await?;
        // The table and the verdict say the database's counts, what it decides on.
        for (i, c) in row.counts.iter().enumerate() {
            let counts = stats_counts(c);
            digest.set_counts(
                i,
                counts.wdl().unwrap_or_default(),
                counts.penta().unwrap_or_default(),
            );
        }
        let keys = key_stats(&key_tallies(&self.db, id).await?);
        let refusals = queue::refusals(&self.db, id).await?;
        let artifacts = dashboard::run_artifacts(&self.db, id).await?;
        let builds = run_builds(&*self.db, id).await?;
        Ok(Some(RunPage { view, files, digest, partial, keys, refusals, artifacts, builds }))
    }

    /// Run `id`'s digest brought up to date: the stored games after the newest it holds are
    /// read as a stream and added; if fewer games are stored up to that one than it holds (a
    /// purge took some back), it is gathered again from the first. More than [`INLINE`] games
    /// behind, a background task reads them and the digest so far is returned with (games held,
    /// games stored).
    async fn digest(
        &self,
        id: i64,
        files: &RunFiles,
        labels: &[String],
    ) -> Result<(Digest, Option<(i64, i64)>)> {
        let fresh = || Kept {
            last: 0,
            digest: Digest::new(labels.to_vec(), files.sprt(), files.plan().cloned(), None),
            catching: false,
        };
        let mut kept = self.digests.lock().await;
        if kept.len() >= DIGESTS && !kept.contains_key(&id) {
            kept.clear();
        }
        let entry = kept.entry(id).or_insert_with(fresh);
        let (count, upto, _) = dashboard::games_count(&self.db, id, entry.last).await?;
        if upto < entry.held() && !entry.catching {
            *entry = fresh();
        }
        if entry.catching || count - entry.held() > INLINE {
            if !entry.catching {
                entry.catching = true;
                let (db, digests) = (self.db.clone(), self.digests.clone());
                tokio::spawn(catch_up(db, digests, id));
            }
            return Ok((entry.digest.clone(), Some((entry.held(), count))));
        }
        entry.read(&self.db, id, None).await?;
        Ok((entry.digest.clone(), None))
    }

    /// One page of run `id`'s games in schedule order from schedule position `from`.
    pub async fn games(&self, id: i64, from: i32, limit: i64) -> Result<Vec<(i32, GameRecord)>> {
        let rows = dashboard::games_page(&self.db, id, from, i32::MAX, limit).await?;
        Ok(rows
            .into_iter()
            .filter_map(|(seq, text)| serde_json::from_str(&text).ok().map(|r| (seq, r)))
            .collect())
    }

    /// Run `id`'s submitted plan, if it reads.
    pub async fn submission(&self, id: i64) -> Result<Option<Submission>> {
        Ok(queue::run(&self.db, id)
            .await?
            .and_then(|r| Submission::from_stored(&r.submission).ok()))
    }

    /// The workers as `runner workers` lists them (every one with `all`).
    pub async fn workers(&self, all: bool) -> Result<Vec<WorkerRow>> {
        workers(&self.db, all).await
    }

    /// What `/metrics` adds of the fleet's health: the refusals against open runs, and the
    /// worker keys flagged in the active runs `active` (a key flagged in two runs counts twice).
    pub async fn health(&self, active: &[i64]) -> Result<(i64, usize)> {
        let refusals = dashboard::open_refusals(&self.db).await?;
        let mut flagged = 0;
        for &run in active {
            flagged +=
                key_stats(&key_tallies(&self.db, run).await?).iter().filter(|k| k.flagged).count();
        }
        Ok((refusals, flagged))
    }

    pub async fn change_counter(&self) -> Result<String> {
        dashboard::change_counter(&self.db).await
    }
}

/// Reads run `id`'s stored games into its kept digest, [`CHUNK`] at a time, releasing the
/// digests and the connection between chunks, until a chunk adds nothing (or the digest was
/// dropped, or a read failed: the next page request starts again).
async fn catch_up(db: Arc<Client>, digests: Digests, id: i64) {
    loop {
        let mut kept = digests.lock().await;
        let Some(k) = kept.get_mut(&id) else { return };
        match k.read(&db, id, Some(CHUNK)).await {
            Ok(n) if n > 0 => {}
            _ => {
                k.catching = false;
                return;
            }
        }
        drop(kept);
        tokio::task::yield_now().await;
    }
}

/// Pairs read per step of a download.
const STREAM_PAIRS: i32 = 256;

/// Run `run`'s games as a download (PGN, or the stored records one per line), read from the
/// database [`STREAM_PAIRS`] pairs at a time in schedule order as the client takes them: the
/// server holds one step's games at a time. A failing read ends the download early.
pub fn stream(
    app: Arc<App>,
    run: i64,
    sub: Submission,
    pgn: bool,
) -> impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    let sub = Arc::new(sub);
    futures_util::stream::unfold((0i32, None::<i32>), move |(from, last)| {
        let (app, sub) = (app.clone(), sub.clone());
        async move {
            let f = app.fleet.as_ref()?;
            let last = match last {
                Some(l) => l,
                None => dashboard::last_seq(&f.db, run).await.ok()?,
            };
            if from > last {
                return None;
            }
            let to = from.saturating_add(STREAM_PAIRS);
            let rows = dashboard::games_page(&f.db, run, from, to, i64::MAX).await.ok()?;
            let mut out = Vec::new();
            for (_, text) in rows {
                if pgn {
                    if let Ok(r) = serde_json::from_str::<GameRecord>(&text)
                        && let Ok(p) = r.to_pgn_with(sub.plan(), PgnStyle::default(), &[])
                    {
                        out.extend_from_slice(p.as_bytes());
                        out.extend_from_slice(b"\n");
                    }
                } else {
                    out.extend_from_slice(text.as_bytes());
                    out.push(b'\n');
                }
            }
            Some((Ok(out), (to, Some(last))))
        }
    })
}

/// What a folder's files would hold of a fleet run: its plan (run.json) and, for a sweep, its
/// sweep plan. There is no summary.json: the page's state comes from the database.
fn files_of(id: i64, sub: Option<&SubmissionHead>) -> RunFiles {
    let kind = match sub.map(|s| s.plan().kind) {
        Some(RunKind::Match) => Kind::Match,
        Some(RunKind::Sweep) => Kind::Sweep,
        Some(_) => Kind::Gauntlet,
        None => Kind::Unknown,
    };
    let kind = if sub.and_then(SubmissionHead::sweep).is_some() { Kind::Sweep } else { kind };
    RunFiles {
        dir: PathBuf::from(format!("{FLEET_PREFIX}{id}")),
        kind,
        run: sub.map(|s| s.run.clone()),
        sweep: sub.and_then(SubmissionHead::sweep).cloned(),
        summary: None,
        records: Vec::new(),
        skipped: Vec::new(),
        pgn: HashMap::new(),
        table_md: None,
        svgs: Vec::new(),
        files: Vec::new(),
        notes: match sub {
            Some(_) => Vec::new(),
            None => vec![format!("run {id}: its stored submission does not read")],
        },
    }
}

/// A list row as a [`RunView`], with its share now when it is active.
fn view(row: &ListRow, now: Option<&ShareRow>) -> RunView {
    let run = &row.run;
    let sub = SubmissionHead::from_stored(&run.submission);
    let plan = sub.as_ref().ok().map(|s| s.plan().clone());
    let sprt = plan.as_ref().and_then(|p| p.sprt);
    let mut games = 0;
    let pairings: Vec<PairingView> = row
        .counts
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let counts = stats_counts(c);
            let n = counts.games();
            games += n;
            let summary = (c.penta.iter().sum::<i64>() > 0).then(|| {
                summarize_or_na(&counts, &Options { sprt, ..Options::default() }, stats::summarize)
                    .0
            });
            PairingView {
                label: row
                    .labels
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("pairing {}", c.pairing)),
                games: n,
                wdl: counts.wdl().unwrap_or_default(),
                penta: counts.penta().unwrap_or_default(),
                summary,
            }
        })
        .collect();
    let state = State::of_fleet(&run.state, &super::view::verdicts(&pairings));
    let limits = plan.as_ref().map(|p| p.limits_text());
    let (rate, left) = match &row.progress {
        Some(p) => {
            let rate = pairs_per_hour(p);
            let words = time_left(pairs_left(&row.counts, sprt.as_ref(), p), rate);
            (rate, Some(words.strip_prefix("time left ").unwrap_or(&words).to_string()))
        }
        None => (None, None),
    };
    RunView {
        id: format!("{FLEET_PREFIX}{}", run.id),
        source: "fleet",
        kind: sub.as_ref().map_or_else(|_| run.kind.clone(), |s| s.kind().to_string()),
        state,
        state_note: state_note(&run.state, run.stop_reason.as_deref()),
        engines: plan
            .as_ref()
            .map(|p| p.engines.iter().map(|e| e.name.clone()).collect())
            .unwrap_or_default(),
        options: plan
            .as_ref()
            .map(|p| super::view::differing_options(&p.engines))
            .unwrap_or_default(),
        limits: limits.unwrap_or_default(),
        games,
        games_planned: plan.as_ref().map(super::view::planned_games),
        pairings,
        owner: Some(run.owner.clone()),
        priority: Some(i64::from(row.priority)),
        workers: row.progress.as_ref().map(|p| p.workers_alive),
        submitted: Some(run.created.clone()),
        throughput: Some(i64::from(row.throughput)),
        share_now: now.and_then(|s| s.now),
        share_target: now.map(|s| s.target),
        pairs_per_hour: rate,
        time_left: left,
        finished: run.finished.clone(),
    }
}

/// Why a fleet run is in its state, in words: the database's stop reason, or what its
/// `runs.state` column means.
fn state_note(column: &str, stop_reason: Option<&str>) -> String {
    let meaning = match column {
        "pending" => "waits for an approver",
        "active" => "pairs are handed out to workers",
        "decided" => "stopped by a decision",
        "complete" => "complete: every scheduled pair was played",
        "cancelled" => "cancelled",
        "failed" => "refused by the workers",
        other => other,
    };
    match stop_reason {
        Some(why) => format!("{meaning}: {why}"),
        None => meaning.to_string(),
    }
}
