-- Schema version 3, part: what each worker is and did: registration details, per-worker results, `runner workers`, `runner delete`.
--
-- Replaces the version-2 functions fleet_register (new arguments: CPU model and cores),
-- fleet_report (counts each worker's engine faults and recent pairs in its tallies row) and
-- fleet_record_score (now a wrapper of fleet_record_read, which also returns the termination).

-- What the machine is: its CPU model (/proc/cpuinfo's "model name", "unknown" without one) and
-- the CPUs the worker may use.
ALTER TABLE workers ADD COLUMN cpu text, ADD COLUMN cores integer;

-- What each worker did, counted by the report that stores a pair, in the worker's own row of
-- the pairing's counts (no other row is written, no game is read back): games of the pair that
-- ended by an engine's fault (crash, stall, disconnect) or on time, and `recent`, its pairs
-- weighted by exp(-age / 1 hour) as of `recent_at` (its pairs per hour, read at any later time
-- t as recent * exp(-(t - recent_at) / 1 hour)).
ALTER TABLE tallies
    ADD COLUMN crashes      bigint NOT NULL DEFAULT 0,
    ADD COLUMN time_losses  bigint NOT NULL DEFAULT 0,
    ADD COLUMN recent       float8 NOT NULL DEFAULT 0,
    ADD COLUMN recent_at    timestamptz;

DROP FUNCTION fleet_register(text, text, int, int, float8, text);

-- Registers a worker process under key `p_key` (NULL: an administrator's own worker, under an
-- implicit key named after its role), with what its machine is. Returns the worker's id and
-- the secret its later calls carry.
CREATE FUNCTION fleet_register(p_key text, p_host text, p_pid int, p_concurrency int,
    p_lease float8, p_version text, p_cpu text, p_cores int)
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
    INSERT INTO workers (host, pid, concurrency, lease_secs, key_id, secret_hash, version, cpu,
                         cores)
    VALUES (left(p_host, 200), p_pid, p_concurrency, p_lease, k.id, fleet_key_hash(s),
            left(p_version, 100), left(coalesce(nullif(p_cpu, ''), 'unknown'), 200),
            CASE WHEN p_cores BETWEEN 1 AND 100000 THEN p_cores END)
    RETURNING workers.id INTO worker_id;
    secret := s;
    key_name := k.name;
    RETURN NEXT;
END $$;

-- The first engine's score in a game record (1, 0.5, 0) and the game's termination, after
-- checking that the record is the game `p_game` of pair (`p_pairing`, `p_pair`) between the
-- pairing's engines; raises otherwise. The fields are read in one json_to_record pass (see
-- fleet_record_score in v2_trust.sql for why).
CREATE FUNCTION fleet_record_read(p_rec json, p_pairing int, p_pair int, p_game int,
    p_first text, p_second text, OUT score numeric, OUT termination text)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE f record; first_white boolean;
BEGIN
    IF json_typeof(p_rec) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION 'game % of the report is not game % of pair %/%', p_game + 1, p_game + 1,
            p_pairing, p_pair + 1 USING ERRCODE = 'data_exception';
    END IF;
    SELECT * INTO f FROM json_to_record(p_rec) AS x(pairing text, pair text, game text,
        first_white text, white text, black text, result text, termination text);
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
    score := CASE
        WHEN f.result = '1/2-1/2' THEN 0.5
        WHEN f.result = '1-0' THEN CASE WHEN first_white THEN 1 ELSE 0 END
        WHEN f.result = '0-1' THEN CASE WHEN first_white THEN 0 ELSE 1 END
        ELSE fleet_bad_result(f.result) END;
    termination := f.termination;
END $$;

CREATE OR REPLACE FUNCTION fleet_record_score(p_rec json, p_pairing int, p_pair int,
    p_game int, p_first text, p_second text) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
    SELECT score FROM fleet_record_read(p_rec, p_pairing, p_pair, p_game, p_first, p_second)
$$;

-- 1 when a game's termination is an engine's fault other than an illegal move (the engine
-- died, stopped answering or closed its pipes), else 0; fleet_is_time_loss: 1 for a loss on
-- time.
CREATE FUNCTION fleet_is_crash(t text) RETURNS int
LANGUAGE sql IMMUTABLE AS $$ SELECT (t IN ('crash', 'stall', 'disconnect'))::int $$;
CREATE FUNCTION fleet_is_time_loss(t text) RETURNS int
LANGUAGE sql IMMUTABLE AS $$ SELECT (t = 'time-forfeit')::int $$;

-- fleet_report of v2_trust.sql (same arguments, same answer), which also counts, in the
-- worker's tallies row it writes anyway, the pair's engine faults and losses on time and its
-- recent pairs (see the tallies columns above).
CREATE OR REPLACE FUNCTION fleet_report(p_worker bigint, p_secret text, p_run bigint,
    p_pairing int, p_pair int, p_token bigint, p_rec0 json, p_rec1 json, p_all boolean)
RETURNS TABLE (refused text, open boolean, pairing int, active boolean, dropped boolean,
    ll bigint, ld bigint, dd bigint, wd bigint, ww bigint, wins bigint, draws bigint,
    losses bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE
    k bigint := fleet_worker_auth(p_worker, p_secret);
    st text; pa pairings; pp pairs; g0 record; g1 record; s0 numeric; s1 numeric; bin int;
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
    SELECT * INTO g0 FROM fleet_record_read(p_rec0, p_pairing, p_pair, 0, pa.first_name,
                                            pa.second_name);
    SELECT * INTO g1 FROM fleet_record_read(p_rec1, p_pairing, p_pair, 1, pa.first_name,
                                            pa.second_name);
    s0 := g0.score; s1 := g1.score;
    bin := ((s0 + s1) * 2)::int;
    UPDATE pairs p SET state = 'done', lease_until = NULL
     WHERE p.run_id = p_run AND p.pairing = p_pairing AND p.pair = p_pair;
    INSERT INTO games (run_id, pairing, pair, game, worker_id, record)
    VALUES (p_run, p_pairing, p_pair, 0, p_worker, p_rec0),
           (p_run, p_pairing, p_pair, 1, p_worker, p_rec1);
    INSERT INTO tallies AS t (run_id, pairing, worker_id, ll, ld, dd, wd, ww, wins, draws, losses,
                              crashes, time_losses, recent, recent_at)
    VALUES (p_run, p_pairing, p_worker, (bin = 0)::int, (bin = 1)::int, (bin = 2)::int,
            (bin = 3)::int, (bin = 4)::int, (s0 = 1)::int + (s1 = 1)::int,
            (s0 = 0.5)::int + (s1 = 0.5)::int, (s0 = 0)::int + (s1 = 0)::int,
            fleet_is_crash(g0.termination) + fleet_is_crash(g1.termination),
            fleet_is_time_loss(g0.termination) + fleet_is_time_loss(g1.termination),
            1, now())
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
        recent_at = excluded.recent_at;
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

-- ------------------------------------------------------------------------ removing a run

-- When the run's games were last written to a results folder by `runner pull` (fleet_pulled),
-- and by whom: a finished run pulled after it ended may be deleted without --force.
ALTER TABLE runs ADD COLUMN pulled_at timestamptz, ADD COLUMN pulled_by text;

-- `runner pull` wrote run `p_run`'s games to a folder.
CREATE FUNCTION fleet_pulled(p_run bigint) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    UPDATE runs SET pulled_at = clock_timestamp(), pulled_by = session_user WHERE id = p_run
$$;

-- Removes run `p_run` with its schedule, counts, games, refusals and incidents (its owner or
-- an approver). A pending or active run is refused (cancel it first); so is a run not pulled
-- since it ended, unless `p_force`. Returns the number of games removed.
CREATE FUNCTION fleet_delete(p_run bigint, p_force boolean) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE r runs := fleet_may_change(p_run); n bigint;
BEGIN
    IF r.state IN ('pending', 'active') THEN
        RAISE EXCEPTION 'run % is %: cancel it first (runner cancel %), then delete it', p_run,
            r.state, p_run USING ERRCODE = 'object_in_use';
    END IF;
    IF NOT coalesce(p_force, false)
       AND (r.pulled_at IS NULL OR r.pulled_at < coalesce(r.finished_at, r.created_at)) THEN
        RAISE EXCEPTION 'run % was not pulled since it ended: its games would be lost (runner pull % --out DIR first, or delete it with --force)',
            p_run, p_run USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    SELECT count(*) INTO n FROM games WHERE run_id = p_run;
    DELETE FROM runs WHERE id = p_run;
    RETURN n;
END $$;
