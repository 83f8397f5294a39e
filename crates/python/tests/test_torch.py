"""The package beside the user's PyTorch (the venv's torch from PyPI): one
libtorch in the process whichever is imported first, network agents and
torch working together, and an extension that names no builder's path."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import halatafl

PROBE = textwrap.dedent(
    """
    import json, sys
    first, second = sys.argv[1], sys.argv[2]
    __import__(first); __import__(second)
    import halatafl, torch
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "/libtorch_cpu.so" in path or "/libc10.so" in path:
                libs.add(path)
    # A network agent and a torch forward pass in the same process.
    game = halatafl.Game()
    decision = halatafl.Agent("best:sims=8").choose(game)
    layer = torch.nn.Linear(490, 4)
    out = layer(torch.as_tensor(game.observation()).reshape(1, -1))
    print(json.dumps({"libs": sorted(libs), "move": decision.move, "legal": decision.move in game.legal_moves(),
                      "out": list(out.shape), "torch": torch.__file__}))
    """
)


def probe(first: str, second: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, first, second], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_one_libtorch_whichever_is_imported_first():
    results = [probe("halatafl", "torch"), probe("torch", "halatafl")]
    for r in results:
        torch_lib = str(Path(r["torch"]).parent / "lib")
        assert len(r["libs"]) == 2, r  # libtorch_cpu and libc10, once each
        assert all(lib.startswith(torch_lib) for lib in r["libs"]), r
        assert r["legal"] and r["out"] == [1, 4]
    assert results[0]["libs"] == results[1]["libs"]


def test_the_extension_names_no_absolute_library_path():
    ext = Path(halatafl._halatafl.__file__)
    dynamic = subprocess.run(["readelf", "-d", str(ext)], capture_output=True, text=True, check=True).stdout
    paths = [line.split("[", 1)[1].rstrip("]") for line in dynamic.splitlines() if "RUNPATH" in line or "RPATH" in line]
    assert paths == ["$ORIGIN/../torch/lib"], paths


def test_another_torch_release_is_refused_with_what_to_install():
    code = textwrap.dedent(
        """
        import sys, types
        fake = types.ModuleType("torch"); fake.__version__ = "2.15.0+cu128"
        sys.modules["torch"] = fake
        import halatafl
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "built against PyTorch 2.13.x" in done.stderr and "torch 2.15.0+cu128" in done.stderr, done.stderr
    assert "pip install 'torch>=2.13,<2.14'" in done.stderr
