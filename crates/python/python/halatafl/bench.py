"""Random-play speed of the Python APIs beside the Rust engine's own, one run.

    python -m halatafl.bench [--plies 400000] [--repeats 5] [--games 256]

Every figure is plies per second on one thread (the process's only busy
one), the median of ``--repeats`` timed runs of about ``--plies`` plies each,
all measured in this process, one after another:

- ``rust``: pure-Rust random games (``rust_random_playouts``), every end rule
  after every ply: the engine's own figure;
- ``single``: the single-game API, a Python loop of ``legal_actions``,
  ``random.choice`` and ``play_action`` (one game after another);
- ``batched``: ``BatchGames.step`` on ``--games`` games at once with
  ``random_actions()`` (drawn in Rust), observations and masks returned as
  new NumPy arrays every step;
- ``batched-reuse``: the same with ``step(..., copy=False)``, which
  overwrites the same two arrays every step;
- ``batched-numpy``: ``copy=False`` with each action drawn in NumPy from the
  returned masks, as a Python policy would pick its moves.

With gymnasium installed it also measures environment steps per second
(one step: the policy's move and the random opponent's reply, two plies,
with the observation and the legal-action mask returned):

- ``env``: ``HalataflEnv(opponent="random")``, one game, a random legal
  action from ``action_masks()`` each step;
- ``vector-env``: ``HalataflVectorEnv(--games, copy=False)`` with
  ``random_actions()``, all games in one call.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time

import numpy as np

from . import _halatafl as hf


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def rust_rate(plies: int, seed: int) -> float:
    played, _games, seconds = hf.rust_random_playouts(plies, "two-foxes", seed)
    return played / seconds


def single_rate(plies: int, seed: int) -> float:
    rng = random.Random(seed)
    played = 0
    start = time.perf_counter()
    while played < plies:
        game = hf.Game()
        while True:
            actions = game.legal_actions()
            if not actions:
                break
            game.play_action(rng.choice(actions))
            played += 1
    return played / (time.perf_counter() - start)


def batched_rate(plies: int, games: int, seed: int, copy: bool = True) -> float:
    batch = hf.BatchGames(games, seed=seed)
    batch.reset()
    steps = max(1, plies // games)
    start = time.perf_counter()
    for _ in range(steps):
        batch.step(batch.random_actions(), copy=copy)
    return steps * games / (time.perf_counter() - start)


def sample_masked(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of a boolean mask (N, 1089)."""
    flat = np.flatnonzero(mask)  # legal (row, action) pairs, row by row
    counts = np.count_nonzero(mask, axis=1)
    first = np.cumsum(counts) - counts
    pick = first + (rng.random(len(mask)) * counts).astype(np.int64)
    return flat[pick] - np.arange(len(mask)) * mask.shape[1]


def batched_numpy_rate(plies: int, games: int, seed: int) -> float:
    batch = hf.BatchGames(games, seed=seed)
    _obs, mask = batch.reset()
    rng = np.random.default_rng(seed)
    steps = max(1, plies // games)
    start = time.perf_counter()
    for _ in range(steps):
        _obs, mask, _rewards, _dones, _winners = batch.step(sample_masked(mask, rng), copy=False)
    return steps * games / (time.perf_counter() - start)


def env_rate(steps: int, seed: int) -> float:
    from .envs import HalataflEnv

    env = HalataflEnv(opponent="random")
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    start = time.perf_counter()
    for _ in range(steps):
        action = rng.choice(np.flatnonzero(env.action_masks()))
        _obs, _r, done, _t, _i = env.step(action)
        if done:
            env.reset()
    return steps / (time.perf_counter() - start)


def vector_env_rate(steps: int, games: int, seed: int) -> float:
    from .envs import HalataflVectorEnv

    env = HalataflVectorEnv(games, copy=False)
    env.reset(seed=seed)
    calls = max(1, steps // games)
    start = time.perf_counter()
    for _ in range(calls):
        env.step(env.random_actions())
    return calls * games / (time.perf_counter() - start)


def have_gymnasium() -> bool:
    try:
        import gymnasium  # noqa: F401
    except ImportError:
        return False
    return True


def run(plies: int, repeats: int, games: int) -> dict:
    """Medians of each figure, the repeats interleaved so that drifts in the
    machine's load touch all figures alike."""
    samples = {"rust": [], "single": [], "batched": [], "batched-reuse": [], "batched-numpy": []}
    steps = {"env": [], "vector-env": []} if have_gymnasium() else {}
    for r in range(repeats):
        if steps:
            steps["env"].append(env_rate(plies // 20, r))
            steps["vector-env"].append(vector_env_rate(plies // 2, games, r))
        samples["rust"].append(rust_rate(plies, r))
        samples["single"].append(single_rate(plies // 10, r))
        samples["batched"].append(batched_rate(plies, games, r))
        samples["batched-reuse"].append(batched_rate(plies, games, r, copy=False))
        samples["batched-numpy"].append(batched_numpy_rate(plies, games, r))
    medians = {k: statistics.median(v) for k, v in samples.items()}
    return {
        "cpu": cpu_model(),
        "plies": plies,
        "repeats": repeats,
        "games": games,
        "plies_per_s": medians,
        "samples": samples,
        "share_of_rust": {k: v / medians["rust"] for k, v in medians.items()},
        "env_steps_per_s": {k: statistics.median(v) for k, v in steps.items()},
        "env_samples": steps,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m halatafl.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--plies", type=int, default=400_000, help="plies per timed run (the single-game API plays a tenth)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per figure (median reported)")
    parser.add_argument("--games", type=int, default=256, help="games per batch")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.plies < 1 or args.repeats < 1 or args.games < 1:
        parser.error("--plies, --repeats and --games must be at least 1")
    result = run(args.plies, args.repeats, args.games)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"CPU: {result['cpu']}; {args.repeats} runs of ~{args.plies} plies, batches of {args.games} games; medians")
    print("| API | plies/s | share of Rust |")
    print("|---|---:|---:|")
    for name, rate in result["plies_per_s"].items():
        print(f"| {name} | {rate:,.0f} | {result['share_of_rust'][name]:.2f} |")
    if result["env_steps_per_s"]:
        print()
        print("| environment | steps/s (a step: a move and the opponent's reply) |")
        print("|---|---:|")
        for name, rate in result["env_steps_per_s"].items():
            print(f"| {name} | {rate:,.0f} |")


if __name__ == "__main__":
    main()
