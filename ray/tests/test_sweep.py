"""The sweep runner end to end on a local Ray instance (sweeps/ci.toml: 2 arms
x 2 seeds of configs/ci.toml): it completes with one row per trial and
per-arm intervals across seeds, a trial whose halatafl process is killed
mid-run is retried and finishes, and after Ctrl-C a second start finishes the
sweep without running a finished trial again.

Needs target/release/halatafl (scripts/check-ray.sh runs these tests).
"""

from __future__ import annotations

import csv
import json
import os
import signal
import tempfile
from pathlib import Path

import pytest

from test_driver import BINARY, REPO, finish, gone, spawn, wait_for

SWEEP = REPO / "sweeps" / "ci.toml"

pytestmark = pytest.mark.skipif(not BINARY.exists(), reason=f"{BINARY} is not built")


def start(out: Path, *args: str) -> subprocess.Popen:
    """The sweep runner in its own process group, as test_driver.driver."""
    return spawn(["-m", "halatafl_ray.sweep", str(SWEEP), "--out", str(out), "--num-cpus", "2", *args], cwd=REPO)


def rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def starts(trial: Path) -> int:
    return (trial / "attempts.log").read_text().count(" started ")


def live_pid(trial: Path, command: str) -> int:
    """The pid of the trial's running `halatafl COMMAND`, once it runs."""
    found = []

    def running() -> bool:
        try:
            pid = int((trial / "child.pid").read_text())
            argv = (Path("/proc") / str(pid) / "cmdline").read_bytes().decode().split("\0")
        except (OSError, ValueError):
            return False
        if len(argv) > 1 and argv[1] == command:
            found.append(pid)
            return True
        return False

    wait_for(f"{trial.name}: halatafl {command} running", running)
    return found[0]


def processes_of(out: Path) -> list[int]:
    """Live halatafl processes whose arguments name a path under `out`."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = (Path("/proc") / entry / "cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if argv and argv[0].endswith("halatafl") and any(str(out) in a for a in argv) and not gone(int(entry)):
            pids.append(int(entry))
    return pids


def check_finished_run(run: Path) -> None:
    """A run directory that went to its end once: every generation's
    evaluation games exactly once (configs/ci.toml: 2 generations, 4 games
    against each of 2 opponents)."""
    assert json.loads((run / "progress.json").read_text()) == {"generation": 2, "stage": "eval"}
    counts: dict[tuple[str, str], int] = {}
    for r in rows(run / "eval.csv"):
        key = (r["generation"], r["opponent"])
        counts[key] = counts.get(key, 0) + 1
    expected = {(str(g), o): 4 for g in range(3) for o in ("random", "previous") if (g, o) != (0, "previous")}
    assert counts == expected, counts


def test_sweep_completes_with_intervals_and_retries_a_killed_trial():
    with tempfile.TemporaryDirectory(prefix="halatafl-sweep-") as tmp:
        out = Path(tmp) / "sweep"
        proc = start(out)
        first = out / "trials" / "puct-s1"
        pid = live_pid(first, "train")
        os.kill(pid, signal.SIGKILL)
        code, text = finish(proc)
        assert code == 0, text
        trials = rows(out / "trials.csv")
        assert [t["trial"] for t in trials] == ["puct-s1", "gumbel-s1", "puct-s2", "gumbel-s2"]
        for t in trials:
            assert 0.0 <= float(t["score:random"]) <= 1.0
            assert float(t["wall_seconds"]) > 0 and float(t["cpu_seconds"]) > 0
            check_finished_run(Path(t["run"]))
        # The killed trial was started again and resumed its run.
        by_name = {t["trial"]: t for t in trials}
        assert by_name["puct-s1"]["attempts"] == "2", text
        assert starts(first) == 2
        assert "attempt 1 failed: puct-s1: `halatafl train --config ...` was killed by signal SIGKILL" in (first / "attempts.log").read_text()
        for other in ("gumbel-s1", "puct-s2", "gumbel-s2"):
            assert by_name[other]["attempts"] == "1"
        arms = rows(out / "arms.csv")
        scores = {a["arm"]: a for a in arms if a["measure"] == "score:random"}
        assert set(scores) == {"puct", "gumbel"}
        for a in scores.values():
            assert a["seeds"] == "2" and a["statistic"] == "mean"
            assert float(a["lo"]) <= float(a["estimate"]) <= float(a["hi"])
        report = (out / "report.md").read_text()
        assert "| puct | 2 |" in report and "| gumbel | 2 |" in report
        assert (out / "curve.png").stat().st_size > 0
        assert processes_of(out) == []


def test_ctrl_c_then_a_second_start_finishes_without_rerunning_finished_trials():
    with tempfile.TemporaryDirectory(prefix="halatafl-sweep-") as tmp:
        out = Path(tmp) / "sweep"
        proc = start(out)
        first = out / "trials" / "puct-s1"
        second = out / "trials" / "gumbel-s1"
        wait_for("the first trial's result", lambda: (first / "result.json").exists())
        done_at = (first / "result.json").stat().st_mtime_ns
        live_pid(second, "train")
        os.killpg(proc.pid, signal.SIGINT)
        code, text = finish(proc)
        assert code != 0, text
        assert not (out / "trials" / "gumbel-s2" / "result.json").exists()
        wait_for("the trials' processes to end", lambda: processes_of(out) == [], limit=30)

        code, text = finish(start(out))
        assert code == 0, text
        assert "1 finished, 3 to run" in text or "2 finished, 2 to run" in text, text
        trials = rows(out / "trials.csv")
        assert len(trials) == 4
        assert starts(first) == 1
        assert (first / "result.json").stat().st_mtime_ns == done_at
        for t in trials:
            check_finished_run(Path(t["run"]))


def test_a_changed_sweep_file_is_refused_for_the_same_directory():
    with tempfile.TemporaryDirectory(prefix="halatafl-sweep-") as tmp:
        out = Path(tmp) / "sweep"
        out.mkdir()
        (out / "sweep.digest").write_text("0000000000000000\n")
        proc = start(out, "--report-only")
        code, text = finish(proc)
        assert code == 1
        assert "differs" in text and str(out) in text, text
