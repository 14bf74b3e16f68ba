#!/usr/bin/env python3
"""A by-hand accuracy oracle (issue 28), used while `runner searchtest --oracle` was being built:
each variant's move at a fixed node budget, scored by Stockfish at a fixed depth. Needs
python-chess and Debian's stockfish.

    # the moves: one engine process per variant, `ucinewgame` before every position
    oracle_probe.py moves POSITIONS.epd OUT.jsonl NAME NODES CMD [ARG...] [-- OPTION=VALUE ...]
    # the oracle: loss = oracle(best) - oracle(chosen), centipawns from the mover's view
    oracle_probe.py score DEPTH CACHE.jsonl MOVES.jsonl... > SCORED.jsonl

Oracle scores: `go depth D` for the oracle's best (its own score), `go depth D searchmoves M` for a
chosen move that is not the oracle's best; mates are mapped to +-(3000 - plies), then everything is
clamped to +-3000. The loss is floored at 0 (a searchmoves search can score a move above the free
search's best). Evaluations are cached by (FEN, move or "best", depth) in CACHE.jsonl.
"""
import json
import os
import sys

import chess
import chess.engine

BOUND = 3000


def read_epd(path):
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        board, _ = chess.Board.from_epd(line.strip())
        yield board


def moves(argv):
    epd, out, name, nodes = argv[0], argv[1], argv[2], int(argv[3])
    rest = argv[4:]
    opts = {}
    if "--" in rest:
        i = rest.index("--")
        rest, o = rest[:i], rest[i + 1:]
        for kv in o:
            k, v = kv.split("=", 1)
            opts[k] = v
    done = set()
    if os.path.exists(out):
        for line in open(out):
            r = json.loads(line)
            done.add((r["variant_name"], r["fen"]))
    eng = chess.engine.SimpleEngine.popen_uci(rest)
    if opts:
        eng.configure(opts)
    with open(out, "a") as f:
        for board in read_epd(epd):
            fen = board.fen()
            if (name, fen) in done:
                continue
            res = eng.play(board, chess.engine.Limit(nodes=nodes), game=object(),
                           info=chess.engine.INFO_BASIC)
            f.write(json.dumps({"variant_name": name, "fen": fen, "nodes": nodes,
                                "chosen": res.move.uci() if res.move else None,
                                "depth": res.info.get("depth")}) + "\n")
            f.flush()
    eng.quit()


def bounded(score, board):
    v = score.pov(board.turn).score(mate_score=BOUND)
    return max(-BOUND, min(BOUND, v))


def score(argv):
    depth, cache_path = int(argv[0]), argv[1]
    cache = {}
    if os.path.exists(cache_path):
        for line in open(cache_path):
            r = json.loads(line)
            cache[(r["fen"], r["move"], r["depth"])] = r
    cf = open(cache_path, "a")
    eng = chess.engine.SimpleEngine.popen_uci("/usr/games/stockfish")
    eng.configure({"Threads": 1, "Hash": 16})
    stats = {"needed": 0, "cached": 0, "searched": 0}

    def evaluate(board, move):
        key = (board.fen(), move, depth)
        stats["needed"] += 1
        if key in cache:
            stats["cached"] += 1
            return cache[key]
        stats["searched"] += 1
        lim = chess.engine.Limit(depth=depth)
        if move == "best":
            info = eng.analyse(board, lim, game=object())
        else:
            info = eng.analyse(board, lim, root_moves=[chess.Move.from_uci(move)], game=object())
        r = {"fen": board.fen(), "move": move, "depth": depth,
             "score": bounded(info["score"], board),
             "pv0": info["pv"][0].uci() if info.get("pv") else None}
        cache[key] = r
        cf.write(json.dumps(r) + "\n")
        cf.flush()
        return r

    for path in argv[2:]:
        for line in open(path):
            m = json.loads(line)
            board = chess.Board(m["fen"])
            best = evaluate(board, "best")
            chosen = m["chosen"]
            if chosen is None or chess.Move.from_uci(chosen) not in board.legal_moves:
                continue
            if chosen == best["pv0"]:
                cs = best["score"]
            else:
                cs = evaluate(board, chosen)["score"]
            raw = best["score"] - cs
            print(json.dumps({"variant_name": m["variant_name"], "fen": m["fen"],
                              "chosen": chosen, "oracle_best": best["pv0"],
                              "best_score": best["score"], "chosen_score": cs,
                              "loss": max(0, raw), "raw_loss": raw,
                              "is_best": chosen == best["pv0"], "depth": m.get("depth")}))
    eng.quit()
    print(json.dumps(stats), file=sys.stderr)


if __name__ == "__main__":
    {"moves": moves, "score": score}[sys.argv[1]](sys.argv[2:])
