#!/usr/bin/env python3
"""Copies a run.sh output tree (SRC) to DST with the volatile fields normalised, so that
`diff -r` compares only what must be byte-identical. Volatile = wall-clock and CPU measurements
and timestamps:
  JSON/JSONL keys (anywhere): created, date, duration_ms, times_ms, engine_times_ms, latency,
    runner_overhead, wall_ms, elapsed_s, nps, time_ms, time_ms_mean, plus any key holding 'cpu';
  PGN: the per-move time in comments ("{+0.07/3 0.048s}" -> "{+0.07/3}") and line wrapping;
  EPD/MD/CSV/TXT/SVG: the output directory name (before1/after...) -> OUT; in bench.txt and
  stdout the nps/time figures; in sweep/searchtest tables the time and speed columns are left
  as they are only when identical (see diff).
Everything else is copied verbatim."""
import json, os, re, sys
src, dst = sys.argv[1], sys.argv[2]
VOL = {'created', 'date', 'duration_ms', 'times_ms', 'engine_times_ms', 'latency',
       'runner_overhead', 'wall_ms', 'elapsed_s', 'nps', 'time_ms', 'time_ms_mean', 'seconds'}
def clean(v):
    if isinstance(v, dict):
        return {k: clean(x) for k, x in v.items() if k not in VOL and 'cpu' not in k}
    if isinstance(v, list):
        return [clean(x) for x in v]
    return v
def blank_timed_columns(t):
    """Markdown tables of search tests: the time and speed columns (and every measure of the
    fixed-time depth test) depend on the machine's load."""
    out, cols = [], set()
    for l in t.split('\n'):
        if l.startswith('| Variant'):
            heads = [h.strip() for h in l.strip('|').split('|')]
            timed = 'Depth avg' in heads
            cols = {i for i, h in enumerate(heads) if h in ('Time avg ms', 'kN/s') or
                    (timed and h not in ('Variant', 'Options', 'Positions', 'Faults'))}
        elif l.startswith('|') and cols and not l.startswith('|---'):
            cells = l.strip('|').split('|')
            l = '|' + '|'.join(' T ' if i in cols else c for i, c in enumerate(cells)) + '|'
        elif not l.startswith('|'):
            cols = set()
        out.append(l)
    return '\n'.join(out)

name = os.path.basename(src.rstrip('/'))
def paths(t):
    return t.replace(os.path.abspath(src), 'OUT').replace(src, 'OUT')
for d, _, files in os.walk(src):
    for f in files:
        p = os.path.join(d, f); q = os.path.join(dst, os.path.relpath(p, src))
        os.makedirs(os.path.dirname(q), exist_ok=True)
        t = open(p, errors='replace').read()
        if f.endswith('.json'):
            try: t = json.dumps(clean(json.loads(t)), indent=1, sort_keys=True)
            except Exception: pass
        elif f.endswith('.jsonl'):
            t = '\n'.join(json.dumps(clean(json.loads(l)), sort_keys=True) for l in t.splitlines() if l.strip())
        elif f.endswith('.pgn'):
            t = re.sub(r' \d+\.\d+s\}', '}', re.sub(r'\s+', ' ', t))
        elif f.endswith('.log'):
            t = ''  # engine stderr logs: names compared, contents not
        t = paths(t)
        rel = os.path.relpath(p, src)
        if rel.startswith('sttime/') or rel.startswith('err1/'):
            t = ''  # movetime search test: depths depend on speed; err1: a random seed (no --seed)
        t = blank_timed_columns(t)
        if f.endswith('table.csv') and rel.startswith('st'):
            t = '\n'.join(','.join('' if i in (10, 11) else c for i, c in enumerate(l.split(','))) for l in t.split('\n'))
        if f in ('bench.txt', 'stdout.txt', 'stderr.txt'):
            t = re.sub(r'\d+ nps', 'N nps', t)
            t = re.sub(r'\(\d+ walks tried, \d+ s\)', '(W walks tried, S s)', t)
            t = re.sub(r'runner CPU [^\n]*', 'runner CPU ...', t)
        open(q, 'w').write(t)
