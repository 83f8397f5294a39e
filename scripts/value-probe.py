#!/usr/bin/env python3
"""What a Two Foxes network's value says about its foxes' games, before
they are decided.

Reads a game CSV (`match`, `tournament`, a run's `shards/gen_*/games.csv`)
and asks the network for its raw value (one simulation through `engine`,
`go sims 1`) at positions of the games whose foxes column starts with
PREFIX, foxes to move:
- **before a shut-in**: 60, 40, 20 and 10 plies before the end of each
  game those foxes lost with no move left, the mean and median value and
  the mean draw share of the WDL head. A value near 0 there is a network
  that reads walled-in foxes as drawish;
- **lost or not**: at plies 20, 40 and 60 of every such game, the mean
  value of the games the foxes went on to lose and of the rest, and the
  AUC between them (the chance that a lost game's position is valued
  below a not-lost one's; 0.5: the value does not tell them apart).

Values are the foxes' view (the side to move). Positions are the games'
own, so a network probed on games it played itself is probed on its own
choices; a held-out match file (another network's games, or another
opponent's) is the fairer probe.

Standard library only:
`python3 scripts/value-probe.py HALATAFL CKPT GAMES.csv PREFIX [CORE]`
(PREFIX e.g. `net` or `selfplay`; CORE, if given: the CPU to pin the
engine to with `taskset`).
"""
import csv, statistics, subprocess, sys

binary, ckpt, games_csv, prefix = sys.argv[1:5]
core = sys.argv[5] if len(sys.argv) > 5 else None
games = [row for row in csv.DictReader(open(games_csv)) if row['foxes'].startswith(prefix)]
if not games:
    sys.exit(f"{games_csv}: no game whose foxes column starts with `{prefix}`")
for row in games:
    if row.get('variant', 'two-foxes') != 'two-foxes':
        sys.exit(f"{games_csv}: game {row['game']} is {row['variant']}; this probe reads Two Foxes games")
    if row.get('start'):
        sys.exit(f"{games_csv}: game {row['game']} begins at a set position; this probe reads games from the start")
BEFORE_END = [60, 40, 20, 10]
AT_PLY = [20, 40, 60]

shut_in = [row for row in games if row['result'] == 'geese' and row['reason'] == 'no-moves']
probes = []  # (group, moves) for each position asked; group: ('end', k) or ('ply', k, lost)
for row in shut_in:
    moves = row['moves'].split()
    for k in BEFORE_END:
        ply = len(moves) - k
        ply -= ply % 2  # the foxes move at even plies
        if ply >= 0:
            probes.append((('end', k), moves[:ply]))
for row in games:
    moves = row['moves'].split()
    for k in AT_PLY:
        if k < len(moves):
            probes.append((('ply', k, row['result'] == 'geese'), moves[:k]))

commands = ''.join(f"newgame\nposition startpos moves {' '.join(m)}\ngo sims 1\n" for _, m in probes)
pin = ['taskset', '-c', core] if core is not None else []
out = subprocess.run(pin + [binary, 'engine', '--agent', f'net:ckpt={ckpt},sims=1'],
                     input=commands + 'quit\n', capture_output=True, text=True)
answers, current = [], {}
for line in out.stdout.splitlines():
    words = line.split()
    if line.startswith('info') and 'value' in words:
        current['value'] = float(words[words.index('value') + 1])
    elif line.startswith('info string wdl'):
        current['draw'] = float(words[4])
    elif line.startswith('bestmove'):
        answers.append(current)
        current = {}
if len(answers) != len(probes):
    sys.exit(f"engine answered {len(answers)} of {len(probes)} positions:\n{out.stderr[-2000:]}")

groups = {}
for (group, _), answer in zip(probes, answers):
    groups.setdefault(group, []).append(answer)

print(f"{ckpt} on {games_csv}, foxes `{prefix}*`: {len(games)} games")
print(f"before a shut-in ({len(shut_in)} games):")
for k in BEFORE_END:
    got = groups.get(('end', k), [])
    if got:
        values = [a['value'] for a in got]
        print(f"  {k:3d} plies before the end: n {len(got)}, mean value {statistics.mean(values):+.3f}, "
              f"median {statistics.median(values):+.3f}, mean draw share {statistics.mean(a['draw'] for a in got):.3f}")
print("lost or not:")
for k in AT_PLY:
    lost = [a['value'] for a in groups.get(('ply', k, True), [])]
    held = [a['value'] for a in groups.get(('ply', k, False), [])]
    if lost and held:
        auc = sum((a < b) + 0.5 * (a == b) for a in lost for b in held) / (len(lost) * len(held))
        print(f"  ply {k}: lost {len(lost)} mean {statistics.mean(lost):+.3f}, "
              f"not lost {len(held)} mean {statistics.mean(held):+.3f}, AUC {auc:.3f}")
