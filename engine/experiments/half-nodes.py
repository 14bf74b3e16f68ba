#!/usr/bin/env python3
"""Runs the engine given as arguments, halving the node budget of every `go nodes N` it receives.

A per-engine node budget for `runner match`, which has one `--nodes` for both sides:
    runner match --nodes 50000 --engine name=half,cmd=engine/experiments/half-nodes.py,arg=target/release/engine ...
The engine's output goes straight to the runner; only its input passes through here.
"""
import subprocess
import sys

if len(sys.argv) < 2:
    sys.exit("usage: half-nodes.py ENGINE [ARG...]")
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, text=True, bufsize=1)
for line in sys.stdin:
    words = line.split()
    if words and words[0] == "go" and "nodes" in words[:-1]:
        i = words.index("nodes")
        words[i + 1] = str(max(1, int(words[i + 1]) // 2))
        line = " ".join(words) + "\n"
    child.stdin.write(line)
    child.stdin.flush()
    if words and words[0] == "quit":
        break
child.stdin.close()
sys.exit(child.wait())
