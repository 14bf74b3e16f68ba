#!/usr/bin/env python3
"""Import graph of runner/src between top-level folders (layers) from `use crate::X` / `crate::X::`
paths. Prints every folder-to-folder arrow with a count, then any cycle and any arrow from a lower
layer to a higher one. Usage: layers.py runner/src"""
import os, re, sys
from collections import defaultdict
root = sys.argv[1]
rank = {'plan': 0, 'play': 1, 'store': 2, 'report': 3, 'run': 4, 'sweep': 5, 'gauntlet': 5,
        'calibrate': 5, 'searchtest': 5, 'book': 5, 'tune': 5, 'cli': 1.5, 'cmd': 7, 'main': 8, 'lib': 8}
def node(rel):
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith('.rs') else first
edges = defaultdict(int)
for d, _, files in os.walk(root):
    for f in files:
        if not f.endswith('.rs'):
            continue
        p = os.path.join(d, f); src = node(os.path.relpath(p, root))
        text = '\n'.join(l for l in open(p).read().split('\n') if not l.lstrip().startswith('//'))
        # inside `use crate::{a, b}` groups too
        for m in re.finditer(r'crate::(\{[^}]*\}|\w+)', text):
            for t in re.findall(r'\w+', m.group(1)) if m.group(1).startswith('{') else [m.group(1)]:
                if t != src and t in rank:
                    edges[(src, t)] += 1
        if src == 'main':
            for t in set(re.findall(r'runner::(\w+)', text)):
                if t in rank: edges[(src, t)] += 1
bad = []
for (a, b), n in sorted(edges.items(), key=lambda e: (rank[e[0][0]], e[0])):
    flag = '' if rank[a] > rank[b] else '   <-- not downward'
    if flag: bad.append((a, b))
    print(f'{a:>10} -> {b:<10} {n:3d}{flag}')
# cycles (DFS)
g = defaultdict(set)
for (a, b) in edges: g[a].add(b)
seen, stack, cycles = set(), [], []
def dfs(v):
    stack.append(v)
    for w in g[v]:
        if w in stack: cycles.append(stack[stack.index(w):] + [w])
        elif w not in seen: dfs(w)
    stack.pop(); seen.add(v)
for v in list(g): 
    if v not in seen: dfs(v)
print('cycles:', cycles or 'none')
print('arrows not pointing to a lower layer:', bad or 'none')
