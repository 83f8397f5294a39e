#!/usr/bin/env python3
"""Cut an opening book for `halatafl match --book` out of a game CSV.

Each kept game gives one opening: its moves from the start up to
`--before-end K` plies before its end (the position K plies before the
game's last move was played). Several cuts, `--before-end 10,20,30`, give
one opening per game for each, all the openings of the first cut first.
Games are kept by who played the foxes or the geese (a substring of the
agent spec), by result and by end reason, so a book can hold, say, every
game the network's foxes lost by a shut-in, cut 40 plies before the end: a
test bed where a change aimed at those positions shows in far fewer games
than from the start. Openings that come out the same are kept once (per
cut). Each opening is preceded by a `#` line that names the game it came
from.

    python3 scripts/book-from-games.py GAMES.csv --before-end 40 \\
        --foxes net: --result geese --reason no-moves --out shut-ins-40.book

Standard library only. The book is written to a temporary name and renamed,
so an existing book is never left half written.
"""

import argparse
import csv
import os
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("games", help="game CSV written by match, tournament or ladder")
    ap.add_argument("--before-end", required=True, metavar="K[,K...]",
                    help="cut each game K plies before its end (K >= 1); several "
                         "cuts separated by commas are written one after another")
    ap.add_argument("--foxes", default="", metavar="TEXT",
                    help="keep games whose foxes' agent spec contains TEXT")
    ap.add_argument("--geese", default="", metavar="TEXT",
                    help="keep games whose geese's agent spec contains TEXT")
    ap.add_argument("--result", choices=["foxes", "geese", "draw"],
                    help="keep games with this result")
    ap.add_argument("--reason", metavar="REASON",
                    help="keep games that ended this way (the CSV's reason column, "
                         "e.g. no-moves, pen-filled, repetition)")
    ap.add_argument("--out", help="book file to write (default: standard output)")
    args = ap.parse_args()
    try:
        cuts = [int(k) for k in args.before_end.split(",")]
    except ValueError:
        sys.exit(f"--before-end {args.before_end}: give whole numbers of plies, "
                 f"separated by commas (e.g. 40 or 10,20,30)")
    if min(cuts) < 1:
        sys.exit(f"--before-end {args.before_end}: give at least 1 ply for each cut")
    out = None
    if args.out:
        # The book replaces its target by a rename, so the target must be a
        # regular file or a new one (a link is written through to its
        # target): a rename onto a directory fails, and onto a device or a
        # FIFO would replace it with a plain file.
        out = os.path.realpath(args.out)
        if os.path.exists(out) and not os.path.isfile(out):
            kind = "a directory" if os.path.isdir(out) else "not a regular file"
            sys.exit(f"--out {args.out}: {out} is {kind}; give the path of a regular file "
                     f"(or leave --out out to write to standard output)")

    try:
        with open(args.games, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"{args.games}: {e}")
    need = {"game", "opening_moves", "foxes", "geese", "result", "reason", "moves"}
    if rows and not need <= rows[0].keys():
        sys.exit(f"{args.games}: not a game CSV (it lacks the columns "
                 f"{', '.join(sorted(need - rows[0].keys()))})")

    # The filters do not depend on the cut: the kept games, with their line
    # numbers in the CSV, are chosen once.
    kept = [(line_no, row) for line_no, row in enumerate(rows, start=2)
            if args.foxes in row["foxes"] and args.geese in row["geese"]
            and (not args.result or row["result"] == args.result)
            and (not args.reason or row["reason"] == args.reason)]
    lines, counts = [], []
    for before_end in cuts:
        count, short = cut_games(kept, args.games, before_end, lines)
        if not count:
            sys.exit(f"{args.games}: no game matches the filters with more than "
                     f"{before_end} plies after its opening")
        counts.append((before_end, count, short))
    text = "\n".join(lines) + "\n"
    if out:
        folder = os.path.dirname(out)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".book-")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        # mkstemp makes the file private; a book is an ordinary file.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, out)
    else:
        sys.stdout.write(text)
    for before_end, count, short in counts:
        print(f"{count} openings cut {before_end} plies before the end"
              + (f"; {short} games too short" if short else ""), file=sys.stderr)


def cut_games(kept, games, before_end, lines):
    """Appends to `lines` each kept game's opening `before_end` plies before
    its end (after a `#` line naming the game in the CSV `games`), each
    distinct opening once; returns how many openings and how many games
    were too short."""
    seen, short = set(), 0
    for line_no, row in kept:
        moves = row["moves"].split()
        cut = len(moves) - before_end
        if cut < len(row["opening_moves"].split()) or cut < 1:
            short += 1  # the cut would fall inside the game's own opening
            continue
        opening = " ".join(moves[:cut])
        if opening in seen:
            continue
        seen.add(opening)
        lines.append(f"# {os.path.basename(games)} game {row['game']} (line {line_no}): "
                     f"{row['result']} by {row['reason']} at ply {len(moves)}, "
                     f"foxes {row['foxes']}, geese {row['geese']}")
        lines.append(opening)
    return len(seen), short


if __name__ == "__main__":
    main()
