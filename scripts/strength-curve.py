#!/usr/bin/env python3
"""Strength by the geese margin against the CPU-hours a training run spent.

A training run writes one checkpoint per generation
(`RUN/checkpoints/gen_NNNN.safetensors`). While it trains, `--log-cpu PID`
samples the CPU seconds the run's process has used (user + system, all its
threads, from /proc) every 10 seconds into a log (continued, not
restarted, when the run is resumed: log the new process into the same
file); afterwards `--table`
plays or reads one match per chosen generation and prints, per
generation, the CPU-hours spent when its checkpoint was written (paused
time, SIGSTOP, costs nothing) and the checkpoint's margin per pair and
pair score with their 95% intervals (`halatafl summary --json`).

    scripts/strength-curve.py --log-cpu PID --cpu-log RUN.cpu &
    scripts/strength-curve.py --table --run RUN --cpu-log RUN.cpu \\
        --generations 0,4,8,16 --opponent alphabeta:ms=113 \\
        --agent-options ms=100,batch=4 --games 40 --openings 6 --seed 3202 \\
        --out DIR [--cores 0,1]

Matches whose CSV already holds all its games in --out are read, not
played again, so a table can be redrawn or completed. With --cores, the
matches run in parallel, one per core, each pinned (`taskset`), one
search thread each. Standard library only; needs target/release/halatafl
(or --bin).
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import time


def log_cpu(pid, path, every):
    ticks = os.sysconf("SC_CLK_TCK")
    # A log that already has rows is continued: a run resumed with
    # `train --resume` is a new process whose count starts at zero, so its
    # seconds are added to what the run had spent before.
    offset = read_cpu_log(path)[-1][1] if os.path.exists(path) and os.path.getsize(path) else 0.0
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            return
        # After the command name: state is field 3, utime 14, stime 15.
        seconds = (int(fields[11]) + int(fields[12])) / ticks
        with open(path, "a") as out:
            out.write(f"{time.time():.0f} {offset + seconds:.1f}\n")
        time.sleep(every)


def read_cpu_log(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) != 2:
                sys.exit(f"{path}:{n}: expected `unix_time cpu_seconds`, got {line!r}")
            rows.append((float(parts[0]), float(parts[1])))
    if not rows:
        sys.exit(f"{path}: empty CPU log")
    return rows


def cpu_at(rows, when):
    """CPU seconds at unix time `when`: linear between the samples around it."""
    if when <= rows[0][0]:
        return rows[0][1]
    for (t0, c0), (t1, c1) in zip(rows, rows[1:]):
        if t0 <= when <= t1:
            return c0 + (c1 - c0) * (when - t0) / max(t1 - t0, 1e-9)
    return rows[-1][1]


def games_in(path):
    try:
        with open(path, newline="") as f:
            return sum(1 for _ in csv.DictReader(f))
    except FileNotFoundError:
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log-cpu", type=int, metavar="PID", help="sample this process's CPU time until it ends")
    ap.add_argument("--cpu-log", required=True, help="the CPU log (`unix_time cpu_seconds` lines)")
    ap.add_argument("--every", type=float, default=10.0, help="seconds between samples (default 10)")
    ap.add_argument("--table", action="store_true", help="play or read the matches and print the table")
    ap.add_argument("--run", help="the training run's directory")
    ap.add_argument("--generations", help="comma-separated generations, e.g. 0,4,8,16")
    ap.add_argument("--opponent", default="alphabeta:ms=113")
    ap.add_argument("--agent-options", default="ms=100,batch=4", help="added to net:ckpt=...")
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--openings", type=int, default=6)
    ap.add_argument("--seed", type=int, default=3202)
    ap.add_argument("--out", help="directory for the match CSVs")
    ap.add_argument("--cores", help="comma-separated cores to pin matches to, one match per core")
    ap.add_argument("--bin", default="target/release/halatafl")
    a = ap.parse_args()

    if a.log_cpu is not None:
        log_cpu(a.log_cpu, a.cpu_log, a.every)
        return
    if not a.table:
        sys.exit("give --log-cpu PID or --table")
    for need in ("run", "generations", "out"):
        if getattr(a, need) is None:
            sys.exit(f"--table needs --{need}")
    try:
        gens = [int(g) for g in a.generations.split(",")]
    except ValueError:
        sys.exit(f"--generations: expected numbers separated by commas, got {a.generations!r}")
    rows = read_cpu_log(a.cpu_log)
    os.makedirs(a.out, exist_ok=True)

    ckpts, csvs = {}, {}
    for g in gens:
        ckpt = os.path.join(a.run, "checkpoints", f"gen_{g:04d}.safetensors")
        if not os.path.exists(ckpt):
            sys.exit(f"{ckpt}: no such checkpoint")
        ckpts[g] = ckpt
        csvs[g] = os.path.join(a.out, f"gen_{g:04d}.csv")

    todo = [g for g in gens if games_in(csvs[g]) < a.games]
    cores = a.cores.split(",") if a.cores else [None]
    running = []
    while todo or running:
        while todo and len(running) < len(cores):
            g = todo.pop(0)
            core = next(c for c in cores if c not in [r[1] for r in running])
            if os.path.exists(csvs[g]):
                os.remove(csvs[g])  # an unfinished match is played again whole
            cmd = [a.bin, "match", f"net:ckpt={ckpts[g]},{a.agent_options}", a.opponent,
                   "--games", str(a.games), "--openings", str(a.openings), "--threads", "1",
                   "--seed", str(a.seed), "--csv", csvs[g]]
            if core is not None:
                cmd = ["taskset", "-c", core] + cmd
            log = open(csvs[g][:-4] + ".log", "w")
            print(f"generation {g}: {' '.join(cmd)}", file=sys.stderr)
            running.append((subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), core, g))
        time.sleep(2)
        for r in list(running):
            if r[0].poll() is not None:
                if r[0].returncode != 0:
                    sys.exit(f"generation {r[2]}: the match failed (see {csvs[r[2]][:-4]}.log)")
                running.remove(r)

    def num(x, fmt):
        return "-" if x is None else format(x, fmt)

    print("| generation | CPU-hours | margin per pair [95%] | taken as foxes / lost as geese per game "
          "| pairs by result, then margin [95%] | pair score [95%] |")
    print("|---|---|---|---|---|---|")
    for g in gens:
        summary = subprocess.run([a.bin, "summary", "--json", csvs[g]], check=True,
                                 capture_output=True, text=True).stdout
        agent = json.loads(summary.splitlines()[0])["agents"][0]
        hours = cpu_at(rows, os.path.getmtime(ckpts[g])) / 3600
        m, r, p = agent["margin"], agent["result_then_margin"], agent["pairs"]
        print(f"| {g} | {hours:.2f} | {num(m['mean'], '+.2f')} [{num(m['lo'], '+.2f')}, {num(m['hi'], '+.2f')}] | "
              f"{agent['taken_as_foxes']['mean']:.2f} / {agent['lost_as_geese']['mean']:.2f} | "
              f"{num(r['mean'], '.3f')} [{num(r['lo'], '.3f')}, {num(r['hi'], '.3f')}] | "
              f"{p['score']:.3f} [{p['lo']:.3f}, {p['hi']:.3f}] |")

if __name__ == "__main__":
    main()
