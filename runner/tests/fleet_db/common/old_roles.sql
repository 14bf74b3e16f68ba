-- The database roles of schema version 5 and earlier, when workers and people connected to
-- PostgreSQL themselves: fleet_owner (owns the tables; an administrator), fleet_approver,
-- fleet_submitter and fleet_worker (the worker functions only, no write on any table). No
-- one is told to make them any more (docs/fleet-reader-role.sql makes the one role still of
-- use); they stay here because `roles.rs` and `workers.rs` test, as those roles, the
-- functions a server of the version before still calls (`common::old`), until the contract
-- step drops them. Run it with docs/fleet-reader-role.sql, before `runner db init` (the roles)
-- and after it (the grants), as those tests do.

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
GRANT fleet_submitter TO fleet_approver;
-- A submitter reads what fleet_reader reads.
GRANT fleet_reader TO fleet_submitter;
ALTER ROLE fleet_worker CONNECTION LIMIT 80;

-- Nobody but the owner creates objects in the schema (PostgreSQL 15 and later already revoke
-- CREATE from PUBLIC; older versions do not).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO fleet_owner;
GRANT USAGE ON SCHEMA public TO fleet_worker;
SELECT format('GRANT CONNECT ON DATABASE %I TO fleet_owner, fleet_worker, fleet_submitter, '
              'fleet_approver', current_database()) \gexec

SELECT to_regclass('public.worker_keys') IS NOT NULL AS have_tables \gset
\if :have_tables

-- Grants only: docs/fleet-reader-role.sql, run just before, took every fleet table and
-- function from PUBLIC, and these roles are new in each test's throwaway database.

-- The schema version check every command makes first.
GRANT SELECT ON fleet_schema, fleet_migrations TO fleet_worker;

-- fleet_worker reads the runs it plays, pairings, the pairs and its key's refusals; it writes
-- only through the functions, which accept a report only for a pair leased to the worker.
GRANT SELECT ON runs, pairings, pairs, refusals TO fleet_worker;
GRANT SELECT (id, key_id) ON workers TO fleet_worker;
SELECT format('GRANT EXECUTE ON FUNCTION %s TO fleet_worker', p.oid::regprocedure)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proname IN ('fleet_register', 'fleet_worker_stopped',
       'fleet_claim', 'fleet_heartbeat', 'fleet_release', 'fleet_refuse', 'fleet_incident',
       'fleet_report', 'fleet_iteration', 'fleet_settle', 'fleet_worker_artifacts',
       'fleet_artifact_chunk', 'fleet_engine_loaded') \gexec

-- fleet_submitter (a member of fleet_reader) submits, cancels, purges, modifies and deletes
-- its own runs through the functions (which check the owner); fleet_approver also approves,
-- issues and revokes keys, and deletes artifacts no run names.
SELECT format('GRANT EXECUTE ON FUNCTION %s TO fleet_submitter', p.oid::regprocedure)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proname IN ('fleet_submit', 'fleet_cancel', 'fleet_purge',
       'fleet_settle_run', 'fleet_is_admin', 'fleet_may_change', 'fleet_approve',
       'fleet_delete', 'fleet_pulled', 'fleet_modify', 'fleet_artifact_sealed',
       'fleet_artifact_put', 'fleet_artifact_seal', 'fleet_run_artifacts') \gexec
SELECT format('GRANT EXECUTE ON FUNCTION %s TO fleet_approver', p.oid::regprocedure)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proname IN ('fleet_approve', 'fleet_key_add',
       'fleet_key_revoke', 'fleet_keys', 'fleet_gc_artifacts') \gexec

\endif
