-- Schema version 5: runs take turns when they outnumber the workers' slots.
--
-- Under version 3, fleet_claim_order broke a tie between runs of one weight holding the same
-- share by the run's id. Ties are the rule when runs outnumber the slots (most runs hold
-- none), so the oldest runs took every slot that came free and a run submitted later waited
-- for them to end: measured with `cargo bench -p runner --bench fleet_load -- --runs 100`,
-- at least one of 100 equal runs played all its 1,500 pairs in 20 s. Now such a tie goes to
-- the run whose newest claim is oldest (a run never claimed first of all), read from an index
-- on the claim time: one more index probe per active run, as the live leases are counted.

-- Only claimed pairs: a run's pending pairs (no claim time) are not in it.
CREATE INDEX pairs_claimed ON pairs (run_id, claimed_at) WHERE claimed_at IS NOT NULL;

-- The order in which a claim of `p_n` pairs tries the runs worker key `p_key` may claim (of
-- `p_only` when given, never of `p_skip`), for a worker that plays `p_current` now: highest
-- priority first; within it, the run the worker plays when it is within its share and no
-- other run of the level is starved (`sticky`), then by `after`, the run's pairs in flight per
-- unit of weight once these `p_n` are added (smallest first: the run furthest below its share),
-- then a run other than the worker's own, the larger weight, the run whose newest claim is
-- oldest, the older run. `leased` counts live leases only (a dead worker's expired lease is not work in flight). Cost: one row per
-- active run plus, per run, one range of the partial lease index and one probe of
-- pairs_claimed (never a run's stored pairs).
CREATE OR REPLACE FUNCTION fleet_claim_order(p_key bigint, p_only bigint, p_skip bigint[],
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
               l.n AS leased, c.at AS served
          FROM runs r
          CROSS JOIN LATERAL (
              SELECT count(*) AS n FROM pairs p
               WHERE p.run_id = r.id AND p.state = 'leased' AND p.lease_until > now()) l
          CROSS JOIN LATERAL (
              SELECT max(p.claimed_at) AS at FROM pairs p
               WHERE p.run_id = r.id AND p.claimed_at IS NOT NULL) c
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
     -- On a tie the worker moves to another run, the one served least recently first (never
     -- served: first of all): when runs outnumber the slots, they take turns.
     ORDER BY s.priority DESC, 7 DESC, s.after, coalesce(s.id = p_current, false),
              s.weight DESC, s.served NULLS FIRST, s.id;
END $$;
