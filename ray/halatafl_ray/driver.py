"""The driver: runs an asynchronous halatafl run (README, "Asynchronous mode:
stages as processes") as Ray actors, one `halatafl` process each: generation
0 (`train --init-only`), then the learner, N self-play workers and the
evaluator side by side until the run is finished.

Checkpoints and shards travel through the run directory, which every node
must see at the same path (a shared filesystem): the stages already talk only
through that directory, with atomic renames and file locks, so the driver
adds no channel of its own (README, "Ray: the stages on a cluster").
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
import tomllib
from pathlib import Path

from . import stages

REPO = Path(__file__).resolve().parents[2]
DEFAULT_BINARY = REPO / "target" / "release" / "halatafl"

# Most self-play workers one driver starts. Each is a Ray actor (a Python
# process of its own, about 100 MB) and a halatafl process; one learner
# cannot use the shards of more (they wait, `max_ahead_generations`), and a
# larger number is surely a typo, which would make millions of actors.
MAX_WORKERS = 1024


class RunError(Exception):
    """A run that cannot start or that failed; the message says why."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m halatafl_ray",
        description="Run halatafl's asynchronous stages (learner, self-play workers, "
        "evaluator) as Ray actors on a local Ray instance or a cluster.",
    )
    p.add_argument("--config", type=Path, help="run config (TOML) of a new run; a run directory that exists is resumed with its own config.toml")
    p.add_argument("--run", type=Path, help="run directory, on a filesystem every node shares (default experiments/<config name>)")
    p.add_argument("--workers", type=int, default=1, help="self-play workers (ids 1..N; default 1)")
    add_ray_options(p, "the machine's, at least what the stages ask for")
    p.add_argument("--worker-device", help="device of the self-play workers and the evaluator, replacing the config's `device` for them (e.g. cpu while the learner trains on cuda); on cuda they share the node's GPU without reserving it")
    p.add_argument("--max-restarts", type=int, default=10, help="times Ray restarts a stage's dead actor (default 10)")
    args = p.parse_args(argv)
    if not 1 <= args.workers <= MAX_WORKERS:
        p.error(f"--workers {args.workers}: must be from 1 to {MAX_WORKERS} (each worker is a Ray actor and a halatafl process)")
    if args.max_restarts < 0:
        p.error("--max-restarts must be 0 or more")
    if args.num_cpus is not None and args.num_cpus < 1:
        p.error("--num-cpus must be at least 1")
    if args.run is None:
        if args.config is None:
            p.error("give --config FILE (a new run) or --run DIR (a run to resume)")
        args.run = Path("experiments") / args.config.stem
    return args


def add_ray_options(p: argparse.ArgumentParser, default_cpus: str) -> None:
    """--address, --num-cpus and --bin, shared with the sweep runner."""
    p.add_argument("--address", help="Ray cluster to join (`auto`, or HOST:PORT of the head); default: start a local Ray instance")
    p.add_argument("--num-cpus", type=int, help=f"CPUs of the local Ray instance (default: {default_cpus})")
    p.add_argument("--bin", type=Path, default=Path(os.environ.get("HALATAFL_BIN", DEFAULT_BINARY)), help=f"the halatafl binary, at this path on every node (default $HALATAFL_BIN or {DEFAULT_BINARY})")


def read_config(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise RunError(f"{path}: {e}") from e


def stage_resources(config: dict) -> dict[str, dict]:
    """Ray resources of each kind of stage: the CPU threads the config gives
    it, and one GPU for the learner when the run trains on CUDA. Workers and
    the evaluator ask for no GPU: they use the node's GPUs if `device` says
    so (Ray leaves CUDA_VISIBLE_DEVICES alone for them)."""
    run = config.get("run", {})
    threads = int(run.get("threads", 1))
    torch_threads = int(run.get("torch_threads", 1))
    device = str(run.get("device", "cpu"))
    cuda = device == "cuda" or device.startswith("cuda:")
    return {
        "learn": {"num_cpus": torch_threads, "num_gpus": 1 if cuda else 0},
        "selfplay": {"num_cpus": threads, "num_gpus": 0},
        "evaluate": {"num_cpus": threads, "num_gpus": 0},
    }


def _count(n: float, what: str) -> str:
    return f"{n:g} {what}{'' if n == 1 else 's'}"


def _asks(ask: dict) -> str:
    text = _count(ask["num_cpus"], "CPU")
    return text + (f" and {_count(ask['num_gpus'], 'GPU')}" if ask["num_gpus"] else "")


def unschedulable(resources: dict[str, dict], workers: int, nodes: list[dict], where: str, more: str) -> str | None:
    """Why the stages cannot all run at once on `nodes` (each node's CPU and
    GPU totals, as Ray counts them), or None. Every stage holds its CPUs (and
    the learner its GPU) for as long as it runs, so stages that do not fit
    would wait for ever while the others wait for them. Only sure failures
    are named: the sums exceed the cluster, or a stage exceeds every node.
    `where` names the cluster in the message, `more` says how to get more
    CPUs."""
    learn, selfplay, evaluate = resources["learn"], resources["selfplay"], resources["evaluate"]
    stages = [("the learner", learn), ("a self-play worker", selfplay), ("the evaluator", evaluate)]
    asked = (
        f"the learner asks {_asks(learn)}, each of the {workers} self-play worker{'s' if workers > 1 else ''} "
        f"{_asks(selfplay)} and the evaluator {_asks(evaluate)}"
    )
    cpus = sum(n.get("CPU", 0) for n in nodes)
    gpus = sum(n.get("GPU", 0) for n in nodes)
    has = f"{where} has {_count(cpus, 'CPU')} and {_count(gpus, 'GPU')}"
    if len(nodes) > 1:
        has += f" on {len(nodes)} nodes"
    need_cpus = learn["num_cpus"] + evaluate["num_cpus"] + workers * selfplay["num_cpus"]
    need_gpus = learn["num_gpus"] + evaluate["num_gpus"] + workers * selfplay["num_gpus"]
    if need_gpus > gpus:
        return (
            f'the stages cannot all be scheduled: the config says device = "cuda", and {asked}: '
            f"{_count(need_gpus, 'GPU')} in all, but {has}"
        )
    if need_cpus > cpus:
        room = cpus - learn["num_cpus"] - evaluate["num_cpus"]
        fit = int(room // selfplay["num_cpus"]) if selfplay["num_cpus"] > 0 and room >= 0 else 0
        hint = f"give {more}, or at most {fit} --workers" if fit >= 1 else f"give {more}"
        return (
            f"the stages cannot all be scheduled: {asked}: {_count(need_cpus, 'CPU')} in all, "
            f"but {has}; {hint} (`[run] threads` and `torch_threads` of the config set what each asks)"
        )
    for name, ask in stages:
        if not any(n.get("CPU", 0) >= ask["num_cpus"] and n.get("GPU", 0) >= ask["num_gpus"] for n in nodes):
            largest = max(nodes, key=lambda n: (n.get("CPU", 0), n.get("GPU", 0)), default={})
            return (
                f"the stages cannot all be scheduled: {name} asks {_asks(ask)}, "
                f"but no node of {where} has that many (the largest has {_count(largest.get('CPU', 0), 'CPU')} "
                f"and {_count(largest.get('GPU', 0), 'GPU')})"
            )
    return None


def checkpoints(run: Path) -> list[str]:
    try:
        return sorted(n for n in os.listdir(run / "checkpoints") if n.endswith(".safetensors") and not n.startswith("."))
    except OSError:
        return []


class Driver:
    def __init__(self, args: argparse.Namespace):
        import ray

        self.ray = ray
        self.args = args
        self.run = args.run.resolve()
        self.binary = args.bin.resolve()
        self.logs = self.run / "ray-logs"
        self.actors: dict[str, object] = {}
        if not os.access(self.binary, os.X_OK):
            raise RunError(f"{self.binary} is not an executable (build it: cargo build --release -p halatafl-cli, or give --bin)")
        if args.config is not None and not args.config.is_file():
            raise RunError(f"{args.config}: no such config file")

    def say(self, text: str) -> None:
        print(f"halatafl_ray: {text}", flush=True)

    def report_restart(self, name: str, result: dict) -> None:
        """A stage's halatafl process killed by a signal (the OOM killer, a
        `kill`) and started again by its actor, said when the actor sees it."""
        self.say(
            f"{name}: its halatafl process was killed by signal {result['signal']}; "
            f"its actor started it again (restart {result['child_restarts']}; {result['log']})"
        )

    def start_ray(self, resources: dict[str, dict]) -> None:
        ray = self.ray
        # The actor class travels by value, so nodes need no copy of this
        # package on their Python path (only the binary and the run dir).
        ray.cloudpickle.register_pickle_by_value(stages)
        workers = self.args.workers
        if self.args.address:
            ray.init(address=self.args.address, include_dashboard=False, log_to_driver=False)
            nodes = [n["Resources"] for n in ray.nodes() if n.get("Alive")]
            why = unschedulable(resources, workers, nodes, f"the Ray cluster at {self.args.address}", "the cluster more CPUs")
        else:
            wanted = resources["learn"]["num_cpus"] + resources["evaluate"]["num_cpus"] + workers * resources["selfplay"]["num_cpus"]
            cpus = self.args.num_cpus or max(os.cpu_count() or 1, wanted)
            gpus = resources["learn"]["num_gpus"]
            # Checked before Ray starts: nothing is started for a run that
            # could not go on (an explicit --num-cpus below what the stages
            # ask would leave some of them waiting for ever).
            where = "the local Ray instance" + (f" (--num-cpus {cpus})" if self.args.num_cpus else "")
            why = unschedulable(resources, workers, [{"CPU": cpus, "GPU": gpus}], where, f"--num-cpus {wanted} or more")
            if why is None:
                ray.init(num_cpus=cpus, num_gpus=gpus or None, include_dashboard=False, log_to_driver=False)
        if why is not None:
            raise RunError(why)
        # scancel and `kill` send SIGTERM: stop as on Ctrl-C. Set after
        # ray.init, whose own handler (a crash report) would replace it.
        signal.signal(signal.SIGTERM, _interrupt)
        self.say(f"Ray {ray.__version__}: {ray.cluster_resources()}")

    def actor(self, name: str, args: list[str], resources: dict, max_restarts: int):
        cls = self.ray.remote(stages.StageProcess)
        handle = cls.options(max_restarts=max_restarts, max_task_retries=0, **resources).remote(
            str(self.binary), args, str(self.logs / f"{name}.log")
        )
        self.actors[name] = handle
        return handle

    def init_run(self, resources: dict) -> None:
        """Generation 0, on a node with the learner's resources (it trains
        the bootstrap network). Not restarted by Ray: its arguments make a new
        run; the driver run again resumes it."""
        if (self.run / "async.json").exists():
            self.say(f"resuming {self.run}")
            return
        if (self.run / "config.toml").exists():
            args = ["train", "--resume", str(self.run), "--init-only"]
            self.say(f"finishing generation 0 of {self.run}")
        else:
            args = ["train", "--init-only", "--config", str(self.args.config.resolve()), "--run", str(self.run)]
            self.say(f"new run {self.run}: generation 0")
            # The init's log cannot live in a run directory not made yet.
            self.logs = self.run.parent / f".{self.run.name}.ray-logs"
        handle = self.actor("init", args, resources, max_restarts=0)
        result = self.ray.get(handle.wait.remote())
        while result["restarted"]:
            self.report_restart("init", result)
            result = self.ray.get(handle.wait.remote())
        self.ray.kill(handle, no_restart=True)
        del self.actors["init"]
        if result["code"] != 0:
            raise RunError(f"generation 0 failed (status {result['code']}; {result['log']}):\n{result['tail']}")
        self.logs = self.run / "ray-logs"
        if Path(result["log"]).parent != self.logs:
            self.logs.mkdir(exist_ok=True)
            os.replace(result["log"], self.logs / "init.log")
            os.rmdir(Path(result["log"]).parent)

    def execute(self) -> int:
        ray = self.ray
        new = not (self.run / "config.toml").exists()
        if new and self.args.config is None:
            raise RunError(f"{self.run} is not a run directory; give --config FILE to make a new run there")
        config = read_config(self.args.config if new else self.run / "config.toml")
        resources = stage_resources(config)
        self.start_ray(resources)
        self.init_run(resources["learn"])

        # `halatafl stage <name> ...`: the asynchronous mode's processes.
        stage_args = {"learn": ["stage", "learn"], "evaluate": ["stage", "evaluate"]}
        for w in range(1, self.args.workers + 1):
            stage_args[f"selfplay-{w}"] = ["stage", "selfplay", "--worker", str(w)]
        if self.args.worker_device:
            for name, args in stage_args.items():
                if name != "learn":
                    args += ["--device", self.args.worker_device]
        pending = {}
        for name, args in stage_args.items():
            kind = name.split("-")[0]
            handle = self.actor(name, [*args, "--run", str(self.run)], resources[kind], self.args.max_restarts)
            pending[handle.wait.remote()] = name
        self.say(f"started {', '.join(stage_args)} (logs in {self.logs})")

        restarts = {name: 0 for name in stage_args}
        seen = set(checkpoints(self.run))
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            for ckpt in checkpoints(self.run):
                if ckpt not in seen:
                    seen.add(ckpt)
                    self.say(f"published {ckpt}")
            for ref in ready:
                name = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayActorError as e:
                    restarts[name] += 1
                    if restarts[name] > self.args.max_restarts:
                        raise RunError(f"{name}: its actor died more than --max-restarts {self.args.max_restarts} times: {e}") from e
                    self.say(f"{name}: its actor died; Ray restarts it (restart {restarts[name]})")
                    pending[self.actors[name].wait.remote()] = name
                    continue
                if result["restarted"]:
                    self.report_restart(name, result)
                    pending[self.actors[name].wait.remote()] = name
                    continue
                if result["code"] != 0:
                    raise RunError(f"{name} failed (status {result['code']}; {result['log']}):\n{result['tail']}")
                self.say(f"{name} finished")
        if not (self.run / "finished.json").exists():
            raise RunError(f"every stage exited but {self.run / 'finished.json'} is missing")
        self.say(f"finished: {len(seen)} checkpoints")
        print(f"run: {self.run}", flush=True)
        return 0

    def stop(self) -> None:
        """Kills every actor (their stage processes die with them) and leaves
        the Ray instance. The stages are safe to kill at any moment, so the
        run resumes from where it was when the driver is started again."""
        for handle in self.actors.values():
            try:
                self.ray.kill(handle, no_restart=True)
            except Exception:
                pass
        self.actors.clear()
        if self.ray.is_initialized():
            self.ray.shutdown()


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    driver = None
    try:
        driver = Driver(args)
        return driver.execute()
    except RunError as e:
        print(f"halatafl_ray: error: {e}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("halatafl_ray: interrupted: stopping the stages; run the same command again to resume", file=sys.stderr, flush=True)
        return 130
    finally:
        if driver is not None:
            # A second Ctrl-C must not leave actors behind half-stopped.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            driver.stop()
