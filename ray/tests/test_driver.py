"""The Ray driver end to end on a local Ray instance: `python -m halatafl_ray`
runs a small asynchronous run with two self-play workers to its end; in a
second run a worker's actor and another worker's halatafl process are
SIGKILLed mid-run, Ctrl-C stops the run, and the same command resumes it to
its end. Either way the run directory must hold what
crates/cli/tests/async_stages.rs checks of a finished run: every checkpoint
once, train.csv and eval.csv rows of every generation exactly once.

Needs target/release/halatafl (scripts/check-ray.sh runs these tests).
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("HALATAFL_BIN", REPO / "target" / "release" / "halatafl"))
LIMIT = 180  # seconds for any one wait below

pytestmark = pytest.mark.skipif(not BINARY.exists(), reason=f"{BINARY} is not built")


def config(tmp: Path, generations: int, train_ratio: float = 4.0) -> Path:
    """configs/ci.toml with `generations` generations, one thread per
    process (as async_stages.rs: four processes share two cores) and
    `train_ratio` (lower: more self-play per generation, a longer run)."""
    text = (REPO / "configs" / "ci.toml").read_text()
    for old, new in [
        ("generations = 2\n", f"generations = {generations}\n"),
        ("train_ratio = 4.0 ", f"train_ratio = {train_ratio} "),
        ("threads = 2 ", "threads = 1 "),
        ("torch_threads = 2 ", "torch_threads = 1 "),
    ]:
        assert old in text, f"ci.toml lost `{old}`"
        text = text.replace(old, new, 1)
    path = tmp / "ray.toml"
    path.write_text(text)
    return path


def driver(*args: str) -> subprocess.Popen:
    """The driver, in its own process group like a shell's foreground job, so
    that a Ctrl-C can be sent to the whole group as a terminal would. SIGINT
    is set back to its default: a test suite started in the background by a
    non-interactive shell inherits it ignored, and Python then never turns a
    Ctrl-C into KeyboardInterrupt. Its output goes to a file (`proc.out`), so
    a test can wait for a line while it runs (`said`)."""
    return spawn(["-m", "halatafl_ray", "--num-cpus", "4", *args])


def spawn(argv: list[str], cwd: Path | None = None) -> subprocess.Popen:
    """`python ARGV` with the package on its path, as `driver` describes."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "ray"), HALATAFL_BIN=str(BINARY))
    fd, out = tempfile.mkstemp(prefix="halatafl-driver-", suffix=".out")
    try:
        proc = subprocess.Popen(
            [sys.executable, *argv],
            cwd=cwd,
            env=env,
            stdout=fd,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    finally:
        os.close(fd)
    proc.out = Path(out)
    return proc


def said(proc: subprocess.Popen) -> str:
    """What the driver has printed so far."""
    return proc.out.read_text(errors="replace")


def finish(proc: subprocess.Popen, limit: float = LIMIT) -> tuple[int, str]:
    try:
        proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        pytest.fail(f"the driver did not finish within {limit} s:\n{said(proc)}")
    out = said(proc)
    proc.out.unlink()
    return proc.returncode, out


def halatafl_processes(run: Path) -> dict[int, tuple[int, list[str]]]:
    """pid -> (parent pid, arguments) of the live halatafl processes of `run`."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = (Path("/proc") / entry / "cmdline").read_bytes().decode().split("\0")[:-1]
            stat = (Path("/proc") / entry / "stat").read_text()
        except OSError:
            continue
        if argv and argv[0].endswith("halatafl") and str(run) in argv:
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            found[int(entry)] = (ppid, argv)
    return found


def worker_process(run: Path, worker: str, other_than: int | None = None) -> tuple[int, int]:
    """(pid, parent pid) of worker `worker`'s halatafl process, waiting for
    one (other than pid `other_than`) to run."""
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        for pid, (ppid, argv) in halatafl_processes(run).items():
            if argv[1:5] == ["stage", "selfplay", "--worker", worker] and pid != other_than:
                return pid, ppid
        time.sleep(0.05)
    pytest.fail(f"no halatafl process of worker {worker} within {LIMIT} s")


def wait_for(what: str, condition, limit: float = LIMIT) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {limit} s")
        time.sleep(0.05)


def gone(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def check_finished_run(run: Path, generations: int) -> None:
    """async_stages.rs's `check_finished_run`, for `generations` generations."""
    assert (run / "finished.json").exists()
    for g in range(generations + 1):
        assert (run / f"checkpoints/gen_{g:04}.safetensors").exists(), g
    assert not (run / f"checkpoints/gen_{generations + 1:04}.safetensors").exists()
    assert not (run / "learner-pending.json").exists()
    # train.csv: ci.toml logs every 5 of 10 steps: 2 rows per generation,
    # steps rising without a gap.
    train = read_csv(run / "train.csv")
    assert Counter(int(r["generation"]) for r in train) == {g: 2 for g in range(generations + 1)}
    assert [int(r["step"]) for r in train] == [5 * i for i in range(1, 2 * (generations + 1) + 1)]
    # eval.csv: 4 games against random each generation, and 4 against the
    # previous checkpoint from generation 1 on; no game twice.
    evals = read_csv(run / "eval.csv")
    assert Counter(int(r["generation"]) for r in evals) == {g: 4 if g == 0 else 8 for g in range(generations + 1)}
    keys = [(r["generation"], r["opponent"], r["game"]) for r in evals]
    assert len(keys) == len(set(keys)), "duplicate eval.csv rows"
    selfplay = Counter(int(r["generation"]) for r in read_csv(run / "selfplay.csv"))
    assert selfplay[0] == 1 and set(selfplay.values()) == {1} and max(selfplay) <= generations
    # Shards: of generations with a checkpoint before them, named by worker.
    worker_shards = games_files = 0
    for gen_dir in (run / "shards").iterdir():
        g = int(gen_dir.name.removeprefix("gen_"))
        assert g <= generations
        for shard in gen_dir.iterdir():
            if g == 0 or shard.name.startswith("."):
                continue  # the expert's games; a killed writer's temporary file
            if shard.name.endswith(".games.csv"):
                # The piece's self-play games beside its shard.
                worker, seq = shard.name.removeprefix("w").removesuffix(".games.csv").split("-")
                assert worker in ("1", "2") and len(seq) == 6, shard.name
                rows = read_csv(shard)
                assert rows and all(int(r["generation"]) == g for r in rows), shard.name
                games_files += 1
                continue
            worker, seq = shard.name.removeprefix("w").removesuffix(".shard").split("-")
            assert worker in ("1", "2") and len(seq) == 6, shard.name
            worker_shards += 1
    assert worker_shards > 0 and games_files > 0
    report = subprocess.run([BINARY, "report", run], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert not halatafl_processes(run), "a halatafl process outlived the driver"


def test_two_workers_finish_a_run(tmp_path):
    run = tmp_path / "run"
    # --worker-device reaches the workers' and the evaluator's command lines.
    code, out = finish(driver("--config", str(config(tmp_path, 3)), "--run", str(run), "--workers", "2", "--worker-device", "cpu"))
    assert code == 0, out
    assert "published gen_0003.safetensors" in out, out
    assert out.rstrip().endswith(f"run: {run}"), out
    check_finished_run(run, 3)
    for log in ("init", "learn", "evaluate", "selfplay-1", "selfplay-2"):
        assert (run / "ray-logs" / f"{log}.log").exists(), log


def test_killed_workers_restart_and_ctrl_c_resumes(tmp_path):
    # Long enough (about 10 s straight) for the kills and the Ctrl-C to
    # happen mid-run.
    generations = 12
    run = tmp_path / "run"
    proc = driver("--config", str(config(tmp_path, generations, train_ratio=1.0)), "--run", str(run), "--workers", "2")
    try:
        # Worker 1's actor process, SIGKILLed once the worker has written a
        # shard: its halatafl process dies with it, Ray restarts the actor,
        # which starts a new one.
        wait_for("a shard of worker 1", lambda: any((run / "shards").glob("gen_*/w1-*.shard")))
        child, actor = worker_process(run, "1")
        os.kill(actor, signal.SIGKILL)
        wait_for("worker 1's halatafl process dying with its actor", lambda: gone(child))
        new_child, new_actor = worker_process(run, "1", other_than=child)
        assert new_actor != actor
        # Worker 2's halatafl process, SIGKILLed: its actor starts it again,
        # and the driver says so at once, not when the stage ends.
        child, actor = worker_process(run, "2")
        os.kill(child, signal.SIGKILL)
        new_child, new_actor = worker_process(run, "2", other_than=child)
        assert new_actor == actor
        wait_for(
            "the driver reporting worker 2's restarted halatafl process",
            lambda: "selfplay-2: its halatafl process was killed" in said(proc),
            limit=20,
        )
        assert proc.poll() is None and not (run / "finished.json").exists(), f"reported only once the run ended:\n{said(proc)}"
        # Ctrl-C (SIGINT to the driver's process group, as a terminal sends)
        # mid-run stops every stage. Sent once the driver has reported worker
        # 1's actor death: Ray tells it a second or two after the kill, and
        # the run can be several checkpoints further by then (waiting for a
        # fixed checkpoint instead failed about one run in two on 2 cores).
        wait_for("the driver reporting worker 1's actor death", lambda: "selfplay-1: its actor died" in said(proc))
        wait_for("checkpoint 2", lambda: (run / "checkpoints/gen_0002.safetensors").exists())
        os.killpg(proc.pid, signal.SIGINT)
        code, out = finish(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert code == 130, out
    assert "selfplay-1: its actor died; Ray restarts it" in out, out
    assert "selfplay-2: its halatafl process was killed by signal 9; its actor started it again (restart 1;" in out, out
    assert not (run / "finished.json").exists(), "the run ended before the Ctrl-C: make it longer"
    wait_for("no halatafl process left", lambda: not halatafl_processes(run))
    log2 = (run / "ray-logs" / "selfplay-2.log").read_text()
    assert "killed by signal 9; starting it again" in log2, log2
    assert "restarted by Ray" in (run / "ray-logs" / "selfplay-1.log").read_text()

    # The same command again resumes the run to its end (the run directory
    # alone names it).
    code, out = finish(driver("--run", str(run), "--workers", "2"))
    assert code == 0, out
    assert f"resuming {run}" in out, out
    check_finished_run(run, generations)


def test_stages_that_cannot_all_be_scheduled_are_refused_before_anything_starts(tmp_path):
    # 5 stages of 1 CPU on a local instance of 2 CPUs: three of them would
    # wait for ever for a CPU, and the run with them.
    run = tmp_path / "run"
    proc = driver("--config", str(config(tmp_path, 3)), "--run", str(run), "--workers", "3", "--num-cpus", "2")
    code, out = finish(proc, limit=60)
    assert code == 1, out
    assert (
        "halatafl_ray: error: the stages cannot all be scheduled: the learner asks 1 CPU, each of the 3 "
        "self-play workers 1 CPU and the evaluator 1 CPU: 5 CPUs in all, but the local Ray instance "
        "(--num-cpus 2) has 2 CPUs and 0 GPUs; give --num-cpus 5 or more" in out
    ), out
    # Nothing started: no Ray instance, no generation 0.
    assert "Ray 2." not in out and not run.exists(), out
