#!/bin/sh
# Does an oracle rank what games rank? The game side: changes of known sign and size against
# their base, at 50,000 nodes per move, seed 11, the random-walk book (as the MPC screen of
# 2026-11-23), one game at a time, niced. Run from the repository root after a release build.
set -e
R=$PWD/target/release/runner
E=$PWD/target/release/engine
B=$PWD/target/release/badengine
H=$PWD/engine/experiments/half-nodes.py
COMMON="--nodes 50000 --concurrency 1 --seed 11 --book openings/random-walks.epd --progress plain"
for X in 17 57 77 97; do
  nice -n 10 $R match $COMMON --games 400 \
    --engine name=x$X,cmd=$B,arg=tunable,option.X=$X --engine name=x37,cmd=$B,arg=tunable,option.X=37 \
    --out results/g-tunable-x$X > results/g-tunable-x$X.log 2>&1
done
GAMES=${GAMES:-100}
nice -n 10 $R match $COMMON --games $GAMES \
  --engine name=half,cmd=$H,arg=$E --engine name=default,cmd=$E \
  --out results/g-half > results/g-half.log 2>&1
nice -n 10 $R match $COMMON --games $GAMES \
  --engine name=nolmr,cmd=$E,option.LMR=false --engine name=default,cmd=$E \
  --out results/g-nolmr > results/g-nolmr.log 2>&1
nice -n 10 $R match $COMMON --games $GAMES \
  --engine name=nonull,cmd=$E,option.NullMove=false --engine name=default,cmd=$E \
  --out results/g-nonull > results/g-nonull.log 2>&1
