"""One trial of a sweep: an ordinary run directory trained by `halatafl
train`, then its last network measured (`halatafl match`, `accuracy`).

Everything a trial has done is in its directory, so a trial can be killed at
any moment and run again (a Ray Tune retry, or the sweep started again):

```text
<sweep>/trials/<arm>-s<seed>/
  config.toml     the trial's config: the base with the arm's overrides and the seed
  run/            the run directory (`train --config`, then `train --resume`)
  attempts.log    one line per start of this trial
  state.json      attempts, wall and CPU seconds so far, when each stage ended
  measure/        the measuring matches' CSVs and the suites' JSON
  curve.csv       the run's own evaluation score per generation against wall-clock time
  result.json     written last, atomically: the trial is finished
```

A finished match or suite measure is kept, so a retry redoes only what was
not finished. CPU seconds are the children's own (`wait4`), so they count the
halatafl processes only, whichever Ray worker ran them.

This module imports Ray only to report a finished trial to Tune.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .stages import die_with_parent_hook, tail

RESULT = "result.json"


class TrialError(Exception):
    """A halatafl process of the trial failed; Tune retries the trial."""


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_state(trial_dir: Path) -> dict:
    try:
        return json.loads((trial_dir / "state.json").read_text())
    except (OSError, ValueError):
        return {"attempts": 0, "wall_seconds": 0.0, "cpu_seconds": 0.0, "stages": []}


def save_state(trial_dir: Path, state: dict) -> None:
    write_atomic(trial_dir / "state.json", json.dumps(state, indent=1))


def read_result(trial_dir: Path) -> dict | None:
    try:
        return json.loads((trial_dir / RESULT).read_text())
    except (OSError, ValueError):
        return None


class TrialRunner:
    """Runs one trial; `plan` is the driver's description of it (plain data,
    so it travels to any Ray node)."""

    def __init__(self, plan: dict):
        self.plan = plan
        self.binary = plan["binary"]
        self.cwd = plan["cwd"]
        self.dir = Path(plan["trial_dir"])
        self.run_dir = self.dir / "run"
        self.measure_dir = self.dir / "measure"
        # Loaded when the trial starts (`execute`), from wherever it was.
        self.state: dict = {}
        self.started = 0.0
        self.wall_before = 0.0

    def elapsed(self) -> float:
        return self.wall_before + time.monotonic() - self.started

    def save(self) -> None:
        self.state["wall_seconds"] = self.elapsed()
        save_state(self.dir, self.state)

    def note(self, text: str) -> None:
        with open(self.dir / "attempts.log", "a") as log:
            log.write(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] {text}\n")

    def process(self, args: list[str], log_name: str, poll=None) -> str:
        """Runs `halatafl ARGS`, its output appended to `log_name` (and
        returned). Raises TrialError when it fails or is killed; its CPU
        seconds are counted either way."""
        log_path = self.dir / log_name
        start = log_path.stat().st_size if log_path.exists() else 0
        with open(log_path, "ab") as log:
            log.write(f"$ halatafl {' '.join(args)}\n".encode())
            log.flush()
            child = subprocess.Popen(
                [self.binary, *args],
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent_hook(),
            )
        # The tests find the process to kill here.
        write_atomic(self.dir / "child.pid", str(child.pid))
        try:
            while True:
                pid, status, usage = os.wait4(child.pid, os.WNOHANG)
                if pid:
                    break
                if poll is not None:
                    poll()
                time.sleep(0.25)
        except BaseException:
            child.kill()
            raise
        child.returncode = os.waitstatus_to_exitcode(status)
        self.state["cpu_seconds"] += usage.ru_utime + usage.ru_stime
        self.save()
        output = tail(log_path, lines=10_000, since=start)
        code = child.returncode
        if code != 0:
            how = f"was killed by signal {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
            raise TrialError(f"{self.dir.name}: `halatafl {' '.join(args[:2])} ...` {how} ({log_path}):\n{tail(log_path, 15, start)}")
        return output

    def poll_progress(self) -> None:
        """Records when each stage of the run ended (wall-clock seconds of the
        trial so far), from the run's progress.json."""
        try:
            progress = json.loads((self.run_dir / "progress.json").read_text())
        except (OSError, ValueError):
            return
        mark = [progress.get("generation"), progress.get("stage")]
        stages = self.state["stages"]
        if not stages or stages[-1][:2] != mark:
            stages.append([*mark, round(self.elapsed(), 3)])
            self.save()

    def train(self) -> None:
        config = self.dir / "config.toml"
        if (self.run_dir / "config.toml").exists():
            args = ["train", "--resume", str(self.run_dir)]
        else:
            # A run directory without its config is one the first attempt
            # made and was killed in before anything was written.
            if self.run_dir.exists():
                shutil.rmtree(self.run_dir)
            args = ["train", "--config", str(config), "--run", str(self.run_dir)]
        self.process(args, "train.log", poll=self.poll_progress)
        self.poll_progress()

    def checkpoint(self) -> Path:
        return self.run_dir / "checkpoints" / f"gen_{self.plan['generations']:04}.safetensors"

    def network(self) -> str:
        agent = self.plan["measure"]["agent"]
        return f"net:ckpt={self.checkpoint()}" + (f",{agent}" if agent else "")

    def match(self, index: int, opponent: str) -> dict:
        m = self.plan["measure"]
        safe = re.sub(r"[^A-Za-z0-9_.=-]", "_", opponent)
        csv = self.measure_dir / f"{index}-{safe}.csv"
        if not csv.exists():
            self.process(
                [
                    "match", self.network(), opponent,
                    "--games", str(m["games"]),
                    "--openings", str(m["openings"]),
                    "--threads", str(m["threads"]),
                    "--seed", str(self.plan["match_seed"]),
                    "--csv", str(csv),
                ],
                "measure.log",
            )
        summary = json.loads(self.process(["summary", "--json", str(csv)], "measure.log").splitlines()[-1])
        net = next(a for a in summary["agents"] if a["spec"].startswith("net:"))
        margin = net["margin"]["mean"] if net["margin"] else None
        return {f"score:{opponent}": net["pairs"]["score"], f"margin:{opponent}": margin}

    def accuracy(self, suite: str) -> dict:
        out = self.measure_dir / f"{Path(suite).stem}.json"
        if not out.exists():
            text = self.process(
                [
                    "accuracy", self.network(),
                    "--suite", suite,
                    "--threads", str(self.plan["measure"]["threads"]),
                    "--seed", str(self.plan["match_seed"]),
                    "--json",
                ],
                "measure.log",
            )
            write_atomic(out, text.splitlines()[-1])
        data = json.loads(out.read_text())
        overall = next(g for g in data["groups"] if g["group"] == "all")
        return {f"error_rate:{Path(suite).stem}": overall["error_rate"]["rate"]}

    def curve(self) -> dict:
        """The run's own evaluation against the curve opponent: the
        network's score per generation, at the wall-clock second its
        evaluation ended; written to curve.csv. Returns the last score."""
        opponent = self.plan["measure"]["curve"]
        if opponent is None:
            return {}
        import csv as csvmod

        scores: dict[int, list[float]] = {}
        with open(self.run_dir / "eval.csv", newline="") as f:
            for row in csvmod.DictReader(f):
                if row["opponent"] != opponent:
                    continue
                g = int(row["generation"])
                mine = f"gen_{g:04}.safetensors"
                side = "foxes" if mine in row["foxes"] else "geese"
                points = 1.0 if row["result"] == side else 0.5 if row["result"] == "draw" else 0.0
                scores.setdefault(g, []).append(points)
        ended = {}
        for g, stage, seconds in self.state["stages"]:
            if stage == "eval":
                ended[g] = seconds
        lines = ["generation,seconds,score,games"]
        for g in sorted(scores):
            s = scores[g]
            seconds = ended.get(g, "")
            lines.append(f"{g},{seconds},{sum(s) / len(s)},{len(s)}")
        write_atomic(self.dir / "curve.csv", "\n".join(lines) + "\n")
        last = max(scores) if scores else None
        return {f"eval:{opponent}": (sum(scores[last]) / len(scores[last])) if last is not None else None}

    def train_and_measure(self) -> dict:
        self.train()
        measures: dict = {}
        m = self.plan["measure"]
        for i, opponent in enumerate(m["opponents"]):
            measures.update(self.match(i, opponent))
        for suite in m["suites"]:
            measures.update(self.accuracy(suite))
        measures.update(self.curve())
        return measures

    def execute(self) -> dict:
        """The trial from wherever it was: its result (also in result.json)."""
        done = read_result(self.dir)
        if done is not None:
            return done
        self.dir.mkdir(parents=True, exist_ok=True)
        self.measure_dir.mkdir(exist_ok=True)
        self.state = load_state(self.dir)
        self.wall_before = self.state["wall_seconds"]
        self.started = time.monotonic()
        self.state["attempts"] += 1
        self.save()
        self.note(f"attempt {self.state['attempts']} started (pid {os.getpid()})")
        if not (self.dir / "config.toml").exists():
            import tomli_w

            write_atomic(self.dir / "config.toml", tomli_w.dumps(self.plan["config"]))
        try:
            measures = self.train_and_measure()
        except TrialError as e:
            self.note(f"attempt {self.state['attempts']} failed: {str(e).splitlines()[0]}")
            raise
        self.save()
        result = {
            "trial": self.plan["trial"],
            "arm": self.plan["arm"],
            "seed": self.plan["seed"],
            **measures,
            "wall_seconds": round(self.state["wall_seconds"], 3),
            "cpu_seconds": round(self.state["cpu_seconds"], 3),
            "attempts": self.state["attempts"],
            "run": str(self.run_dir),
        }
        write_atomic(self.dir / RESULT, json.dumps(result, indent=1))
        self.note(f"attempt {self.state['attempts']} finished")
        return result


def tune_trainable(config: dict, plans: dict) -> None:
    """The Ray Tune trainable: runs the trial `config["trial"]` of `plans`
    and reports its numeric results. It lives in this module, which the
    driver sends by value, so Ray nodes need no copy of the package."""
    from ray import tune

    result = TrialRunner(plans[config["trial"]]).execute()
    tune.report({k: v for k, v in result.items() if isinstance(v, (int, float)) and v is not None})


def tune_resources(plan: dict):
    """The trial's CPUs (and GPU) as a Tune placement group."""
    from ray import tune

    ask = plan["resources"]
    bundle = {"CPU": ask["cpu"], "GPU": ask["gpu"]} if ask["gpu"] else {"CPU": ask["cpu"]}
    return tune.PlacementGroupFactory([bundle])
