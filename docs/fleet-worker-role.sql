-- Least-privilege roles for the fleet's PostgreSQL database (see docs/guide/fleet-how-it-works.md,
-- "Who may do what").
--
-- Since schema version 6 only `runner serve` speaks to the database, as the role that owns the
-- tables, and people and workers speak to the server; of these roles only fleet_reader
-- (dashboards) is still of use, and the others only while runners of schema version 5 or
-- earlier still connect during an upgrade. After `runner db init --contract` (schema version 7)
-- the functions granted below are gone and this file no longer applies as a whole: make
-- fleet_reader alone (its part below, without the EXECUTE grants).
--
--   fleet_owner      owns the tables and the functions: runs `runner db init` (DDL). An
--                    administrator: approves runs, issues and revokes worker keys, may change
--                    any run (as are superusers and members of fleet_approver).
--   fleet_approver   a person who decides what workers may run: `runner approve`, `runner
--                    worker-key add|revoke|list`, cancel or purge any run; also a submitter.
--   fleet_submitter  a person who submits runs (`runner submit`; the run is theirs and waits for
--                    an approver), cancels, purges or deletes their own, and reads everything
--                    (`runner status`, `runner pull`) except worker keys' hashes and secrets.
--   fleet_worker     what `runner worker` of schema version 5 or earlier needs: no write
--                    privilege on any table. It calls the worker functions (which a runner of
--                    this version no longer calls: fleet_register, fleet_claim, fleet_heartbeat,
--                    fleet_release, fleet_report, fleet_settle, fleet_refuse, fleet_incident,
--                    fleet_iteration, fleet_worker_stopped, and in version 4
--                    fleet_engine_loaded), which accept a report only for a
--                    pair leased to the calling worker, whose key an approver issued, and read
--                    the runs, pairings and pairs (no games, no keys).
--   fleet_reader     read-only: `runner serve`, status pages and dashboards (reads runs, games,
--                    workers; no keys' hashes, no worker secrets, no function that writes).
--
-- Every contributor's worker connects as fleet_worker (or a role that is a member of it) and
-- identifies itself with its own key (`runner worker-key add NAME`, given to the machine as
-- RUNNER_WORKER_KEY or `runner worker --key-file`): a bad machine is named by its key, revoked,
-- and its pairs played again (`runner purge RUN --worker NAME`).
--
-- Connections: fleet_worker gets a connection limit below max_connections (here 80 of the
-- default 100), so that a crowd of workers never locks out the people who run status or cancel.
-- Raise both together for a larger fleet, or put workers behind PgBouncer
-- (docs/guide/fleet-operator.md).
--
-- The roles are created without a password: set one yourself, never in a file under version
-- control (`\password fleet_worker` in psql, or ALTER ROLE ... PASSWORD from a secret store).
--
-- Order (as a superuser, or a role with CREATEROLE that is a member of fleet_owner):
--   1. psql -d postgres -c 'CREATE ROLE fleet_owner LOGIN' \
--           -c 'CREATE DATABASE fleet OWNER fleet_owner'
--   2. psql -d fleet -f docs/fleet-worker-role.sql        (creates the other roles)
--   3. runner db init --db postgresql://fleet_owner@HOST/fleet
--   4. psql -d fleet -f docs/fleet-worker-role.sql        (grants on the tables, now they exist)
--   5. GRANT fleet_submitter TO alice; GRANT fleet_approver TO bob;   (people's own roles)
-- The script can be run any number of times; run step 4 again after a `runner db init` that
-- migrated the schema to a new version (new tables or functions get their grants then).

\set ON_ERROR_STOP on

SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fleet_owner') AS need_owner \gset
\if :need_owner
CREATE ROLE fleet_owner LOGIN;
\endif
SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fleet_worker') AS need_worker \gset
\if :need_worker
CREATE ROLE fleet_worker LOGIN;
\endif
SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fleet_submitter') AS need_submitter
\gset
\if :need_submitter
CREATE ROLE fleet_submitter LOGIN;
\endif
SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fleet_approver') AS need_approver
\gset
\if :need_approver
CREATE ROLE fleet_approver LOGIN;
\endif
SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fleet_reader') AS need_reader
\gset
\if :need_reader
CREATE ROLE fleet_reader LOGIN;
\endif
GRANT fleet_submitter TO fleet_approver;
ALTER ROLE fleet_worker CONNECTION LIMIT 80;

-- Nobody but the owner creates objects in the schema (PostgreSQL 15 and later already revoke
-- CREATE from PUBLIC; older versions do not).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO fleet_owner;
GRANT USAGE ON SCHEMA public TO fleet_worker, fleet_submitter, fleet_reader;
SELECT format('GRANT CONNECT ON DATABASE %I TO fleet_owner, fleet_worker, fleet_submitter, '
              'fleet_approver, fleet_reader', current_database()) \gexec

SELECT to_regclass('public.worker_keys') IS NOT NULL AS have_tables \gset
\if :have_tables

-- Start from nothing on every fleet table and function, then grant what each role uses.
REVOKE ALL ON fleet_schema, runs, pairings, tallies, workers, pairs, games, tune_state, tune_steps,
    worker_keys, refusals, incidents
    FROM PUBLIC, fleet_worker, fleet_submitter, fleet_reader;
REVOKE ALL ON SEQUENCE runs_id_seq, workers_id_seq, games_id_seq, lease_tokens,
    worker_keys_id_seq, incidents_id_seq
    FROM PUBLIC, fleet_worker, fleet_submitter, fleet_reader;
SELECT format('REVOKE ALL ON FUNCTION %s FROM PUBLIC, fleet_worker, fleet_submitter, '
              'fleet_approver, fleet_reader', p.oid::regprocedure)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proname LIKE 'fleet\_%' AND p.prosecdef \gexec

-- Everyone: the schema version check every command makes first.
GRANT SELECT ON fleet_schema TO fleet_worker, fleet_submitter, fleet_reader;
GRANT SELECT ON fleet_migrations TO fleet_worker, fleet_submitter, fleet_reader;

-- ---------------------------------------------------------------------------- fleet_worker
-- Reads: the runs it plays (their submissions), pairings, the pairs (outstanding work), its own
-- key's refusals. Writes: only through the functions.
GRANT SELECT ON runs, pairings, pairs, refusals TO fleet_worker;
GRANT SELECT (id, key_id) ON workers TO fleet_worker;
SELECT format('GRANT EXECUTE ON FUNCTION %s TO fleet_worker', p.oid::regprocedure)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proname IN ('fleet_register', 'fleet_worker_stopped',
       'fleet_claim', 'fleet_heartbeat', 'fleet_release', 'fleet_refuse', 'fleet_incident',
       'fleet_report', 'fleet_iteration', 'fleet_settle') \gexec

-- ------------------------------------------------------------ fleet_submitter, fleet_reader
-- Read everything but the keys' hashes and the workers' secrets.
GRANT SELECT ON runs, pairings, tallies, pairs, games, tune_state, tune_steps, refusals,
    incidents TO fleet_submitter, fleet_reader;
GRANT SELECT (id, host, pid, concurrency, lease_secs, started_at, heartbeat_at, stopped_at,
    key_id, version, cpu, cores) ON workers TO fleet_submitter, fleet_reader;
GRANT SELECT (id, name, created_by, created_at, revoked_at) ON worker_keys
    TO fleet_submitter, fleet_reader;
-- Submit (the run is the caller's), cancel, purge, modify and delete (the functions check the
-- owner; a priority above 0 needs an approver), ask for a decision after a purge, note a pull
-- (a reader's pull is not noted).
SELECT format('GRANT EXECUTE ON FUNCTION %s TO fleet_submitter', p.oid::regprocedure)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proname IN ('fleet_submit', 'fleet_cancel', 'fleet_purge',
       'fleet_settle_run', 'fleet_is_admin', 'fleet_may_change', 'fleet_approve',
       'fleet_delete', 'fleet_pulled', 'fleet_modify') \gexec
-- (fleet_approve checks the caller itself: a submitter is told that only an approver approves.)

-- ------------------------------------------------------------------------- fleet_approver
SELECT format('GRANT EXECUTE ON FUNCTION %s TO fleet_approver', p.oid::regprocedure)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proname IN ('fleet_approve', 'fleet_key_add',
       'fleet_key_revoke', 'fleet_keys') \gexec

-- ----------------------------------------------------------------------------- artifacts
-- Engine binaries and sources: tables through the functions only. Workers fetch chunks of
-- approved, active runs' artifacts; submitters upload, seal and name their run's; approvers
-- delete those no run names (`runner gc`).
REVOKE ALL ON artifacts, artifact_chunks, run_artifacts
    FROM PUBLIC, fleet_worker, fleet_submitter, fleet_reader;
GRANT SELECT (sha, size, chunks, kind, sealed, created_by, created_at) ON artifacts
    TO fleet_submitter, fleet_reader;
GRANT SELECT ON run_artifacts TO fleet_submitter, fleet_reader;
SELECT format('GRANT EXECUTE ON FUNCTION %s TO fleet_worker', p.oid::regprocedure)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proname IN ('fleet_worker_artifacts', 'fleet_artifact_chunk')
\gexec
SELECT format('GRANT EXECUTE ON FUNCTION %s TO fleet_submitter', p.oid::regprocedure)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proname IN ('fleet_artifact_sealed', 'fleet_artifact_put',
       'fleet_artifact_seal', 'fleet_run_artifacts') \gexec
SELECT format('GRANT EXECUTE ON FUNCTION %s TO fleet_approver', p.oid::regprocedure)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proname IN ('fleet_gc_artifacts') \gexec

-- ------------------------------------------------------------- builds (schema version 4)
-- Workers record the engines they built and benched through fleet_engine_loaded only;
-- everyone else reads them (`runner status`, `runner workers`).
SELECT to_regclass('public.engine_loads') IS NOT NULL AS have_builds \gset
\if :have_builds
REVOKE ALL ON engine_loads FROM PUBLIC, fleet_worker, fleet_submitter, fleet_reader;
REVOKE ALL ON SEQUENCE engine_loads_id_seq FROM PUBLIC, fleet_worker, fleet_submitter, fleet_reader;
GRANT SELECT ON engine_loads TO fleet_submitter, fleet_reader;
SELECT format('GRANT EXECUTE ON FUNCTION %s TO fleet_worker', p.oid::regprocedure)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proname IN ('fleet_engine_loaded') \gexec
\endif

\endif
