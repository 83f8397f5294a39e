#!/usr/bin/env python3
"""Self-play throughput side by side: positions per second, positions per
network call and cache hits of one self-play generation, for several arms
(a binary, and settings over a config), run in turns so that a noisy
machine slows every arm alike; medians over the repeats.

Each run is `halatafl train` on a copy of the config cut down to one
generation that starts from a trained checkpoint (no expert games, one
training step, two evaluation games), so the arms play the same network's
games; the figures are that generation's row of `selfplay.csv`. Any
binary that runs `train` works, so today's build can be measured beside
an older one (build it from a worktree of the older commit).

    scripts/selfplay-throughput.py --config configs/quick.toml \\
        --arm old=/tmp/old/halatafl --arm new=target/release/halatafl \\
        --arm "new-auto=target/release/halatafl:network.precision=auto" \\
        --repeats 3

An arm is NAME=BINARY[:KEY=VALUE[,KEY=VALUE...]], KEY a dotted config key
(`selfplay.concurrent_games`), VALUE TOML (`96`, `"bf16"`, `true`), or
nothing (`network.inference_servers=`) to leave the key out: an older
binary refuses keys it does not know.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import tomllib


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise SystemExit(f"selfplay-throughput: cannot write {v!r} as TOML")


def dump(config):
    lines = []
    for section, keys in config.items():
        if not isinstance(keys, dict):
            raise SystemExit(f"selfplay-throughput: top-level key {section!r} is not a section")
        lines.append(f"[{section}]")
        lines += [f"{k} = {toml_value(v)}" for k, v in keys.items()]
        lines.append("")
    return "\n".join(lines)


def parse_arm(text):
    name, sep, rest = text.partition("=")
    if not sep or not name:
        raise SystemExit(f"selfplay-throughput: arm {text!r}: expected NAME=BINARY[:KEY=VALUE,...]")
    binary, _, sets = rest.partition(":")
    overrides = {}
    for item in filter(None, sets.split(",")):
        key, sep, value = item.partition("=")
        if not sep or "." not in key:
            raise SystemExit(
                f"selfplay-throughput: arm {name}: {item!r} is not SECTION.KEY=VALUE")
        if not value:
            overrides[key] = None
            continue
        try:
            overrides[key] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError as e:
            raise SystemExit(f"selfplay-throughput: arm {name}: {value!r} is not a TOML value: {e}")
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"selfplay-throughput: arm {name}: {binary!r} is not an executable")
    return name, os.path.abspath(binary), overrides


def bench_config(base, args, overrides):
    config = {section: dict(keys) for section, keys in base.items()}
    config.setdefault("run", {})["generations"] = 1
    config.setdefault("network", {})["init"] = os.path.abspath(args.init)
    config["network"]["preset"] = args.preset
    config.setdefault("bootstrap", {})["games"] = 0
    config["bootstrap"]["steps"] = 0
    config.setdefault("train", {})["steps_per_generation"] = 1
    config.setdefault("eval", {})["games"] = 2
    config["eval"]["opponents"] = ["random"]
    if args.games:
        config.setdefault("selfplay", {})["games"] = args.games
    for key, value in overrides.items():
        section, _, name = key.partition(".")
        if value is None:
            config.get(section, {}).pop(name, None)
        else:
            config.setdefault(section, {})[name] = value
    return config


def run_once(binary, config, workdir, label):
    path = os.path.join(workdir, f"{label}.toml")
    with open(path, "w") as f:
        f.write(dump(config))
    run = os.path.join(workdir, f"run-{label}")
    done = subprocess.run([binary, "train", "--config", path, "--run", run],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"selfplay-throughput: {label} failed:\n{done.stderr[-2000:]}")
    with open(os.path.join(run, "selfplay.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(run, "log.txt")) as f:
        chosen = [line.split("auto: ", 1)[1].split(" ")[0] for line in f if "precision = auto" in line]
    row = rows[-1]
    return {
        "positions/s": float(row["positions_per_second"]),
        "net batch": float(row["net_batch_mean"]),
        "cache hits": float(row["cache_hit_rate"]),
        "plies/game": float(row["mean_plies"]),
        "precision": chosen[0] if chosen else config["network"].get("precision", "f32"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="configs/quick.toml")
    ap.add_argument("--arm", action="append", required=True,
                    help="NAME=BINARY[:KEY=VALUE,...]; repeat for each arm")
    ap.add_argument("--init", default="models/best.safetensors",
                    help="the checkpoint every arm's self-play uses")
    ap.add_argument("--preset", default="b4c32", help="the checkpoint's preset")
    ap.add_argument("--games", type=int, default=0,
                    help="self-play games per run (default: the config's)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", help="keep the runs in this folder (default: a temporary one)")
    args = ap.parse_args()
    with open(args.config, "rb") as f:
        base = tomllib.load(f)
    arms = [parse_arm(a) for a in args.arm]
    if len({a[0] for a in arms}) != len(arms):
        raise SystemExit("selfplay-throughput: arm names must differ")
    workdir = args.keep or tempfile.mkdtemp(prefix="halatafl-throughput-")
    os.makedirs(workdir, exist_ok=True)
    results = {name: [] for name, _, _ in arms}
    for r in range(args.repeats):
        for name, binary, overrides in arms:
            got = run_once(binary, bench_config(base, args, overrides), workdir, f"{name}-{r}")
            results[name].append(got)
            print(f"# repeat {r + 1} {name}: {got['positions/s']:.0f} positions/s, "
                  f"batch {got['net batch']:.1f}, cache {100 * got['cache hits']:.0f}%, "
                  f"{got['precision']}", file=sys.stderr, flush=True)
    first = arms[0][0]
    base_rate = statistics.median(g["positions/s"] for g in results[first])
    print(f"| arm | positions/s (median of {args.repeats}) | runs | x {first} "
          "| positions per network call | cache hits | precision |")
    print("|---|---|---|---|---|---|---|")
    for name, _, overrides in arms:
        got = results[name]
        rate = statistics.median(g["positions/s"] for g in got)
        runs = ", ".join(f"{g['positions/s']:.0f}" for g in got)
        print(f"| {name} | {rate:.0f} | {runs} | {rate / base_rate:.2f} "
              f"| {statistics.median(g['net batch'] for g in got):.1f} "
              f"| {100 * statistics.median(g['cache hits'] for g in got):.0f}% "
              f"| {'/'.join(sorted({g['precision'] for g in got}))} |")
    if not args.keep:
        subprocess.run(["rm", "-rf", workdir])


if __name__ == "__main__":
    main()
