#!/usr/bin/env bash
# A team's fleet on one machine, from a fresh clone: a throwaway PostgreSQL cluster, the fleet's
# roles, two owners (alice and bob) submitting runs at different throughputs, an approver, two
# worker machines with their own keys and empty caches, one of the engines delivered as its
# source at a commit of this repository and built by each worker, and a third machine that
# lies about its results. Then `runner workers` and `runner status` show the shares, the builds,
# the bench speeds, the time left and each worker key's results, with the liar flagged; purging
# its key has its pairs played again by the honest machines.
#
#   docs/fleet-tour.sh            # from the repository's root; about 2 minutes on 2 cores after the build
#   KEEP=1 docs/fleet-tour.sh     # leave the cluster running (it prints how to stop it)
#
# Needs Debian's postgresql (server binaries under /usr/lib/postgresql/N/bin) and psql, git, a
# Rust toolchain. Writes only under a new folder of $TMPDIR (printed first); nothing listens on
# TCP: the cluster's socket is in that folder.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "fleet-tour: PostgreSQL server binaries not found: apt-get install postgresql" >&2; exit 1; }
command -v psql >/dev/null || { echo "fleet-tour: psql not found: apt-get install postgresql-client" >&2; exit 1; }
git rev-parse HEAD >/dev/null 2>&1 || { echo "fleet-tour: run it in a git clone of the repository" >&2; exit 1; }

say "Building the runner (release)"
cargo build --release -q -p runner
runner=$PWD/target/release/runner

tour=$(mktemp -d "${TMPDIR:-/tmp}/fleet-tour.XXXXXX")
echo "everything of this tour is under $tour"
# The cluster (data, log and socket) in a folder of its own: as root, it belongs to the postgres
# user (PostgreSQL refuses to run as root), while the tour's folder stays root's, so that the
# workers' boxes, which have no root powers, can reach their caches in it.
pgdir="$tour/db"
mkdir "$pgdir"
as=()
if [ "$(id -u)" = 0 ]; then
  chmod 711 "$tour"
  chown postgres "$pgdir"
  as=(runuser -u postgres --)
fi
stop_cluster() {
  if [ -z "${KEEP:-}" ]; then
    "${as[@]}" "$pgbin/pg_ctl" -D "$pgdir/pg" -m fast stop >/dev/null 2>&1 || true
  fi
}
trap stop_cluster EXIT

say "A throwaway PostgreSQL cluster on a Unix socket in $pgdir (no TCP)"
"${as[@]}" "$pgbin/initdb" -D "$pgdir/pg" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
"${as[@]}" "$pgbin/pg_ctl" -D "$pgdir/pg" -l "$pgdir/pg.log" -w \
  -o "-c listen_addresses='' -c unix_socket_directories='$pgdir'" start >/dev/null
# The approver here is the cluster's superuser; in a real team, a role in fleet_approver.
admin="host=$pgdir user=postgres dbname=postgres"
as_role() { echo "host=$pgdir user=$1 dbname=postgres"; }

say "The schema, the roles (docs/fleet-worker-role.sql) and two people"
"$runner" db init --db "$admin"
psql -q -X "$admin" -f docs/fleet-worker-role.sql >/dev/null
psql -q -X "$admin" -c "CREATE ROLE alice LOGIN IN ROLE fleet_submitter" \
  -c "CREATE ROLE bob LOGIN IN ROLE fleet_submitter"

say "A key for each worker machine (printed once; only its hash is stored)"
for box in box1 box2 box3; do
  "$runner" worker-key add --db "$admin" "$box" | tail -1 > "$tour/$box.key"
  chmod 600 "$tour/$box.key"
done
"$runner" worker-key list --db "$admin"

rev=$(git rev-parse --short HEAD)
say "alice submits the bundled engine from source at $rev against itself without MPC (throughput 200, 240 games)"
# src=. is this clone; rev= any branch, tag or commit. The submitter builds it once here to read
# its bench node count; workers get the commit's source archive from the database and build it.
src="src=.,rev=$rev,build=cargo build --release -p engine,bin=target/release/engine,benchcmd=bench 5"
run_a=$("$runner" submit --db "$(as_role alice)" match \
  --engine "name=dev,$src" --engine "name=nompc,$src,option.MPC=false" \
  --nodes 3000 --games 240 --seed 1 --throughput 200 | sed -n "s/^run //p" | tail -1)
echo "alice's run: $run_a"

say "bob submits the same commit with t_mid 0.5 against t_mid 1.0 (throughput 100)"
run_b=$("$runner" submit --db "$(as_role bob)" match \
  --engine "name=tight,$src,option.t_mid=0.5" --engine "name=dev,$src" \
  --nodes 3000 --games 40 --seed 2 | sed -n "s/^run //p" | tail -1)
echo "bob's run: $run_b"

say "Both wait for an approver; runner status says so"
"$runner" status --db "$admin" | grep -E "^run |pending" || true
# `approve` shows each engine as workers will run it, then asks; --yes is the answer a script
# gives (the approver has read the engines above).
"$runner" approve --db "$admin" "$run_a" --yes
"$runner" approve --db "$admin" "$run_b" --yes

# box3 is a machine whose owner changed the worker: it plays nothing and reports each pair of
# alice's run it is leased as won twice by dev. A worker's key lets it call only the worker
# functions (docs/fleet-worker-role.sql), and these are the calls a real worker makes; its
# records are well formed, so they are stored and counted. What gives it away is its results:
# `runner status` compares each key's pairs with the rest of the run's.
liar() {
  local db key wid secret row pairing pair token
  db=$(as_role fleet_worker)
  key=$(cat "$tour/box3.key")
  read -r wid secret < <(psql -X -q -At -F' ' -v key="$key" "$db" <<'SQL'
SELECT worker_id, secret FROM fleet_register(:'key', 'box3', 1, 1, 60, 'modified', NULL, NULL);
SQL
  )
  rec() {
    printf '{"pairing":%s,"pair":%s,"game":%s,"white":"%s","black":"%s","result":"%s","termination":"adjudication-resign"}' \
      "$pairing" "$pair" "$1" "$2" "$3" "$4"
  }
  for _ in $(seq 40); do
    row=$(psql -X -At -F' ' "$db" -c \
      "SELECT pairing, pair, token FROM fleet_claim($wid, '$secret', $run_a, '{}', 1, 60, 0)")
    [ -n "$row" ] || break
    read -r pairing pair token <<<"$row"
    psql -X -q -At "$db" -c "SELECT refused FROM fleet_report($wid, '$secret', $run_a, $pairing, \
      $pair, $token, '$(rec 0 dev nompc 1-0)', '$(rec 1 nompc dev 0-1)', false)" >/dev/null
    sleep 0.2
  done
}

say "Two honest workers, each with its own key and an empty cache, play both runs; box3 lies"
for box in box1 box2; do
  "$runner" worker --db "$(as_role fleet_worker)" --key-file "$tour/$box.key" \
    --cache "$tour/cache-$box" --concurrency 1 > "$tour/$box.log" 2>&1 &
done
liar
wait
tail -n 3 "$tour"/box1.log "$tour"/box2.log

say "runner workers: the machines, what they played, their bench speed"
"$runner" workers --db "$admin" --all

say "runner status: owner, priority, throughput, share, pairs/h, time left, builds, each key's results"
"$runner" status --db "$admin" "$run_a"
"$runner" status --db "$admin" "$run_b"

say "alice purges box3's pairs (runner status named the command); box1 plays them again"
"$runner" purge --db "$(as_role alice)" "$run_a" --worker box3
"$runner" worker --db "$(as_role fleet_worker)" --key-file "$tour/box1.key" \
  --cache "$tour/cache-box1" --concurrency 1 > "$tour/box1-again.log" 2>&1
"$runner" status --db "$admin" "$run_a"

say "A pulled run is an ordinary results folder"
"$runner" pull --db "$admin" "$run_a" --out "$tour/run-$run_a" | tail -3
echo "report: $tour/run-$run_a/report.html"
if [ -n "${KEEP:-}" ]; then
  echo "the cluster is still running: RUNNER_DB=\"$admin\"; stop it with: ${as[*]} $pgbin/pg_ctl -D $pgdir/pg stop"
fi
