-- Schema version 5, part: a worker records the engines it loaded only for a run it holds a
-- lease on. Under version 4 any worker key could write build and bench rows for any active,
-- approved run (a failed build with its own words, a bench speed), shown on that run's status
-- and page; a worker may only report on what it was leased. The pair is leased while the
-- worker loads the run's engines (it claimed the pair first, then builds, records, and plays
-- or refuses). A record that fails the check is dropped silently, as one for a run that ended.
CREATE OR REPLACE FUNCTION fleet_engine_loaded(p_worker bigint, p_secret text, p_run bigint,
    p_engine text, p_commit text, p_build text, p_build_secs float8, p_nodes bigint,
    p_nps bigint, p_error text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM fleet_worker_auth(p_worker, p_secret);
    IF NOT EXISTS (SELECT 1 FROM runs WHERE id = p_run AND state = 'active'
                   AND approved_by IS NOT NULL)
       OR NOT EXISTS (SELECT 1 FROM pairs p WHERE p.worker_id = p_worker AND p.run_id = p_run
                      AND p.state = 'leased') THEN
        RETURN;
    END IF;
    INSERT INTO engine_loads (worker_id, run_id, engine, commit, build, build_secs, nodes, nps,
                              error)
    VALUES (p_worker, p_run, left(p_engine, 200), left(p_commit, 64), p_build,
            CASE WHEN p_build_secs BETWEEN 0 AND 1e7 THEN p_build_secs END,
            CASE WHEN p_nodes >= 0 THEN p_nodes END, CASE WHEN p_nps >= 0 THEN p_nps END,
            left(p_error, 300));
END $$;
