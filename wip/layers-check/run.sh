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
echo "== match-sprt"; $R match --engine name=a,cmd=$E --engine name=b,cmd=$E,option.MPC=false --depth 2 --seed 3 --games 40 --sprt elo0=0,elo1=300 --concurrency 1 --progress quiet --draw movenumber=20,movecount=4,score=20 --resign movecount=3,score=500 --out $O/sprt; echo "rc=$?"
echo "== shard1"; $R match --engine name=a,cmd=$E --engine name=b,cmd=$E,option.MPC=false --depth 2 --seed 9 --games 8 --shard 1/2 --concurrency 1 --progress quiet --out $O/shard1; echo "rc=$?"
echo "== shard2"; $R match --engine name=a,cmd=$E --engine name=b,cmd=$E,option.MPC=false --depth 2 --seed 9 --games 8 --shard 2/2 --concurrency 1 --progress quiet --out $O/shard2; echo "rc=$?"
echo "== merge"; $R merge $O/shard1 $O/shard2 --out $O/merged; echo "rc=$?"
echo "== sweep"; $R sweep --engine $eng --param t_mid --values 0.9,1.2 --depth 3 --seed 5 --games 4 --concurrency 1 --progress quiet --out $O/sweep; echo "rc=$?"
echo "== sweep-adaptive"; $R sweep --engine $eng --param t_mid --values 0.5,1.0,1.5 --depth 2 --seed 5 --games 20 --adaptive --adaptive-min-pairs 2 --concurrency 1 --progress quiet --out $O/race; echo "rc=$?"
echo "== sweep-shard1"; $R sweep --engine $eng --param t_mid --values 0.9,1.2 --depth 2 --seed 11 --games 4 --shard 1/2 --concurrency 1 --progress quiet --out $O/sws1; echo "rc=$?"
echo "== sweep-shard2"; $R sweep --engine $eng --param t_mid --values 0.9,1.2 --depth 2 --seed 11 --games 4 --shard 2/2 --concurrency 1 --progress quiet --out $O/sws2; echo "rc=$?"
echo "== sweep-merge"; $R merge $O/sws1 $O/sws2 --out $O/swmerged; echo "rc=$?"
echo "== gauntlet"; $R match --engine name=a,cmd=$E --engine name=b,cmd=$E,option.MPC=false --engine name=c,cmd=$E,option.t_mid=1.5 --depth 2 --seed 13 --games 4 --concurrency 1 --progress quiet --out $O/gauntlet; echo "rc=$?"
echo "== roundrobin"; $R match --engine name=a,cmd=$E --engine name=b,cmd=$E,option.MPC=false --engine name=c,cmd=$E,option.t_mid=1.5 --tournament round-robin --nodes 3000 --seed 13 --games 2 --concurrency 1 --progress quiet --out $O/rr; echo "rc=$?"
echo "== rr-shard1"; $R match --engine name=a,cmd=$E --engine name=b,cmd=$E,option.MPC=false --engine name=c,cmd=$E,option.t_mid=1.5 --tournament round-robin --nodes 3000 --seed 13 --games 2 --shard 1/2 --concurrency 1 --progress quiet --out $O/rrs1; echo "rc=$?"
echo "== rr-shard2"; $R match --engine name=a,cmd=$E --engine name=b,cmd=$E,option.MPC=false --engine name=c,cmd=$E,option.t_mid=1.5 --tournament round-robin --nodes 3000 --seed 13 --games 2 --shard 2/2 --concurrency 1 --progress quiet --out $O/rrs2; echo "rc=$?"
echo "== rr-merge"; $R merge $O/rrs1 $O/rrs2 --out $O/rrmerged; echo "rc=$?"
echo "== calibrate"; $R calibrate --engine $eng --limit 6 --pairs 1:3,2:4 --concurrency 1 --out $O/calibrate; echo "rc=$?"
echo "== calibrate-sep"; $R calibrate --engine $eng --limit 4 --pairs 1:3 --mode separate --concurrency 1 --out $O/calsep; echo "rc=$?"
echo "== sample"; $R calibrate --sample-from $O/match/games.jsonl --write-positions $O/sampled.epd --sample-count 10 --seed 3; echo "rc=$?"
echo "== searchtest-depth"; $R searchtest --engine $eng --variant base:MPC=false --variant mpc:MPC=true --depth 4 --limit 5 --concurrency 1 --out $O/stdepth; echo "rc=$?"
echo "== searchtest-time"; $R searchtest --engine $eng --variant base:MPC=false --variant mpc:MPC=true --movetime 20 --limit 3 --concurrency 1 --out $O/sttime; echo "rc=$?"
echo "== book"; $R book --engine $eng --count 3 --plies 4 --depth 3 --guard-depth 2 --seed 2 --concurrency 1 --progress quiet --out $O/book.epd; echo "rc=$?"
echo "== stats"; $R stats --penta 10,60,200,70,12 --sprt elo0=0,elo1=2,model=normalized; echo "rc=$?"
echo "== stats-json"; $R stats --wdl 22,32,10 --draws-floor 0.3 --json; echo "rc=$?"
echo "== report-match"; cp -r $O/match $O/match-rep; $R report $O/match-rep; echo "rc=$?"
echo "== report-sweep"; cp -r $O/sweep $O/sweep-rep; $R report $O/sweep-rep; echo "rc=$?"
echo "== report-gauntlet"; cp -r $O/gauntlet $O/gauntlet-rep; $R report $O/gauntlet-rep; echo "rc=$?"
echo "== errors"; $R match --engine name=x,cmd=/nonexistent --depth 2 --games 2 --out $O/err1; echo "rc=$?"
$R searchtest --engine name=x,cmd=/nonexistent --variant a:MPC=false --variant b:MPC=true --depth 2 --out $O/err2; echo "rc=$?"
$R sweep --param t_mid --values 1 --tc 1+0 --games 0 --out $O/err3; echo "rc=$?"
$R match --help; $R sweep --help; $R calibrate --help; $R searchtest --help; $R book --help; $R merge --help; $R report --help; $R stats --help; $R --help
} > $O/stdout.txt 2> $O/stderr.txt
echo "== bench" > $O/bench.txt
$E bench 6 >> $O/bench.txt 2>&1
$E bench 6 --option MPC=false >> $O/bench.txt 2>&1
