//! Reporting a finished pair; the decision that may follow is `super::settle`'s.
//!
//! [`report`] is one statement of the server's own ([`REPORT`]; a tuning pair's, a few): the
//! pair becomes done only if it is still leased to this worker under its token and its run and
//! pairing are still active (else nothing is written and the answer says why); the server reads
//! both games' results from the records in Rust, as `fleet_record_read` read them, the
//! statement checks that they are between the pairing's engines, and adds them to the worker's
//! row of the pairing's counts. What `fleet_report` did, which a database migrated from an
//! earlier version keeps for a server of the version before until `runner db init --contract`. The answer carries the counts after the pair, which the server reads
//! with the run's stored rules to know whether to decide (`super::settle`, which takes the
//! run's row for update, so it waits for every report in flight, and decides from the counts of
//! every stored pair). A worker cannot write a decision.

use anyhow::{Context, Result};
use serde_json::Value;
use tokio_postgres::Row;
use tokio_postgres::types::Type;

use super::lease::{Refused, WorkerId, known};
use super::{Db, THETA_TRIES, hot, pair_call, rows};

/// Counts of one pairing, from its first engine's point of view, summed over workers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairingCounts {
    pub pairing: i32,
    pub active: bool,
    /// Stopped by racing (verdict `dropped`): racing leaves it out from then on.
    pub dropped: bool,
    /// LL, LD, DD (or WL), WD, WW.
    pub penta: [i64; 5],
    /// Wins, draws, losses.
    pub wdl: [i64; 3],
}

impl PairingCounts {
    /// From a row with the columns pairing, active, dropped, ll .. ww, wins, draws, losses.
    pub(super) fn from_row(r: &Row) -> Result<PairingCounts, tokio_postgres::Error> {
        Ok(PairingCounts {
            pairing: r.try_get("pairing")?,
            active: r.try_get("active")?,
            dropped: r.try_get("dropped")?,
            penta: [
                r.try_get("ll")?,
                r.try_get("ld")?,
                r.try_get("dd")?,
                r.try_get("wd")?,
                r.try_get("ww")?,
            ],
            wdl: [r.try_get("wins")?, r.try_get("draws")?, r.try_get("losses")?],
        })
    }

    /// Games counted.
    pub fn games(&self) -> i64 {
        2 * self.penta.iter().sum::<i64>()
    }
}

/// A pairing stopped by a decision: the verdict word and the line saying why; what the
/// decision is stored with (the games it was taken on; for a racing drop the best point then and
/// the test statistic).
#[derive(Clone, Debug, PartialEq)]
pub struct Stop {
    pub pairing: i32,
    pub verdict: String,
    pub why: String,
    pub games: i64,
    pub best: Option<i32>,
    pub z: Option<f64>,
}

/// A finished pair, ready to store.
pub struct PairReport<'a> {
    pub run_id: i64,
    pub pairing: i32,
    pub pair: i32,
    pub token: i64,
    /// Game 0 then game 1 (games.jsonl records).
    pub records: [&'a Value; 2],
}

/// How a report ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Reported {
    /// Stored: the counts after it (every pairing's when asked for, else the reported one's),
    /// whether the run has other pairs open, and the decision the server took after it, if it
    /// took one ([`report`] itself leaves it `None`: the caller decides, `super::settle`).
    Stored { counts: Vec<PairingCounts>, open: bool, settled: Option<Settled> },
    /// Not stored (nothing written): why.
    Refused(String),
}

/// A report, one statement: the worker checked ([`me!`]); the run's row taken `FOR KEY SHARE`,
/// then, when the run is active, the pair's `FOR UPDATE`, then, when the pair is leased to this
/// worker under token `$6`, the pairing's `FOR SHARE` (with whether the engines records `$7`
/// and `$8` name, `$10`: first and second of game 0, then of game 1, are the pairing's), then,
/// for a tuning pair, its run's `tune_state` `FOR UPDATE`. When every check holds (the pairing
/// active, its engines, the records read: `$11` the pair's addition to the worker's tallies,
/// ll, ld, dd, wd, ww, wins, draws, losses, crashes, time_losses; and for a tuning pair, theta
/// `$13` computed from the `applied` count `$12` it still has), the pair is done, its records
/// stored, the tallies row counted (its pairs per hour decayed, as `fleet_report` did), and a
/// tuning pair's result `$14` moves theta. The answer: what the checks found, whether it was
/// stored, and then each pairing's counts after it (every pairing's when `$9`, else the
/// reported one's) and whether the run has other pairs open.
///
/// Locks, against what `fleet_report` did in statements of their own (READ COMMITTED): a
/// statement's snapshot is taken at its start, before it waits for any lock, and a locking
/// read that finds a row changed by a transaction that committed since reads the newest version
/// (and checks its `WHERE` again) for `FOR UPDATE` and `FOR SHARE`, but for `FOR KEY SHARE`
/// only when it had to wait for that transaction: a change that did not touch the key and
/// committed before the lock was asked for is not seen (the lock is compatible with it). So:
/// - the run's state is read from its locked row, as the function read it: a decision takes
///   the row `FOR UPDATE` before it sets the state in the same transaction, and PostgreSQL
///   keeps the stronger of a transaction's lock and its update, so that update conflicts with
///   `FOR KEY SHARE` as a change of the key would. A report that comes while a decision runs
///   waits and reads the run's new state, and one whose snapshot is older than a decision
///   committed since reads the row's newest version at its lock: neither stores a pair the
///   decision did not count (`fleet_db`'s `queue::a_report_and_a_decision_in_flight_...`);
/// - the pair's state, token and holder come from its row locked `FOR UPDATE`: the newest
///   version, whatever the snapshot (a lease handed to another worker meanwhile is seen);
/// - the pairing is read `FOR SHARE`, where the function read it unlocked in a later
///   statement's snapshot, which began after the run's lock was held: here the snapshot may be
///   older than a decision this statement waited for at the run's row, and only a lock that
///   follows updates sees the pairing it stopped. `FOR SHARE` waits for nothing in practice:
///   whatever updates pairings (a decision, a purge, a modification) holds the run's row
///   `FOR UPDATE` first, which this statement's lock excludes, and reports share it;
/// - `tune_state` is locked `FOR UPDATE`, newest version, and theta moves only if its
///   `applied` is still the one theta `$13` was computed from (else nothing is written and the
///   caller computes again: [`report`]);
/// - the tallies row is an upsert, which adds to its newest version whatever the snapshot.
///
/// Every write waits on `ok`, so all the locks are taken before any write. The order is the
/// function's (run, pair, [pairing], tallies, tune_state) except that a tuning pair's
/// `tune_state` is locked before the tallies row: both are needed to decide what to write.
/// Reports through this statement all take them in the same order; only one worker reporting
/// two pairs of one tuning run at once through servers of two versions (the function's order
/// and this one) could deadlock, which PostgreSQL breaks and the worker retries.
///
/// A decision, which takes the run's row `FOR UPDATE`, waits for this statement to commit and
/// then reads every stored pair, this one included. The data-modifying parts do not see one
/// another's writes, nor does the answer see them: the counts are the snapshot's plus this
/// pair, and `open` leaves this pair out of the leased ones. Reports committed after the
/// snapshot are missing from both (as they were from the function's when they committed after
/// its last statement began); `open` may then say true of a run with nothing open, which a
/// later report or the server's look at finished runs (`settle::unsettled`) closes.
const REPORT: &str = concat!(
    "WITH ",
    me!(),
    ",
run AS (
    SELECT r.state FROM runs r WHERE r.id = $3 AND EXISTS (SELECT 1 FROM me) FOR KEY SHARE),
pair AS (
    SELECT p.state, p.token, p.worker_id, p.spsa FROM pairs p
     WHERE p.run_id = $3 AND p.pairing = $4 AND p.pair = $5
       AND EXISTS (SELECT 1 FROM run WHERE run.state = 'active')
       FOR UPDATE),
held AS (
    SELECT pair.spsa FROM pair
     WHERE pair.state = 'leased' AND pair.token = $6 AND pair.worker_id = $1),
pairing AS (
    SELECT g.active, g.label, g.verdict,
           g.first_name IS NOT DISTINCT FROM $10[1]
             AND g.second_name IS NOT DISTINCT FROM $10[2] AS engines0,
           g.first_name IS NOT DISTINCT FROM $10[3]
             AND g.second_name IS NOT DISTINCT FROM $10[4] AS engines1
      FROM pairings g
     WHERE g.run_id = $3 AND g.pairing = $4 AND EXISTS (SELECT 1 FROM held)
       FOR SHARE),
tune AS (
    SELECT s.applied FROM tune_state s
     WHERE s.run_id = $3 AND EXISTS (SELECT 1 FROM held WHERE held.spsa IS NOT NULL)
       AND EXISTS (SELECT 1 FROM pairing WHERE pairing.active)
       FOR UPDATE),
ok AS (
    SELECT held.spsa FROM held, pairing
     WHERE pairing.active AND pairing.engines0 AND pairing.engines1 AND $11::bigint[] IS NOT NULL
       AND (held.spsa IS NULL OR (SELECT applied FROM tune) IS NOT DISTINCT FROM $12)),
done AS (
    UPDATE pairs p SET state = 'done', lease_until = NULL
     WHERE p.run_id = $3 AND p.pairing = $4 AND p.pair = $5 AND EXISTS (SELECT 1 FROM ok)
    RETURNING 1),
stored AS (
    INSERT INTO games (run_id, pairing, pair, game, worker_id, record)
    SELECT $3, $4, $5, v.game, $1, v.record
      FROM ok, (VALUES (0, $7::json), (1, $8::json)) v (game, record)
    RETURNING 1),
tally AS (
    INSERT INTO tallies AS t (run_id, pairing, worker_id, ll, ld, dd, wd, ww, wins, draws, losses,
                              crashes, time_losses, recent, recent_at)
    SELECT $3, $4, $1, $11[1], $11[2], $11[3], $11[4], $11[5], $11[6], $11[7], $11[8], $11[9],
           $11[10], 1, now()
      FROM ok
    ON CONFLICT ON CONSTRAINT tallies_pkey DO UPDATE SET
        ll = t.ll + excluded.ll, ld = t.ld + excluded.ld, dd = t.dd + excluded.dd,
        wd = t.wd + excluded.wd, ww = t.ww + excluded.ww, wins = t.wins + excluded.wins,
        draws = t.draws + excluded.draws, losses = t.losses + excluded.losses,
        crashes = t.crashes + excluded.crashes,
        time_losses = t.time_losses + excluded.time_losses,
        -- exp's argument bounded: PostgreSQL raises on an underflow.
        recent = coalesce(t.recent * exp(-least(greatest(
            extract(epoch FROM excluded.recent_at - t.recent_at)::float8, 0) / 3600.0, 700)), 0)
            + 1,
        recent_at = excluded.recent_at
    RETURNING 1),
step AS (
    INSERT INTO tune_steps (run_id, ord, k, step)
    SELECT $3, tune.applied, $5,
           jsonb_build_object('k', $5, 'games', 0, 'theta', to_jsonb($13::float8[]),
                              'c_k', ok.spsa->'c_k', 'a_k', ok.spsa->'a_k', 'result', $14::float8)
      FROM ok, tune WHERE ok.spsa IS NOT NULL
    RETURNING 1),
moved AS (
    UPDATE tune_state s SET theta = to_jsonb($13::float8[]), applied = s.applied + 1
     WHERE s.run_id = $3 AND EXISTS (SELECT 1 FROM ok WHERE ok.spsa IS NOT NULL)
       AND EXISTS (SELECT 1 FROM tune)
    RETURNING 1),
counted AS (",
    counts!("$3", "(CASE WHEN $9 THEN NULL ELSE $4 END)"),
    "),
answer AS (
    SELECT EXISTS (SELECT 1 FROM me) AS known, (SELECT state FROM run) AS run_state,
           (SELECT state FROM pair) AS pair_state,
           (SELECT token IS NOT DISTINCT FROM $6 FROM pair) AS pair_token,
           (SELECT worker_id IS NOT DISTINCT FROM $1 FROM pair) AS pair_worker,
           (SELECT spsa IS NOT NULL FROM held) AS tuning,
           (SELECT active FROM pairing) AS pairing_active,
           (SELECT label FROM pairing) AS pairing_label,
           (SELECT verdict FROM pairing) AS pairing_verdict,
           (SELECT engines0 FROM pairing) AS engines0, (SELECT engines1 FROM pairing) AS engines1,
           EXISTS (SELECT 1 FROM ok) AS stored)
SELECT a.*,
       a.stored AND (EXISTS (SELECT 1 FROM (SELECT x.seq FROM pairs x WHERE x.run_id = $3
                                            AND x.state = 'pending' ORDER BY x.seq LIMIT 1) y)
                     OR EXISTS (SELECT 1 FROM pairs x WHERE x.run_id = $3 AND x.state = 'leased'
                                AND (x.pairing, x.pair) <> ($4, $5))) AS open,
       c.pairing, c.active, c.dropped, c.ll + (c.pairing = $4)::int * $11[1] AS ll,
       c.ld + (c.pairing = $4)::int * $11[2] AS ld, c.dd + (c.pairing = $4)::int * $11[3] AS dd,
       c.wd + (c.pairing = $4)::int * $11[4] AS wd, c.ww + (c.pairing = $4)::int * $11[5] AS ww,
       c.wins + (c.pairing = $4)::int * $11[6] AS wins,
       c.draws + (c.pairing = $4)::int * $11[7] AS draws,
       c.losses + (c.pairing = $4)::int * $11[8] AS losses
  FROM answer a LEFT JOIN counted c ON a.stored
 ORDER BY c.pairing"
);

/// Stores a finished pair (see the module's doc); `all`: return every pairing's counts (a
/// racing sweep's judge compares them). The game records are read here, as `fleet_record_read`
/// read them; the pairing's engines, which the records must name, are compared by [`REPORT`],
/// which writes nothing when they differ. `Err`: [`NotAuthorized`] for a worker whose secret or
/// key does not hold, [`Refused::Record`] for records that are not the pair's games (both with
/// nothing written).
///
/// A tuning pair is stored by the same statement once theta's move is known: the first try
/// writes nothing and says the pair is a tuning one; theta is then read with the `applied`
/// count of results that moved it, moved in Rust by this pair's result
/// ([`crate::tune::spsa::update_within`], what `fleet_spsa_update` computed), and the statement
/// stores the pair and the move only if `applied` is still that count, its `tune_state` row
/// locked; else another report moved theta in between, and theta is read and moved again.
pub async fn report(db: &impl Db, w: &WorkerId, r: &PairReport<'_>, all: bool) -> Result<Reported> {
    let games = [
        read_record(r.records[0], r.pairing, r.pair, 0),
        read_record(r.records[1], r.pairing, r.pair, 1),
    ];
    let engines: Vec<Option<&str>> = games
        .iter()
        .flat_map(|g| match g {
            Ok(g) => [g.engines[0].as_deref(), g.engines[1].as_deref()],
            Err(_) => [None, None],
        })
        .collect();
    let add = addition(&games);
    let result = add.map(|a| (a[1] + 2 * a[2] + 3 * a[3] + 4 * a[4] - 2) as f64);
    let add = add.as_ref().map(|a| &a[..]);
    let mut theta: Option<(i64, Vec<f64>)> = None;
    for _ in 0..THETA_TRIES {
        let (applied, moved) = (theta.as_ref().map(|t| t.0), theta.as_ref().map(|t| &t.1));
        let params = pair_call(
            w,
            (&r.run_id, &r.pairing, &r.pair, &r.token),
            &[
                (r.records[0], Type::JSON),
                (r.records[1], Type::JSON),
                (&all, Type::BOOL),
                (&engines, Type::TEXT_ARRAY),
                (&add, Type::INT8_ARRAY),
                (&applied, Type::INT8),
                (&moved, Type::FLOAT8_ARRAY),
                (&result, Type::FLOAT8),
            ],
        );
        let found = hot(db, REPORT, &params).await.context("cannot report a pair")?;
        let Some(first) = found.first() else {
            anyhow::bail!("the database answered a report with no row");
        };
        known(first, w)?;
        if let Some(why) = refusal(first, r)? {
            return Ok(Reported::Refused(why));
        }
        let engines_ok = [
            first.try_get::<_, Option<bool>>("engines0")?.unwrap_or(false),
            first.try_get::<_, Option<bool>>("engines1")?.unwrap_or(false),
        ];
        checked(&games, engines_ok).map_err(|why| {
            anyhow::Error::new(Refused::Record(why)).context("cannot report a pair")
        })?;
        if first.try_get("stored")? {
            let open: bool = first.try_get("open")?;
            let counts =
                found.iter().map(PairingCounts::from_row).collect::<Result<Vec<_>, _>>()?;
            return Ok(Reported::Stored { counts, open, settled: None });
        }
        if first.try_get::<_, Option<bool>>("tuning")? != Some(true) {
            anyhow::bail!("the database stored no report and said no why");
        }
        let Some(result) = result else {
            anyhow::bail!("a tuning pair's result was not read");
        };
        theta = Some(super::tuning::moved(db.client(), r, result).await?);
    }
    anyhow::bail!("run {}: theta moved at each of {THETA_TRIES} tries", r.run_id)
}

/// Why the report was refused, in `fleet_report`'s words, from [`REPORT`]'s answer (the run,
/// then the pair, then the pairing); `None` when it was not.
fn refusal(a: &Row, r: &PairReport<'_>) -> Result<Option<String>, tokio_postgres::Error> {
    let run = r.run_id;
    let Some(state) = a.try_get::<_, Option<String>>("run_state")? else {
        return Ok(Some(format!("run {run} is not in the database")));
    };
    if state != "active" {
        return Ok(Some(format!("run {run} is {state}")));
    }
    let Some(pair) = a.try_get::<_, Option<String>>("pair_state")? else {
        return Ok(Some(format!("run {run} has no pair {}/{}", r.pairing, r.pair + 1)));
    };
    let token: bool = a.try_get("pair_token")?;
    let mine: bool = a.try_get("pair_worker")?;
    // Only what the server knows now: whether this worker ever held the pair is not kept.
    match (pair.as_str(), mine, token) {
        ("leased", true, true) => {}
        ("leased", false, _) => return Ok(Some("the pair is leased to another worker".into())),
        ("leased", true, false) => {
            return Ok(Some(format!(
                "token {} is no longer the pair's: this worker holds it under a newer one",
                r.token
            )));
        }
        (state, ..) => return Ok(Some(format!("the pair is {state}, not leased"))),
    }
    if a.try_get::<_, Option<bool>>("pairing_active")? == Some(false) {
        let label: String = a.try_get("pairing_label")?;
        let verdict: Option<String> = a.try_get("pairing_verdict")?;
        let verdict = verdict.as_deref().unwrap_or("no verdict");
        return Ok(Some(format!("{label} was stopped ({verdict})")));
    }
    Ok(None)
}

/// A game record as a report reads it ([`read_record`]).
struct Game {
    /// The engines the record names as the pairing's first and second (its `white` and
    /// `black`, by which colour the first engine had).
    engines: [Option<String>; 2],
    /// The first engine's score in half points (2, 1, 0), or why the result is not one.
    half_points: Result<i64, String>,
    /// How the game ended.
    termination: Option<String>,
}

/// Game `game` of pair (`pairing`, `pair`) read from its record as `fleet_record_read` read it:
/// each field as `json_to_record` gives it as text (a string as it is, another value as its
/// JSON), `first_white` as PostgreSQL reads a boolean (absent: game 0). `Err`: why the record
/// is not that game, in the function's words (not an object, or another pair's or game's), or
/// the words PostgreSQL raised with (a `\u0000` anywhere, which `json_to_record` cannot make
/// text; a `first_white` that is not a boolean). The store's record type is not used: it reads
/// numbers and booleans only as such, where the function took their text too.
fn read_record(rec: &Value, pairing: i32, pair: i32, game: i32) -> Result<Game, String> {
    let n = game + 1;
    let not_it =
        || format!("game {n} of the report is not game {n} of pair {pairing}/{}", pair + 1);
    let Value::Object(fields) = rec else { return Err(not_it()) };
    if has_nul(rec) {
        return Err("unsupported Unicode escape sequence".into());
    }
    let text = |name: &str| match fields.get(name) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    let is = |name: &str, want: i32| text(name) == Some(want.to_string());
    if !is("pairing", pairing) || !is("pair", pair) || !is("game", game) {
        return Err(not_it());
    }
    let first_white = match text("first_white") {
        None => game == 0,
        Some(t) => {
            pg_bool(&t).ok_or_else(|| format!("invalid input syntax for type boolean: \"{t}\""))?
        }
    };
    let (white, black) = (text("white"), text("black"));
    let engines = if first_white { [white, black] } else { [black, white] };
    let half_points = match text("result").as_deref() {
        Some("1/2-1/2") => Ok(1),
        Some("1-0") => Ok(if first_white { 2 } else { 0 }),
        Some("0-1") => Ok(if first_white { 0 } else { 2 }),
        other => {
            Err(format!("a game's result {} is not 1-0, 0-1 or 1/2-1/2", other.unwrap_or("<NULL>")))
        }
    };
    Ok(Game { engines, half_points, termination: text("termination") })
}

/// Whether a string or a key anywhere in `v` holds U+0000.
fn has_nul(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains('\0'),
        Value::Array(a) => a.iter().any(has_nul),
        Value::Object(m) => m.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        _ => false,
    }
}

/// `t` as PostgreSQL's boolean input reads it: surrounding whitespace ignored, any case, `true`,
/// `yes`, `on`, `1`, `false`, `no`, `off`, `0` or a prefix of one that names one only (`o`
/// does not); `None` for anything else.
fn pg_bool(t: &str) -> Option<bool> {
    let v = t.trim_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']).to_ascii_lowercase();
    let prefix = |word: &str, shortest: usize| v.len() >= shortest && word.starts_with(&v);
    if prefix("true", 1) || prefix("yes", 1) || prefix("on", 2) || v == "1" {
        Some(true)
    } else if prefix("false", 1) || prefix("no", 1) || prefix("off", 2) || v == "0" {
        Some(false)
    } else {
        None
    }
}

/// The pair's addition to the worker's tallies (ll, ld, dd, wd, ww, wins, draws, losses,
/// crashes, time_losses) when both records were read with a result and a termination.
fn addition(games: &[Result<Game, String>; 2]) -> Option<[i64; 10]> {
    let mut add = [0; 10];
    let mut bin = 0;
    for g in games {
        let g = g.as_ref().ok()?;
        let half = *g.half_points.as_ref().ok()?;
        let termination = g.termination.as_deref()?;
        bin += half;
        add[7 - half as usize] += 1;
        add[8] += i64::from(matches!(termination, "crash" | "stall" | "disconnect"));
        add[9] += i64::from(termination == "time-forfeit");
    }
    add[bin as usize] = 1;
    Some(add)
}

/// The records' checks in the order `fleet_report` made them, game 0 then game 1: read, played
/// by the pairing's engines (`engines_ok`, compared by [`REPORT`]), a result; then each with a
/// termination. `Err`: the first that fails.
fn checked(games: &[Result<Game, String>; 2], engines_ok: [bool; 2]) -> Result<(), String> {
    for (n, (g, engines)) in games.iter().zip(engines_ok).enumerate() {
        let g = g.as_ref().map_err(Clone::clone)?;
        if !engines {
            return Err(format!(
                "game {} of the report is not played by the pairing's engines",
                n + 1
            ));
        }
        g.half_points.as_ref().map_err(Clone::clone)?;
    }
    for (n, g) in games.iter().enumerate() {
        if g.as_ref().is_ok_and(|g| g.termination.is_none()) {
            // The function failed here on the tallies' NOT NULL crashes (its count of the
            // termination was NULL): a record with no termination was never stored.
            return Err(format!("game {} of the report has no termination", n + 1));
        }
    }
    Ok(())
}

/// A report replayed for a pair stored already under the same worker and lease token (its
/// first answer was lost on the way back): the answer a stored report gives, the counts as
/// they are now; `None` when the pair is not stored under this worker and token. Called after
/// [`report`] refused the replay, which it does only once it checked the worker's secret.
pub async fn replayed(
    db: &tokio_postgres::Client,
    w: &WorkerId,
    r: &PairReport<'_>,
    all: bool,
) -> Result<Option<Reported>> {
    let stored = rows(
        db,
        "SELECT 1 AS one FROM pairs WHERE run_id = $1 AND pairing = $2 AND pair = $3 \
           AND state = 'done' AND token = $4 AND worker_id = $5",
        &[
            (&r.run_id, Type::INT8),
            (&r.pairing, Type::INT4),
            (&r.pair, Type::INT4),
            (&r.token, Type::INT8),
            (&w.id, Type::INT8),
        ],
    )
    .await
    .context("cannot read the pair")?;
    if stored.is_empty() {
        return Ok(None);
    }
    let only = (!all).then_some(r.pairing);
    let counts = super::read::pairing_counts(db, r.run_id, only).await?;
    let open = super::read::has_open_pairs(db, r.run_id).await?;
    Ok(Some(Reported::Stored { counts, open, settled: None }))
}

/// A decision on a run ([`super::settle`]): the run's state after it and the pairings it stopped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settled {
    /// The run's state after (`active`, `decided`, `complete`, ...).
    pub state: String,
    /// Pairings stopped by this decision.
    pub stops: Vec<Stop>,
}
