"""Shared helpers: the checkout's root and the CLI binary (for comparing
error messages with the command-line program's)."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def binary() -> str:
    """The command-line program (the test is skipped when it is not built)."""
    path = os.environ.get("HALATAFL_BIN", str(ROOT / "target" / "release" / "halatafl"))
    if not Path(path).exists():
        pytest.skip(f"{path} is not built (cargo build --release -p halatafl-cli)")
    return path


def cli(*args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([binary(), *args], input=input, capture_output=True, text=True, timeout=60)


def cli_error(*args: str) -> str:
    """The CLI's error text for a command that must fail (without `error: `)."""
    done = cli(*args)
    assert done.returncode != 0, f"halatafl {args} should have failed"
    return done.stderr.strip().removeprefix("error: ")
