-- Schema version 7, the contract step: every function of versions 2 to 6 goes.
--
-- Those functions held the fleet's rules inside PostgreSQL: the workers' calls (register,
-- claim, report, heartbeat, ...) as SECURITY DEFINER functions that checked who called, the
-- people's (submit, approve, cancel, modify, purge, delete, keys, artifacts), and judge.sql's
-- decisions (the SPRT, racing, SPSA). A runner whose schema version is 7 calls none of them: its
-- server holds the rules in Rust and alone writes the tables. A runner of an earlier version
-- calls them, so this step is applied only by `runner db init --contract`, which refuses while
-- such a runner is connected; `fleet_schema.oldest` then says 7, and an earlier runner started
-- afterwards is refused in one line instead of failing at its first call.
--
-- What is left is tables, indexes and constraints. No data changes.
DO $$
DECLARE f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
              WHERE p.pronamespace = current_schema()::regnamespace
                AND p.proname LIKE 'fleet\_%'
              ORDER BY p.oid
    LOOP
        EXECUTE format('DROP FUNCTION %s', f);
    END LOOP;
END $$;
