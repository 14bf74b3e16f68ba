//! The fleet's tables and their versions. `runner db init` applies the migrations this binary
//! knows, each in its own transaction, under an advisory lock (two inits at once are safe);
//! every other fleet command checks the version first and refuses a database of another one.
//!
//! Version 1: the tables. Version 2 (`sql/v2_trust.sql`, `sql/judge.sql`): who may do what:
//! worker keys, run owners and approval, refusals and incidents, and the functions through
//! which workers write and the database decides. Version 3: a fleet many runs share: what each
//! worker is and did (`sql/v3_workers.sql`), priorities and fair shares (`sql/v3_share.sql`),
//! engines delivered as artifacts (`sql/v3_artifacts.sql`). Version 4 (`sql/v4_builds.sql`):
//! engines built from source on the workers, and each worker's builds and bench speeds.
//! Version 5 (`sql/v5_turns.sql`, `sql/v5_loads.sql`): runs take turns when they outnumber the
//! workers' slots; a worker records engine loads only for a run it holds a lease on.
//! Version 6 (`sql/v6_people.sql`): users, their API tokens, web sessions and the audit log,
//! for the server that holds the rules; only new tables, so a version-5 server still running
//! keeps working. From version 6 on, `fleet_schema.oldest` names the oldest binary version
//! that may still use the database ([`OLDEST`]): such a binary accepts a newer schema.
//! Version 7 (`sql/v7_contract.sql`): every function of versions 2 to 6 dropped, once no runner
//! that calls them is connected (`runner db init --contract`, [`contract`]). This binary holds
//! the rules in Rust and calls none of them, so it runs on version 6 ([`EXPANDED`]) as well as
//! 7. A plain `runner db init` makes a new database at 7 at once (nothing older can be using
//! it), and migrates an existing one only to 6, which a runner of version 6 still running is
//! safe on (a rolling deploy); `--contract` takes it to 7 once they are gone.
//!
//! Every migration is checksummed: `fleet_migrations` holds the SHA-256 of each migration's text
//! as applied, and every command (and the server) compares it with its own before it touches
//! the database, so a runner built from other migration files than the ones that made the
//! database is refused in one line instead of running on tables it does not know. A database
//! migrated before the checksums were kept gets its rows at the next `runner db init`, marked
//! `recorded_later` (what was applied then cannot be known; the tables must match the binary's
//! version, as they had to before).
//!
//! PostgreSQL 13 or newer (`gen_random_uuid`).

use anyhow::{Context, Result, bail};
use tokio_postgres::Client;

/// The schema version this binary reads and writes.
pub const VERSION: i32 = 7;

/// The schema version `runner db init` migrates to, and the oldest this binary runs on: from
/// it to [`VERSION`] only functions this binary never calls are dropped.
pub const EXPANDED: i32 = 6;

/// The oldest binary version that may use a database at [`EXPANDED`]: version 6 only adds
/// tables, so a version-5 binary still works on it.
pub const OLDEST: i32 = 5;

/// The oldest binary version that may use a database at version 7: the functions earlier
/// binaries call are gone.
pub const OLDEST_CONTRACTED: i32 = 7;

/// The name this binary's database connections carry (`application_name`), with the schema
/// version it reads, so that a later contract step sees which runners are still connected.
/// Runners of schema version 6 and earlier say `mpc-runner` alone.
pub fn application_name() -> String {
    format!("mpc-runner schema {VERSION}")
}

/// Advisory lock key held while migrating ("mpcfleet" as bytes).
const MIGRATION_LOCK: i64 = 0x6d70_6366_6c65_6574;

/// Migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5, V6, V7];

/// Version 7: the functions of versions 2 to 6 dropped ([`contract`]).
const V7: &str = include_str!("sql/v7_contract.sql");

/// Version 6: people (users, API tokens, web sessions) and the audit log.
const V6: &str = include_str!("sql/v6_people.sql");

/// Version 5: runs take turns when they outnumber the slots (a claim's ties go to the run
/// served least recently); a worker records engine loads only for a run it holds a lease on.
const V5: &str = concat!(include_str!("sql/v5_turns.sql"), "\n", include_str!("sql/v5_loads.sql"));

/// Version 4: builds from source and bench speeds per worker; then PUBLIC loses the new
/// function too.
const V4: &str =
    concat!(include_str!("sql/v4_builds.sql"), "\n", include_str!("sql/v2_privileges.sql"));

/// Version 3: workers seen, shares, artifacts; then PUBLIC loses the new functions too (the
/// roles of that time got their grants from a script beside the schema, not from it).
const V3: &str = concat!(
    include_str!("sql/v3_workers.sql"),
    "\n",
    include_str!("sql/v3_share.sql"),
    "\n",
    include_str!("sql/v3_artifacts.sql"),
    "\n",
    include_str!("sql/v2_privileges.sql")
);

/// Version 2: the trust model (see the module's doc), then what workers may no longer do.
const V2: &str = concat!(
    include_str!("sql/judge.sql"),
    "\n",
    include_str!("sql/v2_trust.sql"),
    "\n",
    include_str!("sql/v2_privileges.sql")
);

const V1: &str = r#"
CREATE TABLE runs (
    id           bigserial PRIMARY KEY,
    kind         text NOT NULL,
    state        text NOT NULL DEFAULT 'active'
                 CHECK (state IN ('active', 'decided', 'complete', 'cancelled')),
    stop_reason  text,
    submission   jsonb NOT NULL,
    plan_hash    text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz
);
CREATE TABLE pairings (
    run_id   bigint NOT NULL REFERENCES runs ON DELETE CASCADE,
    pairing  integer NOT NULL,
    label    text NOT NULL,
    active   boolean NOT NULL DEFAULT true,
    verdict  text,
    why      text,
    PRIMARY KEY (run_id, pairing)
);
-- A pairing's counts, one row per worker (so reports of different workers never wait on one
-- row): the first engine's pair results LL, LD, DD (or WL), WD, WW, and its game results.
CREATE TABLE tallies (
    run_id     bigint NOT NULL,
    pairing    integer NOT NULL,
    worker_id  bigint NOT NULL,
    ll bigint NOT NULL DEFAULT 0, ld bigint NOT NULL DEFAULT 0, dd bigint NOT NULL DEFAULT 0,
    wd bigint NOT NULL DEFAULT 0, ww bigint NOT NULL DEFAULT 0,
    wins bigint NOT NULL DEFAULT 0, draws bigint NOT NULL DEFAULT 0,
    losses bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, pairing, worker_id),
    FOREIGN KEY (run_id, pairing) REFERENCES pairings ON DELETE CASCADE
);
CREATE TABLE workers (
    id            bigserial PRIMARY KEY,
    host          text NOT NULL,
    pid           integer NOT NULL,
    concurrency   integer NOT NULL,
    lease_secs    double precision NOT NULL,
    started_at    timestamptz NOT NULL DEFAULT now(),
    heartbeat_at  timestamptz NOT NULL DEFAULT now(),
    stopped_at    timestamptz
);
CREATE SEQUENCE lease_tokens;
CREATE TABLE pairs (
    run_id       bigint NOT NULL REFERENCES runs ON DELETE CASCADE,
    seq          integer NOT NULL,
    pairing      integer NOT NULL,
    pair         integer NOT NULL,
    opening      integer NOT NULL,
    state        text NOT NULL DEFAULT 'pending'
                 CHECK (state IN ('pending', 'leased', 'done', 'skipped')),
    token        bigint,
    worker_id    bigint REFERENCES workers ON DELETE SET NULL,
    lease_until  timestamptz,
    claimed_at   timestamptz,
    attempts     integer NOT NULL DEFAULT 0,
    -- A tuning iteration's values, logged when first handed out, reused when handed out again.
    spsa         jsonb,
    PRIMARY KEY (run_id, pairing, pair),
    UNIQUE (run_id, seq)
);
-- Claims: pending pairs in schedule order, and leases by expiry (separate, so that a claim
-- does not walk past every live lease of the fleet to reach the next pending pair).
CREATE INDEX pairs_pending ON pairs (run_id, seq) WHERE state = 'pending';
CREATE INDEX pairs_lease ON pairs (run_id, lease_until) WHERE state = 'leased';
CREATE INDEX pairs_worker ON pairs (worker_id) WHERE state = 'leased';
CREATE TABLE games (
    id       bigserial PRIMARY KEY,
    run_id   bigint NOT NULL REFERENCES runs ON DELETE CASCADE,
    pairing  integer NOT NULL,
    pair     integer NOT NULL,
    game     smallint NOT NULL CHECK (game IN (0, 1)),
    worker_id bigint,
    reported_at timestamptz NOT NULL DEFAULT now(),
    -- json, not jsonb: stored as sent (no conversion to the binary form, which costs a
    -- quarter of the server's time per report and compresses worse); only read back whole.
    record   json NOT NULL,
    UNIQUE (run_id, pairing, pair, game)
);
CREATE TABLE tune_state (
    run_id      bigint PRIMARY KEY REFERENCES runs ON DELETE CASCADE,
    theta       jsonb NOT NULL,
    -- Iterations handed out so far (the next k).
    next_k      bigint NOT NULL DEFAULT 0,
    -- Iterations whose result was applied.
    applied     bigint NOT NULL DEFAULT 0
);
CREATE TABLE tune_steps (
    run_id   bigint NOT NULL REFERENCES runs ON DELETE CASCADE,
    ord      bigint NOT NULL,
    k        bigint NOT NULL,
    step     jsonb NOT NULL,
    PRIMARY KEY (run_id, ord)
);
"#;

/// The SHA-256 (hex) of the migration to version `v` (1-based), as this binary holds it.
pub fn checksum(v: i32) -> Option<String> {
    let i = usize::try_from(v).ok()?.checked_sub(1)?;
    MIGRATIONS.get(i).map(|sql| crate::hex::sha256_hex(sql.as_bytes()))
}

/// The checksums table: created by `runner db init` beside the version (a table no older
/// runner reads, so a server of the same version still running is not disturbed).
const CHECKSUMS_TABLE: &str = "CREATE TABLE IF NOT EXISTS fleet_migrations (
    version         integer PRIMARY KEY,
    sha256          text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    applied_at      timestamptz NOT NULL DEFAULT now(),
    recorded_later  boolean NOT NULL DEFAULT false
)";

/// Refuses a database whose recorded migrations (up to `upto`) differ from this binary's. A
/// role that may not read them (a worker's role of schema version 5 and earlier) is not
/// refused for that: the server and the operator's commands check.
async fn check_checksums(db: &Client, upto: i32) -> Result<()> {
    let exists: bool = db
        .query_one(
            "SELECT CASE WHEN to_regclass('fleet_migrations') IS NULL THEN false \
             ELSE has_table_privilege('fleet_migrations', 'SELECT') END",
            &[],
        )
        .await
        .context("cannot read the migrations' checksums")?
        .get(0);
    if !exists {
        return Ok(());
    }
    let rows = db
        .query(
            "SELECT version, sha256 FROM fleet_migrations WHERE version <= $1 ORDER BY 1",
            &[&upto],
        )
        .await
        .context("cannot read the migrations' checksums")?;
    for r in rows {
        let (v, applied): (i32, String) = (r.get(0), r.get(1));
        let Some(ours) = checksum(v) else { continue };
        if ours != applied {
            bail!(
                "the migration to version {v} that made this database (sha256 {}) is not this \
                 runner's (sha256 {}): it was built from other migration files; use the runner \
                 that made the database, or one whose migrations match",
                applied.get(..12).unwrap_or(&applied),
                ours.get(..12).unwrap_or(&ours)
            );
        }
    }
    Ok(())
}

/// The version a database is at (0: no fleet tables yet).
pub async fn current_version(db: &Client) -> Result<i32> {
    let exists: bool = db
        .query_one("SELECT to_regclass('fleet_schema') IS NOT NULL", &[])
        .await
        .context("cannot read the schema version")?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let rows = db
        .query("SELECT version FROM fleet_schema", &[])
        .await
        .context("cannot read the schema version")?;
    let found: Vec<Option<i32>> =
        rows.iter().map(|r| r.try_get(0)).collect::<Result<_, _>>().context("schema version")?;
    match found.as_slice() {
        [] => Ok(0),
        [Some(v)] if (0..=VERSION.max(*v)).contains(v) => Ok(*v),
        other => bail!(
            "the fleet_schema table holds {}, not a version a runner wrote: was it edited by \
             hand? Put back the version the tables are at (`UPDATE fleet_schema SET version = \
             N`, one row) and run `runner db init` again",
            describe(other)
        ),
    }
}

fn describe(found: &[Option<i32>]) -> String {
    let v: Vec<String> =
        found.iter().map(|x| x.map_or_else(|| "NULL".to_string(), |v| v.to_string())).collect();
    if v.len() == 1 { v[0].clone() } else { format!("{} rows ({})", v.len(), v.join(", ")) }
}

/// Creates the schema at [`VERSION`] in a database that has none (no runner of an earlier
/// version can be using it, so nothing needs the functions [`contract`] drops), or migrates an
/// existing one to [`EXPANDED`] (a database at 7 stays there); returns the version it was at.
pub async fn init(db: &mut Client) -> Result<i32> {
    locked(db, Target::NewAtLatest).await
}

/// Creates or migrates the schema to [`EXPANDED`] only, also in an empty database: what a
/// runner of the version before needs (the tests of its functions use this).
pub async fn expand(db: &mut Client) -> Result<i32> {
    locked(db, Target::Version(EXPANDED)).await
}

/// [`init`], then version 7 ([`VERSION`]): every function of versions 2 to 6 dropped. Refused,
/// with nothing dropped, while a runner of an earlier schema version is connected to the
/// database (by its connections' `application_name`, see [`application_name`]): it calls those
/// functions. Returns the version the database was at.
pub async fn contract(db: &mut Client) -> Result<i32> {
    locked(db, Target::Version(VERSION)).await
}

/// The version a migration goes to.
#[derive(Clone, Copy)]
enum Target {
    Version(i32),
    /// [`VERSION`] for a database with no fleet schema yet, else [`EXPANDED`].
    NewAtLatest,
}

/// Migrates to `target` under the migration lock.
async fn locked(db: &mut Client, target: Target) -> Result<i32> {
    db.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK]).await?;
    let res = migrate(db, target).await;
    let _ = db.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]).await;
    res
}

/// The connections of runners older than [`VERSION`] to this database, one line each.
async fn older_runners(db: &Client) -> Result<Vec<String>> {
    let rows = db
        .query(
            "SELECT pid, application_name, coalesce(client_addr::text, 'local') AS client, \
                    usename::text AS role, to_char(backend_start, 'YYYY-MM-DD HH24:MI:SS') AS since \
               FROM pg_stat_activity \
              WHERE datname = current_database() AND pid <> pg_backend_pid() \
                AND application_name LIKE 'mpc-runner%' ORDER BY pid",
            &[],
        )
        .await
        .context("cannot read the database's connections")?;
    let mut out = Vec::new();
    for r in rows {
        let name: String = r.try_get("application_name")?;
        let schema = name.strip_prefix("mpc-runner schema ").and_then(|v| v.parse::<i32>().ok());
        if name == "mpc-runner" || schema.is_some_and(|v| v < VERSION) {
            out.push(format!(
                "pid {} ({name}, role {}, from {}, since {})",
                r.try_get::<_, i32>("pid")?,
                r.try_get::<_, String>("role")?,
                r.try_get::<_, String>("client")?,
                r.try_get::<_, String>("since")?
            ));
        }
    }
    Ok(out)
}

async fn migrate(db: &mut Client, target: Target) -> Result<i32> {
    db.batch_execute("CREATE TABLE IF NOT EXISTS fleet_schema (version integer NOT NULL)")
        .await
        .context("cannot create the schema table")?;
    let was = current_version(db).await?;
    if was > VERSION {
        bail!("{}", newer(was));
    }
    let target = match target {
        Target::Version(v) => v,
        Target::NewAtLatest if was == 0 => VERSION,
        Target::NewAtLatest => EXPANDED,
    };
    // A new database has no functions to drop, and nothing of an earlier version can be using
    // its (absent) tables: no connection is asked about.
    if target == VERSION && (1..VERSION).contains(&was) {
        let older = older_runners(db).await?;
        if !older.is_empty() {
            bail!(
                "{} runner connection(s) of an earlier version use this database and call the \
                 functions the contract step drops: {}. Upgrade or stop them, then run `runner \
                 db init --contract` again (nothing was dropped)",
                older.len(),
                older.join("; ")
            );
        }
    }
    check_checksums(db, was).await?;
    db.batch_execute(CHECKSUMS_TABLE).await.context("cannot create the checksums table")?;
    // Versions applied before checksums were kept: recorded now, and marked so.
    for v in 1..=was {
        db.execute(
            "INSERT INTO fleet_migrations (version, sha256, recorded_later) VALUES ($1, $2, true) \
             ON CONFLICT (version) DO NOTHING",
            &[&v, &checksum(v).unwrap_or_default()],
        )
        .await
        .context("cannot record the migrations' checksums")?;
    }
    let was_usize = usize::try_from(was).unwrap_or(0);
    let upto = usize::try_from(target).unwrap_or(0);
    for (i, sql) in MIGRATIONS.iter().enumerate().take(upto).skip(was_usize) {
        let tx = db.transaction().await?;
        tx.batch_execute(sql).await.with_context(|| format!("migration to version {}", i + 1))?;
        tx.execute("DELETE FROM fleet_schema", &[]).await?;
        let v = i as i32 + 1;
        tx.execute("INSERT INTO fleet_schema (version) VALUES ($1)", &[&v]).await?;
        tx.execute(
            "INSERT INTO fleet_migrations (version, sha256) VALUES ($1, $2) \
             ON CONFLICT (version) DO UPDATE SET sha256 = EXCLUDED.sha256, applied_at = now(), \
             recorded_later = false",
            &[&v, &checksum(v).unwrap_or_default()],
        )
        .await?;
        if v >= EXPANDED {
            let oldest = if v >= VERSION { OLDEST_CONTRACTED } else { OLDEST };
            tx.batch_execute("ALTER TABLE fleet_schema ADD COLUMN IF NOT EXISTS oldest integer")
                .await?;
            tx.execute("UPDATE fleet_schema SET oldest = $1", &[&oldest]).await?;
        }
        tx.commit().await?;
    }
    Ok(was)
}

/// The oldest binary version a newer schema still serves (`fleet_schema.oldest`), if it says.
async fn oldest(db: &Client) -> Result<Option<i32>> {
    let has: bool = db
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns \
              WHERE table_name = 'fleet_schema' AND column_name = 'oldest')",
            &[],
        )
        .await
        .context("cannot read the schema version")?
        .get(0);
    if !has {
        return Ok(None);
    }
    let row = db
        .query_opt("SELECT oldest FROM fleet_schema", &[])
        .await
        .context("cannot read the schema version")?;
    Ok(row.and_then(|r| r.get::<_, Option<i32>>(0)))
}

fn newer(v: i32) -> String {
    format!(
        "the database's fleet schema is version {v}, newer than this runner's ({VERSION}): \
         use a newer runner"
    )
}

/// Refuses a database whose schema is not this binary's.
pub async fn check(db: &Client) -> Result<()> {
    let v = current_version(db).await?;
    check_checksums(db, v.min(VERSION)).await?;
    match v {
        0 => bail!("the database has no fleet tables: run `runner db init --db URL` first"),
        v if (EXPANDED..=VERSION).contains(&v) => Ok(()),
        v if v > VERSION && oldest(db).await?.is_some_and(|o| o <= VERSION) => Ok(()),
        v if v > VERSION => bail!("{}", newer(v)),
        v => bail!(
            "the database's fleet schema is version {v}, older than this runner's ({EXPANDED}): \
             run `runner db init --db URL` to migrate it"
        ),
    }
}
