"""Agents built from the CLI's spec strings, searching with the GIL
released."""

import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

import halatafl
from conftest import ROOT, cli, cli_error

SPECS = [
    "random",
    "alphabeta:depth=3",
    "mcts:sims=64",
    "best",
    f"net:ckpt={ROOT / 'models' / 'best.safetensors'},sims=16",
]


@pytest.mark.parametrize("spec", SPECS)
def test_every_kind_of_agent_plays_legal_moves(spec):
    agent = halatafl.Agent(spec, seed=3)
    game = halatafl.Game()
    for _ in range(6):
        decision = agent.choose(game)
        assert decision.move in game.legal_moves()
        assert decision.action == halatafl.move_to_action(decision.move)
        game.play(decision.move)
    assert agent.spec.split(":")[0] == spec.split(":")[0]


def test_search_info_comes_back():
    decision = halatafl.Agent("alphabeta:depth=3").choose(halatafl.Game())
    assert decision.depth == 3 and decision.nodes > 0 and decision.value is not None
    assert decision.pv[0] == decision.move and len(decision.pv) >= 2
    mcts = halatafl.Agent("mcts:sims=100", seed=1).choose(halatafl.Game())
    assert mcts.nodes >= 100 or "sims" in mcts.extra or mcts.nodes > 0


def test_budget_arguments_limit_the_search():
    agent = halatafl.Agent("alphabeta:depth=8")
    assert agent.choose(halatafl.Game(), depth=2).depth == 2
    with pytest.raises(ValueError, match="depth = 0: must be from 1 to"):
        agent.choose(halatafl.Game(), depth=0)
    with pytest.raises(ValueError, match="sims = -3: must be from 1 to"):
        agent.choose(halatafl.Game(), sims=-3)
    with pytest.raises(ValueError, match="movetime_ms = 0: must be from 1 to 86400000"):
        agent.choose(halatafl.Game(), movetime_ms=0)
    # The bounds of the agent specs and of the engine's `go`, not u32's
    # (the time limit only ends the search quickly if one were accepted).
    with pytest.raises(ValueError, match="^depth = 101: must be from 1 to 100 plies$"):
        agent.choose(halatafl.Game(), depth=101, movetime_ms=10)
    with pytest.raises(ValueError, match="^sims = 10000001: must be from 1 to 10000000$"):
        halatafl.Agent("mcts:sims=8").choose(halatafl.Game(), sims=10_000_001, movetime_ms=10)
    with pytest.raises(ValueError, match="^movetime_ms = 86400001: must be from 1 to 86400000 ms \\(one day\\)$"):
        agent.choose(halatafl.Game(), movetime_ms=86_400_001)
    for name in ("depth", "sims", "movetime_ms"):
        with pytest.raises(ValueError, match=f"^{name} = {2**64}: must be from 1 to"):
            agent.choose(halatafl.Game(), **{name: 2**64})
        with pytest.raises(TypeError, match=f"^{name} = True: must be an integer, not a bool$"):
            agent.choose(halatafl.Game(), **{"movetime_ms": 10, name: True})
    assert agent.choose(halatafl.Game(), depth=100, movetime_ms=50).move
    with pytest.raises(ValueError, match="seed = -1: must be 0 or more"):
        halatafl.Agent("random", seed=-1)
    with pytest.raises(ValueError, match="seed = -1: must be 0 or more"):
        agent.new_game(-1)


def test_seeded_agents_repeat_their_games():
    def play(seed):
        agent = halatafl.Agent("mcts:sims=32", seed=seed)
        game = halatafl.Game()
        for _ in range(8):
            game.play(agent.choose(game).move)
        return game.moves()

    assert play(5) == play(5)


def test_the_gil_is_released_while_searching():
    agent = halatafl.Agent("alphabeta:ms=400")
    done = threading.Event()

    def search():
        agent.choose(halatafl.Game())
        done.set()

    thread = threading.Thread(target=search)
    thread.start()
    spins = 0
    while not done.is_set():
        spins += 1
        time.sleep(0)
    thread.join()
    # Holding the GIL for 400 ms would leave this thread a handful of turns.
    assert spins > 1000


def test_bad_specs_raise_the_cli_messages(tmp_path):
    for spec in ["foo", "alphabeta:depth=0", "mcts:sims", "net:sims=2"]:
        with pytest.raises(ValueError) as error:
            halatafl.Agent(spec)
        assert str(error.value) == cli_error(
            "match", spec, "random", "--games", "1", "--csv", str(tmp_path / "x.csv")
        ), spec
    with pytest.raises(ValueError, match="could not be built|no such file|No such file|cannot read|not found"):
        halatafl.Agent("net:ckpt=/nonexistent.safetensors")


def test_finished_games_and_other_variants_are_refused():
    over = halatafl.Game("GGG/GGG/F.GGG.F/......./......./.../... f 0")
    with pytest.raises(ValueError, match="the game is over \\(geese \\(pen-filled\\)\\)"):
        halatafl.Agent("random").choose(over)
    with pytest.raises(ValueError, match="built for `two-foxes`, the game is `classic geese=13`"):
        halatafl.Agent("random").choose(halatafl.Game(variant="classic"))
    classic = halatafl.Agent("alphabeta:depth=2", variant="classic")
    assert classic.choose(halatafl.Game(variant="classic")).move


def test_network_agents_leave_the_callers_floating_point_alone():
    # The library flushes subnormal floats to zero on its own inference
    # threads only; NumPy in the calling thread keeps subnormals.
    import numpy as np

    game = halatafl.Game()
    halatafl.Agent("best:sims=8", seed=1).choose(game)
    tiny = np.float32(1e-39)
    assert tiny * np.float32(1.0) > 0
    assert np.finfo(np.float32).smallest_subnormal > 0


def test_choose_bounds_are_the_engine_protocols():
    """The bounds of `choose`'s budget are those of the engine's `go` (the
    extension copies the numbers: this catches a change on either side)."""
    script = "go depth 101\ngo sims 10000001\ngo movetime 86400001\nquit\n"
    done = cli("engine", "--agent", "random", input=script)
    bounds = re.findall(r"(depth|sims|movetime) must be from 1 to (\d+)", done.stdout + done.stderr)
    assert dict(bounds) == {"depth": "100", "sims": "10000000", "movetime": "86400000"}, done.stdout
    agent = halatafl.Agent("alphabeta:depth=1")
    for name, arg in (("depth", "depth"), ("sims", "sims"), ("movetime", "movetime_ms")):
        most = int(dict(bounds)[name])
        budget = {"movetime_ms": 10, arg: most + 1}
        with pytest.raises(ValueError, match=f"must be from 1 to {most}\\b"):
            agent.choose(halatafl.Game(), **budget)


# A search far longer than the test, in a process of its own; it prints
# when it starts, and what came of it.
INTERRUPTED_SEARCH = """
import sys, halatafl
agent = halatafl.Agent(sys.argv[1])
game = halatafl.Game()
print("searching", flush=True)
try:
    agent.choose(game)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    # The agent stays usable.
    print("next", agent.choose(game, movetime_ms=50).move in game.legal_moves(), flush=True)
else:
    print("finished", flush=True)
"""


@pytest.mark.parametrize("spec", ["alphabeta:ms=60000", "mcts:sims=10000000,ms=60000"])
def test_ctrl_c_interrupts_a_long_search(spec):
    proc = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_SEARCH, spec],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A test run started in the background inherits SIGINT ignored, and
        # Python then never turns it into KeyboardInterrupt.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout.readline().strip() == "searching", proc.stderr.read()
        time.sleep(1.0)
        os.kill(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=20)
        assert out.splitlines()[0] == "interrupted", (out, err)
        # Well within the test's patience; the search itself stops within
        # about 50 ms of the signal.
        assert time.monotonic() - sent < 10, (out, err)
        assert out.splitlines()[1] == "next True", (out, err)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
