-- fleet_reader: a read-only PostgreSQL role for people who query the fleet's database
-- themselves (analysis, dashboards, a `runner serve --db` that serves the pages only). Nobody
-- else needs a database role: `runner serve` connects as the role that owns the tables, and
-- people and workers speak HTTP to it (docs/guide/fleet-how-it-works.md, "Who may do what").
--
-- fleet_reader reads runs, pairings, tallies, pairs, games, tuning steps, refusals, incidents,
-- workers, worker keys' names, artifacts' descriptions and engine loads; never a key's hash, a
-- worker's secret, an artifact's bytes, the people's tables (users, tokens, sessions, audit),
-- nor any function.
--
-- The role is created without a password: set one yourself, never in a file under version
-- control (`\password fleet_reader` in psql, or ALTER ROLE ... PASSWORD from a secret store).
--
-- Run it as a superuser or the tables' owner, after `runner db init`:
--   psql -d fleet -f docs/fleet-reader-role.sql
-- It can be run any number of times, and again after a `runner db init` that migrated the
-- schema (a table added since gets its grant then). Before the tables exist it only creates
-- the role. It grants no function, so it holds before and after `runner db init --contract`.

\set ON_ERROR_STOP on

SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fleet_reader') AS need_reader
\gset
\if :need_reader
CREATE ROLE fleet_reader LOGIN;
\endif

GRANT USAGE ON SCHEMA public TO fleet_reader;
SELECT format('GRANT CONNECT ON DATABASE %I TO fleet_reader', current_database()) \gexec

SELECT to_regclass('public.worker_keys') IS NOT NULL AS have_tables \gset
\if :have_tables

-- Only the tables' owner creates objects in the schema, never fleet_reader (PostgreSQL 15 and
-- later already revoke CREATE from PUBLIC; older versions do not).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
SELECT format('GRANT CREATE ON SCHEMA public TO %I', tableowner)
  FROM pg_tables WHERE schemaname = 'public' AND tablename = 'runs' \gexec

-- Start from nothing on every fleet table and the functions that write, then grant the reads.
REVOKE ALL ON fleet_schema, runs, pairings, tallies, workers, pairs, games, tune_state, tune_steps,
    worker_keys, refusals, incidents, artifacts, artifact_chunks, run_artifacts
    FROM PUBLIC, fleet_reader;
REVOKE ALL ON SEQUENCE runs_id_seq, workers_id_seq, games_id_seq, lease_tokens,
    worker_keys_id_seq, incidents_id_seq
    FROM PUBLIC, fleet_reader;
SELECT format('REVOKE ALL ON FUNCTION %s FROM PUBLIC, fleet_reader', p.oid::regprocedure)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proname LIKE 'fleet\_%' AND p.prosecdef \gexec

-- The schema version check every command makes first.
GRANT SELECT ON fleet_schema, fleet_migrations TO fleet_reader;
-- Everything but the keys' hashes, the workers' secrets and the artifacts' bytes.
GRANT SELECT ON runs, pairings, tallies, pairs, games, tune_state, tune_steps, refusals,
    incidents, run_artifacts TO fleet_reader;
GRANT SELECT (id, host, pid, concurrency, lease_secs, started_at, heartbeat_at, stopped_at,
    key_id, version, cpu, cores) ON workers TO fleet_reader;
GRANT SELECT (id, name, created_by, created_at, revoked_at) ON worker_keys TO fleet_reader;
GRANT SELECT (sha, size, chunks, kind, sealed, created_by, created_at) ON artifacts
    TO fleet_reader;

-- Builds and bench speeds (schema version 4 and later).
SELECT to_regclass('public.engine_loads') IS NOT NULL AS have_builds \gset
\if :have_builds
REVOKE ALL ON engine_loads FROM PUBLIC, fleet_reader;
REVOKE ALL ON SEQUENCE engine_loads_id_seq FROM PUBLIC, fleet_reader;
GRANT SELECT ON engine_loads TO fleet_reader;
\endif

\endif
