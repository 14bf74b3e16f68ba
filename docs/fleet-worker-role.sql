-- Least-privilege roles for the fleet's PostgreSQL database (issue 26; see docs/fleet.md).
--
--   fleet_owner      owns the tables: the only role that runs `runner db init` (DDL).
--   fleet_worker     what `runner worker` needs: read the runs it plays, claim / renew /
--                    release leases, store a finished pair's games and counts, decide a run,
--                    log and apply tuning iterations, register itself. No DELETE, no DDL, no
--                    reading of other runs' games.
--   fleet_submitter  what `runner submit`, `runner cancel`, `runner pull` and `runner status`
--                    need: store a new run, cancel one, read everything. No DELETE, no DDL.
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
-- The script can be run any number of times; run step 4 again after a `runner db init` that
-- migrated the schema to a new version (new tables or columns get their grants then).
--
-- The privileges follow the statements of runner/src/fleet/queue.rs, the only place with SQL.

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

-- Nobody but the owner creates objects in the schema (PostgreSQL 15 and later already revoke
-- CREATE from PUBLIC; older versions do not).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO fleet_owner;
GRANT USAGE ON SCHEMA public TO fleet_worker, fleet_submitter;
SELECT format('GRANT CONNECT ON DATABASE %I TO fleet_owner, fleet_worker, fleet_submitter',
              current_database()) \gexec

SELECT to_regclass('public.pairs') IS NOT NULL AS have_tables \gset
\if :have_tables

-- Start from nothing on every fleet table, then grant what the queue's statements use.
REVOKE ALL ON fleet_schema, runs, pairings, tallies, workers, pairs, games, tune_state, tune_steps
    FROM PUBLIC, fleet_worker, fleet_submitter;
REVOKE ALL ON SEQUENCE runs_id_seq, workers_id_seq, games_id_seq, lease_tokens
    FROM PUBLIC, fleet_worker, fleet_submitter;

-- Both: the schema version check every command makes first.
GRANT SELECT ON fleet_schema TO fleet_worker, fleet_submitter;

-- ---------------------------------------------------------------------------- fleet_worker
-- register_worker, worker_stopped, heartbeat (its own row: WHERE id = ...).
GRANT SELECT (id), INSERT (host, pid, concurrency, lease_secs),
      UPDATE (heartbeat_at, stopped_at) ON workers TO fleet_worker;
GRANT USAGE ON SEQUENCE workers_id_seq TO fleet_worker;
-- run, run_states, outstanding, claim, heartbeat, report (reads the submission and states);
-- report and complete_if_done move a run to decided / complete.
GRANT SELECT ON runs TO fleet_worker;
GRANT UPDATE (state, stop_reason, finished_at) ON runs TO fleet_worker;
-- claim (active pairings), pairing_counts, pairings; the judge deactivates a pairing.
GRANT SELECT ON pairings TO fleet_worker;
GRANT UPDATE (active, verdict, why) ON pairings TO fleet_worker;
-- claim (FOR UPDATE needs UPDATE), release, heartbeat, report, skip pairs of a stopped pairing,
-- log_iteration, tune_iterations.
GRANT SELECT ON pairs TO fleet_worker;
GRANT UPDATE (state, token, worker_id, lease_until, claimed_at, attempts, spsa) ON pairs TO fleet_worker;
GRANT USAGE ON SEQUENCE lease_tokens TO fleet_worker;
-- report: a finished pair's two games (insert only: a worker cannot read or change games).
GRANT INSERT (run_id, pairing, pair, game, worker_id, record) ON games TO fleet_worker;
GRANT USAGE ON SEQUENCE games_id_seq TO fleet_worker;
-- report: the worker's row of a pairing's counts (INSERT ... ON CONFLICT DO UPDATE), and
-- pairing_counts summing every worker's rows.
GRANT SELECT, INSERT (run_id, pairing, worker_id, ll, ld, dd, wd, ww, wins, draws, losses),
      UPDATE (ll, ld, dd, wd, ww, wins, draws, losses) ON tallies TO fleet_worker;
-- Tuning runs: log_iteration and report read theta under FOR UPDATE and move it.
GRANT SELECT, UPDATE (theta, next_k, applied) ON tune_state TO fleet_worker;
GRANT SELECT, INSERT (run_id, ord, k, step) ON tune_steps TO fleet_worker;

-- ------------------------------------------------------------------------- fleet_submitter
-- submit: insert_run stores the run, its pairings, its pairs and a tuning run's theta.
GRANT SELECT, INSERT (kind, submission, plan_hash) ON runs TO fleet_submitter;
GRANT USAGE ON SEQUENCE runs_id_seq TO fleet_submitter;
GRANT SELECT, INSERT (run_id, pairing, label) ON pairings TO fleet_submitter;
GRANT SELECT, INSERT (run_id, seq, pairing, pair, opening) ON pairs TO fleet_submitter;
GRANT SELECT, INSERT (run_id, theta) ON tune_state TO fleet_submitter;
-- cancel: the run's state (FOR UPDATE on runs needs an UPDATE privilege).
GRANT UPDATE (state, stop_reason, finished_at) ON runs TO fleet_submitter;
-- pull and status read everything else.
GRANT SELECT ON games, tallies, workers, tune_steps TO fleet_submitter;

\endif
