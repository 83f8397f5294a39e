"""Shared helpers: the checkout's root and the CLI binary (for comparing
error messages with the command-line program's)."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str) -> subprocess.CompletedProcess:
    binary = os.environ.get("HALATAFL_BIN", str(ROOT / "target" / "release" / "halatafl"))
    if not Path(binary).exists():
        pytest.skip(f"{binary} is not built (cargo build --release -p halatafl-cli)")
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)


def cli_error(*args: str) -> str:
    """The CLI's error text for a command that must fail (without `error: `)."""
    done = cli(*args)
    assert done.returncode != 0, f"halatafl {args} should have failed"
    return done.stderr.strip().removeprefix("error: ")
