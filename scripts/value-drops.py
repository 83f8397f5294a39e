#!/usr/bin/env python3
"""Where the games' moves gave away proven values.

Reads a games CSV (`halatafl match --csv`) and a suite solved from it
(`halatafl solve --from-games GAMES --out SUITE --every 1`): each suite row
is a position of a game (`game`, `ply`: the position after that many
plies) with its proven value and every move that keeps it. The move the
game played there (`moves`, word `ply`) gave the value away when it is
not among the keeping moves; in a lost position every move keeps the loss,
so only drawn or won positions can be given away.

Prints, for each agent and side, the positions with a proven value where
it was to move and the values it gave away (a draw or a win, and what the
move led to where that is proven too); then how far before each game's
end the earliest proven position lies. With `--result foxes|geese|draw`,
only the games with that result.

Standard library only: `python3 scripts/value-drops.py --games G --suite S`.
"""

import argparse
import csv
import statistics
import sys
from collections import defaultdict


def fail(message):
    sys.exit(f"value-drops: {message}")


def read_games(path):
    games = {}
    try:
        with open(path, newline="") as f:
            for line, row in enumerate(csv.DictReader(f), start=2):
                try:
                    games[int(row["game"])] = {
                        "foxes": row["foxes"],
                        "geese": row["geese"],
                        "result": row["result"],
                        "moves": row["moves"].split(),
                    }
                except (KeyError, ValueError) as e:
                    fail(f"{path}, line {line}: not a games CSV row ({e})")
    except OSError as e:
        fail(f"{path}: {e}")
    return games


def read_suite(path):
    rows = []
    try:
        with open(path, newline="") as f:
            for line, row in enumerate(csv.DictReader(f), start=2):
                try:
                    side = row["fen"].split()[1]
                    if side not in ("f", "g") or row["value"] not in ("foxes", "geese", "draw"):
                        raise ValueError(f"side {side!r}, value {row['value']!r}")
                    rows.append(
                        {
                            "game": int(row["game"]),
                            "ply": int(row["ply"]),
                            "mover": "foxes" if side == "f" else "geese",
                            "value": row["value"],
                            "keeping": set(row["keeping_moves"].split()),
                        }
                    )
                except (KeyError, ValueError, IndexError) as e:
                    fail(f"{path}, line {line}: not a suite row ({e})")
    except OSError as e:
        fail(f"{path}: {e}")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", required=True, help="games CSV (halatafl match --csv)")
    parser.add_argument("--suite", required=True, help="suite CSV solved from it")
    parser.add_argument("--result", choices=["foxes", "geese", "draw"], help="only games with this result")
    args = parser.parse_args()
    games = read_games(args.games)
    suite = read_suite(args.suite)
    proven = defaultdict(int)
    errors = defaultdict(list)
    earliest = {}
    value_at = {(r["game"], r["ply"]): r["value"] for r in suite}
    for row in suite:
        game = games.get(row["game"])
        if game is None:
            fail(f"{args.suite}: game {row['game']} is not in {args.games}")
        if args.result and game["result"] != args.result:
            continue
        if row["ply"] > len(game["moves"]):
            fail(f"{args.suite}: game {row['game']} has {len(game['moves'])} plies, not {row['ply']}")
        if row["ply"] == len(game["moves"]):
            # The last position of a game stopped without a result: no move.
            continue
        who = (game[row["mover"]], row["mover"])
        proven[who] += 1
        before_end = len(game["moves"]) - row["ply"]
        earliest[row["game"]] = max(earliest.get(row["game"], 0), before_end)
        played = game["moves"][row["ply"]]
        if row["value"] != ("geese" if row["mover"] == "foxes" else "foxes") and played not in row["keeping"]:
            # Where the next position is proven too, what the move led to.
            after = value_at.get((row["game"], row["ply"] + 1), "not proven")
            errors[who].append((row["game"], row["ply"], row["value"], played, after))
    print(f"games: {len(games)}; suite positions counted: {sum(proven.values())}")
    for who in sorted(proven):
        print(f"{who[0]} as {who[1]}: {proven[who]} proven positions to move in, {len(errors[who])} values given away")
        for game, ply, value, played, after in errors[who]:
            print(f"  game {game}, ply {ply}: {value} given away by {played} (after it: {after})")
    if earliest:
        spans = sorted(earliest.values())
        print(
            f"earliest proven position, plies before the game's end: median {statistics.median(spans)}, "
            f"range {spans[0]}-{spans[-1]} over {len(spans)} games"
        )


if __name__ == "__main__":
    main()
