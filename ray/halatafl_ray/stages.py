"""The Ray actor that runs one `halatafl` stage process (selfplay, learn or
evaluate) on whichever node Ray places it.

The stages already coordinate through files in the run directory (atomic
renames, one lock per stage in `locks/`), and each one can be SIGKILLed and
started again at any moment. So an actor does no more than keep one child
process alive until that child exits by itself:

- The child is started in the actor's constructor. When Ray restarts a dead
  actor (`max_restarts`), it runs the constructor again, which starts a new
  child: the restart of a stage is Ray's restart of its actor.
- The child gets SIGKILL when the actor process dies (PR_SET_PDEATHSIG), so
  no orphan keeps the stage's lock after its actor was killed or restarted.
- A child killed by a signal while its actor lives (the OOM killer, a `kill`)
  is started again by the actor, as Ray would restart the actor; `wait`
  returns at once to say so (the driver reports it and waits again), so a
  restart is known when it happens, not when the stage ends.
- A child that exits with a status is done: 0 when its part of the run is
  finished, anything else is an error the driver reports.

Self-play workers write a shard by renaming a finished temporary file, so the
games a killed worker was playing are lost, never written half.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from pathlib import Path

# Most times a child killed by a signal is started again by its actor before
# the actor gives up (a child that keeps dying is a bug, not bad luck).
MAX_CHILD_RESTARTS = 20

# A restarted stage can find its lock still held for a moment by the child of
# the previous actor, which the kernel is still tearing down: the stage then
# exits with status 1 and "already running". Retried this often, this far apart.
LOCK_RETRIES = 40
LOCK_RETRY_SECONDS = 0.25

_PR_SET_PDEATHSIG = 1


def _prctl():
    """libc's prctl, looked up before any fork: the forked child must not
    load libraries (other threads of the Ray worker may hold the loader's
    locks at fork time)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


def die_with_parent_hook():
    """A `preexec_fn` that makes the child get SIGKILL when the process that
    forked it dies. Linux only; elsewhere the child is only killed by the
    actor's own shutdown paths."""
    prctl = _prctl()
    parent = os.getpid()
    if prctl is None:
        return None

    def hook():
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # The parent may have died between fork and prctl: then nobody would
        # send the signal.
        if os.getppid() != parent:
            os._exit(1)

    return hook


def tail(path: Path, lines: int = 20, since: int = 0) -> str:
    """The last `lines` lines of a log file from byte `since` on."""
    try:
        with open(path, "rb") as f:
            f.seek(since)
            data = f.read()
    except OSError:
        return ""
    return "\n".join(data.decode(errors="replace").splitlines()[-lines:])


class StageProcess:
    """One `halatafl` stage process (made a Ray actor by the driver with
    `ray.remote(...)(StageProcess)`, so this module imports without Ray)."""

    def __init__(self, binary: str, args: list[str], log_path: str, reconstructed: bool | None = None):
        self.binary = binary
        self.args = list(args)
        self.log_path = Path(log_path)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        if reconstructed is None:
            import ray

            reconstructed = ray.get_runtime_context().was_current_actor_reconstructed
        # After a restart the previous child's lock may linger for a moment.
        self.lock_may_linger = reconstructed
        self.child_restarts = 0
        self.lock_retries = 0
        self._note("restarted by Ray: starting" if reconstructed else "starting")
        self._start()

    def _note(self, text: str) -> None:
        with open(self.log_path, "a") as log:
            log.write(f"[halatafl_ray pid {os.getpid()}] {text}: {self.binary} {' '.join(self.args)}\n")

    def _start(self) -> None:
        self.log_start = self.log_path.stat().st_size
        with open(self.log_path, "ab") as log:
            self.child = subprocess.Popen(
                [self.binary, *self.args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own session: a Ctrl-C at the driver's terminal reaches
                # the driver, which stops the actors, not the stages directly.
                start_new_session=True,
                preexec_fn=die_with_parent_hook(),
            )

    def pids(self) -> tuple[int, int]:
        """(the actor's process id, the stage child's process id)."""
        return os.getpid(), self.child.pid

    def wait(self) -> dict:
        """Blocks until the stage exits by itself (`restarted` False: its exit
        status is `code`), or until it was killed by a signal and started
        again (`restarted` True, with the `signal`): then the caller reports
        the restart and calls `wait` again."""
        while True:
            code = self.child.wait()
            if code < 0 and self.child_restarts < MAX_CHILD_RESTARTS:
                self.child_restarts += 1
                self._note(f"killed by signal {-code}; starting it again")
                self.lock_may_linger = True
                self._start()
                return {
                    "restarted": True,
                    "signal": -code,
                    "child_restarts": self.child_restarts,
                    "log": str(self.log_path),
                }
            if (
                code == 1
                and self.lock_may_linger
                and self.lock_retries < LOCK_RETRIES
                and "already running" in tail(self.log_path, since=self.log_start)
            ):
                self.lock_retries += 1
                time.sleep(LOCK_RETRY_SECONDS)
                self._start()
                continue
            return {
                "restarted": False,
                "code": code,
                "child_restarts": self.child_restarts,
                "log": str(self.log_path),
                "tail": "" if code == 0 else tail(self.log_path, since=self.log_start),
            }

    def __del__(self):
        child = getattr(self, "child", None)
        if child is not None and child.poll() is None:
            child.kill()
