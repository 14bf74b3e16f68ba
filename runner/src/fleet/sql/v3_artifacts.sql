-- Schema version 3, part: engines delivered through the database: content-addressed artifacts, sources at a commit, builds.
--
-- An artifact is a file (an engine binary, or a source archive) stored by its SHA-256 in chunks of
-- at most 1 MiB, at most 128 MiB in all (docs/guide/fleet-how-it-works.md says why). A submitter
-- uploads its chunks (fleet_artifact_put), then seals it (fleet_artifact_seal): the database hashes
-- the chunks itself, so an artifact stored under a hash is the file of that hash, and nobody can
-- park other bytes under a hash another submitter will use. A sealed artifact is shared by every
-- run that names it (deduplicated); a run names its artifacts in the transaction that submits it
-- (fleet_run_artifacts). Workers read chunks only of artifacts of a run that is approved and active
-- (fleet_artifact_chunk): nothing else reaches them.

CREATE TABLE artifacts (
    sha         text PRIMARY KEY CHECK (sha ~ '^[0-9a-f]{64}$'),
    size        bigint NOT NULL CHECK (size BETWEEN 0 AND 134217728),
    chunks      integer NOT NULL CHECK (chunks >= 0),
    kind        text NOT NULL DEFAULT 'binary' CHECK (kind IN ('binary', 'source')),
    sealed      boolean NOT NULL DEFAULT false,
    created_by  text NOT NULL DEFAULT session_user,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE artifact_chunks (
    sha    text NOT NULL REFERENCES artifacts ON DELETE CASCADE,
    n      integer NOT NULL CHECK (n >= 0),
    bytes  bytea NOT NULL CHECK (length(bytes) <= 1048576),
    PRIMARY KEY (sha, n)
);
CREATE TABLE run_artifacts (
    run_id  bigint NOT NULL REFERENCES runs ON DELETE CASCADE,
    sha     text NOT NULL REFERENCES artifacts,
    PRIMARY KEY (run_id, sha)
);
CREATE INDEX run_artifacts_sha ON run_artifacts (sha);

-- Whether artifact `p_sha` is stored and sealed (then a submitter uploads nothing).
CREATE FUNCTION fleet_artifact_sealed(p_sha text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT coalesce((SELECT sealed FROM artifacts WHERE sha = p_sha), false)
$$;

-- Stores chunk `p_n` of `p_chunks` of artifact `p_sha` (`p_size` bytes in all). An unsealed
-- artifact is its uploader's: another role's upload of the same hash starts it again. A sealed
-- one is never changed.
CREATE FUNCTION fleet_artifact_put(p_sha text, p_size bigint, p_chunks int, p_kind text,
    p_n int, p_bytes bytea) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE a artifacts;
BEGIN
    IF p_n < 0 OR p_n >= p_chunks THEN
        RAISE EXCEPTION 'artifact %: chunk % of %', p_sha, p_n, p_chunks
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT * INTO a FROM artifacts WHERE sha = p_sha FOR UPDATE;
    IF FOUND AND a.sealed THEN
        RETURN;
    END IF;
    IF FOUND AND (a.created_by <> session_user OR a.size <> p_size OR a.chunks <> p_chunks
                  OR a.kind <> p_kind) THEN
        DELETE FROM artifacts WHERE sha = p_sha;
        FOUND := false;
    END IF;
    IF NOT FOUND THEN
        INSERT INTO artifacts (sha, size, chunks, kind) VALUES (p_sha, p_size, p_chunks, p_kind);
    END IF;
    INSERT INTO artifact_chunks (sha, n, bytes) VALUES (p_sha, p_n, p_bytes)
        ON CONFLICT (sha, n) DO UPDATE SET bytes = EXCLUDED.bytes;
END $$;

-- Seals artifact `p_sha` after the database checked its chunks: all there, the size and the
-- SHA-256 of their concatenation those announced. Raises otherwise (and drops the upload).
CREATE FUNCTION fleet_artifact_seal(p_sha text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE a artifacts; n int; whole bytea;
BEGIN
    SELECT * INTO a FROM artifacts WHERE sha = p_sha FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no artifact % was uploaded', p_sha USING ERRCODE = 'no_data_found';
    END IF;
    IF a.sealed THEN
        RETURN;
    END IF;
    IF a.created_by <> session_user THEN
        RAISE EXCEPTION 'artifact % is being uploaded by %', p_sha, a.created_by
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT count(*), coalesce(string_agg(bytes, ''::bytea ORDER BY c.n), ''::bytea)
      INTO n, whole FROM artifact_chunks c WHERE c.sha = p_sha;
    IF n <> a.chunks OR length(whole) <> a.size OR encode(sha256(whole), 'hex') <> p_sha THEN
        DELETE FROM artifacts WHERE sha = p_sha;
        RAISE EXCEPTION 'artifact %: the chunks uploaded (% of %, % bytes) are not the file of that hash',
            p_sha, n, a.chunks, length(whole) USING ERRCODE = 'data_exception';
    END IF;
    UPDATE artifacts SET sealed = true WHERE sha = p_sha;
END $$;

-- Names the artifacts run `p_run` executes (the run's owner or an approver, in the
-- transaction that submitted it). Each must be sealed.
CREATE FUNCTION fleet_run_artifacts(p_run bigint, p_shas text[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE r runs := fleet_may_change(p_run); missing text;
BEGIN
    SELECT s INTO missing FROM unnest(p_shas) s
     WHERE NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha = s AND a.sealed) LIMIT 1;
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'run %: no sealed artifact %', r.id, missing USING ERRCODE = 'no_data_found';
    END IF;
    INSERT INTO run_artifacts (run_id, sha) SELECT r.id, s FROM unnest(p_shas) s
        ON CONFLICT DO NOTHING;
END $$;

-- The artifacts of run `p_run` a worker may fetch: none unless the run is approved and active.
CREATE FUNCTION fleet_worker_artifacts(p_worker bigint, p_secret text, p_run bigint)
RETURNS TABLE (sha text, size bigint, chunks int, kind text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM fleet_worker_auth(p_worker, p_secret);
    RETURN QUERY
    SELECT a.sha, a.size, a.chunks, a.kind
      FROM run_artifacts ra JOIN runs r ON r.id = ra.run_id JOIN artifacts a ON a.sha = ra.sha
     WHERE ra.run_id = p_run AND r.state = 'active' AND r.approved_by IS NOT NULL AND a.sealed
     ORDER BY a.sha;
END $$;

-- Chunk `p_n` of artifact `p_sha`, for a worker, when an approved, active run names it; raises
-- otherwise.
CREATE FUNCTION fleet_artifact_chunk(p_worker bigint, p_secret text, p_sha text, p_n int)
RETURNS bytea
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE b bytea;
BEGIN
    PERFORM fleet_worker_auth(p_worker, p_secret);
    IF NOT EXISTS (SELECT 1 FROM run_artifacts ra JOIN runs r ON r.id = ra.run_id
                    JOIN artifacts a ON a.sha = ra.sha
                   WHERE ra.sha = p_sha AND a.sealed AND r.state = 'active'
                     AND r.approved_by IS NOT NULL) THEN
        RAISE EXCEPTION 'artifact % belongs to no approved, active run', p_sha
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT bytes INTO b FROM artifact_chunks WHERE sha = p_sha AND n = p_n;
    IF b IS NULL THEN
        RAISE EXCEPTION 'artifact % has no chunk %', p_sha, p_n USING ERRCODE = 'no_data_found';
    END IF;
    RETURN b;
END $$;

-- Deletes the artifacts no run names that were uploaded more than `p_min_age` ago (an upload
-- younger than that may belong to a submission in progress); administrators only. Returns the
-- artifacts deleted.
CREATE FUNCTION fleet_gc_artifacts(p_min_age interval)
RETURNS TABLE (sha text, size bigint, kind text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
BEGIN
    IF NOT fleet_is_admin() THEN
        RAISE EXCEPTION 'only an approver deletes artifacts' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN QUERY
    DELETE FROM artifacts a
     WHERE NOT EXISTS (SELECT 1 FROM run_artifacts ra WHERE ra.sha = a.sha)
       AND a.created_at < now() - p_min_age
    RETURNING a.sha, a.size, a.kind;
END $$;
