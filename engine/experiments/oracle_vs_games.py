#!/usr/bin/env python3
"""Issue 28, section 2: does the oracle rank changes as games do?

Reads a JSON description of the comparisons (see `comparisons.json` next to this script): for each
change, its games (an Elo with a 95 % interval, from a results folder's summary.json or given as
numbers) and its oracle runs (the change's and its base's per-move oracle records from
`runner searchtest --oracle`). Prints one row per change (paired oracle differences with 95 %
intervals, in centipawns and in expected score) and the rank correlations (Spearman, Kendall
tau-b, with permutation p-values), and writes a scatter plot as a plain SVG (no dependency).

    python3 engine/experiments/oracle_vs_games.py engine/experiments/comparisons.json OUT.svg
"""
import json
import math
import random
import sys
from pathlib import Path


def expected(cp):
    """Expected score of a centipawn evaluation (logistic, 400 cp per factor 10 of odds)."""
    return 1.0 / (1.0 + 10.0 ** (-cp / 400.0))


def mean_ci(xs):
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, float("nan"), n
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    se = math.sqrt(var / n)
    return m, 1.96 * se, n


def load_moves(folder):
    """Per-move oracle records of a searchtest folder: {variant_name: {position_key: record}}."""
    path = Path(folder)
    if path.is_dir():
        path = path / "oracle.jsonl"
    out = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        if path.name.startswith("oracle-moves"):
            r["scale"] = "runner"  # runner searchtest --oracle's own records
        key = r.get("fen") or r["position"]
        out.setdefault(r["variant_name"], {})[key] = r
    return out


def runner_scale(s):
    """oracle_probe.py's scores (mate = +-(3000 - n)) on searchtest --oracle's scale: centipawns
    clamped to +-1000, mates beyond (here +-(2000 - n); Stockfish's rare non-mate scores above
    2000 cp are read as mates)."""
    if abs(s) >= 2000:
        return s - 1000 if s > 0 else s + 1000
    return max(-1000, min(1000, s))


def loss_of(r):
    if "raw_loss" in r and "best_score" in r and r.get("scale") != "runner":
        return max(0, runner_scale(r["best_score"]) - runner_scale(r["chosen_score"]))
    return r["loss"]


def paired(change, base):
    """Paired differences base - change (positive: the change loses less: it is better)."""
    keys = sorted(set(change) & set(base), key=str)
    cp = [loss_of(base[k]) - loss_of(change[k]) for k in keys]
    es = []
    for k in keys:
        def es_loss(r):
            return expected(r["best_score"]) - expected(r["chosen_score"])
        es.append(100.0 * (max(0.0, es_loss(base[k])) - max(0.0, es_loss(change[k]))))
    best = [int(change[k]["is_best"]) - int(base[k]["is_best"]) for k in keys]
    return mean_ci(cp), mean_ci(es), mean_ci([100.0 * b for b in best]), len(keys)


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return r


def pearson(a, b):
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    sab = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    sa = math.sqrt(sum((x - ma) ** 2 for x in a))
    sb = math.sqrt(sum((y - mb) ** 2 for y in b))
    return sab / (sa * sb)


def spearman(a, b):
    return pearson(ranks(a), ranks(b))


def kendall_tau_b(a, b):
    n = len(a)
    conc = disc = ta = tb = 0
    for i in range(n):
        for j in range(i + 1, n):
            da, db = a[i] - a[j], b[i] - b[j]
            if da == 0 and db == 0:
                continue
            if da == 0:
                ta += 1
            elif db == 0:
                tb += 1
            elif (da > 0) == (db > 0):
                conc += 1
            else:
                disc += 1
    denom = math.sqrt((conc + disc + ta) * (conc + disc + tb))
    return (conc - disc) / denom if denom else float("nan")


def perm_p(stat, a, b, draws=20000, seed=28):
    """Two-sided permutation p-value of a rank statistic (seeded)."""
    obs = abs(stat(a, b))
    rng = random.Random(seed)
    b = list(b)
    hits = 0
    for _ in range(draws):
        rng.shuffle(b)
        if abs(stat(a, b)) >= obs - 1e-12:
            hits += 1
    return (hits + 1) / (draws + 1)


def game_row(c):
    g = c["games"]
    if "summary" in g:
        s = json.loads(Path(g["summary"]).read_text())
        st = s["pairings"][0]["stats"]
        cpu = s.get("runner_overhead", {}).get("engines_cpu_s")
        return {
            "elo": st["elo"], "lo": st["elo_ci"][0], "hi": st["elo_ci"][1],
            "nelo": st["nelo"], "games": st["games"], "cpu": cpu,
            "wdl": f'{st["wins"]}-{st["draws"]}-{st["losses"]}',
        }
    return dict(g)


def svg_scatter(rows, path, xkey="cp", xlabel="oracle gain, cp (base loss - change loss)"):
    W, H, L, R, T, B = 760, 520, 70, 20, 30, 60
    xs = [r[xkey][0] - r[xkey][1] for r in rows] + [r[xkey][0] + r[xkey][1] for r in rows]
    ys = [r["lo"] for r in rows] + [r["hi"] for r in rows]
    x0, x1 = min(xs + [0]), max(xs + [0])
    y0, y1 = min(ys + [0]), max(ys + [0])
    px = (x1 - x0) * 0.05 or 1
    py = (y1 - y0) * 0.05 or 1
    x0, x1, y0, y1 = x0 - px, x1 + px, y0 - py, y1 + py

    def X(v):
        return L + (v - x0) / (x1 - x0) * (W - L - R)

    def Y(v):
        return T + (y1 - v) / (y1 - y0) * (H - T - B)

    def ticks(a, b, n=6):
        step = 10 ** math.floor(math.log10((b - a) / n))
        for m in (1, 2, 5, 10):
            if (b - a) / (step * m) <= n:
                step *= m
                break
        v = math.ceil(a / step) * step
        while v <= b:
            yield v
            v += step

    colours = {"badengine": "#c0392b", "engine": "#2471a3", "mpc": "#229954"}
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'font-family="sans-serif" font-size="11">',
         f'<rect width="{W}" height="{H}" fill="white"/>']
    for v in ticks(x0, x1):
        o.append(f'<line x1="{X(v):.1f}" y1="{T}" x2="{X(v):.1f}" y2="{H-B}" stroke="#eee"/>')
        o.append(f'<text x="{X(v):.1f}" y="{H-B+14}" text-anchor="middle">{v:g}</text>')
    for v in ticks(y0, y1):
        o.append(f'<line x1="{L}" y1="{Y(v):.1f}" x2="{W-R}" y2="{Y(v):.1f}" stroke="#eee"/>')
        o.append(f'<text x="{L-6}" y="{Y(v)+4:.1f}" text-anchor="end">{v:g}</text>')
    o.append(f'<line x1="{X(0):.1f}" y1="{T}" x2="{X(0):.1f}" y2="{H-B}" stroke="#999"/>')
    o.append(f'<line x1="{L}" y1="{Y(0):.1f}" x2="{W-R}" y2="{Y(0):.1f}" stroke="#999"/>')
    o.append(f'<rect x="{L}" y="{T}" width="{W-L-R}" height="{H-T-B}" fill="none" stroke="#333"/>')
    o.append(f'<text x="{(L+W-R)/2}" y="{H-20}" text-anchor="middle" font-size="13">{xlabel}</text>')
    o.append(f'<text transform="translate(16,{(T+H-B)/2}) rotate(-90)" text-anchor="middle" '
             f'font-size="13">match Elo (change vs base), 95 %</text>')
    for r in rows:
        c = colours.get(r["group"], "#555")
        x, xe = r[xkey]
        o.append(f'<line x1="{X(x-xe):.1f}" y1="{Y(r["elo"]):.1f}" x2="{X(x+xe):.1f}" '
                 f'y2="{Y(r["elo"]):.1f}" stroke="{c}" stroke-opacity="0.6"/>')
        o.append(f'<line x1="{X(x):.1f}" y1="{Y(r["lo"]):.1f}" x2="{X(x):.1f}" '
                 f'y2="{Y(r["hi"]):.1f}" stroke="{c}" stroke-opacity="0.6"/>')
        o.append(f'<circle cx="{X(x):.1f}" cy="{Y(r["elo"]):.1f}" r="3.5" fill="{c}"/>')
        o.append(f'<text x="{X(x)+5:.1f}" y="{Y(r["elo"])-5:.1f}" fill="{c}">{r["name"]}</text>')
    ly = T + 14
    for g, c in colours.items():
        o.append(f'<circle cx="{L+12}" cy="{ly-4}" r="4" fill="{c}"/>'
                 f'<text x="{L+20}" y="{ly}">{g}</text>')
        ly += 15
    o.append("</svg>")
    Path(path).write_text("\n".join(o) + "\n")


def main():
    spec = json.loads(Path(sys.argv[1]).read_text())
    out_svg = sys.argv[2] if len(sys.argv) > 2 else None
    cache = {}
    rows = []
    for c in spec["comparisons"]:
        g = game_row(c)
        o = c["oracle"]
        for f in (o["change_dir"], o["base_dir"]):
            if f not in cache:
                cache[f] = load_moves(f)
        ch = cache[o["change_dir"]][o["change"]]
        ba = cache[o["base_dir"]][o["base"]]
        cp, es, best, n = paired(ch, ba)
        rows.append({"name": c["name"], "group": c["group"], "cp": cp[:2], "es": es[:2],
                     "best": best[:2], "n": n, **g})
    print("| change | group | games | W-D-L | Elo [95 %] | oracle gain cp [95 %] | "
          "gain expected score pp [95 %] | best-move rate diff pp [95 %] | positions |")
    print("|---|---|---:|---|---|---|---|---|---:|")
    for r in rows:
        print(f'| {r["name"]} | {r["group"]} | {r.get("games", "")} | {r.get("wdl", "")} | '
              f'{r["elo"]:+.1f} [{r["lo"]:+.1f}, {r["hi"]:+.1f}] | '
              f'{r["cp"][0]:+.2f} +- {r["cp"][1]:.2f} | {r["es"][0]:+.2f} +- {r["es"][1]:.2f} | '
              f'{r["best"][0]:+.1f} +- {r["best"][1]:.1f} | {r["n"]} |')
    groups = {"all": rows, "engine and mpc": [r for r in rows if r["group"] != "badengine"],
              "mpc only": [r for r in rows if r["group"] == "mpc"],
              "known sign (badengine, engine)": [r for r in rows if r["group"] != "mpc"]}
    print()
    for gname, rs in groups.items():
        if len(rs) < 3:
            continue
        for key in ("cp", "es", "best"):
            a = [r[key][0] for r in rs]
            b = [r["elo"] for r in rs]
            rho, tau = spearman(a, b), kendall_tau_b(a, b)
            print(f"{gname} (n={len(rs)}), oracle {key} vs Elo: Spearman {rho:+.3f} "
                  f"(perm p {perm_p(spearman, a, b):.4f}), Kendall tau-b {tau:+.3f} "
                  f"(perm p {perm_p(kendall_tau_b, a, b, draws=5000):.4f})")
    if out_svg:
        svg_scatter(rows, out_svg)
        es_svg = str(Path(out_svg).with_name(Path(out_svg).stem + "-es.svg"))
        svg_scatter(rows, es_svg, "es", "oracle gain, expected score, percentage points")
        eng_svg = str(Path(out_svg).with_name(Path(out_svg).stem + "-engine.svg"))
        svg_scatter([r for r in rows if r["group"] != "badengine"], eng_svg)
        print(f"\nplots: {out_svg}, {es_svg}, {eng_svg}")
    if len(sys.argv) > 3:
        Path(sys.argv[3]).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
