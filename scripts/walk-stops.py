#!/usr/bin/env python3
"""Why a `solve --deepest` walk stopped where it did, game by game.

At each game's first unproven position of the walk (the line `not proven K
plies before the end` under the game in the walk's output), solves the
position after each move of the side to move alone (`solve --fen`,
`--expect geese`, a fresh table) and sorts the stop into one of:
- `played move lost, another open`: the move the game played is proven
  lost and some other is not: the walk may have reached the loser's last
  mistake, and a deeper win proof would have to beat a move that may hold;
- `every move lost: solver short`: the position is a proven loss move by
  move, which the walk missed only for its budget;
- `played move open`: the move played is not proven alone at this budget
  (the walk proved the position after the winner's reply, with the later
  positions' proofs in its table): the solver is short there.
The side to move at a stop is the loser in Two Foxes geese wins (the geese
make the last move, and the walk steps back two plies at a time).

Standard library only:
`python3 scripts/walk-stops.py HALATAFL GAMES.csv WALK.log CORE NODES`
(CORE: the CPU the solves are pinned to with `taskset`).
"""
import csv, re, subprocess, sys

binary, games_csv, walk_log, core, nodes = sys.argv[1:6]
games = {row['game']: row for row in csv.DictReader(open(games_csv))}
walk = open(walk_log).read()
stops = re.findall(r"^game (\d+): .*?\n  not proven (\d+) plies before the end", walk, re.M)


def engine(commands):
    return subprocess.run([binary, 'engine', '--agent', 'random'], input=commands + 'quit\n',
                          capture_output=True, text=True).stdout


def solve(fen):
    out = subprocess.run(['taskset', '-c', core, binary, 'solve', '--fen', fen, '--expect', 'geese',
                          '--budget-nodes', nodes, '--tt-mb', '512', '--order', 'eval'],
                         capture_output=True, text=True).stdout
    value = re.search(r"^value: (.*)$", out, re.M).group(1)
    return 'lost' if value == 'geese win' else ('open' if value.startswith('unknown') else value)


for game, back in stops:
    row = games[game]
    moves = row['moves'].split()
    at = len(moves) - int(back)
    prefix = ' '.join(moves[:at])
    fen = engine(f"position startpos moves {prefix}\nfen\n").splitlines()[0][4:]
    legal = engine(f"position fen {fen}\nmoves\n").split()[1:]
    played = moves[at]
    results = {}
    for m in legal:
        child = engine(f"position fen {fen} moves {m}\nfen\n").splitlines()[0][4:]
        results[m] = solve(child)
    if results[played] != 'lost':
        verdict = 'played move open'
    elif all(r == 'lost' for r in results.values()):
        verdict = 'every move lost: solver short'
    else:
        verdict = 'played move lost, another open'
    print(f"game {game} ({row['reason']}), {back} plies before the end: {fen}; played {played}; "
          + ', '.join(f"{m} {r}" for m, r in results.items()) + f"; {verdict}", flush=True)
