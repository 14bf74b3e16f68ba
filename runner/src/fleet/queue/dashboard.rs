//! What `runner serve` reads besides what status and pull read: the workers table and a cheap
//! change counter per run (its live pages poll it). Only columns a `fleet_reader` may select.

use anyhow::{Context, Result};
use tokio_postgres::Client;
use tokio_postgres::types::Type;

use super::{one, rows};

/// One worker as the table holds it, with its key's name.
#[derive(Clone, Debug, serde::Serialize)]
pub struct WorkerRow {
    pub id: i64,
    pub host: String,
    pub key_name: Option<String>,
    pub concurrency: i32,
    pub version: Option<String>,
    pub started: Option<String>,
    pub heartbeat: Option<String>,
    pub stopped: Option<String>,
    /// Heartbeat within its lease and not stopped.
    pub alive: bool,
}

const STAMP: &str = "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'";

/// The newest `limit` workers, newest first.
pub async fn workers(db: &Client, limit: i64) -> Result<Vec<WorkerRow>> {
    let sql = format!(
        "SELECT w.id, w.host, k.name AS key_name, w.concurrency, w.version, \
           to_char(w.started_at AT TIME ZONE 'UTC', {STAMP}) AS started, \
           to_char(w.heartbeat_at AT TIME ZONE 'UTC', {STAMP}) AS heartbeat, \
           to_char(w.stopped_at AT TIME ZONE 'UTC', {STAMP}) AS stopped, \
           (w.stopped_at IS NULL AND w.heartbeat_at > now() - make_interval(secs => w.lease_secs)) \
             AS alive \
         FROM workers w LEFT JOIN worker_keys k ON k.id = w.key_id ORDER BY w.id DESC LIMIT $1"
    );
    let found = rows(db, &sql, &[(&limit, Type::INT8)]).await.context("cannot read the workers")?;
    let mut out = Vec::with_capacity(found.len());
    for r in &found {
        out.push(WorkerRow {
            id: r.try_get("id")?,
            host: r.try_get("host")?,
            key_name: r.try_get("key_name")?,
            concurrency: r.try_get("concurrency")?,
            version: r.try_get("version")?,
            started: r.try_get("started")?,
            heartbeat: r.try_get("heartbeat")?,
            stopped: r.try_get("stopped")?,
            alive: r.try_get::<_, Option<bool>>("alive")?.unwrap_or(false),
        });
    }
    Ok(out)
}

/// A number that changes whenever anything a page shows of the fleet's runs changes: the
/// newest stored game and the runs' states (a cancelled or decided run changes its state).
pub async fn change_counter(db: &Client) -> Result<String> {
    let r = one(
        db,
        "SELECT coalesce((SELECT max(id) FROM games), 0)::text || '/' || \
           coalesce((SELECT string_agg(id::text || state, ',' ORDER BY id) FROM runs \
             WHERE state IN ('pending', 'active')), '') AS c",
        &[],
    )
    .await
    .context("cannot read the change counter")?;
    Ok(r.try_get("c")?)
}

/// The refusals recorded against the runs still open (pending or active): what `/metrics`
/// counts.
pub async fn open_refusals(db: &Client) -> Result<i64> {
    let r = one(
        db,
        "SELECT count(*) AS n FROM refusals f JOIN runs r ON r.id = f.run_id \
         WHERE r.state IN ('pending', 'active')",
        &[],
    )
    .await
    .context("cannot count the refusals")?;
    Ok(r.try_get("n")?)
}

/// One run of the server's list as one statement reads it: the run, its pairings' counts, and
/// for an active run its progress (pairs by state, workers alive, the pairs reported in the
/// last hour and over how long).
#[derive(Clone, Debug)]
pub struct ListRow {
    pub run: super::RunRow,
    pub priority: i32,
    pub throughput: i32,
    /// Labels of the pairings, by pairing.
    pub labels: Vec<String>,
    pub counts: Vec<super::PairingCounts>,
    /// Active runs only.
    pub progress: Option<super::Progress>,
}

/// The columns of [`ListRow`]: everything per run is a correlated subquery over the run's own
/// rows (its pairings and tallies, and for an active run its pairs and games through their
/// indexes), so the list costs one statement whatever the number of runs.
const LIST_SQL: &str = "
SELECT r.id, r.kind, r.state, r.stop_reason, r.submission - 'openings' AS submission, r.plan_hash, r.owner, r.approved_by,
       r.priority, r.throughput,
       to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS created,
       to_char(r.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS finished,
       coalesce((SELECT json_agg(json_build_array(g.pairing, g.label, g.active,
                   coalesce(g.verdict = 'dropped', false), t.ll, t.ld, t.dd, t.wd, t.ww,
                   t.wins, t.draws, t.losses) ORDER BY g.pairing)
                 FROM pairings g, LATERAL (SELECT coalesce(sum(x.ll), 0) AS ll,
                     coalesce(sum(x.ld), 0) AS ld, coalesce(sum(x.dd), 0) AS dd,
                     coalesce(sum(x.wd), 0) AS wd, coalesce(sum(x.ww), 0) AS ww,
                     coalesce(sum(x.wins), 0) AS wins, coalesce(sum(x.draws), 0) AS draws,
                     coalesce(sum(x.losses), 0) AS losses
                   FROM tallies x WHERE x.run_id = g.run_id AND x.pairing = g.pairing) t
                WHERE g.run_id = r.id), '[]')::text AS counts,
       CASE WHEN r.state = 'active' THEN (
         SELECT json_build_array(count(*), count(*) FILTER (WHERE p.state = 'done'),
                  count(*) FILTER (WHERE p.state = 'leased'),
                  count(*) FILTER (WHERE p.state = 'skipped'))::text
           FROM pairs p WHERE p.run_id = r.id) END AS pairs,
       CASE WHEN r.state = 'active' THEN (
         SELECT count(DISTINCT w.id) FROM pairs p JOIN workers w ON w.id = p.worker_id
          WHERE p.run_id = r.id AND p.state = 'leased' AND w.stopped_at IS NULL
            AND w.heartbeat_at > now() - make_interval(secs => w.lease_secs)) END AS alive,
       CASE WHEN r.state = 'active' THEN (
         SELECT json_build_array(
                  count(*) FILTER (WHERE reported_at > now() - interval '1 hour'),
                  coalesce(extract(epoch FROM max(reported_at) - min(reported_at)), 0)::float8)::text
           FROM games WHERE run_id = r.id AND game = 1) END AS rate
  FROM runs r
 WHERE CASE WHEN $2::bigint IS NULL
            THEN r.state IN ('pending', 'active')
                 OR r.id IN (SELECT id FROM runs WHERE state NOT IN ('pending', 'active')
                              ORDER BY id DESC LIMIT $1)
            ELSE r.id = $2 END
 ORDER BY r.id DESC";

/// Every pending and active run and the newest `finished` others (newest first), or only run
/// `only`: one statement.
pub async fn run_list(db: &Client, finished: i64, only: Option<i64>) -> Result<Vec<ListRow>> {
    let found = rows(db, LIST_SQL, &[(&finished, Type::INT8), (&only, Type::INT8)])
        .await
        .context("cannot read the runs")?;
    found.iter().map(list_row).collect()
}

/// One pairing of a list row: pairing, label, active, dropped, pentanomial, W-D-L.
type CountsRow = (i32, String, bool, bool, [i64; 5], [i64; 3]);

fn list_row(r: &tokio_postgres::Row) -> Result<ListRow> {
    let run = super::read::run_row(r)?;
    let counts_text: String = r.try_get("counts")?;
    let list: Vec<CountsRow> = serde_json::from_str::<Vec<serde_json::Value>>(&counts_text)
        .context("the counts are not JSON")?
        .iter()
        .filter_map(|v| {
            let a = v.as_array()?;
            let n = |i: usize| a.get(i).and_then(serde_json::Value::as_i64).unwrap_or(0);
            Some((
                i32::try_from(n(0)).ok()?,
                a.get(1)?.as_str()?.to_string(),
                a.get(2)?.as_bool()?,
                a.get(3)?.as_bool()?,
                [n(4), n(5), n(6), n(7), n(8)],
                [n(9), n(10), n(11)],
            ))
        })
        .collect();
    let labels = list.iter().map(|c| c.1.clone()).collect();
    let counts = list
        .into_iter()
        .map(|(pairing, _, active, dropped, penta, wdl)| super::PairingCounts {
            pairing,
            active,
            dropped,
            penta,
            wdl,
        })
        .collect();
    let ints = |col: &str| -> Result<Vec<f64>> {
        Ok(match r.try_get::<_, Option<String>>(col)? {
            Some(t) => serde_json::from_str::<Vec<f64>>(&t).unwrap_or_default(),
            None => Vec::new(),
        })
    };
    let (pairs, rate) = (ints("pairs")?, ints("rate")?);
    let progress = match (pairs.as_slice(), rate.as_slice()) {
        ([total, done, leased, skipped], [last_hour, secs]) => Some(super::Progress {
            pairs_total: *total as i64,
            pairs_done: *done as i64,
            pairs_leased: *leased as i64,
            pairs_skipped: *skipped as i64,
            workers_alive: r.try_get::<_, Option<i64>>("alive")?.unwrap_or(0),
            pairs_last_hour: *last_hour as i64,
            reporting_secs: *secs,
        }),
        _ => None,
    };
    Ok(ListRow {
        run,
        priority: r.try_get("priority")?,
        throughput: r.try_get("throughput")?,
        labels,
        counts,
        progress,
    })
}

/// The stored games of run `run` after game id `after`, in the order they were stored, at most
/// `limit` of them (all: None), as (id, record text) streamed row by row to `each` (never
/// collected).
pub async fn games_after(
    db: &Client,
    run: i64,
    after: i64,
    limit: Option<i64>,
    mut each: impl FnMut(i64, &str),
) -> Result<()> {
    use futures_util::TryStreamExt;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] = [&run, &after, &limit];
    let stream = db
        .query_raw(
            "SELECT id, record::text AS record FROM games WHERE run_id = $1 AND id > $2 \
             ORDER BY id LIMIT $3",
            params,
        )
        .await
        .context("cannot read the games")?;
    futures_util::pin_mut!(stream);
    while let Some(row) = stream.try_next().await.context("cannot read the games")? {
        let id: i64 = row.try_get("id")?;
        let text: &str = row.try_get("record")?;
        each(id, text);
    }
    Ok(())
}

/// Run `run`'s stored games: how many, how many of them up to game id `upto`, and the newest
/// game's id.
pub async fn games_count(db: &Client, run: i64, upto: i64) -> Result<(i64, i64, i64)> {
    let r = one(
        db,
        "SELECT count(*) AS n, count(*) FILTER (WHERE id <= $2) AS upto, \
           coalesce(max(id), 0) AS last FROM games WHERE run_id = $1",
        &[(&run, Type::INT8), (&upto, Type::INT8)],
    )
    .await
    .context("cannot count the games")?;
    Ok((r.try_get("n")?, r.try_get("upto")?, r.try_get("last")?))
}

/// One page of run `run`'s games in schedule order: the games of the pairs at schedule
/// positions `from..to`, at most `limit` of them, with each game's pair position (through the
/// `(run_id, seq)` key of pairs and the games' `(run_id, pairing, pair, game)` key).
pub async fn games_page(
    db: &Client,
    run: i64,
    from: i32,
    to: i32,
    limit: i64,
) -> Result<Vec<(i32, String)>> {
    let found = rows(
        db,
        "SELECT p.seq, g.record::text AS record FROM pairs p \
           JOIN games g ON g.run_id = p.run_id AND g.pairing = p.pairing AND g.pair = p.pair \
         WHERE p.run_id = $1 AND p.seq >= $2 AND p.seq < $3 ORDER BY p.seq, g.game LIMIT $4",
        &[(&run, Type::INT8), (&from, Type::INT4), (&to, Type::INT4), (&limit, Type::INT8)],
    )
    .await
    .context("cannot read the games")?;
    found.iter().map(|r| Ok((r.try_get("seq")?, r.try_get("record")?))).collect()
}

/// The last schedule position of run `run` (-1 without pairs).
pub async fn last_seq(db: &Client, run: i64) -> Result<i32> {
    let r = one(
        db,
        "SELECT coalesce(max(seq), -1) AS s FROM pairs WHERE run_id = $1",
        &[(&run, Type::INT8)],
    )
    .await
    .context("cannot read the run's schedule")?;
    Ok(r.try_get("s")?)
}

/// An artifact a run names (the engines it delivers through the database).
#[derive(Clone, Debug)]
pub struct RunArtifact {
    pub sha: String,
    pub kind: String,
    pub size: i64,
    pub sealed: bool,
}

/// The artifacts run `run` names, by hash.
pub async fn run_artifacts(db: &Client, run: i64) -> Result<Vec<RunArtifact>> {
    let found = rows(
        db,
        "SELECT a.sha, a.kind, a.size, a.sealed FROM run_artifacts ra \
           JOIN artifacts a ON a.sha = ra.sha WHERE ra.run_id = $1 ORDER BY a.sha",
        &[(&run, Type::INT8)],
    )
    .await
    .context("cannot read the run's artifacts")?;
    found
        .iter()
        .map(|r| {
            Ok(RunArtifact {
                sha: r.try_get("sha")?,
                kind: r.try_get("kind")?,
                size: r.try_get("size")?,
                sealed: r.try_get("sealed")?,
            })
        })
        .collect()
}
