#!/usr/bin/env python3
"""Keeps the positions of an EPD file where the oracle's best move beats its second best by at
least GAP centipawns (Stockfish, MultiPV 2, fixed depth): the positions where a search's choice
matters. Reads in file order and stops after COUNT kept. Needs python-chess and Debian's stockfish.

    python3 engine/experiments/critical_positions.py IN.epd OUT.epd DEPTH GAP COUNT
"""
import sys

import chess
import chess.engine

src, dst, depth, gap, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
engine = chess.engine.SimpleEngine.popen_uci("/usr/games/stockfish")
engine.configure({"Threads": 1, "Hash": 16})
kept = read = 0
with open(dst, "w") as out:
    out.write(f"# {count} positions of {src} (file order) where Stockfish depth {depth}, MultiPV 2, "
              f"scores its best move at least {gap} cp above its second (mates as +-3000)\n")
    for line in open(src):
        if line.startswith("#") or not line.strip():
            continue
        read += 1
        board, ops = chess.Board.from_epd(line.strip())
        infos = engine.analyse(board, chess.engine.Limit(depth=depth), multipv=2, game=object())
        if len(infos) < 2:
            continue
        s = [i["score"].pov(board.turn).score(mate_score=3000) for i in infos[:2]]
        if s[0] - s[1] >= gap:
            out.write(line.rstrip("\n").rstrip(";").rstrip() + f'; c1 "gap {s[0] - s[1]}";\n')
            kept += 1
            if kept >= count:
                break
engine.quit()
print(f"read {read}, kept {kept}")
