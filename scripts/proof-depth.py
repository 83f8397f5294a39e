#!/usr/bin/env python3
"""How far before the end of real games the solver proves their positions.

For each game of a games CSV (`halatafl match --csv`), walks back from its
end in steps of --step plies and solves each position with
`halatafl solve --fen` (df-pn, --budget nodes, a fresh table each time,
the position without history as every position string is), until
--patience positions in a row are not proven or --max-back plies are
reached. Prints one line per game (result, plies, the deepest proven
distance before the end, the values found) and a summary: the deepest
proven distance per game, its median, and the nodes and seconds spent.

    python3 scripts/proof-depth.py --games G.csv --budget 1000000 --init distance

Standard library only; needs target/release/halatafl (or --bin).
"""

import argparse
import csv
import re
import statistics
import subprocess
import sys
import time


def positions(bin_path, moves, variant_args):
    out = subprocess.run([bin_path, "replay", *variant_args, " ".join(moves)],
                         check=True, capture_output=True, text=True).stdout
    fens = []
    for line in out.splitlines():
        if line.startswith("start: "):
            fens.append(line[len("start: "):])
        elif re.match(r"\s*\d+\. ", line):
            fens.append(line.split(None, 2)[2].strip())
    return fens


def variant_args(variant):
    words = variant.split()
    args = ["--variant", words[0]]
    for w in words[1:]:
        if w.startswith("geese="):
            args += ["--geese", w[6:]]
        else:
            args.append("--" + w)
    return args


def solve(bin_path, fen, vargs, budget, init, tt_mb):
    out = subprocess.run([bin_path, "solve", *vargs, "--fen", fen, "--budget-nodes", str(budget),
                          "--tt-mb", str(tt_mb), "--init", init],
                         check=True, capture_output=True, text=True).stdout
    value = re.search(r"^value: (\S+)", out, re.M).group(1)
    nodes = int(re.search(r"^nodes: (\d+)", out, re.M).group(1))
    return (None if value == "unknown" else value), nodes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", required=True)
    ap.add_argument("--budget", type=int, default=1_000_000)
    ap.add_argument("--init", default="distance", choices=["distance", "mobility"])
    ap.add_argument("--step", type=int, default=2)
    ap.add_argument("--max-back", type=int, default=80)
    ap.add_argument("--patience", type=int, default=3)
    ap.add_argument("--tt-mb", type=int, default=256)
    ap.add_argument("--result", choices=["foxes", "geese", "draw"], help="only games with this result")
    ap.add_argument("--bin", default="target/release/halatafl")
    args = ap.parse_args()

    deepest_all, nodes_all, started = [], 0, time.time()
    with open(args.games, newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        if args.result and row["result"] != args.result:
            continue
        vargs = variant_args(row.get("variant") or "two-foxes")
        fens = positions(args.bin, row["moves"].split(), vargs)
        end = len(fens) - 1
        deepest, misses, found = 0, 0, []
        back = args.step
        while back <= min(args.max_back, end) and misses < args.patience:
            value, nodes = solve(args.bin, fens[end - back], vargs, args.budget, args.init, args.tt_mb)
            nodes_all += nodes
            if value is None:
                misses += 1
            else:
                misses = 0
                deepest = back
                found.append(f"{back}:{value}")
            back += args.step
        deepest_all.append(deepest)
        print(f"game {row['game']}: {row['result']} ({row['reason']}), {end} plies: deepest proven {deepest} "
              f"plies before the end [{' '.join(found)}]", flush=True)
    if not deepest_all:
        sys.exit("no games")
    print(f"deepest proven per game: {deepest_all}; median {statistics.median(deepest_all)}, "
          f"max {max(deepest_all)}; {nodes_all} nodes in {time.time() - started:.0f} s "
          f"(init {args.init}, budget {args.budget})")


if __name__ == "__main__":
    main()
