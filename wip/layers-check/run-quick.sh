#!/bin/bash
# Usage: run.sh BIN_DIR OUT_DIR   -- fixed-seed deterministic runs of the runner for byte-identical checks.
# Runs from /work/main (openings/default.epd, configs/ are read from there).
set -u
B=$1; O=$2
rm -rf "$O"; mkdir -p "$O"
cd /work/main
R="$B/runner"; E="$B/engine"
eng="name=engine,cmd=$E"
{
echo "== match";   $R match --engine name=a,cmd=$E --engine name=b,cmd=$E,option.MPC=false --depth 3 --seed 7 --games 8 --concurrency 1 --progress quiet --out $O/match; echo "rc=$?"
echo "== shard1"; $R match --engine name=a,cmd=$E --engine name=b,cmd=$E,option.MPC=false --depth 2 --seed 9 --games 8 --shard 1/2 --concurrency 1 --progress quiet --out $O/shard1; echo "rc=$?"
echo "== shard2"; $R match --engine name=a,cmd=$E --engine name=b,cmd=$E,option.MPC=false --depth 2 --seed 9 --games 8 --shard 2/2 --concurrency 1 --progress quiet --out $O/shard2; echo "rc=$?"
echo "== merge"; $R merge $O/shard1 $O/shard2 --out $O/merged; echo "rc=$?"
echo "== sweep"; $R sweep --engine $eng --param t_mid --values 0.9,1.2 --depth 3 --seed 5 --games 4 --concurrency 1 --progress quiet --out $O/sweep; echo "rc=$?"
echo "== stats"; $R stats --penta 10,60,200,70,12 --sprt elo0=0,elo1=2,model=normalized; echo "rc=$?"
echo "== report-match"; cp -r $O/match $O/match-rep; $R report $O/match-rep; echo "rc=$?"
$R searchtest --engine name=x,cmd=/nonexistent --variant a:MPC=false --variant b:MPC=true --depth 2 --out $O/err2; echo "rc=$?"
$R sweep --param t_mid --values 1 --tc 1+0 --games 0 --out $O/err3; echo "rc=$?"
$R match --help; $R sweep --help; $R calibrate --help; $R searchtest --help; $R book --help; $R merge --help; $R report --help; $R stats --help; $R --help
} > $O/stdout.txt 2> $O/stderr.txt
$E bench 6 >> $O/bench.txt 2>&1
$E bench 6 --option MPC=false >> $O/bench.txt 2>&1
