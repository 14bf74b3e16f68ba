#!/usr/bin/env bash
# Measures the runner's own cost (CPU per game and per move, runner CPU as a share of the
# engines', bestmove->go turnaround) and counts time forfeits at a fast control.
# Figures are printed by the runner on its last lines and kept in <out>/summary.json under
# "runner_overhead". Needs Debian's stockfish (/usr/games/stockfish) and a release build:
#   cargo build --release -p runner -p engine
# Usage: runner/benches/overhead.sh [nodes|fast|standard|all]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/../.."
R=target/release/runner
SF=/usr/games/stockfish
OUT=${OUT:-target/bench-overhead}
BOOK=()
[ -f openings/default.epd ] && BOOK=(--book openings/default.epd)
run() {
  local name=$1; shift
  rm -rf "$OUT/$name"
  "$R" match --engine "name=sf1,cmd=$SF" --engine "name=sf2,cmd=$SF" --each option.Hash=16,option.Threads=1 \
    "${BOOK[@]}" --seed 1 --concurrency 2 --progress plain --out "$OUT/$name" "$@"
  python3 - "$OUT/$name/summary.json" "$OUT/$name/games.jsonl" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
games = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
tf = sum(1 for g in games if g["termination"] == "time-forfeit")
print("overhead:", json.dumps(s["runner_overhead"]))
print("time forfeits:", tf, "of", len(games))
PY
}
what=${1:-all}
case $what in nodes|all) run nodes --nodes 20000 --games 20 ;; esac
case $what in fast|all) run fast --tc 1+0.01 --games 200 ;; esac
case $what in standard|all) run standard --tc 10+0.1 --games 4 ;; esac
