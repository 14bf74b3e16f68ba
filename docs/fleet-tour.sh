#!/usr/bin/env bash
# A team's fleet on one machine, from a fresh clone: a throwaway PostgreSQL cluster that only
# `runner serve` connects to, three people with their own API tokens (alice and bob submit at
# different throughputs, ops approves), two worker machines with their own keys and empty caches
# that speak only HTTP to the server, one of the engines delivered as its source at a commit of
# this repository and built by each worker, and a third machine that lies about its results
# through the worker API. Then `runner workers` and `runner status` show the shares, the builds,
# the bench speeds, the time left and each worker key's results, with the liar flagged; purging
# its key has its pairs played again by the honest machines; alice pulls her run through the
# server. Nobody but the server is given a database URL.
#
#   docs/fleet-tour.sh            # from the repository's root; about 2 minutes on 2 cores after the build
#   KEEP=1 docs/fleet-tour.sh     # leave the cluster running (it prints how to stop it)
#
# Needs Debian's postgresql (server binaries under /usr/lib/postgresql/N/bin), curl and jq (the
# lying machine's requests), git, a Rust toolchain. Writes only under a new folder of $TMPDIR
# (printed first), which it keeps (the pulled run's report): remove it when done. The cluster listens only on a Unix socket in that folder; the server on a free
# port of 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "fleet-tour: PostgreSQL server binaries not found: apt-get install postgresql" >&2; exit 1; }
command -v psql >/dev/null || { echo "fleet-tour: psql not found: apt-get install postgresql-client" >&2; exit 1; }
for tool in curl jq; do
  command -v $tool >/dev/null || { echo "fleet-tour: $tool not found: apt-get install $tool" >&2; exit 1; }
done
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
server_pid=
stop_cluster() {
  if [ -z "${KEEP:-}" ]; then
    [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
    "${as[@]}" "$pgbin/pg_ctl" -D "$pgdir/pg" -m fast stop >/dev/null 2>&1 || true
  fi
}
trap stop_cluster EXIT

say "A throwaway PostgreSQL cluster on a Unix socket in $pgdir (no TCP)"
"${as[@]}" "$pgbin/initdb" -D "$pgdir/pg" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
"${as[@]}" "$pgbin/pg_ctl" -D "$pgdir/pg" -l "$pgdir/pg.log" -w \
  -o "-c listen_addresses='' -c unix_socket_directories='$pgdir'" start >/dev/null
# The server's connection: the only one there is. Everything below it goes through the server.
db="host=$pgdir user=postgres dbname=postgres"

say "The schema, and three people with their API tokens (on the server's machine)"
"$runner" db init --db "$db"
for who in alice bob ops; do
  flag=; [ "$who" = ops ] && flag=--approver
  "$runner" user add "$who" $flag --db "$db" | tail -1 > "$tour/$who.token"
  chmod 600 "$tour/$who.token"
done

say "runner serve: the fleet's one door (pages, the people's API, the workers' API)"
"$runner" serve --db "$db" --bind 127.0.0.1:0 --results "$tour/no-results" \
  > "$tour/server.out" 2> "$tour/server.log" &
server_pid=$!
for _ in $(seq 100); do grep -q '^serving ' "$tour/server.out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's|^serving \(http://[^/ ]*\)/.*|\1|p' "$tour/server.out")
[ -n "$url" ] || { echo "fleet-tour: the server did not start: $(cat "$tour/server.log")" >&2; exit 1; }
echo "the server: $url (its page: $url/)"
export RUNNER_SERVER=$url
unset RUNNER_DB RUNNER_TOKEN
# A person's command: their token from its file (RUNNER_TOKEN; --token-file FILE works too).
as_user() { local who=$1; shift; RUNNER_TOKEN=$(cat "$tour/$who.token") "$runner" "$@"; }

say "ops issues a key for each worker machine (printed once; only its hash is stored)"
for box in box1 box2 box3; do
  as_user ops worker-key add "$box" | tail -1 > "$tour/$box.key"
  chmod 600 "$tour/$box.key"
done
as_user ops worker-key list

rev=$(git rev-parse --short HEAD)
say "alice submits the bundled engine from source at $rev against itself without MPC (throughput 200, 240 games)"
# src=. is this clone; rev= any branch, tag or commit. The submitter builds it once here to read
# its bench node count; the source archive goes to the server, and workers build it.
src="src=.,rev=$rev,build=cargo build --release -p engine,bin=target/release/engine,benchcmd=bench 5"
run_a=$(as_user alice submit --throughput 200 match \
  --engine "name=dev,$src" --engine "name=nompc,$src,option.MPC=false" \
  --nodes 3000 --games 240 --seed 1 | sed -n "s/^run //p" | tail -1)
echo "alice's run: $run_a"

say "bob submits the same commit with t_mid 0.5 against t_mid 1.0 (throughput 100)"
run_b=$(as_user bob submit match \
  --engine "name=tight,$src,option.t_mid=0.5" --engine "name=dev,$src" \
  --nodes 3000 --games 40 --seed 2 | sed -n "s/^run //p" | tail -1)
echo "bob's run: $run_b"

say "Both wait for an approver; runner status says so"
"$runner" status | grep -E "^run |pending" || true
# `approve` shows each engine as workers will run it, then asks; --yes is the answer a script
# gives (the approver has read the engines above).
as_user ops approve "$run_a" --yes
as_user ops approve "$run_b" --yes

# box3 is a machine whose owner changed the worker: it plays nothing and reports each pair of
# alice's run it is leased as won twice by dev, through the same worker API a real worker uses
# (a key lets a machine only register, claim, report on its leases and the like). Its records
# are well formed, so they are stored and counted. What gives it away is its results:
# `runner status` compares each key's pairs with the rest of the run's.
liar() {
  local api="$url/api/v1/worker" reg wid secret claim c pairing pair token
  local v=(-sS -H "x-runner-worker-version: 1" -H "content-type: application/json")
  reg=$(curl "${v[@]}" -H "authorization: Bearer $(cat "$tour/box3.key")" "$api/register" \
    -d '{"host":"box3","pid":1,"concurrency":1,"lease_secs":60,"version":"modified","cpu":null,"cores":null}')
  wid=$(jq -r .worker <<<"$reg"); secret=$(jq -r .secret <<<"$reg")
  local w=(-H "authorization: Bearer $secret" -H "x-runner-worker: $wid")
  rec() {
    printf '{"pairing":%s,"pair":%s,"game":%s,"white":"%s","black":"%s","result":"%s","termination":"adjudication-resign"}' \
      "$pairing" "$pair" "$1" "$2" "$3" "$4"
  }
  for _ in $(seq 40); do
    claim=$(curl "${v[@]}" "${w[@]}" "$api/claim" \
      -d "{\"only\":$run_a,\"skip\":[],\"current\":null,\"n\":1,\"lease_secs\":60,\"tune_in_flight\":1}")
    c=$(jq -c '.claims[0] // empty' <<<"$claim")
    [ -n "$c" ] || break
    read -r pairing pair token < <(jq -r '"\(.pairing) \(.pair) \(.token)"' <<<"$c")
    curl "${v[@]}" "${w[@]}" "$api/report" -o /dev/null -d "{\"pair\":{\"run\":$run_a,\"pairing\":$pairing,\
\"pair\":$pair,\"token\":$token},\"records\":[$(rec 0 dev nompc 1-0),$(rec 1 nompc dev 0-1)],\"all\":false}"
    sleep 0.2
  done
}

say "Two honest workers, each with its own key and an empty cache, play both runs; box3 lies"
honest=()
for box in box1 box2; do
  "$runner" worker --server "$url" --key-file "$tour/$box.key" \
    --cache "$tour/cache-$box" --concurrency 1 > "$tour/$box.log" 2>&1 &
  honest+=($!)
done
liar
wait "${honest[@]}"
tail -n 3 "$tour"/box1.log "$tour"/box2.log

say "runner workers: the machines, what they played, their bench speed"
"$runner" workers --all

say "runner status: owner, priority, throughput, share, pairs/h, time left, builds, each key's results"
"$runner" status "$run_a"
"$runner" status "$run_b"

say "alice purges box3's pairs (runner status named the command); box1 plays them again"
as_user alice purge "$run_a" --worker box3
"$runner" worker --server "$url" --key-file "$tour/box1.key" \
  --cache "$tour/cache-box1" --concurrency 1 > "$tour/box1-again.log" 2>&1
"$runner" status "$run_a"

say "alice pulls her run through the server: an ordinary results folder"
as_user alice pull "$run_a" --out "$tour/run-$run_a" | tail -3
echo "report: $tour/run-$run_a/report.html"
echo "the tour's folder is kept (the pulled run, logs, tokens and keys): rm -rf $tour when done"
if [ -n "${KEEP:-}" ]; then
  echo "the server and the cluster are still running: RUNNER_SERVER=$url; stop them with: kill $server_pid; ${as[*]} $pgbin/pg_ctl -D $pgdir/pg stop"
fi
