//! A tuning run's theta on the server: a tuning pair's iteration, started from the current
//! theta and the pair's draws when the worker first asks for it ([`iteration`]), and theta
//! moved by a finished pair's result (for [`super::report`]). The arithmetic is Rust's own
//! (`tune::spsa`: [`begin_within`], [`update_within`]), on the numbers as PostgreSQL reads them
//! from the stored JSON (what `fleet_spsa_begin` and `fleet_spsa_update` of `sql/judge.sql`
//! computed in the database); the JSON stored is built as those functions built it.
//!
//! Each write is one statement that checks, with `tune_state`'s row locked `FOR UPDATE`, that
//! theta is still the one its values were computed from (its count `applied` of the results
//! that moved it); when another pair's result moved it in between, nothing is written and the
//! values are computed again from the new theta.

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Row};

use super::lease::{Claim, Refused, WorkerId, known};
use super::report::PairReport;
use super::{THETA_TRIES, one, opt, pair_call};
use crate::tune::spsa::{Draws, Limits, begin_within, update_within};

/// What starting or applying an iteration reads of tuning pair (`$1`, `$2`, `$3`): theta and
/// its count `applied`, each parameter's limits (`runs.judge->'spsa'->'params'`, a missing
/// bound none), the iteration the pair plays (`it_*`: empty before it started) and its draws
/// (`draws_k` as text, and empty lists when it has none), every number read by PostgreSQL.
const TUNING: &str = concat!(
    "WITH params AS (
    SELECT e, o FROM runs r, jsonb_array_elements(r.judge->'spsa'->'params') WITH ORDINALITY a (e, o)
     WHERE r.id = $1)
SELECT s.applied, ",
    floats!("s.theta"),
    " AS theta,
       ARRAY(SELECT coalesce((e->>'min')::float8, '-Infinity') FROM params ORDER BY o) AS mins,
       ARRAY(SELECT coalesce((e->>'max')::float8, 'Infinity') FROM params ORDER BY o) AS maxs,
       ARRAY(SELECT coalesce((e->>'integer')::boolean, false) FROM params ORDER BY o) AS integers,
       ",
    floats!("p.spsa->'delta'"),
    " AS it_delta, ",
    floats!("p.spsa->'c_k'"),
    " AS it_c_k, ",
    floats!("p.spsa->'a_k'"),
    " AS it_a_k,
       p.draws->>'k' AS draws_k, ",
    floats!("p.draws->'delta'"),
    " AS delta, ",
    floats!("p.draws->'c_k'"),
    " AS c_k, ",
    floats!("p.draws->'a_k'"),
    " AS a_k,
       ARRAY(SELECT CASE WHEN jsonb_typeof(u) = 'number' THEN u::text::float8 END
               FROM jsonb_array_elements(p.draws->'round_plus') WITH ORDINALITY a (u, o)
              ORDER BY o) AS round_plus,
       ARRAY(SELECT CASE WHEN jsonb_typeof(u) = 'number' THEN u::text::float8 END
               FROM jsonb_array_elements(p.draws->'round_minus') WITH ORDINALITY a (u, o)
              ORDER BY o) AS round_minus
  FROM pairs p JOIN tune_state s ON s.run_id = p.run_id
 WHERE p.run_id = $1 AND p.pairing = $2 AND p.pair = $3"
);

/// A tuning pair as [`TUNING`] reads it: theta, its count of results, each parameter's limits,
/// and the row for the pair's own lists.
struct Tuning {
    applied: i64,
    theta: Vec<f64>,
    limits: Vec<Limits>,
    row: Row,
}

impl Tuning {
    async fn read(db: &Client, run: i64, pairing: i32, pair: i32) -> Result<Tuning> {
        let Some(row) =
            opt(db, TUNING, &[(&run, Type::INT8), (&pairing, Type::INT4), (&pair, Type::INT4)])
                .await
                .context("cannot read the tuning state")?
        else {
            bail!("run {run}: pair {}/{} has no tuning state", pairing, pair + 1);
        };
        let mins: Vec<f64> = row.try_get("mins")?;
        let maxs: Vec<f64> = row.try_get("maxs")?;
        let integers: Vec<bool> = row.try_get("integers")?;
        let limits = mins
            .iter()
            .zip(&maxs)
            .zip(&integers)
            .map(|((&min, &max), &integer)| Limits { min, max, integer })
            .collect();
        Ok(Tuning { applied: row.try_get("applied")?, theta: row.try_get("theta")?, limits, row })
    }

    /// A list of the pair's row, which must have one entry per parameter (else `Err`: `what`,
    /// in the SQL judge's words).
    fn list<T: for<'a> tokio_postgres::types::FromSql<'a>>(
        &self,
        column: &str,
        what: &str,
    ) -> Result<Vec<T>> {
        let v: Vec<T> = self.row.try_get(column)?;
        if v.len() != self.theta.len() || self.limits.len() != self.theta.len() {
            bail!("theta, params and {what} must have one entry per parameter");
        }
        Ok(v)
    }
}

/// Delta's entries as signs (what the runner draws: +1 or -1).
fn signs(delta: &[f64]) -> Result<Vec<i8>> {
    delta
        .iter()
        .map(|&d| match d {
            1.0 => Ok(1),
            -1.0 => Ok(-1),
            _ => bail!("a tuning delta of {d} is not +1 or -1"),
        })
        .collect()
}

/// Theta moved by a finished tuning pair's `result` (its first engine's pair score in half
/// points, minus 2) as `fleet_spsa_update` moved it, and the count `applied` of the theta it
/// moved from.
pub(super) async fn moved(db: &Client, r: &PairReport<'_>, result: f64) -> Result<(i64, Vec<f64>)> {
    let mut t = Tuning::read(db, r.run_id, r.pairing, r.pair).await?;
    let what = "the iteration";
    let delta = signs(&t.list::<f64>("it_delta", what)?)?;
    let (c_k, a_k) = (t.list::<f64>("it_c_k", what)?, t.list::<f64>("it_a_k", what)?);
    update_within(&t.limits, &mut t.theta, &delta, &c_k, &a_k, result);
    Ok((t.applied, t.theta))
}

/// A tuning pair's iteration started, one statement: the worker checked ([`me!`]), the pair
/// taken `FOR UPDATE` when it is leased to this worker under token `$6`; when it has draws and
/// no iteration yet, its run's `tune_state` taken `FOR UPDATE` and, if theta's count `applied`
/// is still `$7`, the iteration stored on the pair (`k`, theta `$8`, the draws' `delta`, plus
/// `$9`, minus `$10`, the draws' `c_k` and `a_k`, as `fleet_spsa_begin` built it) and the run's
/// next iteration raised past it. The answer: whether the pair is held, its iteration (stored
/// before or now) and whether it has draws. What `fleet_iteration` did.
const ITERATION: &str = concat!(
    "WITH ",
    me!(),
    ",
pair AS (
    SELECT p.spsa, p.draws IS NOT NULL AS drawn FROM pairs p
     WHERE p.run_id = $3 AND p.pairing = $4 AND p.pair = $5 AND p.token = $6
       AND p.worker_id = $1 AND p.state = 'leased' AND EXISTS (SELECT 1 FROM me)
       FOR UPDATE),
tune AS (
    SELECT s.applied FROM tune_state s
     WHERE s.run_id = $3 AND EXISTS (SELECT 1 FROM pair WHERE pair.spsa IS NULL AND pair.drawn)
       FOR UPDATE),
began AS (
    UPDATE pairs p SET spsa = jsonb_build_object('k', $5::bigint, 'theta', to_jsonb($8::float8[]),
           'delta', p.draws->'delta', 'plus', to_jsonb($9::float8[]),
           'minus', to_jsonb($10::float8[]), 'c_k', p.draws->'c_k', 'a_k', p.draws->'a_k')
     WHERE p.run_id = $3 AND p.pairing = $4 AND p.pair = $5 AND (SELECT applied FROM tune) = $7
    RETURNING p.spsa),
next AS (
    UPDATE tune_state s SET next_k = greatest(s.next_k, $5 + 1)
     WHERE s.run_id = $3 AND EXISTS (SELECT 1 FROM began)
    RETURNING 1)
SELECT EXISTS (SELECT 1 FROM me) AS known, EXISTS (SELECT 1 FROM pair) AS held,
       coalesce((SELECT spsa FROM pair), (SELECT spsa FROM began)) AS spsa,
       coalesce((SELECT drawn FROM pair), false) AS drawn"
);

/// An iteration to store: the count `applied` of the theta it starts from, theta, and the
/// values of its plus and minus sides.
type Start = (i64, Vec<f64>, Vec<f64>, Vec<f64>);

/// A tuning pair's iteration: the one logged on the pair, or when there is none yet, the one
/// its draws start from the current theta ([`begin_within`], what `fleet_spsa_begin`
/// computed), stored on it so that the pair handed out again plays the same values. `None`
/// when the pair is not leased to `w` under its token. `Err`: [`NotAuthorized`](super::lease::NotAuthorized) for a worker
/// whose secret or key does not hold, [`Refused::NoDraws`] for a pair with no draws.
pub async fn iteration(db: &Client, w: &WorkerId, c: &Claim) -> Result<Option<Value>> {
    let mut start: Option<Start> = None;
    for _ in 0..THETA_TRIES {
        let (applied, theta, plus, minus) = match &start {
            Some((a, t, p, m)) => (Some(*a), Some(t), Some(p), Some(m)),
            None => (None, None, None, None),
        };
        let params = pair_call(
            w,
            (&c.run_id, &c.pairing, &c.pair, &c.token),
            &[
                (&applied, Type::INT8),
                (&theta, Type::FLOAT8_ARRAY),
                (&plus, Type::FLOAT8_ARRAY),
                (&minus, Type::FLOAT8_ARRAY),
            ],
        );
        let row = one(db, ITERATION, &params).await.context("cannot read the tuning iteration")?;
        known(&row, w)?;
        if !row.try_get::<_, bool>("held")? {
            return Ok(None);
        }
        if let Some(it) = row.try_get::<_, Option<Value>>("spsa")? {
            return Ok(Some(it));
        }
        if !row.try_get::<_, bool>("drawn")? {
            return Err(anyhow::Error::new(Refused::NoDraws(c.run_id, c.pair))
                .context("cannot read the tuning iteration"));
        }
        start = Some(begin(db, c).await?);
    }
    bail!("run {}: theta moved at each of {THETA_TRIES} tries", c.run_id)
}

/// The iteration tuning pair `c`'s draws start from the current theta.
async fn begin(db: &Client, c: &Claim) -> Result<Start> {
    let t = Tuning::read(db, c.run_id, c.pairing, c.pair).await?;
    let drawn_for: Option<String> = t.row.try_get("draws_k")?;
    if drawn_for.as_deref().and_then(|k| k.trim().parse::<i64>().ok()) != Some(i64::from(c.pair)) {
        bail!(
            "the draws are of iteration {}, not {}",
            drawn_for.as_deref().unwrap_or("<NULL>"),
            c.pair
        );
    }
    let what = "draws";
    let draws = Draws {
        k: c.pair as u64,
        delta: signs(&t.list::<f64>("delta", what)?)?,
        round_plus: t.list("round_plus", what)?,
        round_minus: t.list("round_minus", what)?,
        c_k: t.list("c_k", what)?,
        a_k: t.list("a_k", what)?,
    };
    let it = begin_within(&t.limits, &draws, &t.theta);
    Ok((t.applied, it.theta, it.plus, it.minus))
}
