#!/usr/bin/env python3
"""Two agents' error rates side by side, group by group.

Reads pairs of `halatafl accuracy AGENT --suite S --json` outputs (the
agent under test, then the one it is compared with, on the same suite)
and prints one Markdown row per pair: each group's error rate in %,
`first / second`, and how many groups the first errs less in.

A group where both make no mistake is counted apart: "fewer mistakes"
cannot hold where the other side makes none, and "as few" is the most
any agent can do there. The last column gives both counts, e.g. `9 of
10 (1 both zero)`.

The default groups are the ten of issue 30's classic comparison: all
positions, the three stages, the two sides to move, the three
difficulties and the hard middle game. `--groups` takes others by the
names the JSON gives them (`"stage end"`, `"to move: geese"`, ...).

Standard library only:
`python3 scripts/accuracy-groups.py NET.json AB.json [NET2.json AB2.json ...]`.
"""

import argparse
import json
import sys

TEN_GROUPS = [
    "all",
    "stage beginning",
    "stage middle",
    "stage end",
    "to move: foxes",
    "to move: geese",
    "difficulty easy",
    "difficulty medium",
    "difficulty hard",
    "stage, difficulty: middle, hard",
]


def fail(message):
    sys.exit(f"accuracy-groups: {message}")


def load(path):
    """The accuracy output's agent, suite and its groups by name."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    except json.JSONDecodeError as e:
        fail(f"{path}: not JSON ({e.msg} at line {e.lineno}); expected `halatafl accuracy ... --json` output")
    if not isinstance(data, dict) or not isinstance(data.get("groups"), list):
        fail(f"{path}: no `groups` list; expected `halatafl accuracy ... --json` output")
    groups = {}
    for g in data["groups"]:
        try:
            groups[g["group"]] = (g["error_rate"]["rate"], g["errors"], g["positions"])
        except (KeyError, TypeError):
            fail(f"{path}: a group without `group`, `errors`, `positions` and `error_rate.rate`")
    return data.get("agent", path), data.get("suite"), groups


def compare(first_path, second_path, names):
    first_agent, first_suite, first = load(first_path)
    second_agent, second_suite, second = load(second_path)
    if first_suite != second_suite:
        fail(f"{first_path} is on suite {first_suite!r}, {second_path} on {second_suite!r}")
    cells, lower, both_zero = [], 0, 0
    for name in names:
        for path, groups in ((first_path, first), (second_path, second)):
            if name not in groups:
                fail(f"{path}: no group {name!r} (it has: {', '.join(groups)})")
        (a, a_errors, a_n), (b, b_errors, b_n) = first[name], second[name]
        if a_n != b_n:
            fail(f"group {name!r}: {a_n} positions in {first_path}, {b_n} in {second_path}")
        if a_errors == 0 and b_errors == 0:
            both_zero += 1
        elif a < b:
            lower += 1
        cells.append(f"{100 * a:.1f} / {100 * b:.1f}")
    tally = f"{lower} of {len(names)}" + (f" ({both_zero} both zero)" if both_zero else "")
    return f"| {first_agent} | {second_agent} | " + " | ".join(cells) + f" | {tally} |"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="accuracy JSON files in pairs: agent, then the agent it is compared with")
    parser.add_argument("--groups", nargs="+", default=TEN_GROUPS, help="group names (default: the ten of issue 30)")
    args = parser.parse_args()
    if len(args.files) % 2:
        fail(f"{len(args.files)} files: give them in pairs (agent, then the agent it is compared with)")
    # Every file is read and checked before anything is printed.
    rows = [compare(first, second, args.groups) for first, second in zip(args.files[::2], args.files[1::2])]
    print("| agent | against | " + " | ".join(args.groups) + " | groups where the agent errs less |")
    print("|---|---|" + "---|" * len(args.groups) + "---|")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
