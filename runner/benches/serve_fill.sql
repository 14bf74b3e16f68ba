-- Fills a fleet database for `runner serve`'s load figures (runner/benches/serve_load.py;
-- docs/measurements/serve-load.md). Run as the database's owner after `runner db init` and one
-- `runner submit` of a match with --games 100000 and an SPRT (run :big), with one game record of
-- that run's engines in :'record' (a games.jsonl line).
--
--   psql -v big=1 -v record="$(head -1 results/x/games.jsonl)" -f runner/benches/serve_fill.sql
--
-- Run :big gets 100,000 stored games (every pair done, its tallies to match); then 999 copies
-- of its row are added in every state, a few dozen active at two owners and priorities, each
-- with a tally row, so the list has 1,000 runs.

BEGIN;
UPDATE pairs SET state = 'done', worker_id = NULL WHERE run_id = :big;
INSERT INTO games (run_id, pairing, pair, game, worker_id, reported_at, record)
SELECT :big, p.pairing, p.pair, g,
       NULL, now() - make_interval(secs => (50000 - p.seq) * 0.05),
       jsonb_set(jsonb_set(jsonb_set(:'record'::jsonb, '{pair}', to_jsonb(p.pair)),
                 '{game}', to_jsonb(g)), '{seq}', to_jsonb(p.seq * 2 + g))::json
  FROM pairs p, generate_series(0, 1) g WHERE p.run_id = :big;
INSERT INTO tallies (run_id, pairing, worker_id, ll, ld, dd, wd, ww, wins, draws, losses)
VALUES (:big, 0, 0, 2500, 11000, 22000, 11500, 3000, 34000, 33000, 33000)
ON CONFLICT (run_id, pairing, worker_id) DO NOTHING;
UPDATE runs SET state = 'complete', finished_at = now(), stop_reason = 'complete'
 WHERE id = :big;

INSERT INTO runs (kind, state, stop_reason, submission, plan_hash, owner, approved_by,
                  priority, throughput, judge, created_at, finished_at)
SELECT r.kind,
       CASE WHEN n % 50 = 0 THEN 'pending' WHEN n % 25 = 0 THEN 'active'
            WHEN n % 7 = 0 THEN 'failed' ELSE 'decided' END,
       'bench', r.submission, r.plan_hash,
       CASE WHEN n % 2 = 0 THEN 'alice' ELSE 'bob' END, r.owner,
       n % 3, 100, r.judge, now() - make_interval(secs => n * 60),
       CASE WHEN n % 25 <> 0 THEN now() END
  FROM runs r, generate_series(1, 999) n WHERE r.id = :big;
INSERT INTO pairings (run_id, pairing, label, active)
SELECT r.id, 0, 'A vs B', r.state = 'active' FROM runs r WHERE r.id <> :big;
INSERT INTO tallies (run_id, pairing, worker_id, ll, ld, dd, wd, ww, wins, draws, losses)
SELECT r.id, 0, 0, 10, 40, 80, 45, 12, 120, 130, 124 FROM runs r WHERE r.id <> :big;
COMMIT;
ANALYZE;
