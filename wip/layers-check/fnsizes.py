#!/usr/bin/env python3
"""Lines per Rust function (signature line to its closing brace at the same indentation).
Usage: fnsizes.py DIR [N]  -> the N longest functions (default 15), as `lines path:line name`."""
import os, re, sys
root = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 15
pat = re.compile(r'^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+(\w+)')
out = []
for d, _, files in os.walk(root):
    for f in files:
        if not f.endswith('.rs'):
            continue
        p = os.path.join(d, f)
        lines = open(p).read().split('\n')
        for i, l in enumerate(lines):
            m = pat.match(l)
            if not m:
                continue
            ind = m.group(1)
            for j in range(i, len(lines)):
                if lines[j] == ind + '}' or (j == i and l.rstrip().endswith('}')):
                    out.append((j - i + 1, os.path.relpath(p, root) + ':' + str(i + 1), m.group(2)))
                    break
for size, where, name in sorted(out, reverse=True)[:n]:
    print(f'{size:4d} {where} {name}')
