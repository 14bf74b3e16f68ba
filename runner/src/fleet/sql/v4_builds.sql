-- Schema version 4, part: engines built from source on the workers, and what each worker's
-- engines do there.
--
-- A row per engine a worker loaded for a run: for an engine built from source, the commit, how
-- the build went (`built` in `build_secs` seconds, `cached`: taken from the worker's build
-- cache, `failed` with its reason); for every engine whose bench ran, its node count and speed
-- (nodes per second on that machine). Written only through fleet_engine_loaded (workers write
-- no table), read by `runner workers` (bench speeds) and `runner status` (builds per run).

CREATE TABLE engine_loads (
    id          bigserial PRIMARY KEY,
    worker_id   bigint NOT NULL REFERENCES workers ON DELETE CASCADE,
    run_id      bigint NOT NULL REFERENCES runs ON DELETE CASCADE,
    engine      text NOT NULL,
    commit      text,
    build       text CHECK (build IN ('built', 'cached', 'failed')),
    build_secs  float8,
    nodes       bigint,
    nps         bigint,
    error       text,
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX engine_loads_worker ON engine_loads (worker_id, at);
CREATE INDEX engine_loads_run ON engine_loads (run_id, at);

-- Worker `p_worker` loaded engine `p_engine` of run `p_run` (an active run: a worker never
-- builds or runs anything of another): its build (NULL for a binary) and bench (NULL when none
-- ran). Texts are cut to what a status line shows.
CREATE FUNCTION fleet_engine_loaded(p_worker bigint, p_secret text, p_run bigint,
    p_engine text, p_commit text, p_build text, p_build_secs float8, p_nodes bigint,
    p_nps bigint, p_error text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM fleet_worker_auth(p_worker, p_secret);
    IF NOT EXISTS (SELECT 1 FROM runs WHERE id = p_run AND state = 'active'
                   AND approved_by IS NOT NULL) THEN
        RETURN;
    END IF;
    INSERT INTO engine_loads (worker_id, run_id, engine, commit, build, build_secs, nodes, nps,
                              error)
    VALUES (p_worker, p_run, left(p_engine, 200), left(p_commit, 64), p_build,
            CASE WHEN p_build_secs BETWEEN 0 AND 1e7 THEN p_build_secs END,
            CASE WHEN p_nodes >= 0 THEN p_nodes END, CASE WHEN p_nps >= 0 THEN p_nps END,
            left(p_error, 300));
END $$;
