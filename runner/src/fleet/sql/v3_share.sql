-- Schema version 3, part: priorities, throughputs and fair shares between runs and owners; `runner modify`.
--
-- A run has a priority (a claim serves the highest priority present first) and a throughput
-- (its weight among the runs of that priority, 100 by default). Within a priority, a run's
-- weight is its throughput divided by the number of runs its owner has at that priority, so
-- one owner's ten runs together weigh what one run of theirs would
-- (docs/guide/fleet-how-it-works.md, "Sharing the fleet"). What a run holds now is its leased pairs
-- whose lease is alive: one pair is one slot of a worker's --concurrency playing for it.

ALTER TABLE runs
    ADD COLUMN priority   integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN -1000 AND 1000),
    ADD COLUMN throughput integer NOT NULL DEFAULT 100 CHECK (throughput BETWEEN 1 AND 1000);

-- Active runs by priority and owner: what the claim and status read first.
CREATE INDEX runs_active ON runs (priority, owner) WHERE state = 'active';

-- A worker's stickiness: it stays on the run it plays while that run, with this claim, holds
-- at most this factor of the fair ratio (pairs in flight per unit of weight over its priority
-- level) and no run of the level is starved (below 1 / this factor of the fair ratio).
CREATE FUNCTION fleet_share_slack() RETURNS float8
LANGUAGE sql IMMUTABLE AS $$ SELECT 1.25::float8 $$;

-- Priority changes: a caller who is not an approver may submit or set priorities up to 0 only
-- (lowering one's own run is always allowed; raising above the default needs an approver).
CREATE FUNCTION fleet_check_priority(p_priority int) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = public, pg_temp AS $$
BEGIN
    IF p_priority IS NULL THEN RETURN; END IF;
    IF p_priority NOT BETWEEN -1000 AND 1000 THEN
        RAISE EXCEPTION 'priority % is outside [-1000, 1000]', p_priority
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_priority > 0 AND NOT fleet_is_admin() THEN
        RAISE EXCEPTION 'priority % is above 0: only an approver raises a run above the default priority',
            p_priority USING ERRCODE = 'insufficient_privilege';
    END IF;
END $$;

CREATE FUNCTION fleet_check_throughput(p_throughput int) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_throughput IS NOT NULL AND p_throughput NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'throughput % is outside [1, 1000] (100 is the default share)',
            p_throughput USING ERRCODE = 'invalid_parameter_value';
    END IF;
END $$;

-- The order in which a claim of `p_n` pairs tries the runs worker key `p_key` may claim (of
-- `p_only` when given, never of `p_skip`), for a worker that plays `p_current` now: highest
-- priority first; within it, the run the worker plays when it is within its share and no
-- other run of the level is starved (`sticky`), then by `after`, the run's pairs in flight per
-- unit of weight once these `p_n` are added (smallest first: the run furthest below its share),
-- then a run other than the worker's own, the larger weight, the older run. `leased` counts
-- live leases only (a dead worker's expired lease is not work in flight). Cost: one row per
-- active run plus one range of the partial lease index per run (never a run's stored pairs).
CREATE FUNCTION fleet_claim_order(p_key bigint, p_only bigint, p_skip bigint[],
    p_current bigint, p_n bigint)
RETURNS TABLE (id bigint, priority int, owner text, weight float8, leased bigint,
    after float8, sticky boolean)
-- PL/pgSQL, not SQL: its statement's plan is kept for the session (a SQL function's body is
-- planned again at every call), and every run's live leases are counted by one index range
-- scan per run, a plan that does not depend on how many runs the planner expects.
LANGUAGE plpgsql STABLE SET search_path = public, pg_temp AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH w AS (
        SELECT r.id, r.priority, r.owner,
               r.throughput::float8 / count(*) OVER (PARTITION BY r.priority, r.owner) AS weight,
               l.n AS leased
          FROM runs r
          CROSS JOIN LATERAL (
              SELECT count(*) AS n FROM pairs p
               WHERE p.run_id = r.id AND p.state = 'leased' AND p.lease_until > now()) l
         WHERE r.state = 'active' AND (p_only IS NULL OR r.id = p_only)
           AND NOT (r.id = ANY(coalesce(p_skip, '{}')))
           AND NOT EXISTS (SELECT 1 FROM refusals f WHERE f.run_id = r.id AND f.key_id = p_key)),
    s AS (
        SELECT w.*, (w.leased + p_n) / w.weight AS after,
               -- The level's fair ratio with this claim added and without it, and its most
               -- starved run besides the worker's own (whose pair just ended).
               (sum(w.leased) OVER lv + p_n)::float8 / sum(w.weight) OVER lv AS fair_after,
               (sum(w.leased) OVER lv)::float8 / sum(w.weight) OVER lv AS fair_now,
               min(CASE WHEN w.id IS DISTINCT FROM p_current THEN w.leased / w.weight END)
                   OVER lv AS least_other
          FROM w WINDOW lv AS (PARTITION BY w.priority))
    SELECT s.id, s.priority, s.owner, s.weight, s.leased, s.after,
           coalesce(s.id = p_current, false)
             AND s.after <= fleet_share_slack() * s.fair_after
             AND coalesce(s.least_other >= s.fair_now / fleet_share_slack(), true) AS sticky
      FROM s
     -- On a tie the worker moves to another run: when runs outnumber the slots, they take turns.
     ORDER BY s.priority DESC, 7 DESC, s.after, coalesce(s.id = p_current, false),
              s.weight DESC, s.id;
END $$;

-- Leases up to `p_n` pairs for a worker that plays run `p_current` now (NULL: none), trying
-- runs in fleet_claim_order's order: of each, pending pairs of active pairings or expired
-- leases in schedule order, each under a new fencing token, until `p_n` are leased. A tuning
-- run hands out at most `p_tune_ahead` iterations beyond those applied. Only the runs tried are
-- locked (FOR KEY SHARE: a claim waits while its run is being decided, then sees its new
-- state), usually one.
DROP FUNCTION fleet_claim(bigint, text, bigint, bigint[], bigint, float8, bigint);
CREATE FUNCTION fleet_claim(p_worker bigint, p_secret text, p_only bigint, p_skip bigint[],
    p_n bigint, p_lease float8, p_tune_ahead bigint, p_current bigint DEFAULT NULL)
RETURNS TABLE (run_id bigint, seq int, pairing int, pair int, opening int, token bigint,
    attempts int, spsa jsonb)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE
    k bigint := fleet_worker_auth(p_worker, p_secret);
    want bigint := p_n; got bigint; cand record; v_applied bigint;
BEGIN
    FOR cand IN SELECT o.id FROM fleet_claim_order(k, p_only, p_skip, p_current, p_n) o LOOP
        SELECT t.applied INTO v_applied FROM runs x LEFT JOIN tune_state t ON t.run_id = x.id
         WHERE x.id = cand.id AND x.state = 'active' FOR KEY SHARE OF x;
        IF NOT FOUND THEN CONTINUE; END IF;
        RETURN QUERY
        WITH pending AS (
            SELECT p.run_id, p.pairing, p.pair, p.seq FROM pairs p
             WHERE p.run_id = cand.id AND p.state = 'pending'
               AND EXISTS (SELECT 1 FROM pairings g
                            WHERE g.run_id = p.run_id AND g.pairing = p.pairing AND g.active)
               AND (v_applied IS NULL OR p.spsa IS NOT NULL OR p.seq < v_applied + p_tune_ahead)
             ORDER BY p.seq LIMIT want
             FOR UPDATE OF p SKIP LOCKED),
        expired AS (
            SELECT p.run_id, p.pairing, p.pair, p.seq FROM pairs p
             WHERE p.run_id = cand.id AND p.state = 'leased' AND p.lease_until < now()
               AND EXISTS (SELECT 1 FROM pairings g
                            WHERE g.run_id = p.run_id AND g.pairing = p.pairing AND g.active)
               AND (v_applied IS NULL OR p.spsa IS NOT NULL OR p.seq < v_applied + p_tune_ahead)
             ORDER BY p.seq LIMIT want
             FOR UPDATE OF p SKIP LOCKED),
        c AS (SELECT * FROM pending UNION ALL SELECT * FROM expired ORDER BY seq LIMIT want)
        UPDATE pairs p SET state = 'leased', token = nextval('lease_tokens'),
               worker_id = p_worker, lease_until = now() + make_interval(secs => p_lease),
               claimed_at = clock_timestamp(), attempts = p.attempts + 1
          FROM c WHERE p.run_id = c.run_id AND p.pairing = c.pairing AND p.pair = c.pair
        RETURNING p.run_id, p.seq, p.pairing, p.pair, p.opening, p.token, p.attempts, p.spsa;
        GET DIAGNOSTICS got = ROW_COUNT;
        want := want - got;
        EXIT WHEN want <= 0;
    END LOOP;
END $$;

-- Stores a run and its schedule; returns its id. Owned by the caller; 'active' when the caller
-- is an approver, else 'pending' until one approves it. `p_priority` above 0 needs an approver.
DROP FUNCTION fleet_submit(text, jsonb, text, jsonb, text[], text[], text[], int[], int[], int[],
    jsonb, jsonb[], int);
CREATE FUNCTION fleet_submit(p_kind text, p_submission jsonb, p_plan_hash text, p_judge jsonb,
    p_labels text[], p_first text[], p_second text[], p_pairing int[], p_pair int[],
    p_opening int[], p_theta jsonb, p_draws jsonb[], p_refusal_limit int,
    p_priority int DEFAULT 0, p_throughput int DEFAULT 100)
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
    PERFORM fleet_check_priority(p_priority);
    PERFORM fleet_check_throughput(p_throughput);
    INSERT INTO runs (kind, state, submission, plan_hash, owner, approved_by, approved_at, judge,
                      refusal_limit, priority, throughput)
    VALUES (p_kind, CASE WHEN admin THEN 'active' ELSE 'pending' END, p_submission, p_plan_hash,
            session_user, CASE WHEN admin THEN session_user END, CASE WHEN admin THEN now() END,
            coalesce(p_judge, '{}'), coalesce(p_refusal_limit, 3), coalesce(p_priority, 0),
            coalesce(p_throughput, 100))
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

-- `runner modify`: changes run `p_run`'s priority, throughput, or games per pairing (NULL:
-- unchanged); its owner or an approver. `p_pairs` (games / 2 per pairing) shrinks or grows the
-- run within the schedule it was submitted with: pending pairs of active pairings at or past
-- `p_pairs` are skipped, skipped pairs of active pairings before it are pending again (a
-- complete run becomes active again); past the submitted schedule is refused. A tuning run's
-- length is refused (its gains follow its iteration count). Returns the run after and the pairs
-- skipped and reopened.
CREATE FUNCTION fleet_modify(p_run bigint, p_priority int, p_throughput int, p_pairs int)
RETURNS TABLE (state text, priority int, throughput int, skipped bigint, reopened bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE r runs := fleet_may_change(p_run); most int;
BEGIN
    PERFORM fleet_check_priority(p_priority);
    PERFORM fleet_check_throughput(p_throughput);
    skipped := 0; reopened := 0;
    IF p_pairs IS NOT NULL THEN
        IF r.state NOT IN ('pending', 'active', 'complete') THEN
            RAISE EXCEPTION 'run % is %: its length cannot change', p_run, r.state
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        IF r.kind = 'tune' THEN
            RAISE EXCEPTION 'run % is a tuning run: its gains follow its number of iterations, so its length cannot change (cancel it and submit it again)',
                p_run USING ERRCODE = 'feature_not_supported';
        END IF;
        SELECT max(x.pair) + 1 INTO most FROM pairs x WHERE x.run_id = p_run;
        IF p_pairs < 1 OR p_pairs > coalesce(most, 0) THEN
            RAISE EXCEPTION 'run % was submitted with % games per pairing: --games must be between 2 and that (submit a new run for more)',
                p_run, 2 * coalesce(most, 0) USING ERRCODE = 'invalid_parameter_value';
        END IF;
        WITH s AS (
            UPDATE pairs x SET state = 'skipped'
              FROM pairings g
             WHERE x.run_id = p_run AND x.state = 'pending' AND x.pair >= p_pairs
               AND g.run_id = x.run_id AND g.pairing = x.pairing AND g.active
            RETURNING 1)
        SELECT count(*) INTO skipped FROM s;
        WITH o AS (
            UPDATE pairs x SET state = 'pending', token = NULL, worker_id = NULL,
                   lease_until = NULL
              FROM pairings g
             WHERE x.run_id = p_run AND x.state = 'skipped' AND x.pair < p_pairs
               AND g.run_id = x.run_id AND g.pairing = x.pairing AND g.active
            RETURNING 1)
        SELECT count(*) INTO reopened FROM o;
        IF reopened > 0 AND r.state = 'complete' THEN
            UPDATE runs x SET state = 'active', stop_reason = NULL, finished_at = NULL
             WHERE x.id = p_run;
        END IF;
        -- A shrunk run whose every pair left is played is complete now.
        PERFORM fleet_settle_run(p_run);
    END IF;
    UPDATE runs x SET priority = coalesce(p_priority, x.priority),
           throughput = coalesce(p_throughput, x.throughput)
     WHERE x.id = p_run
    RETURNING x.state, x.priority, x.throughput INTO state, priority, throughput;
    RETURN NEXT;
END $$;

-- Each active run's share of the fleet now (runner status): its priority, throughput and
-- weight (throughput over its owner's runs at that priority), its live leases, its share of
-- the live leases of every active run, and its target share (its weight over its level's; 0
-- below the highest priority of the active runs, which claims serve first).
CREATE FUNCTION fleet_shares()
RETURNS TABLE (id bigint, owner text, priority int, throughput int, weight float8,
    leased bigint, share_now float8, share_target float8)
LANGUAGE sql STABLE AS $$
    WITH r AS (
        SELECT r.id, r.owner, r.priority, r.throughput,
               r.throughput::float8 / count(*) OVER (PARTITION BY r.priority, r.owner) AS weight,
               (SELECT count(*) FROM pairs p WHERE p.run_id = r.id AND p.state = 'leased'
                   AND p.lease_until > now()) AS leased
          FROM runs r WHERE r.state = 'active'),
    top AS (SELECT max(r.priority) AS p FROM r)
    SELECT r.id, r.owner, r.priority, r.throughput, r.weight, r.leased,
           CASE WHEN sum(r.leased) OVER () > 0
                THEN r.leased::float8 / sum(r.leased) OVER () END,
           CASE WHEN r.priority = (SELECT p FROM top)
                THEN r.weight / sum(r.weight) OVER (PARTITION BY r.priority) ELSE 0 END
      FROM r ORDER BY r.id
$$;
