"""`python -m halatafl_ray.sweep FILE`: a whole experiment, configs x seeds,
as Ray Tune trials on a local Ray instance or a cluster (`--address`).

Each trial is an ordinary run directory (see `trial.py`); the sweep's
directory holds them and the results:

```text
experiments/sweeps/<name>/
  sweep.toml      the sweep file as it was first started (a changed file is refused)
  trials/<arm>-s<seed>/       one per trial (trial.py)
  trials.csv      one row per finished trial: arm, seed, the measures, wall and CPU seconds
  arms.csv        per arm and measure: seeds, the mean (IQM from 5 seeds) and its bootstrap 95% interval
  curve.png/.svg  the run's own evaluation score against wall-clock time, per arm, with its seed band
  report.md       the tables and the plot
  tune/           Ray Tune's own experiment state and logs
```

Resuming is by the trial directories, not by Tune's experiment state: a start
runs, as Tune trials, only the trials without a `result.json`, and each of
them carries on from its run directory (`train --resume`, measures already
taken kept). A trial that fails (its halatafl process died, was killed or
exited with an error) is retried by Tune up to `[sweep] max_failures` times.
Ctrl-C stops the trials (their processes die with their Ray workers); the same
command again finishes the sweep.

Every trial asks Ray for the CPUs its config uses (the larger of `[run]
threads` and `torch_threads`: the stages of `train` run in turn) and one GPU
when its `device` is cuda.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
from pathlib import Path

from . import results, stages, sweepfile, trial
from .driver import add_ray_options


class SweepRunError(Exception):
    """A sweep that cannot start or finish; the message says why."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m halatafl_ray.sweep",
        description="Run a sweep file (configs x seeds) as Ray Tune trials and report each arm's measures "
        "with bootstrap intervals across seeds. Started again, it finishes what is not finished.",
    )
    p.add_argument("sweep", type=Path, help="the sweep file (TOML), e.g. sweeps/ci.toml")
    p.add_argument("--out", type=Path, help="the sweep's directory (default experiments/sweeps/<name>)")
    add_ray_options(p, "the machine's")
    p.add_argument("--report-only", action="store_true", help="write the results from the finished trials without running any")
    args = p.parse_args(argv)
    if args.num_cpus is not None and args.num_cpus < 1:
        p.error("--num-cpus must be at least 1")
    return args


def trial_resources(config: dict) -> dict:
    run = config.get("run", {})
    cpus = max(int(run.get("threads", 1)), int(run.get("torch_threads", 1)))
    device = str(run.get("device", "cpu"))
    cuda = device == "cuda" or device.startswith("cuda:")
    return {"cpu": cpus, "gpu": 1 if cuda else 0}


def plans(sweep: sweepfile.Sweep, out: Path, binary: Path) -> dict[str, dict]:
    """Every trial's plan (plain data for trial.TrialRunner), by trial name."""
    result = {}
    for t in sweep.trials():
        config = sweepfile.apply(sweep.base_config, t.overrides, t.seed)
        result[t.name] = {
            "trial": t.name,
            "arm": t.arm,
            "seed": t.seed,
            "config": config,
            "generations": int(config.get("run", {}).get("generations", 1)),
            "resources": trial_resources(config),
            "binary": str(binary),
            "cwd": os.getcwd(),
            "trial_dir": str(out / "trials" / t.name),
            # The same openings for every arm at a seed (common random numbers).
            "match_seed": 1000 + t.seed,
            "measure": {**dataclasses.asdict(sweep.measure), "suites": [str(s) for s in sweep.measure.suites]},
        }
    return result


def claim_directory(sweep: sweepfile.Sweep, out: Path) -> None:
    """Makes the sweep's directory, or checks that it holds this sweep."""
    out.mkdir(parents=True, exist_ok=True)
    stored = out / "sweep.toml"
    digest = out / "sweep.digest"
    if digest.exists():
        if digest.read_text().strip() != sweep.digest():
            raise SweepRunError(
                f"{out} holds a sweep whose file or base config differs from {sweep.path} now "
                f"(see {stored}); give another --out, or remove {out} to start again"
            )
        return
    trial.write_atomic(stored, sweep.text)
    trial.write_atomic(digest, sweep.digest() + "\n")


def say(text: str) -> None:
    print(f"halatafl_ray.sweep: {text}", flush=True)


def run_tune(sweep: sweepfile.Sweep, out: Path, todo: dict[str, dict], args: argparse.Namespace) -> None:
    import ray
    from ray import tune

    # The trial's code travels by value: nodes need only the binary and
    # the shared directory, not this package.
    for module in (stages, trial):
        ray.cloudpickle.register_pickle_by_value(module)
    if args.address:
        ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(num_cpus=args.num_cpus or os.cpu_count() or 1, include_dashboard=False, log_to_driver=False)
    cluster = ray.cluster_resources()
    say(f"Ray {ray.__version__}: {cluster}")
    for name, plan in todo.items():
        ask = plan["resources"]
        if ask["cpu"] > cluster.get("CPU", 0) or ask["gpu"] > cluster.get("GPU", 0):
            raise SweepRunError(
                f"trial {name} asks {ask['cpu']} CPUs and {ask['gpu']} GPUs ([run] threads, torch_threads, device), "
                f"but Ray has {cluster.get('CPU', 0):g} CPUs and {cluster.get('GPU', 0):g} GPUs"
            )
    storage = (out / "tune").resolve()
    storage.mkdir(exist_ok=True)
    start = sum(1 for p in storage.iterdir() if p.name.startswith("start-")) + 1
    trainable = tune.with_resources(
        tune.with_parameters(trial.tune_trainable, plans=todo),
        resources=lambda config: trial.tune_resources(todo[config["trial"]]),
    )
    tuner = tune.Tuner(
        trainable,
        param_space={"trial": tune.grid_search(list(todo))},
        tune_config=tune.TuneConfig(num_samples=1),
        run_config=tune.RunConfig(
            name=f"start-{start}",
            storage_path=str(storage),
            failure_config=tune.FailureConfig(max_failures=sweep.max_failures),
            verbose=0,
        ),
    )
    grid = tuner.fit()
    failed = [r for r in grid if r.error is not None]
    if failed:
        names = ", ".join(r.config.get("trial", "?") for r in failed)
        first = failed[0].error
        raise SweepRunError(f"{len(failed)} trial(s) failed after {sweep.max_failures} retries: {names}\n{first}")


def execute(args: argparse.Namespace) -> int:
    try:
        sweep = sweepfile.load(args.sweep)
    except sweepfile.SweepError as e:
        raise SweepRunError(str(e)) from e
    out = (args.out or Path("experiments") / "sweeps" / sweep.name).resolve()
    binary = args.bin.resolve()
    if not args.report_only and not os.access(binary, os.X_OK):
        raise SweepRunError(f"{binary} is not an executable (build it: cargo build --release -p halatafl-cli, or give --bin)")
    claim_directory(sweep, out)
    everything = plans(sweep, out, binary)
    finished = {n for n, p in everything.items() if trial.read_result(Path(p["trial_dir"])) is not None}
    todo = {n: p for n, p in everything.items() if n not in finished}
    say(f"{sweep.path}: {len(sweep.arms)} arms x {len(sweep.seeds)} seeds = {len(everything)} trials; "
        f"{len(finished)} finished, {len(todo)} to run; in {out}")
    if todo and not args.report_only:
        run_tune(sweep, out, todo, args)
    rows = [r for p in everything.values() if (r := trial.read_result(Path(p["trial_dir"]))) is not None]
    report = results.write(sweep, out, rows)
    say(f"{len(rows)} of {len(everything)} trials finished; results in {report}")
    return 0 if len(rows) == len(everything) else 1


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        return execute(args)
    except SweepRunError as e:
        print(f"halatafl_ray.sweep: error: {e}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("halatafl_ray.sweep: interrupted; run the same command again to finish the sweep", file=sys.stderr, flush=True)
        return 130
    finally:
        try:
            import ray

            if ray.is_initialized():
                ray.shutdown()
        except ImportError:
            pass


if __name__ == "__main__":
    sys.exit(main())
