#!/usr/bin/env python3
"""Issue 28: the CPU each method spent and would need to resolve a change at 2 standard errors.

Games: engines' CPU of the match (summary.json), Elo standard error from its 95 % interval.
Oracle: the variants' searches (measured: SEARCH_S CPU seconds per engine variant on the 300
positions; badengine about 0) plus Stockfish's (ORACLE_S CPU seconds per search, measured), with
the searches a two-variant comparison needs (the oracle's best per position, and each chosen move
that is not it). Needed CPU for |z| = 2: spent * (2 / z)^2.

    cpu_per_resolution.py ROWS.json SCORED.jsonl SEARCH_S ORACLE_S
"""
import json
import sys

rows = json.load(open(sys.argv[1]))
scored = {}
for line in open(sys.argv[2]):
    r = json.loads(line)
    scored.setdefault(r["variant_name"], {})[r["fen"]] = r
search_s, oracle_s = float(sys.argv[3]), float(sys.argv[4])
spec = {c["name"]: c for c in json.load(open(sys.argv[5]))["comparisons"]}
print("| change | games CPU s spent | Elo z | games CPU s for z=2 | oracle CPU s spent | oracle cp z | "
      "oracle CPU s for z=2 (cp) | oracle best-move z | oracle CPU s for z=2 (best) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    o = spec[r["name"]]["oracle"]
    ch, ba = scored[o["change"]], scored[o["base"]]
    need = set()
    for side in (ch, ba):
        for fen, m in side.items():
            need.add((fen, "best"))
            if not m["is_best"]:
                need.add((fen, m["chosen"]))
    engine_variants = sum(1 for v in (o["change"], o["base"]) if not v.startswith("x"))
    half = 0.5 if o["change"] == "half" else 1.0
    ocpu = search_s * (engine_variants - (1 - half)) + oracle_s * len(need)
    gcpu = r.get("cpu")
    if gcpu is None:
        gcpu = 2.5 * r["games"]  # MPC screen rows: not recorded; about 2.5 s per game at 50k nodes
        gnote = "~"
    else:
        gnote = ""
    gse = (r["hi"] - r["lo"]) / 3.92
    gz = r["elo"] / gse
    oz = r["cp"][0] / (r["cp"][1] / 1.96) if r["cp"][1] else float("nan")
    bz = r["best"][0] / (r["best"][1] / 1.96) if r["best"][1] else float("nan")

    def need_s(spent, z):
        return f"{spent * (2 / z) ** 2:.0f}" if z and abs(z) > 0.05 else "inf"
    print(f'| {r["name"]} | {gnote}{gcpu:.0f} | {gz:+.1f} | {need_s(gcpu, gz)} | {ocpu:.0f} | {oz:+.1f} | '
          f'{need_s(ocpu, oz)} | {bz:+.1f} | {need_s(ocpu, bz)} |')
