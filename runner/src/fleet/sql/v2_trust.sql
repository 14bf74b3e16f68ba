-- Schema version 2: who may do what.
--
-- Workers are untrusted machines: they get no write privilege on any table. Everything a
-- worker writes goes through the SECURITY DEFINER functions below, which accept a report only
-- for a pair leased to the calling worker under its token, derive the counts from the game
-- records themselves, and leave every decision (SPRT, racing, a tuning step, a run's end) to
-- code that runs inside the database (fleet_settle_run, the fleet_sprt_* / fleet_race_* /
-- fleet_spsa_* functions of judge.sql). A worker identifies itself by a key an administrator
-- issued (worker_keys); registering with it gives the worker process a secret that every later
-- call carries. Submitters own their runs (runs.owner = the role that submitted); only the
-- owner or an approver cancels, changes or purges one; a run submitted by a role that is not an
-- approver waits in 'pending' until an approver approves it.
--
-- Lock order, everywhere: runs, then pairs, then tallies, then pairings, then tune_state.
-- A report holds its run's row FOR KEY SHARE (so do the games' foreign keys) from its first
-- statement to its commit; a decision (fleet_settle_run) takes the run's row FOR UPDATE, so it
-- waits for every report in flight and every report after it sees the run's new state: the
-- counts a decision is made on are exactly the pairs stored under it.

ALTER TABLE runs DROP CONSTRAINT IF EXISTS runs_state_check;
ALTER TABLE runs ADD CONSTRAINT runs_state_check
    CHECK (state IN ('pending', 'active', 'decided', 'complete', 'cancelled', 'failed'));
ALTER TABLE runs
    ADD COLUMN owner        text NOT NULL DEFAULT session_user,
    ADD COLUMN approved_by  text,
    ADD COLUMN approved_at  timestamptz,
    -- What the database decides with (written by the submitter's runner, which computes what
    -- SQL cannot: the SPRT's bounds, racing's critical values, tuning parameters' clamps):
    -- {"sprt": {...}, "race": {...}, "spsa": {...}, "labels": [...]}.
    ADD COLUMN judge        jsonb NOT NULL DEFAULT '{}',
    -- Distinct workers that must refuse the run before it fails.
    ADD COLUMN refusal_limit integer NOT NULL DEFAULT 3 CHECK (refusal_limit >= 1);
-- Version 1's runs were started by whoever could write; they count as approved.
UPDATE runs SET approved_by = owner, approved_at = created_at;

-- The engines of each pairing, by name, as the game records name them (game 0: the first
-- engine has White unless the record says otherwise).
ALTER TABLE pairings ADD COLUMN first_name text, ADD COLUMN second_name text;
-- A stopped pairing's decision as data: the games it was taken on, and for a racing drop the
-- best point then and the test statistic (the sweep's table shows them as `dropped@N`).
ALTER TABLE pairings ADD COLUMN stop_games bigint, ADD COLUMN stop_best integer,
    ADD COLUMN stop_z float8;

-- A tuning iteration's random numbers (drawn by the submitter from the run's seed).
ALTER TABLE pairs ADD COLUMN draws jsonb;

CREATE TABLE worker_keys (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
    -- sha256 of the key, hex; NULL for the implicit key of an administrator's own workers.
    key_hash    text UNIQUE,
    created_by  text NOT NULL DEFAULT session_user,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
ALTER TABLE workers
    ADD COLUMN key_id       bigint REFERENCES worker_keys,
    ADD COLUMN secret_hash  text,
    ADD COLUMN version      text;

-- A worker that cannot play a run says why, once per key; refusal_limit distinct keys fail it.
CREATE TABLE refusals (
    run_id     bigint NOT NULL REFERENCES runs ON DELETE CASCADE,
    key_id     bigint NOT NULL REFERENCES worker_keys,
    worker_id  bigint,
    reason     text NOT NULL,
    at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, key_id)
);

-- What went wrong with one pair (a report the database refused for a reason other than a lost
-- lease): recorded, the pair given back, the worker goes on.
CREATE TABLE incidents (
    id         bigserial PRIMARY KEY,
    run_id     bigint REFERENCES runs ON DELETE CASCADE,
    pairing    integer,
    pair       integer,
    worker_id  bigint,
    key_id     bigint,
    what       text NOT NULL,
    at         timestamptz NOT NULL DEFAULT now()
);

-- ------------------------------------------------------------------------------ who is who

-- An administrator: a superuser, a member of the role that owns the fleet's tables, or of
-- fleet_approver. Administrators approve runs, issue and revoke worker keys, and may change any
-- run.
CREATE FUNCTION fleet_is_admin() RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = session_user), false)
        OR pg_has_role(session_user, (SELECT relowner FROM pg_class
                                      WHERE oid = 'public.runs'::regclass), 'MEMBER')
        OR (EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fleet_approver')
            AND pg_has_role(session_user, 'fleet_approver', 'MEMBER'))
$$;

-- The caller may change run `p_run` (its owner, or an administrator); raises otherwise.
CREATE FUNCTION fleet_may_change(p_run bigint) RETURNS runs
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE r runs;
BEGIN
    SELECT * INTO r FROM runs WHERE id = p_run FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no run % in the database', p_run USING ERRCODE = 'no_data_found';
    END IF;
    IF r.owner <> session_user AND NOT fleet_is_admin() THEN
        RAISE EXCEPTION 'run % belongs to %: only its owner or an approver may change it',
            p_run, r.owner USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN r;
END $$;

CREATE FUNCTION fleet_key_hash(p_key text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT encode(sha256(convert_to(p_key, 'UTF8')), 'hex') $$;

-- The key a worker's call carries, checked: its worker id and key id. Raises (SQLSTATE 28000)
-- for an unknown worker, a wrong secret, a revoked key or a stopped worker.
CREATE FUNCTION fleet_worker_auth(p_worker bigint, p_secret text) RETURNS bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE k bigint;
BEGIN
    SELECT w.key_id INTO k FROM workers w JOIN worker_keys wk ON wk.id = w.key_id
     WHERE w.id = p_worker AND w.secret_hash = fleet_key_hash(p_secret)
       AND wk.revoked_at IS NULL AND w.stopped_at IS NULL;
    IF k IS NULL THEN
        RAISE EXCEPTION 'worker %: not registered with a valid key (revoked, stopped, or a wrong secret)',
            p_worker USING ERRCODE = 'invalid_authorization_specification';
    END IF;
    RETURN k;
END $$;

-- ------------------------------------------------------------------------- administrators

-- Issues a worker key named `p_name`; returns the key (shown once: only its hash is kept).
CREATE FUNCTION fleet_key_add(p_name text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE k text := 'fk_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
BEGIN
    IF NOT fleet_is_admin() THEN
        RAISE EXCEPTION 'only an approver issues worker keys' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF EXISTS (SELECT 1 FROM worker_keys WHERE name = p_name) THEN
        RAISE EXCEPTION 'a worker key named % exists already (revoke it, or choose another name)',
            p_name USING ERRCODE = 'unique_violation';
    END IF;
    INSERT INTO worker_keys (name, key_hash) VALUES (p_name, fleet_key_hash(k));
    RETURN k;
END $$;

-- Revokes key `p_name`: its workers' next call fails, their leases go back to the queue.
-- Returns the number of pairs given back.
CREATE FUNCTION fleet_key_revoke(p_name text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE k bigint; n bigint;
BEGIN
    IF NOT fleet_is_admin() THEN
        RAISE EXCEPTION 'only an approver revokes worker keys' USING ERRCODE = 'insufficient_privilege';
    END IF;
    UPDATE worker_keys SET revoked_at = coalesce(revoked_at, now()) WHERE name = p_name
        RETURNING id INTO k;
    IF k IS NULL THEN
        RAISE EXCEPTION 'no worker key named %', p_name USING ERRCODE = 'no_data_found';
    END IF;
    UPDATE workers SET stopped_at = coalesce(stopped_at, now()) WHERE key_id = k;
    WITH r AS (
        UPDATE pairs p SET state = 'pending', token = NULL, worker_id = NULL, lease_until = NULL
          FROM workers w
         WHERE w.key_id = k AND p.worker_id = w.id AND p.state = 'leased'
        RETURNING 1)
    SELECT count(*) INTO n FROM r;
    RETURN n;
END $$;

-- Keys: name, created by, created, revoked, workers registered, pairs stored.
CREATE FUNCTION fleet_keys() RETURNS TABLE (name text, created_by text, created_at timestamptz,
    revoked_at timestamptz, workers bigint, pairs bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT k.name, k.created_by, k.created_at, k.revoked_at,
           (SELECT count(*) FROM workers w WHERE w.key_id = k.id),
           (SELECT count(*) FROM games g JOIN workers w ON w.id = g.worker_id
             WHERE w.key_id = k.id AND g.game = 1)
      FROM worker_keys k ORDER BY k.id
$$;

-- ------------------------------------------------------------------------------ submitters

-- Stores a run and its schedule; returns its id. Owned by the caller; 'active' when the caller
-- is an approver, else 'pending' until one approves it.
CREATE FUNCTION fleet_submit(p_kind text, p_submission jsonb, p_plan_hash text, p_judge jsonb,
    p_labels text[], p_first text[], p_second text[], p_pairing int[], p_pair int[],
    p_opening int[], p_theta jsonb, p_draws jsonb[], p_refusal_limit int)
RETURNS TABLE (id bigint, state text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE v_id bigint; admin boolean := fleet_is_admin();
BEGIN
    IF p_kind NOT IN ('match', 'sweep', 'tune') THEN
        RAISE EXCEPTION 'unknown kind of run %', p_kind USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF cardinality(p_pairing) <> cardinality(p_pair) OR cardinality(p_pair) <> cardinality(p_opening)
       OR cardinality(p_labels) <> cardinality(p_first)
       OR cardinality(p_first) <> cardinality(p_second)
       OR (p_draws IS NOT NULL AND cardinality(p_draws) <> cardinality(p_pair)) THEN
        RAISE EXCEPTION 'a submission''s arrays differ in length' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO runs (kind, state, submission, plan_hash, owner, approved_by, approved_at, judge,
                      refusal_limit)
    VALUES (p_kind, CASE WHEN admin THEN 'active' ELSE 'pending' END, p_submission, p_plan_hash,
            session_user, CASE WHEN admin THEN session_user END, CASE WHEN admin THEN now() END,
            coalesce(p_judge, '{}'), coalesce(p_refusal_limit, 3))
    RETURNING runs.id INTO v_id;
    INSERT INTO pairings (run_id, pairing, label, first_name, second_name)
    SELECT v_id, t.i - 1, t.l, t.f, t.s
      FROM unnest(p_labels, p_first, p_second) WITH ORDINALITY AS t(l, f, s, i);
    INSERT INTO pairs (run_id, seq, pairing, pair, opening, draws)
    SELECT v_id, t.i - 1, t.pg, t.pr, t.o, p_draws[t.i]
      FROM unnest(p_pairing, p_pair, p_opening) WITH ORDINALITY AS t(pg, pr, o, i);
    IF p_theta IS NOT NULL THEN
        INSERT INTO tune_state (run_id, theta) VALUES (v_id, p_theta);
    END IF;
    id := v_id;
    state := CASE WHEN admin THEN 'active' ELSE 'pending' END;
    RETURN NEXT;
END $$;

-- Approves a pending run (approvers only); returns its state before.
CREATE FUNCTION fleet_approve(p_run bigint) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE old text;
BEGIN
    IF NOT fleet_is_admin() THEN
        RAISE EXCEPTION 'only an approver approves runs' USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT state INTO old FROM runs WHERE id = p_run FOR UPDATE;
    IF old IS NULL THEN
        RAISE EXCEPTION 'no run % in the database', p_run USING ERRCODE = 'no_data_found';
    END IF;
    IF old = 'pending' THEN
        UPDATE runs SET state = 'active', approved_by = session_user, approved_at = now()
         WHERE id = p_run;
    END IF;
    RETURN old;
END $$;

-- Cancels a pending or active run (its owner or an approver); returns its state before.
CREATE FUNCTION fleet_cancel(p_run bigint) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE r runs := fleet_may_change(p_run);
BEGIN
    IF r.state IN ('pending', 'active') THEN
        UPDATE runs SET state = 'cancelled', stop_reason = 'cancelled by ' || session_user,
               finished_at = clock_timestamp() WHERE id = p_run;
    END IF;
    RETURN r.state;
END $$;

-- Removes every pair a worker key stored in run `p_run` (its games and counts) and hands the
-- pairs out again; a run that had ended by a decision or by completion is active again and
-- decided anew. Tuning runs are refused (theta moved with those results). Owner or approver.
-- Returns the number of pairs given back.
CREATE FUNCTION fleet_purge(p_run bigint, p_key_name text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE r runs := fleet_may_change(p_run); k bigint; n bigint;
BEGIN
    IF r.kind = 'tune' THEN
        RAISE EXCEPTION 'run % is a tuning run: its theta moved with those results, so they cannot be taken back (cancel it and submit it again)',
            p_run USING ERRCODE = 'feature_not_supported';
    END IF;
    SELECT id INTO k FROM worker_keys WHERE name = p_key_name;
    IF k IS NULL THEN
        RAISE EXCEPTION 'no worker key named %', p_key_name USING ERRCODE = 'no_data_found';
    END IF;
    WITH gone AS (
        UPDATE pairs p SET state = 'pending', token = NULL, worker_id = NULL, lease_until = NULL
          FROM workers w
         WHERE p.run_id = p_run AND p.worker_id = w.id AND w.key_id = k
           AND p.state IN ('done', 'leased')
        RETURNING p.pairing, p.pair)
    SELECT count(*) INTO n FROM gone;
    DELETE FROM games g USING workers w
     WHERE g.run_id = p_run AND g.worker_id = w.id AND w.key_id = k;
    DELETE FROM tallies t USING workers w
     WHERE t.run_id = p_run AND t.worker_id = w.id AND w.key_id = k;
    IF r.state IN ('decided', 'complete') THEN
        UPDATE pairings SET active = true, verdict = NULL, why = NULL, stop_games = NULL,
               stop_best = NULL, stop_z = NULL WHERE run_id = p_run;
        UPDATE pairs SET state = 'pending' WHERE run_id = p_run AND state = 'skipped';
        UPDATE runs SET state = 'active', stop_reason = NULL, finished_at = NULL WHERE id = p_run;
    END IF;
    INSERT INTO incidents (run_id, key_id, what)
    VALUES (p_run, k, format('purged by %s: %s pair(s) of key %s played again', session_user, n,
                             p_key_name));
    RETURN n;
END $$;

-- ---------------------------------------------------------------------------------- workers

-- Registers a worker process under key `p_key` (NULL: an administrator's own worker, under an
-- implicit key named after its role). Returns the worker's id and the secret its later calls
-- carry.
CREATE FUNCTION fleet_register(p_key text, p_host text, p_pid int, p_concurrency int,
    p_lease float8, p_version text)
RETURNS TABLE (worker_id bigint, secret text, key_name text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE k worker_keys; s text := replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
BEGIN
    IF p_key IS NULL THEN
        IF NOT fleet_is_admin() THEN
            RAISE EXCEPTION 'a worker needs a key (runner worker-key add NAME, by an approver; then RUNNER_WORKER_KEY or --key-file)'
                USING ERRCODE = 'invalid_authorization_specification';
        END IF;
        INSERT INTO worker_keys (name) VALUES ('role:' || session_user)
            ON CONFLICT (name) DO NOTHING;
        SELECT * INTO k FROM worker_keys WHERE name = 'role:' || session_user;
    ELSE
        SELECT * INTO k FROM worker_keys WHERE key_hash = fleet_key_hash(p_key);
    END IF;
    IF k.id IS NULL THEN
        RAISE EXCEPTION 'unknown worker key' USING ERRCODE = 'invalid_authorization_specification';
    END IF;
    IF k.revoked_at IS NOT NULL THEN
        RAISE EXCEPTION 'worker key % was revoked', k.name
            USING ERRCODE = 'invalid_authorization_specification';
    END IF;
    INSERT INTO workers (host, pid, concurrency, lease_secs, key_id, secret_hash, version)
    VALUES (left(p_host, 200), p_pid, p_concurrency, p_lease, k.id, fleet_key_hash(s),
            left(p_version, 100))
    RETURNING workers.id INTO worker_id;
    secret := s;
    key_name := k.name;
    RETURN NEXT;
END $$;

CREATE FUNCTION fleet_worker_stopped(p_worker bigint, p_secret text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM fleet_worker_auth(p_worker, p_secret);
    UPDATE workers SET stopped_at = now() WHERE id = p_worker;
END $$;

-- Leases up to `p_n` pairs: of active runs (of `p_only` when given, never of `p_skip`, never of
-- a run this worker's key refused), pending pairs of active pairings or expired leases, in
-- schedule order, each under a new fencing token. A tuning run hands out at most `p_tune_ahead`
-- iterations beyond those applied.
CREATE FUNCTION fleet_claim(p_worker bigint, p_secret text, p_only bigint, p_skip bigint[],
    p_n bigint, p_lease float8, p_tune_ahead bigint)
RETURNS TABLE (run_id bigint, seq int, pairing int, pair int, opening int, token bigint,
    attempts int, spsa jsonb)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE k bigint := fleet_worker_auth(p_worker, p_secret);
BEGIN
    RETURN QUERY
    WITH r AS (
        SELECT r.id, t.applied FROM runs r
          LEFT JOIN tune_state t ON t.run_id = r.id
         WHERE r.state = 'active' AND (p_only IS NULL OR r.id = p_only)
           AND NOT (r.id = ANY(p_skip))
           AND NOT EXISTS (SELECT 1 FROM refusals f WHERE f.run_id = r.id AND f.key_id = k)
         -- Waits while the run is being decided (fleet_settle_run holds it FOR UPDATE), then
         -- sees its new state: no pair is claimed while a run is being stopped.
         FOR KEY SHARE OF r),
    pending AS (
        SELECT q.* FROM r CROSS JOIN LATERAL (
            SELECT p.run_id, p.pairing, p.pair, p.seq FROM pairs p
             WHERE p.run_id = r.id AND p.state = 'pending'
               AND EXISTS (SELECT 1 FROM pairings g
                            WHERE g.run_id = p.run_id AND g.pairing = p.pairing AND g.active)
               AND (r.applied IS NULL OR p.spsa IS NOT NULL OR p.seq < r.applied + p_tune_ahead)
             ORDER BY p.seq LIMIT p_n
             FOR UPDATE OF p SKIP LOCKED) q),
    expired AS (
        SELECT q.* FROM r CROSS JOIN LATERAL (
            SELECT p.run_id, p.pairing, p.pair, p.seq FROM pairs p
             WHERE p.run_id = r.id AND p.state = 'leased' AND p.lease_until < now()
               AND EXISTS (SELECT 1 FROM pairings g
                            WHERE g.run_id = p.run_id AND g.pairing = p.pairing AND g.active)
               AND (r.applied IS NULL OR p.spsa IS NOT NULL OR p.seq < r.applied + p_tune_ahead)
             ORDER BY p.seq LIMIT p_n
             FOR UPDATE OF p SKIP LOCKED) q),
    c AS (SELECT * FROM pending UNION ALL SELECT * FROM expired
          ORDER BY run_id, seq LIMIT p_n)
    UPDATE pairs p SET state = 'leased', token = nextval('lease_tokens'), worker_id = p_worker,
           lease_until = now() + make_interval(secs => p_lease),
           claimed_at = clock_timestamp(), attempts = p.attempts + 1
      FROM c WHERE p.run_id = c.run_id AND p.pairing = c.pairing AND p.pair = c.pair
    RETURNING p.run_id, p.seq, p.pairing, p.pair, p.opening, p.token, p.attempts, p.spsa;
END $$;

-- Renews this worker's leases of `p_tokens` (and notes it alive); returns the tokens still
-- valid (a missing one lost its lease: run stopped, or lease expired and taken over).
CREATE FUNCTION fleet_heartbeat(p_worker bigint, p_secret text, p_tokens bigint[], p_lease float8)
RETURNS SETOF bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM fleet_worker_auth(p_worker, p_secret);
    UPDATE workers SET heartbeat_at = now() WHERE id = p_worker;
    RETURN QUERY
    UPDATE pairs p SET lease_until = now() + make_interval(secs => p_lease)
      FROM runs r
     WHERE r.id = p.run_id AND r.state = 'active' AND p.worker_id = p_worker
       AND p.state = 'leased' AND p.token = ANY(p_tokens)
    RETURNING p.token;
END $$;

-- Gives this worker's leased pairs of `p_tokens` back to the queue.
CREATE FUNCTION fleet_release(p_worker bigint, p_secret text, p_tokens bigint[]) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE n bigint;
BEGIN
    PERFORM fleet_worker_auth(p_worker, p_secret);
    WITH r AS (
        UPDATE pairs SET state = 'pending', token = NULL, worker_id = NULL, lease_until = NULL
         WHERE worker_id = p_worker AND state = 'leased' AND token = ANY(p_tokens)
        RETURNING 1)
    SELECT count(*) INTO n FROM r;
    RETURN n;
END $$;

-- This worker cannot play run `p_run`: its leases of `p_tokens` go back, the refusal is
-- recorded once per key, and when `refusal_limit` distinct keys refused, the run fails with
-- their reasons. Returns the run's state.
CREATE FUNCTION fleet_refuse(p_worker bigint, p_secret text, p_run bigint, p_reason text,
    p_tokens bigint[]) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE k bigint := fleet_worker_auth(p_worker, p_secret); r runs; n int; why text;
BEGIN
    SELECT * INTO r FROM runs WHERE id = p_run FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no run % in the database', p_run USING ERRCODE = 'no_data_found';
    END IF;
    UPDATE pairs SET state = 'pending', token = NULL, worker_id = NULL, lease_until = NULL
     WHERE run_id = p_run AND worker_id = p_worker AND state = 'leased' AND token = ANY(p_tokens);
    INSERT INTO refusals (run_id, key_id, worker_id, reason)
    VALUES (p_run, k, p_worker, left(p_reason, 2000))
    ON CONFLICT (run_id, key_id) DO UPDATE SET reason = excluded.reason,
        worker_id = excluded.worker_id, at = now();
    SELECT count(*), string_agg(wk.name || ': ' || f.reason, '; ' ORDER BY f.at)
      INTO n, why
      FROM refusals f JOIN worker_keys wk ON wk.id = f.key_id WHERE f.run_id = p_run;
    IF r.state IN ('active', 'pending') AND n >= r.refusal_limit THEN
        UPDATE runs SET state = 'failed', finished_at = clock_timestamp(),
               stop_reason = left(format('refused by %s worker(s): %s', n, why), 4000)
         WHERE id = p_run;
        RETURN 'failed';
    END IF;
    RETURN r.state;
END $$;

-- A pair this worker holds could not be stored for a reason other than a lost lease: recorded,
-- and given back to the queue.
CREATE FUNCTION fleet_incident(p_worker bigint, p_secret text, p_run bigint, p_pairing int,
    p_pair int, p_token bigint, p_what text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE k bigint := fleet_worker_auth(p_worker, p_secret);
BEGIN
    INSERT INTO incidents (run_id, pairing, pair, worker_id, key_id, what)
    SELECT p_run, p_pairing, p_pair, p_worker, k, left(p_what, 2000)
     WHERE EXISTS (SELECT 1 FROM runs WHERE id = p_run);
    UPDATE pairs SET state = 'pending', token = NULL, worker_id = NULL, lease_until = NULL
     WHERE run_id = p_run AND pairing = p_pairing AND pair = p_pair AND worker_id = p_worker
       AND token = p_token AND state = 'leased';
END $$;

-- The first engine's score in a game record (1, 0.5, 0), after checking that the record is the
-- game `p_game` of pair (`p_pairing`, `p_pair`) between the pairing's engines; raises otherwise.
-- The fields are read in one pass (json_to_record): each `->>` on a json value parses the whole
-- text again, which for two 4 KB records was about 1.3 ms of server time per report (the load
-- test's 2026-11-27 figures, docs/measurements/fleet-load.md). json_to_record's text columns give
-- what `->>` gives (the value's text; for duplicate keys the last one).
CREATE FUNCTION fleet_record_score(p_rec json, p_pairing int, p_pair int, p_game int,
    p_first text, p_second text) RETURNS numeric
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE f record; first_white boolean;
BEGIN
    IF json_typeof(p_rec) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'game % of the report is not game % of pair %/%', p_game + 1, p_game + 1,
            p_pairing, p_pair + 1 USING ERRCODE = 'data_exception';
    END IF;
    SELECT * INTO f FROM json_to_record(p_rec) AS x(pairing text, pair text, game text,
        first_white text, white text, black text, result text);
    IF f.pairing IS DISTINCT FROM p_pairing::text OR f.pair IS DISTINCT FROM p_pair::text
       OR f.game IS DISTINCT FROM p_game::text THEN
        RAISE EXCEPTION 'game % of the report is not game % of pair %/%', p_game + 1, p_game + 1,
            p_pairing, p_pair + 1 USING ERRCODE = 'data_exception';
    END IF;
    first_white := coalesce(f.first_white::boolean, p_game = 0);
    IF (first_white AND (f.white IS DISTINCT FROM p_first OR f.black IS DISTINCT FROM p_second))
       OR (NOT first_white AND (f.white IS DISTINCT FROM p_second
                                OR f.black IS DISTINCT FROM p_first)) THEN
        RAISE EXCEPTION 'game % of the report is not played by the pairing''s engines', p_game + 1
            USING ERRCODE = 'data_exception';
    END IF;
    RETURN CASE
        WHEN f.result = '1/2-1/2' THEN 0.5
        WHEN f.result = '1-0' THEN CASE WHEN first_white THEN 1 ELSE 0 END
        WHEN f.result = '0-1' THEN CASE WHEN first_white THEN 0 ELSE 1 END
        ELSE fleet_bad_result(f.result) END;
END $$;

CREATE FUNCTION fleet_bad_result(res text) RETURNS numeric
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RAISE EXCEPTION 'a game''s result % is not 1-0, 0-1 or 1/2-1/2', res USING ERRCODE = 'data_exception';
END $$;

-- Stores a finished pair leased to this worker under `p_token`: the pair becomes done, its two
-- game records are stored, and its result (read from the records) is added to this worker's
-- row of the pairing's counts; a tuning run's theta moves by the iteration's update. Returns one
-- row per pairing (every pairing for racing, else the reported one) with its counts after the
-- pair, whether the run has other pairs open, and `refused`: NULL when stored, else why nothing
-- was written. The worker calls fleet_settle when its own look at the counts says a decision
-- may be due (or nothing is open); the database then decides.
CREATE FUNCTION fleet_report(p_worker bigint, p_secret text, p_run bigint, p_pairing int,
    p_pair int, p_token bigint, p_rec0 json, p_rec1 json, p_all boolean)
RETURNS TABLE (refused text, open boolean, pairing int, active boolean, dropped boolean,
    ll bigint, ld bigint, dd bigint, wd bigint, ww bigint, wins bigint, draws bigint,
    losses bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE
    k bigint := fleet_worker_auth(p_worker, p_secret);
    st text; pa pairings; pp pairs; s0 numeric; s1 numeric; bin int; it jsonb;
    th jsonb; params jsonb; nt float8[];
BEGIN
    SELECT r.state INTO st FROM runs r WHERE r.id = p_run FOR KEY SHARE;
    IF st IS NULL THEN
        refused := format('run %s is not in the database', p_run); RETURN NEXT; RETURN;
    END IF;
    IF st <> 'active' THEN
        refused := format('run %s is %s', p_run, st); RETURN NEXT; RETURN;
    END IF;
    SELECT * INTO pp FROM pairs p
     WHERE p.run_id = p_run AND p.pairing = p_pairing AND p.pair = p_pair FOR UPDATE;
    IF NOT FOUND THEN
        refused := format('run %s has no pair %s/%s', p_run, p_pairing, p_pair + 1);
        RETURN NEXT; RETURN;
    END IF;
    IF pp.state <> 'leased' OR pp.token IS DISTINCT FROM p_token
       OR pp.worker_id IS DISTINCT FROM p_worker THEN
        refused := CASE WHEN pp.state = 'leased' OR pp.token IS DISTINCT FROM p_token
            THEN 'its lease expired and the pair was handed to another worker'
            ELSE format('the pair is %s', pp.state) END;
        RETURN NEXT; RETURN;
    END IF;
    SELECT * INTO pa FROM pairings g WHERE g.run_id = p_run AND g.pairing = p_pairing;
    IF NOT pa.active THEN
        refused := format('%s was stopped (%s)', pa.label, coalesce(pa.verdict, 'no verdict'));
        RETURN NEXT; RETURN;
    END IF;
    s0 := fleet_record_score(p_rec0, p_pairing, p_pair, 0, pa.first_name, pa.second_name);
    s1 := fleet_record_score(p_rec1, p_pairing, p_pair, 1, pa.first_name, pa.second_name);
    bin := ((s0 + s1) * 2)::int;
    UPDATE pairs p SET state = 'done', lease_until = NULL
     WHERE p.run_id = p_run AND p.pairing = p_pairing AND p.pair = p_pair;
    INSERT INTO games (run_id, pairing, pair, game, worker_id, record)
    VALUES (p_run, p_pairing, p_pair, 0, p_worker, p_rec0),
           (p_run, p_pairing, p_pair, 1, p_worker, p_rec1);
    INSERT INTO tallies AS t (run_id, pairing, worker_id, ll, ld, dd, wd, ww, wins, draws, losses)
    VALUES (p_run, p_pairing, p_worker, (bin = 0)::int, (bin = 1)::int, (bin = 2)::int,
            (bin = 3)::int, (bin = 4)::int, (s0 = 1)::int + (s1 = 1)::int,
            (s0 = 0.5)::int + (s1 = 0.5)::int, (s0 = 0)::int + (s1 = 0)::int)
    ON CONFLICT ON CONSTRAINT tallies_pkey DO UPDATE SET
        ll = t.ll + excluded.ll, ld = t.ld + excluded.ld, dd = t.dd + excluded.dd,
        wd = t.wd + excluded.wd, ww = t.ww + excluded.ww, wins = t.wins + excluded.wins,
        draws = t.draws + excluded.draws, losses = t.losses + excluded.losses;
    IF pp.spsa IS NOT NULL THEN
        SELECT s.theta INTO th FROM tune_state s WHERE s.run_id = p_run FOR UPDATE;
        SELECT r.judge->'spsa'->'params' INTO params FROM runs r WHERE r.id = p_run;
        nt := fleet_spsa_update(ARRAY(SELECT jsonb_array_elements_text(th)::float8), pp.spsa,
                                ((s0 + s1) * 2 - 2)::float8, params);
        INSERT INTO tune_steps (run_id, ord, k, step)
        SELECT p_run, s.applied, p_pair,
               jsonb_build_object('k', p_pair, 'games', 0, 'theta', to_jsonb(nt),
                                  'c_k', pp.spsa->'c_k', 'a_k', pp.spsa->'a_k',
                                  'result', ((s0 + s1) * 2 - 2)::float8)
          FROM tune_state s WHERE s.run_id = p_run;
        UPDATE tune_state s SET theta = to_jsonb(nt), applied = s.applied + 1
         WHERE s.run_id = p_run;
    END IF;
    refused := NULL;
    open := EXISTS (SELECT 1 FROM (SELECT x.seq FROM pairs x WHERE x.run_id = p_run
                                    AND x.state = 'pending' ORDER BY x.seq LIMIT 1) y)
         OR EXISTS (SELECT 1 FROM pairs x WHERE x.run_id = p_run AND x.state = 'leased');
    FOR pairing, active, dropped, ll, ld, dd, wd, ww, wins, draws, losses IN
        SELECT c.pairing, c.active, c.dropped, c.ll, c.ld, c.dd, c.wd, c.ww, c.wins, c.draws,
               c.losses FROM fleet_counts(p_run, CASE WHEN p_all THEN NULL ELSE p_pairing END) c
    LOOP
        RETURN NEXT;
    END LOOP;
END $$;

-- Each pairing's counts (of `p_pairing` when given), summed over workers.
CREATE FUNCTION fleet_counts(p_run bigint, p_pairing int)
RETURNS TABLE (pairing int, label text, active boolean, dropped boolean, ll bigint, ld bigint,
    dd bigint, wd bigint, ww bigint, wins bigint, draws bigint, losses bigint)
LANGUAGE sql STABLE AS $$
    SELECT g.pairing, g.label, g.active, coalesce(g.verdict = 'dropped', false),
           coalesce(sum(t.ll), 0)::bigint, coalesce(sum(t.ld), 0)::bigint,
           coalesce(sum(t.dd), 0)::bigint, coalesce(sum(t.wd), 0)::bigint,
           coalesce(sum(t.ww), 0)::bigint, coalesce(sum(t.wins), 0)::bigint,
           coalesce(sum(t.draws), 0)::bigint, coalesce(sum(t.losses), 0)::bigint
      FROM pairings g LEFT JOIN tallies t ON t.run_id = g.run_id AND t.pairing = g.pairing
     WHERE g.run_id = p_run AND (p_pairing IS NULL OR g.pairing = p_pairing)
     GROUP BY g.pairing, g.label, g.active, g.verdict ORDER BY g.pairing
$$;

-- A tuning pair's iteration, computed from the current theta and the pair's draws when first
-- asked for, logged on the pair (so a pair handed out again plays the same values); NULL when
-- the pair is not leased to this worker under `p_token`.
CREATE FUNCTION fleet_iteration(p_worker bigint, p_secret text, p_run bigint, p_pairing int,
    p_pair int, p_token bigint) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE pp pairs; th jsonb; it jsonb; params jsonb;
BEGIN
    PERFORM fleet_worker_auth(p_worker, p_secret);
    SELECT * INTO pp FROM pairs p WHERE p.run_id = p_run AND p.pairing = p_pairing
       AND p.pair = p_pair AND p.token = p_token AND p.worker_id = p_worker
       AND p.state = 'leased' FOR UPDATE;
    IF NOT FOUND THEN RETURN NULL; END IF;
    IF pp.spsa IS NOT NULL THEN RETURN pp.spsa; END IF;
    IF pp.draws IS NULL THEN
        RAISE EXCEPTION 'run %: pair % has no tuning draws', p_run, p_pair + 1
            USING ERRCODE = 'data_exception';
    END IF;
    SELECT s.theta INTO th FROM tune_state s WHERE s.run_id = p_run FOR UPDATE;
    SELECT r.judge->'spsa'->'params' INTO params FROM runs r WHERE r.id = p_run;
    it := fleet_spsa_begin(p_pair::bigint, ARRAY(SELECT jsonb_array_elements_text(th)::float8),
                           pp.draws, params);
    UPDATE pairs p SET spsa = it WHERE p.run_id = p_run AND p.pairing = p_pairing
       AND p.pair = p_pair;
    UPDATE tune_state s SET next_k = greatest(s.next_k, p_pair + 1) WHERE s.run_id = p_run;
    RETURN it;
END $$;

-- The database's decision for run `p_run`, taken with the run's row locked FOR UPDATE (every
-- report in flight has ended, none starts until this commits), from the counts of every stored
-- pair: pairings whose SPRT ended or that racing dropped stop (their pending pairs skipped);
-- the run is decided when no pairing is left, complete when no pair is left. Returns the run's
-- state and the pairings it stopped now (pairing NULL when none).
CREATE FUNCTION fleet_settle_run(p_run bigint)
RETURNS TABLE (state text, pairing int, verdict text, why text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE
    r runs; c record; j jsonb; llr float8; v text; stopped int := 0; whys text[] := '{}';
    open boolean; counts float8[] := '{}'; drop_flags boolean[] := '{}'; d record;
BEGIN
    SELECT * INTO r FROM runs x WHERE x.id = p_run FOR UPDATE;
    IF NOT FOUND OR r.state <> 'active' THEN
        state := r.state; RETURN NEXT; RETURN;
    END IF;
    j := r.judge;
    IF j ? 'sprt' THEN
        FOR c IN SELECT * FROM fleet_counts(p_run, NULL) x WHERE x.active LOOP
            llr := fleet_sprt_llr(ARRAY[c.ll, c.ld, c.dd, c.wd, c.ww]::float8[],
                                  (j->'sprt'->>'elo0')::float8, (j->'sprt'->>'elo1')::float8,
                                  j->'sprt'->>'model');
            v := CASE WHEN llr < (j->'sprt'->>'lower')::float8 THEN 'H0'
                      WHEN llr > (j->'sprt'->>'upper')::float8 THEN 'H1' END;
            IF v IS NOT NULL THEN
                why := format('%s: SPRT accepted %s after %s games (LLR %s, bounds [%s, %s])',
                    c.label, v, 2 * (c.ll + c.ld + c.dd + c.wd + c.ww), fleet_fixed2(llr),
                    fleet_fixed2((j->'sprt'->>'lower')::float8),
                    fleet_fixed2((j->'sprt'->>'upper')::float8));
                UPDATE pairings g SET active = false, verdict = v, why = fleet_settle_run.why,
                       stop_games = 2 * (c.ll + c.ld + c.dd + c.wd + c.ww)
                 WHERE g.run_id = p_run AND g.pairing = c.pairing;
                -- Its leased pairs too: their reports would be refused (the pairing is no
                -- longer active), and a lease left behind would keep the run open for ever.
                -- Their workers' next heartbeat no longer lists them, so the games stop.
                UPDATE pairs p SET state = 'skipped', lease_until = NULL
                 WHERE p.run_id = p_run AND p.pairing = c.pairing
                   AND p.state IN ('pending', 'leased');
                pairing := c.pairing; verdict := v; state := 'active';
                whys := whys || why; stopped := stopped + 1;
                RETURN NEXT;
            END IF;
        END LOOP;
    END IF;
    IF j ? 'race' THEN
        FOR c IN SELECT * FROM fleet_counts(p_run, NULL) LOOP
            counts := counts || ARRAY[c.ll, c.ld, c.dd, c.wd, c.ww]::float8[];
            drop_flags := drop_flags || (NOT c.active);
        END LOOP;
        FOR d IN SELECT * FROM fleet_race_drops(counts, drop_flags,
                     (j->'race'->>'min_pairs')::bigint,
                     ARRAY(SELECT jsonb_array_elements_text(j->'race'->'crit')::float8)) LOOP
            SELECT * INTO c FROM fleet_counts(p_run, d.point) x;
            why := format('%s: dropped by racing after %s games (worse than %s, z = %s)',
                c.label, 2 * (c.ll + c.ld + c.dd + c.wd + c.ww),
                (SELECT g.label FROM pairings g WHERE g.run_id = p_run AND g.pairing = d.best),
                fleet_fixed2(d.z));
            UPDATE pairings g SET active = false, verdict = 'dropped', why = fleet_settle_run.why,
                   stop_games = 2 * (c.ll + c.ld + c.dd + c.wd + c.ww), stop_best = d.best,
                   stop_z = d.z
             WHERE g.run_id = p_run AND g.pairing = d.point AND g.active;
            UPDATE pairs p SET state = 'skipped', lease_until = NULL
             WHERE p.run_id = p_run AND p.pairing = d.point AND p.state IN ('pending', 'leased');
            pairing := d.point; verdict := 'dropped'; state := 'active';
            whys := whys || why; stopped := stopped + 1;
            RETURN NEXT;
        END LOOP;
    END IF;
    pairing := NULL; verdict := NULL; why := NULL;
    IF stopped > 0 AND NOT EXISTS (SELECT 1 FROM pairings g WHERE g.run_id = p_run AND g.active)
    THEN
        UPDATE runs x SET state = 'decided', stop_reason = array_to_string(whys, '; '),
               finished_at = clock_timestamp() WHERE x.id = p_run;
        state := 'decided'; RETURN NEXT; RETURN;
    END IF;
    open := EXISTS (SELECT 1 FROM (SELECT x.seq FROM pairs x WHERE x.run_id = p_run
                                    AND x.state = 'pending' ORDER BY x.seq LIMIT 1) y)
         OR EXISTS (SELECT 1 FROM pairs x WHERE x.run_id = p_run AND x.state = 'leased');
    IF NOT open THEN
        UPDATE runs x SET state = 'complete', stop_reason = 'every pair played',
               finished_at = clock_timestamp() WHERE x.id = p_run;
        state := 'complete';
    ELSE
        state := 'active';
    END IF;
    RETURN NEXT;
END $$;

-- `x` with two decimals, as Rust's `{:.2}` prints it.
CREATE FUNCTION fleet_fixed2(x float8) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN x = 'Infinity'::float8 THEN 'inf' WHEN x = '-Infinity'::float8 THEN '-inf'
                -- Past to_char's digits (racing's z of a point with no spread is the largest
                -- double): the number as PostgreSQL writes it.
                WHEN abs(x) >= 1e15 THEN x::text
                ELSE to_char(round(x::numeric, 2), 'FM999999999999990.00') END
$$;

-- A worker asks the database to decide run `p_run` now (after a report whose counts may have
-- crossed a bound, or when nothing was left open).
CREATE FUNCTION fleet_settle(p_worker bigint, p_secret text, p_run bigint)
RETURNS TABLE (state text, pairing int, verdict text, why text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
BEGIN
    PERFORM fleet_worker_auth(p_worker, p_secret);
    RETURN QUERY SELECT * FROM fleet_settle_run(p_run);
END $$;
