#!/bin/sh
# Every variant's move at 50,000 nodes (badengine: at once) on a position set, one
# engine process at a time, niced. Usage: issue28-oracle-moves.sh POSITIONS.epd OUT.jsonl
set -e
P=$1; O=$2
E=$PWD/target/release/engine
B=$PWD/target/release/badengine
H=$PWD/engine/experiments/half-nodes.py
DEEP=$PWD/engine/experiments/mpc-params-deep-extrapolated.json
M="nice -n 10 python3 engine/experiments/oracle_probe.py moves $P $O"
for X in 17 27 37 47 57 77 97; do $M x$X 50000 $B tunable -- X=$X; done
$M default 50000 $E
$M nompc 50000 $E -- MPC=false
$M half 50000 $H $E
$M nolmr 50000 $E -- LMR=false
$M nonull 50000 $E -- NullMove=false
$M gate0 50000 $E -- MPCEvalGate=0
$M beta 50000 $E -- MPCSide=beta
$M nopv 50000 $E -- MPCPV=false
$M gate100 50000 $E -- MPCEvalGate=100
$M vq 50000 $E -- MPCVerify=qsearch
$M vcap 50000 $E -- MPCVerify=captures
$M min8 50000 $E -- MPCMinDepth=8
$M anull 50000 $E -- MPCAfterNull=true
$M sf 50000 $E -- MPCSide=beta MPCPV=false MPCVerify=captures MPCAfterNull=true
$M ext 50000 $E -- MPCExtend=true
$M gate0ext 50000 $E -- MPCEvalGate=0 MPCExtend=true
$M t06 50000 $E -- t_mid=0.6 t_end=0.6
$M t15 50000 $E -- t_mid=1.5 t_end=1.5
$M gate0t06 50000 $E -- MPCEvalGate=0 t_mid=0.6 t_end=0.6
$M deep 50000 $E -- MPCParams=$DEEP
$M gate0deep 50000 $E -- MPCEvalGate=0 MPCParams=$DEEP
