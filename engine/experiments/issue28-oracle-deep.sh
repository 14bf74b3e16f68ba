#!/bin/sh
# The MPC variants at 400,000 nodes (cold hash) on the first 80 critical
# positions, where heights above 10 are reached near the root. Niced, one engine at a time.
set -e
P=results/positions/critical-80.epd; O=results/oracle/moves-deep400k.jsonl
E=$PWD/target/release/engine
DEEP=$PWD/engine/experiments/mpc-params-deep-extrapolated.json
M="nice -n 10 python3 engine/experiments/oracle_probe.py moves $P $O"
$M nompc 400000 $E -- MPC=false
$M gate0 400000 $E -- MPCEvalGate=0
$M gate0deep 400000 $E -- MPCEvalGate=0 MPCParams=$DEEP
$M default 400000 $E
$M deep 400000 $E -- MPCParams=$DEEP
