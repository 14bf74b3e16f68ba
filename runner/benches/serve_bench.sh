#!/bin/sh
# runner serve's load figures (docs/measurements/serve-load.md): a throwaway PostgreSQL cluster on a
# Unix socket filled with 1,000 runs (one of 100,000 games), a local run folder of 100,000 games, a
# release server over both, and runner/benches/serve_load.py against it. Localhost only; everything
# is in one temporary folder, removed at the end.
#
#   cargo build --release -p runner -p engine && sh runner/benches/serve_bench.sh
set -eu
BIN=${BIN:-target/release}
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | tail -1)}
W=$(mktemp -d /tmp/serve-bench.XXXXXX)
chown postgres "$W" 2>/dev/null || true
AS=""; [ "$(id -u)" = 0 ] && AS="runuser -u postgres --"
$AS "$PGBIN/initdb" -D "$W/pg" -U postgres >/dev/null
$AS "$PGBIN/pg_ctl" -D "$W/pg" -o "-k $W -c listen_addresses=''" -l "$W/pg.log" -w start >/dev/null
DB="host=$W user=postgres dbname=postgres"
cleanup() { $AS "$PGBIN/pg_ctl" -D "$W/pg" -m immediate -w stop >/dev/null; rm -rf "$W"; }
trap cleanup EXIT
"$BIN/runner" db init --db "$DB" >/dev/null
psql -q "$DB" -f docs/fleet-reader-role.sql >/dev/null
E="$BIN/engine"
mkdir -p "$W/results"
"$BIN/runner" match --engine "name=A,cmd=$E" --engine "name=B,cmd=$E" --nodes 1000 --games 2 \
  --progress quiet --out "$W/results/base" >/dev/null
# The local 100,000-game run: the two games' records as 50,000 pairs.
python3 - "$W/results" <<'PY'
import json, os, shutil, sys
root = sys.argv[1]
recs = [json.loads(l) for l in open(f"{root}/base/games.jsonl")]
os.makedirs(f"{root}/big")
for f in ("run.json", "summary.json"):
    shutil.copy(f"{root}/base/{f}", f"{root}/big/{f}")
with open(f"{root}/big/games.jsonl", "w") as out:
    for pair in range(50000):
        for r in recs:
            r = dict(r, pair=pair, seq=pair * 2 + r["game"])
            out.write(json.dumps(r) + "\n")
PY
RUN=$("$BIN/runner" submit --db "$DB" match --engine "name=A,cmd=$E" --engine "name=B,cmd=$E" \
  --nodes 1000 --games 100000 --sprt elo0=0,elo1=5 | sed -n 's/^run //p' | tail -1)
psql -q "$DB" -v big="$RUN" -v record="$(head -1 "$W/results/base/games.jsonl")" \
  -f runner/benches/serve_fill.sql >/dev/null
"$BIN/runner" serve --db "host=$W user=fleet_reader dbname=postgres" --results "$W/results" \
  --bind 127.0.0.1:8099 > "$W/serve.out" 2>&1 &
PID=$!
sleep 2
L=runner/benches/serve_load.py
U=http://127.0.0.1:8099
python3 $L "$U/" --requests 200 --clients 4 --pid $PID
python3 $L "$U/run/fleet-$RUN" --requests 200 --clients 4 --pid $PID
python3 $L "$U/run/big" --requests 200 --clients 4 --pid $PID
python3 $L "$U/run/big/games?offset=99000&limit=100" --requests 200 --clients 4
python3 $L "$U/run/fleet-$RUN/games?offset=49000&limit=100" --requests 200 --clients 4
python3 $L "$U/api/runs" --requests 50 --clients 2 --streams 100 --pid $PID
# Page weight: the run pages of the two 100,000-game runs, and the list.
for p in "/run/fleet-$RUN" "/run/big" "/"; do
  curl -s -o /dev/null -w "page $p: %{size_download} bytes in %{time_total} s\n" "$U$p"
done
for p in "/run/fleet-$RUN/games.jsonl" "/run/big/games.jsonl"; do
  curl -s -o /dev/null -w "$p: %{size_download} bytes in %{time_total} s\n" "$U$p"
done
python3 $L "$U/" --requests 1 --clients 1 --pid $PID
kill $PID
