-- PostgreSQL lets PUBLIC execute every new function. The functions that act with the owner's
-- rights (SECURITY DEFINER) are for the roles docs/fleet-worker-role.sql grants them to; the
-- owner, superusers and members of the owner's role keep them.
DO $$
DECLARE f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
               JOIN pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname = 'public' AND p.proname LIKE 'fleet\_%' AND p.prosecdef LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
    END LOOP;
END $$;
